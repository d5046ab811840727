"""Gamma DLPA (seed 003): the sum is Laplace; what colluding parties are left with.

Statistical assertions hold at confidence 1 - ALPHA (conftest).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from mech_stats import assert_frequencies, assert_ks, assert_mean, assert_variance
from scipy import integrate, stats

from privet.errors import InvalidParameterError
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    DistributedLaplace,
    GammaDLPA,
    collusion_guarantee,
    make_gamma_dlpa,
    residual_delta,
    residual_epsilon,
    residual_pure_epsilon,
)
from privet.mechanisms._random import local_rng
from privet.mechanisms.distributed import residual_log_density
from privet.testing import check_dp

N = 100_000


def test_sum_of_shares_is_laplace(ledger: Ledger) -> None:
    """KS test of the released noise against Laplace(b) (seed 003, eq. (1))."""
    mech = make_gamma_dlpa(0.5, parties=5)
    assert mech.scale == 2.0
    values = np.zeros((5, N))
    values[0] = 10.0
    out = mech(values, scope=ledger)
    assert out.shape == (N,)
    assert_ks(out, stats.laplace(loc=10.0, scale=2.0).cdf)
    assert_variance(out, 2 * 2.0**2, mean=10.0)


def test_single_share_moments() -> None:
    mech = make_gamma_dlpa(1.0, parties=4, colluders=0)
    shares = mech.shares(N)
    assert shares.shape == (4, N)
    # each share is a difference of two Gamma(1/K, b): mean 0, variance 2 b^2 / K
    assert_mean(shares[0], 0.0, 2 / 4)
    assert_variance(shares[0], 2 / 4, mean=0.0)


def test_outsider_dp_check(ledger: Ledger) -> None:
    mech = make_gamma_dlpa(1.0, parties=3)
    res = check_dp(
        lambda n: mech(np.zeros((3, n)), scope=ledger),
        lambda n: mech(np.vstack([np.ones(n), np.zeros((2, n))]), scope=ledger),
        n=60_000,
    )
    assert res.consistent_with(1.0), res


def test_residual_density_is_the_gamma_difference() -> None:
    for a in (0.2, 0.5, 0.8):
        total = (
            2 * integrate.quad(lambda z, a=a: math.exp(residual_log_density(z, a)), 0, np.inf)[0]
        )
        assert total == pytest.approx(1.0, abs=1e-6)
        for z in (0.3, 1.7, -2.2):
            conv = integrate.quad(
                lambda x, a=a, z=z: stats.gamma.pdf(x, a) * stats.gamma.pdf(x - z, a),
                max(0.0, z),
                np.inf,
            )[0]
            assert math.exp(residual_log_density(z, a)) == pytest.approx(conv, rel=1e-6)
    # a = 1 is the Laplace(1) density
    assert math.exp(residual_log_density(0.7, 1.0)) == pytest.approx(0.5 * math.exp(-0.7))


def test_pure_epsilon_is_the_supremum_of_the_privacy_loss() -> None:
    """log p(0)/p(s) equals the numerical sup of the loss over a fine grid and shifts <= s."""
    z = np.concatenate([-np.logspace(-7, 1.5, 4000)[::-1], [0.0], np.logspace(-7, 1.5, 4000)])
    for a in (0.6, 0.8, 0.95):
        formula = residual_pure_epsilon(a, 1.0)
        for s in (0.25, 0.5, 1.0):
            loss = residual_log_density(z, a) - residual_log_density(z - s, a)
            assert loss.max() <= formula + 1e-9
        loss = residual_log_density(z, a) - residual_log_density(z - 1.0, a)
        assert loss.max() == pytest.approx(formula, rel=1e-9)
    assert math.isinf(residual_pure_epsilon(0.5, 1.0))
    assert math.isinf(residual_pure_epsilon(0.2, 1.0))
    assert residual_pure_epsilon(1.0, 1.0) == pytest.approx(1.0)


def _delta_by_grid(eps: float, a: float, s: float) -> float:
    """Independent check: integrate (p(z) - e^eps p(z - s))_+ on a fine grid away from 0."""
    edges = np.unique(
        np.concatenate(
            [
                np.linspace(-60, 60, 400_001),
                -np.logspace(-12, 0, 20_000),
                np.logspace(-12, 0, 20_000),
            ]
        )
    )
    mids = (edges[1:] + edges[:-1]) / 2
    width = np.diff(edges)
    p = np.exp(residual_log_density(mids, a))
    q = np.exp(residual_log_density(mids - s, a))
    body = np.sum(np.clip(p - math.exp(eps) * q, 0, None) * width)
    return float(body)


@pytest.mark.parametrize(("a", "eps"), [(0.8, 1.0), (0.6, 1.5), (0.4, 2.0), (0.2, 3.0)])
def test_delta_curve_matches_direct_integration(a: float, eps: float) -> None:
    ours = residual_delta(eps, a, 1.0)
    grid = _delta_by_grid(eps, a, 1.0)
    # the grid misses the mass of the singularity at 0 (|z| < 1e-12): tiny for a >= 0.2
    assert ours == pytest.approx(grid, rel=2e-3, abs=1e-6)


def test_laplace_curve_for_no_colluders() -> None:
    g = collusion_guarantee(5, 0, scale=1.0)
    assert g.pure_epsilon == 1.0 and g.delta == 0.0
    assert g.delta_at(0.5) == pytest.approx(1 - math.exp(-0.25))
    # a = 1 through the generic code gives the same curve
    assert residual_delta(0.5, 1.0, 1.0) == pytest.approx(1 - math.exp(-0.25), abs=1e-8)


def test_collusion_table_k5_eps1() -> None:
    """K = 5, b = 1/eps at eps = 1: what t colluders leave (reported in the issue note)."""
    table = [collusion_guarantee(5, t, scale=1.0, delta=1e-6) for t in range(5)]
    assert table[0].pure_epsilon == 1.0
    assert table[1].pure_epsilon == pytest.approx(1.4428, abs=1e-4)
    assert table[2].pure_epsilon == pytest.approx(2.4903, abs=1e-4)
    assert math.isinf(table[3].pure_epsilon) and math.isinf(table[4].pure_epsilon)
    assert table[3].delta == 1e-6 and table[3].epsilon == pytest.approx(5.82, abs=0.02)
    assert table[4].epsilon == pytest.approx(21.87, abs=0.05)
    eps = [g.epsilon for g in table]
    assert eps == sorted(eps)
    # the (eps, delta) curve at fixed eps grows with the coalition
    deltas = [g.delta_at(2.0) for g in table]
    assert deltas == sorted(deltas) and deltas[0] == 0.0 and deltas[4] > 0.4


def test_residual_epsilon_inverts_the_curve() -> None:
    for a, d in ((0.4, 1e-6), (0.2, 1e-3), (0.6, 1e-4)):
        e = residual_epsilon(d, a, 1.0)
        assert residual_delta(e, a, 1.0) <= d * (1 + 1e-6)
        assert residual_delta(e * 0.99, a, 1.0) > d


def test_residual_epsilon_at_a_huge_shift_does_not_overflow() -> None:
    """A fuzz finding: epsilon = 702 over 2 parties (a shift of 702 noise scales) made the
    bisection evaluate e^710, past a float. Where e^eps times the shifted mass passes e^700
    it dwarfs the unshifted mass (at most 1), so that point's delta is 0."""
    from privet.mechanisms import make_gamma_dlpa

    e = residual_epsilon(1e-6, 0.5, 702.0)
    assert 702.0 < e < 720.0
    assert residual_delta(e, 0.5, 702.0) <= 1e-6 * (1 + 1e-6)
    assert residual_delta(e * 0.999, 0.5, 702.0) > 1e-6
    guarantee = make_gamma_dlpa(epsilon=702.0, parties=2, sensitivity=1.0).collusion_guarantee()
    assert guarantee.epsilon == e


def test_colluders_see_more_than_laplace(ledger: Ledger) -> None:
    """Four of five colluders: the residual noise is far from Laplace(1). The
    Clopper–Pearson lower bound exceeds the outsider's eps = 1, yet stays below
    the computed (eps, delta) guarantee."""
    a = 1 / 5
    rng = local_rng()

    def residual(n: int, shift: float) -> np.ndarray:
        g = rng.gamma(a, 1.0, size=(2, n))
        return shift + g[0] - g[1]

    res = check_dp(lambda n: residual(n, 0.0), lambda n: residual(n, 1.0), n=200_000)
    assert res.epsilon_lower > 1.0, res
    guarantee = collusion_guarantee(5, 4, scale=1.0, delta=0.05)
    res_d = check_dp(
        lambda n: residual(n, 0.0), lambda n: residual(n, 1.0), n=200_000, delta=guarantee.delta
    )
    assert res_d.consistent_with(guarantee.epsilon), (res_d, guarantee)


def test_entry_records_the_collusion_guarantee(ledger: Ledger) -> None:
    mech = make_gamma_dlpa(1.0, parties=5, colluders=3, collusion_delta=1e-6)
    entry = mech.entry()
    assert isinstance(entry, DistributedLaplace)
    assert entry.epsilon == pytest.approx(1.0) and entry.delta == 0.0
    assert entry.colluders == 3 and entry.colluder_delta == 1e-6
    assert entry.colluder_epsilon == pytest.approx(5.82, abs=0.02)
    mech(np.zeros((5, 4)), scope=ledger)
    (record,) = ledger._charges.values()
    assert record.entry.colluder_epsilon == entry.colluder_epsilon
    assert "against_3_colluders" in repr(mech)
    # round trip through the ledger's storage format
    assert type(entry).from_dict(entry.to_dict()) == entry


def test_charging_the_colluders_guarantee() -> None:
    led = Ledger(Guarantee(3.0))
    mech = GammaDLPA(parties=5, scale=1.0, colluders=1, charge_colluders=True)
    assert mech.epsilon == pytest.approx(1.4428, abs=1e-4)
    mech(np.zeros((5, 2)), scope=led)
    assert led.spent().epsilon == pytest.approx(1.4428, abs=1e-4)
    assert mech.privacy_map().epsilon == pytest.approx(1.4428, abs=1e-4)


def test_gamma_shape_parameter() -> None:
    """Seed 003 writes Gamma(1/K, 1/s) with *rate* 1/s: numpy's scale is s."""
    mech = make_gamma_dlpa(scale=3.0, parties=2)
    shares = mech.shares(N)
    assert_variance(shares.sum(axis=0), 2 * 9.0, mean=0.0)


# ------------------------------------------------- integer Polya shares (discrete=True)
def test_discrete_shares_sum_to_the_discrete_laplace(ledger: Ledger) -> None:
    """sum_k (N_k - N'_k), N ~ NB(1/K, 1 - e^{-1/b}), is discrete Laplace(b) (chi-square)."""
    mech = make_gamma_dlpa(scale=2.0, parties=4, discrete=True)
    out = mech(np.zeros((4, N), dtype=np.int64), scope=ledger)
    assert out.dtype.kind == "i"
    q = math.exp(-1 / 2.0)
    z = np.arange(-40, 41)
    pmf = (1 - q) / (1 + q) * q ** np.abs(z)
    assert_frequencies(np.clip(out, -40, 40) + 40, pmf / pmf.sum())


def test_discrete_colluders_epsilon_is_the_supremum_of_the_loss() -> None:
    """log p(0) - log p(S) equals the brute-force sup over outputs of the privacy loss."""
    from scipy import special
    from scipy import stats as st

    from privet.mechanisms.polya import discrete_residual_epsilon

    for parties, colluders, sens, scale in [(5, 3, 2.0, 2.0), (4, 1, 1.0, 0.7), (3, 2, 3.0, 5.0)]:
        a = (parties - colluders) / parties
        logf = st.nbinom.logpmf(np.arange(6000), a, -math.expm1(-1 / scale))

        def logp(z: int, logf: np.ndarray = logf) -> float:
            return float(special.logsumexp(logf[:4000] + logf[abs(z) : 4000 + abs(z)]))

        brute = max(logp(z) - logp(z - int(sens)) for z in range(-60, 60))
        got = discrete_residual_epsilon(parties, colluders, sens, scale)
        assert brute <= got <= brute + 1e-8


def test_discrete_colluders_keep_a_pure_guarantee_for_every_coalition(ledger: Ledger) -> None:
    mech = make_gamma_dlpa(1.0, parties=5, colluders=3, discrete=True, charge_colluders=True)
    g = mech.collusion_guarantee()
    assert math.isfinite(g.pure_epsilon) and g.delta == 0.0
    assert collusion_guarantee(5, 3, scale=1.0).pure_epsilon == math.inf  # continuous shares
    eps = [mech.collusion_guarantee(t).epsilon for t in range(5)]
    assert eps[0] == pytest.approx(1.0) and all(x < y for x, y in itertools.pairwise(eps))
    mech(np.zeros((5, 3), dtype=int), scope=ledger)
    assert ledger.spent().epsilon == pytest.approx(g.epsilon)
    (record,) = ledger._charges.values()
    assert record.entry.discrete and record.entry.colluder_epsilon == pytest.approx(g.epsilon)


def test_discrete_shares_refuse_real_values(ledger: Ledger) -> None:
    mech = make_gamma_dlpa(1.0, parties=2, discrete=True)
    with pytest.raises(InvalidParameterError, match="integer"):
        mech(np.array([[0.5], [1.0]]), scope=ledger)
    assert ledger.spent().epsilon == 0.0
