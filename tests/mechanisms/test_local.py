"""Local randomisers (seed 004): unbiasedness, closed-form variance, support, LDP.

Statistical assertions hold at confidence 1 - ALPHA (conftest).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from mech_stats import assert_frequencies, assert_mean, assert_variance

from privet.errors import RelationMismatchError
from privet.ledger import Guarantee, Ledger, LocalRandomiser
from privet.mechanisms import (
    DuchiMechanism,
    DuchiMultiMechanism,
    LocalLaplace,
    PiecewiseMechanism,
    PiecewiseMultiMechanism,
    RandomisedResponse,
    duchi_multi_bound,
    piecewise_sample_count,
    seed_for_tests,
)
from privet.testing import check_dp

N = 200_000


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("value", [-1.0, 0.3, 1.0])
def test_piecewise_unbiased_with_closed_form_variance(
    replace_ledger: Ledger, epsilon: float, value: float
) -> None:
    mech = PiecewiseMechanism(epsilon=epsilon)
    y = mech(np.full(N // 4, value), scope=replace_ledger)
    var = float(mech.variance(value))
    assert_mean(y, value, var)
    assert_variance(y, var, mean=value)
    c = mech.output_bound
    assert c == pytest.approx((math.exp(epsilon / 2) + 1) / (math.exp(epsilon / 2) - 1))
    assert y.min() >= -c and y.max() <= c


def test_piecewise_scaled_range(replace_ledger: Ledger) -> None:
    """[lower, upper] is mapped to [-1, 1] and back (seed 004, 'x* = x / t')."""
    mech = PiecewiseMechanism(epsilon=1.0, lower=0.0, upper=10.0)
    y = mech(np.full(N, 7.0), scope=replace_ledger)
    assert_mean(y, 7.0, float(mech.variance(7.0)))
    assert_variance(y, float(mech.variance(7.0)), mean=7.0)


def test_piecewise_density_ratio_is_e_eps() -> None:
    """Inside/outside densities of Alg. 3 differ by exactly e^eps."""
    eps = 1.3
    mech = PiecewiseMechanism(epsilon=eps)
    c = mech.output_bound
    p_in = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    dens_in = p_in / (c - 1)
    dens_out = (1 - p_in) / (c + 1)
    assert dens_in / dens_out == pytest.approx(math.exp(eps))


def test_piecewise_dp_check(replace_ledger: Ledger) -> None:
    mech = PiecewiseMechanism(epsilon=1.0)
    res = check_dp(
        lambda n: mech(np.full(n, -1.0), scope=replace_ledger),
        lambda n: mech(np.full(n, 1.0), scope=replace_ledger),
        n=100_000,
    )
    assert res.consistent_with(1.0), res
    assert res.epsilon_lower > 0.5, res


@pytest.mark.parametrize(("epsilon", "d", "k"), [(1.0, 5, 1), (6.0, 5, 2), (30.0, 4, 4)])
def test_piecewise_multi_k_and_moments(
    replace_ledger: Ledger, epsilon: float, d: int, k: int
) -> None:
    assert piecewise_sample_count(epsilon, d) == k
    mech = PiecewiseMultiMechanism(epsilon=epsilon, dimension=d)
    x = np.linspace(-0.9, 1.0, d)
    y = mech(np.tile(x, (N // 2, 1)), scope=replace_ledger)
    assert y.shape == (N // 2, d)
    assert np.all((y != 0).sum(axis=1) <= k)
    var = mech.variance(x)
    for j in range(d):
        assert_mean(y[:, j], x[j], var[j])
        assert_variance(y[:, j], var[j], mean=x[j])


def test_piecewise_multi_dp_check(replace_ledger: Ledger) -> None:
    mech = PiecewiseMultiMechanism(epsilon=3.0, dimension=3)
    res = check_dp(
        lambda n: mech(np.tile([-1.0, 0.0, 0.0], (n, 1)), scope=replace_ledger)[:, 0],
        lambda n: mech(np.tile([1.0, 0.0, 0.0], (n, 1)), scope=replace_ledger)[:, 0],
        n=100_000,
    )
    assert res.consistent_with(3.0), res


@pytest.mark.parametrize("value", [-1.0, 0.0, 0.6])
def test_duchi_unbiased_with_closed_form_variance(replace_ledger: Ledger, value: float) -> None:
    mech = DuchiMechanism(epsilon=1.0)
    y = mech(np.full(N // 2, value), scope=replace_ledger)
    b = mech.output_bound
    assert set(np.unique(y).tolist()) <= {-b, b}
    assert_mean(y, value, b**2 - value**2)
    assert_variance(y, b**2 - value**2, mean=value)


def test_duchi_dp_check(replace_ledger: Ledger) -> None:
    mech = DuchiMechanism(epsilon=1.0)
    res = check_dp(
        lambda n: mech(np.full(n, 1.0), scope=replace_ledger),
        lambda n: mech(np.full(n, -1.0), scope=replace_ledger),
        n=100_000,
    )
    assert res.consistent_with(1.0), res
    assert res.epsilon_lower > 0.7, res


@pytest.mark.parametrize("d", [2, 3, 4, 7])
def test_duchi_multi_unbiased(replace_ledger: Ledger, d: int) -> None:
    mech = DuchiMultiMechanism(epsilon=2.0, dimension=d)
    x = np.linspace(-0.8, 0.9, d)
    y = mech(np.tile(x, (N // 2, 1)), scope=replace_ledger)
    b = mech.output_bound
    assert np.allclose(np.abs(y), b)
    for j in range(d):
        assert_mean(y[:, j], x[j], b**2 - x[j] ** 2)
        assert_variance(y[:, j], b**2 - x[j] ** 2, mean=x[j])


def test_duchi_multi_bound_matches_wang_for_odd_d() -> None:
    for d in (1, 3, 5, 9):
        cd = 2 ** (d - 1) / math.comb(d - 1, (d - 1) // 2)
        assert duchi_multi_bound(1.0, d) == pytest.approx((math.e + 1) / (math.e - 1) * cd)


def _exact_output_probs(eps: float, d: int, x: np.ndarray, wang_even: bool) -> np.ndarray:
    """P(output t | x) for every t in {-1, 1}^d, summing over v (exact enumeration)."""
    p = math.exp(eps) / (math.exp(eps) + 1)
    ts = np.array(list(itertools.product([-1, 1], repeat=d)))
    out = np.zeros(len(ts))
    for vv in ts:
        pv = np.prod(np.where(vv == 1, (1 + x) / 2, (1 - x) / 2))
        s = ts @ vv
        if wang_even:  # Wang et al.'s listing: T+ = {s > 0}, T- = {s <= 0}, uniform within
            plus = s > 0
            probs = np.where(plus, p / plus.sum(), (1 - p) / (~plus).sum())
        else:  # privet: 2p/2^d on s > 0, 2(1-p)/2^d on s < 0, 1/2^d on ties
            probs = np.where(s > 0, 2 * p, np.where(s < 0, 2 * (1 - p), 1.0)) / 2**d
        out += pv * probs
    return out


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_duchi_multi_is_eps_ldp_exactly(d: int) -> None:
    """Exact enumeration: every output's probability ratio between extreme inputs <= e^eps.

    Also documents that Wang et al.'s listing of the mechanism, which puts ties
    in T-, exceeds e^eps for even d.
    """
    eps = 1.0
    corners = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    worst = max(
        (_exact_output_probs(eps, d, a, False) / _exact_output_probs(eps, d, b, False)).max()
        for a in corners[:4]
        for b in corners
    )
    assert worst <= math.exp(eps) * (1 + 1e-12)
    wang = max(
        (_exact_output_probs(eps, d, a, True) / _exact_output_probs(eps, d, b, True)).max()
        for a in corners[:4]
        for b in corners
    )
    if d % 2 == 0:
        assert wang > math.exp(eps) * 1.2
    else:
        assert wang == pytest.approx(worst)


def test_duchi_multi_dp_check(replace_ledger: Ledger) -> None:
    mech = DuchiMultiMechanism(epsilon=1.0, dimension=2)
    res = check_dp(
        lambda n: mech(np.tile([1.0, 1.0], (n, 1)), scope=replace_ledger).sum(axis=1),
        lambda n: mech(np.tile([-1.0, -1.0], (n, 1)), scope=replace_ledger).sum(axis=1),
        n=100_000,
        discrete=True,
    )
    assert res.consistent_with(1.0), res


def test_local_laplace_moments_and_dp(replace_ledger: Ledger) -> None:
    mech = LocalLaplace(epsilon=1.0)
    assert mech.scale == pytest.approx(2.0, rel=1e-8)  # seed 004: Lap(2/eps) on [-1, 1]
    y = mech(np.full(N // 2, 0.25), scope=replace_ledger)
    assert_mean(y, 0.25, 2 * mech.scale**2)
    assert_variance(y, 2 * mech.scale**2, mean=0.25)
    res = check_dp(
        lambda n: mech(np.full(n, -1.0), scope=replace_ledger),
        lambda n: mech(np.full(n, 1.0), scope=replace_ledger),
        n=60_000,
    )
    assert res.consistent_with(1.0), res


def test_local_laplace_multi_dimension_splits_budget() -> None:
    mech = LocalLaplace(epsilon=2.0, dimension=4, lower=0.0, upper=1.0)
    assert mech.sensitivity == 4.0
    assert mech.scale == pytest.approx(2.0, rel=1e-8)


def test_randomised_response_frequencies_and_variance(replace_ledger: Ledger) -> None:
    rr = RandomisedResponse(epsilon=1.0, categories=["a", "b", "c", "d"])
    truth = np.array([0.4, 0.3, 0.2, 0.1])
    values = np.repeat(np.array(["a", "b", "c", "d"]), (truth * N).astype(int))
    reports = rr(values, scope=replace_ledger)
    assert set(np.unique(reports).tolist()) <= {"a", "b", "c", "d"}
    est = rr.debias(reports)
    var = rr.variance(values).mean(axis=0)  # mean over records of per-record variances
    for c in range(4):
        assert_mean(est[:, c], truth[c], var[c])
    # report frequencies for a single true category follow (p, q, q, q)
    rep = rr(np.full(40_000, "b"), scope=replace_ledger)
    idx = np.searchsorted(np.array(["a", "b", "c", "d"]), rep)
    assert_frequencies(idx, np.array([rr.q, rr.p, rr.q, rr.q]))
    assert rr.p / rr.q == pytest.approx(math.e)


def test_randomised_response_dp_check(replace_ledger: Ledger) -> None:
    rr = RandomisedResponse(epsilon=1.5, categories=3)
    res = check_dp(
        lambda n: rr(np.zeros(n, dtype=int), scope=replace_ledger),
        lambda n: rr(np.ones(n, dtype=int), scope=replace_ledger),
        n=100_000,
    )
    assert res.consistent_with(1.5), res
    assert res.epsilon_lower > 1.0, res


def test_local_charge_is_one_local_entry_per_call(replace_ledger: Ledger) -> None:
    mech = PiecewiseMechanism(epsilon=0.8)
    mech(np.zeros(1000), scope=replace_ledger, caller="boost", step="round-1")
    (record,) = replace_ledger._charges.values()
    assert isinstance(record.entry, LocalRandomiser)
    assert record.entry.randomiser == "piecewise"
    assert record.mechanism == "local:piecewise"
    assert replace_ledger.spent().epsilon == pytest.approx(0.8)


def test_local_randomisers_refuse_add_remove_ledgers() -> None:
    """epsilon-LDP hides a record's value, not its presence: replace-one only."""
    led = Ledger(Guarantee(5.0))
    for mech in (
        PiecewiseMechanism(epsilon=1.0),
        DuchiMechanism(epsilon=1.0),
        LocalLaplace(epsilon=1.0),
        RandomisedResponse(epsilon=1.0, categories=2),
    ):
        with pytest.raises(RelationMismatchError, match="replace-one"):
            mech(np.zeros(3, dtype=int), scope=led)
    assert led.spent() == Guarantee(0.0)


def test_seed_for_tests_hook_makes_local_noise_reproducible(replace_ledger: Ledger) -> None:
    mech = PiecewiseMechanism(epsilon=1.0)
    with seed_for_tests(7):
        a = mech(np.zeros(5), scope=replace_ledger)
    with seed_for_tests(7):
        b = mech(np.zeros(5), scope=replace_ledger)
    c = mech(np.zeros(5), scope=replace_ledger)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
