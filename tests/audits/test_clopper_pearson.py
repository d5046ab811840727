"""Clopper–Pearson intervals and the epsilon bounds built on them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.audits.bounds import (
    clopper_pearson,
    epsilon_lower_from_counts,
    plan_trials,
    projected_epsilon_lower,
)
from privet.errors import InvalidParameterError

# Level at which the simulation tests may fail by bad luck (seeds are fixed, so a
# failure is reproducible; the level says how surprising it would be).
TEST_LEVEL = 1e-4


def not_significantly_below(successes: int, trials: int, nominal: float) -> bool:
    """One-sided binomial test: is the observed rate compatible with >= nominal?"""
    return stats.binomtest(successes, trials, nominal, alternative="less").pvalue > TEST_LEVEL


def test_known_values_match_the_beta_quantiles():
    lo, hi = clopper_pearson(5, 10, confidence=0.95)
    assert lo == pytest.approx(stats.beta.ppf(0.025, 5, 6))
    assert hi == pytest.approx(stats.beta.ppf(0.975, 6, 5))
    assert (round(lo, 4), round(hi, 4)) == (0.1871, 0.8129)  # textbook value


def test_edges_are_closed_form():
    n, conf = 50, 0.9
    lo, hi = clopper_pearson(0, n, confidence=conf)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / n))
    lo, hi = clopper_pearson(n, n, confidence=conf)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / n))
    # one-sided bounds put all of alpha in one tail
    assert clopper_pearson(0, n, confidence=conf, alternative="upper").upper == pytest.approx(
        1 - 0.1 ** (1 / n)
    )
    assert clopper_pearson(n, n, confidence=conf, alternative="lower").lower == pytest.approx(
        0.1 ** (1 / n)
    )


def test_vectorised_equals_scalar():
    k = np.array([0, 3, 17, 40])
    lo, hi = clopper_pearson(k, 40, confidence=0.99)
    for i, ki in enumerate(k):
        slo, shi = clopper_pearson(int(ki), 40, confidence=0.99)
        assert lo[i] == pytest.approx(slo) and hi[i] == pytest.approx(shi)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)


@pytest.mark.parametrize("p", [0.003, 0.05, 0.5, 0.93])
@pytest.mark.parametrize("n", [30, 400])
def test_two_sided_coverage_at_least_nominal(p, n):
    rng = np.random.default_rng(1000 * n + int(p * 1000))
    reps, conf = 3000, 0.9
    k = rng.binomial(n, p, size=reps)
    lo, hi = clopper_pearson(k, n, confidence=conf)
    covered = int(np.sum((lo <= p) & (p <= hi)))
    assert not_significantly_below(covered, reps, conf)


@pytest.mark.parametrize("alternative", ["lower", "upper"])
def test_one_sided_coverage_at_least_nominal(alternative):
    rng = np.random.default_rng(7)
    reps, conf, n, p = 4000, 0.95, 200, 0.2
    k = rng.binomial(n, p, size=reps)
    lo, hi = clopper_pearson(k, n, confidence=conf, alternative=alternative)
    covered = int(np.sum((lo <= p) & (p <= hi)))
    assert not_significantly_below(covered, reps, conf)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 3, "n": 10, "confidence": 1.0}, "confidence"),
        ({"k": 3, "n": 10, "confidence": float("nan")}, "confidence"),
        ({"k": 11, "n": 10, "confidence": 0.9}, "0 <= k <= n"),
        ({"k": 0, "n": 0, "confidence": 0.9}, "at least 1"),
        ({"k": 1, "n": 10, "confidence": 0.9, "alternative": "both"}, "alternative"),
    ],
)
def test_invalid_arguments_say_what_is_wrong(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        clopper_pearson(**kwargs)


def test_confidence_is_required():
    with pytest.raises(TypeError):
        clopper_pearson(1, 10)  # type: ignore[call-arg]


def test_epsilon_bound_never_exceeds_truth_more_often_than_alpha():
    """For a fixed event the bound is a valid confidence statement (simulation)."""
    eps, n, conf, reps = 0.5, 2000, 0.9, 2000
    p_hi, p_lo = 0.5, 0.5 * math.exp(-eps)
    rng = np.random.default_rng(3)
    k_hi = rng.binomial(n, p_hi, reps)
    k_lo = rng.binomial(n, p_lo, reps)
    over = sum(
        epsilon_lower_from_counts(int(a), n, int(b), n, confidence=conf)[0] > eps
        for a, b in zip(k_hi, k_lo, strict=True)
    )
    assert not_significantly_below(reps - over, reps, conf)


def test_delta_lowers_the_bound_and_zero_without_evidence():
    e0, lo, up = epsilon_lower_from_counts(600, 1000, 300, 1000, confidence=0.95)
    e1, _, _ = epsilon_lower_from_counts(600, 1000, 300, 1000, delta=0.1, confidence=0.95)
    assert 0 < e1 < e0 < math.log(2)
    assert lo < 0.6 and up > 0.3
    assert epsilon_lower_from_counts(500, 1000, 500, 1000, confidence=0.95)[0] == 0.0
    assert epsilon_lower_from_counts(50, 1000, 0, 1000, delta=0.2, confidence=0.95)[0] == 0.0


def test_plan_trials_reaches_the_target_and_knows_when_it_cannot():
    eps = 0.1
    p_hi, p_lo = 0.525, 0.525 * math.exp(-eps)
    n = plan_trials(p_hi, p_lo, target_epsilon=0.97 * eps, confidence=0.95, power=0.5)
    assert n is not None
    assert projected_epsilon_lower(p_hi, p_lo, n, confidence=0.95) >= 0.97 * eps - 1e-6
    assert projected_epsilon_lower(p_hi, p_lo, int(n * 0.95), confidence=0.95) < 0.97 * eps
    more = plan_trials(p_hi, p_lo, target_epsilon=0.97 * eps, confidence=0.95, power=0.9)
    assert more is not None and more > n
    assert plan_trials(p_hi, p_lo, target_epsilon=eps, confidence=0.95) is None
    assert (
        plan_trials(p_hi, p_lo, target_epsilon=0.9 * eps, confidence=0.95, max_trials=1000) is None
    )
