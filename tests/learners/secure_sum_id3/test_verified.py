"""verify="malicious" (seed 001): the degree-(2n-3) sharing and the masked linear check.

In-process algebra; the real party processes are in test_secure_sum_processes.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from privet.errors import InvalidParameterError
from privet.learners import SecureSumID3Classifier
from privet.learners.secure_sum_id3.field import (
    DEFAULT_PRIME,
    SMALL_PRIME,
    FieldSampler,
    derive_points,
)
from privet.learners.secure_sum_id3.sharing import SharingPlan, consistent_shift
from privet.learners.secure_sum_id3.verified import VerifiedPlan, kappa
from privet.ledger import Guarantee, Ledger


def _run(plan, vals, sampler):
    shares = [plan.share(v, sampler) for v in vals]
    results = sum(s.astype(object) for s in shares) % plan.p
    return shares, np.asarray(results, dtype=shares[0].dtype)


@pytest.mark.parametrize("p", [SMALL_PRIME, DEFAULT_PRIME, 2**61 - 1])
@pytest.mark.parametrize("n", [3, 5])
def test_sum_and_checks_pass_for_honest_parties(p, n):
    plan = VerifiedPlan(n, derive_points(b"honest", 2 * n, p), p)
    assert plan.degree == 2 * n - 3 and p**plan.kappa >= 2**80 > p ** (plan.kappa - 1)
    sampler = FieldSampler(p)
    vals = np.random.default_rng(n).integers(-50, 500, size=(n, 30))
    shares, results = _run(plan, vals, sampler)
    assert np.array_equal(plan.total(results), vals.sum(axis=0))
    gamma = plan.challenge(b"g" * 32, 30)
    combos = sum(plan.combinations(s, gamma).astype(object) for s in shares) % p
    public = plan.all_points(np.asarray(combos, dtype=np.int64 if p < 2**31 else object))
    assert np.array_equal(
        np.asarray(plan.results_combined(results, gamma), dtype=object) % p,
        np.asarray(public, dtype=object) % p,
    )


@pytest.mark.parametrize("p", [SMALL_PRIME, DEFAULT_PRIME])
def test_the_consistent_shift_is_caught_at_the_cheaters_points_only(p):
    """The shift that passes Sec. 4.3 (test_secure_sum_id3) fails the check exactly at
    the cheater's two points, so it is attributed to the cheater."""
    n, cheater = 4, 2
    points = derive_points(b"shift", 2 * n, p)
    old = SharingPlan(n, points, p)
    assert consistent_shift(points, cheater, 7, p) == old.undetectable_shift(cheater, 7)
    plan = VerifiedPlan(n, points, p)
    sampler = FieldSampler(p)
    vals = np.random.default_rng(4).integers(0, 500, size=(n, 20))
    shares, results = _run(plan, vals, sampler)
    e = consistent_shift(points, cheater, 1000, p)
    bad = results.astype(np.int64)
    bad[2 * cheater : 2 * cheater + 2, 7] = (bad[2 * cheater : 2 * cheater + 2, 7] + e) % p
    gamma = plan.challenge(b"c" * 32, 20)
    public = plan.all_points(sum(plan.combinations(s, gamma) for s in shares) % p)
    differs = (plan.results_combined(bad, gamma) != public).any(axis=0)
    assert np.flatnonzero(differs).tolist() == [2 * cheater, 2 * cheater + 1]


def test_any_change_of_one_result_is_caught():
    """A change of any single result entry (a count or a mask column) fails the check at
    that party's point: each of the kappa rows lets it through with probability 1/p."""
    n, p = 3, SMALL_PRIME
    plan = VerifiedPlan(n, derive_points(b"one", 2 * n, p), p)
    sampler = FieldSampler(p)
    vals = np.random.default_rng(0).integers(0, 100, size=(n, 12))
    shares, results = _run(plan, vals, sampler)
    rng = np.random.default_rng(1)
    for trial in range(40):
        gamma = plan.challenge(bytes([trial]) * 32, 12)
        public = plan.all_points(sum(plan.combinations(s, gamma) for s in shares) % p)
        row, col = int(rng.integers(2 * n)), int(rng.integers(12 + plan.kappa))
        bad = results.astype(np.int64)
        bad[row, col] = (bad[row, col] + int(rng.integers(1, p))) % p
        differs = (plan.results_combined(bad, gamma) != public).any(axis=0)
        assert np.flatnonzero(differs).tolist() == [row]


def test_combinations_do_not_depend_on_the_values():
    """Q_i = mask + gamma . q_i is uniform whatever the values (the mask is fresh): for
    two very different value vectors, the published Q_i at one point have the same law
    (chi-square on 16 bins of Z_p, 4,000 draws each; fails by chance with p < 1e-4)."""
    import scipy.stats

    n, p = 3, SMALL_PRIME
    plan = VerifiedPlan(n, derive_points(b"hide", 2 * n, p), p)
    sampler = FieldSampler(p)
    gamma = plan.challenge(b"h" * 32, 5)
    draws = {}
    for name, v in (("zeros", np.zeros(5, int)), ("large", np.full(5, 30_000))):
        draws[name] = np.array(
            [plan.combinations(plan.share(v, sampler), gamma)[0, 0] for _ in range(4000)]
        )
    counts = [np.bincount(d * 16 // p, minlength=16) for d in draws.values()]
    assert scipy.stats.chi2_contingency(counts).pvalue > 1e-4


def test_kappa_gives_80_bits():
    assert kappa(SMALL_PRIME) == 6 and kappa(DEFAULT_PRIME) == 3 and kappa(2**127 - 1) == 1


def test_two_parties_refused_before_anything_is_charged():
    from privet.data import load_dataset

    d = load_dataset("car")
    led = Ledger(budget=Guarantee.unbounded())
    est = SecureSumID3Classifier(
        schema=d.schema, n_parties=2, backend="shamir", verify="malicious", ledger=led
    )
    with pytest.raises(InvalidParameterError, match="verify='malicious' needs at least 3"):
        est.fit(d.X, d.y)
    assert led.spent().epsilon == 0
