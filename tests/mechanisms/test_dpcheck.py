"""check_dp, the small DP check of the mechanisms' tests, on privet's one Clopper–Pearson."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.audits.bounds import clopper_pearson, epsilon_lower_from_counts
from privet.errors import InvalidParameterError
from privet.testing import check_dp


def test_clopper_pearson_matches_scipy() -> None:
    for k, n in ((0, 50), (7, 50), (50, 50), (312, 1000)):
        lo, hi = clopper_pearson(k, n, confidence=0.95)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert lo == pytest.approx(ci.low, abs=1e-12)
        assert hi == pytest.approx(ci.high, abs=1e-12)
    with pytest.raises(InvalidParameterError):
        clopper_pearson(5, 3, confidence=0.9)


def test_epsilon_lower_bound() -> None:
    assert epsilon_lower_from_counts(0, 100, 50, 100, confidence=0.998)[0] == 0.0
    eps = epsilon_lower_from_counts(6000, 10_000, 2000, 10_000, confidence=0.998)[0]
    assert 0.9 < eps < math.log(3)
    half = epsilon_lower_from_counts(6000, 10_000, 2000, 10_000, delta=0.5, confidence=0.998)[0]
    assert half < eps


def test_check_dp_is_valid_and_has_power() -> None:
    """On exact Laplace samples (scipy, seeded: the helper itself is deterministic given
    samples) the bound stays below the true eps and sees most of it."""
    rng = np.random.default_rng(0)
    res = check_dp(
        lambda n: rng.laplace(0.0, 1.0, n), lambda n: rng.laplace(1.0, 1.0, n), n=100_000
    )
    assert res.consistent_with(1.0)
    assert res.epsilon_lower > 0.8
    assert "x" in res.event
    with pytest.raises(InvalidParameterError):
        check_dp(lambda n: np.zeros(n), lambda n: np.zeros(n), n=5)


def test_check_dp_discrete_outputs() -> None:
    rng = np.random.default_rng(1)
    p = math.e / (math.e + 1)
    res = check_dp(
        lambda n: (rng.random(n) < p).astype(float),
        lambda n: (rng.random(n) < 1 - p).astype(float),
        n=50_000,
    )
    assert res.consistent_with(1.0) and res.epsilon_lower > 0.9
