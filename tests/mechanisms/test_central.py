"""Central mechanisms: distribution shape, moments, charges and a DP check per mechanism.

Statistical assertions hold at confidence 1 - ALPHA (conftest); DP checks use
Clopper–Pearson bounds at confidence 0.9999.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mech_stats import ALPHA, assert_frequencies, assert_ks, assert_mean, assert_variance
from scipy import stats

from privet.ledger import (
    DiscreteGaussian,
    Exponential,
    Gaussian,
    Guarantee,
    Laplace,
    Ledger,
    zcdp_to_epsilon,
)
from privet.mechanisms import (
    ROUNDING_SLACK,
    LaplaceMechanism,
    NoisyMax,
    calibrate,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    exponential_mechanism_probabilities,
    make_discrete_laplace,
    make_exponential,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    make_report_noisy_max,
    permute_and_flip_probabilities,
)
from privet.testing import check_dp

N = 100_000


# ------------------------------------------------------------------- Laplace
def test_laplace_distribution_and_moments(ledger: Ledger) -> None:
    mech = make_laplace(0.5, sensitivity=1.0)
    x = mech(np.full(N, 3.0), scope=ledger)
    assert x.shape == (N,)
    assert_ks(x, stats.laplace(loc=3.0, scale=mech.scale).cdf)
    assert_mean(x, 3.0, mech.variance)
    assert_variance(x, mech.variance, mean=3.0)


def test_laplace_is_vectorised_and_keeps_shape(ledger: Ledger) -> None:
    mech = make_laplace(1.0)
    out = mech(np.zeros((3, 4, 5)), scope=ledger)
    assert out.shape == (3, 4, 5)
    assert len(set(out.ravel().tolist())) == 60
    assert isinstance(mech(2.0, scope=ledger), float)
    assert ledger.spent().epsilon == pytest.approx(2.0)
    assert len(ledger._charges) == 2  # one charge per call, whatever the array size


def test_laplace_entry_and_maps() -> None:
    mech = make_laplace(0.7, sensitivity=2.0)
    assert isinstance(mech.entry(), Laplace)
    assert mech.entry().epsilon == pytest.approx(0.7, rel=1e-12)
    assert mech.privacy_map(1.0).epsilon == pytest.approx(0.35, rel=1e-8)
    assert mech.check(2.0, 0.7)
    assert not mech.check(4.0, 0.7)
    assert mech.scale == pytest.approx(2.0 * (1 + ROUNDING_SLACK) / 0.7)
    r = repr(mech)
    assert "relation='add_remove'" in r and "sensitivity=2" in r and "ε=0.7" in r


def test_laplace_dp_check(ledger: Ledger) -> None:
    mech = make_laplace(1.0)
    res = check_dp(
        lambda n: mech(np.zeros(n), scope=ledger),
        lambda n: mech(np.ones(n), scope=ledger),
        n=60_000,
    )
    assert res.consistent_with(1.0), res
    assert res.epsilon_lower > 0.5, res  # the check has power: it sees most of the loss


def test_dp_check_catches_a_mis_calibrated_laplace(ledger: Ledger) -> None:
    """A Laplace with half the needed scale claims eps=1 but is 2-DP; the check proves it."""
    broken = LaplaceMechanism(scale=0.5, sensitivity=1.0)
    res = check_dp(
        lambda n: broken(np.zeros(n), scope=ledger),
        lambda n: broken(np.ones(n), scope=ledger),
        n=60_000,
    )
    assert not res.consistent_with(1.0), res


def test_discrete_laplace_pmf_and_moments(ledger: Ledger) -> None:
    mech = make_discrete_laplace(0.8, sensitivity=1.0)
    x = mech(np.full(N, 10, dtype=np.int64), scope=ledger)
    assert x.dtype == np.int64
    z = x - 10
    r = math.exp(-1 / mech.scale)
    support = np.arange(-40, 41)
    pmf = (1 - r) / (1 + r) * r ** np.abs(support)
    pmf[0] += pmf[0] * 0  # keep shape
    tail = 1 - pmf.sum()
    idx = np.clip(z, -40, 41) + 40  # 81 = tail cell
    assert_frequencies(idx, np.append(pmf, tail))
    assert_mean(z, 0.0, mech.variance)
    assert_variance(z, mech.variance, mean=0.0)


def test_discrete_laplace_dp_check(ledger: Ledger) -> None:
    mech = make_discrete_laplace(1.0)
    res = check_dp(
        lambda n: mech(np.zeros(n, dtype=np.int64), scope=ledger),
        lambda n: mech(np.ones(n, dtype=np.int64), scope=ledger),
        n=60_000,
    )
    assert res.consistent_with(1.0), res


# ------------------------------------------------------------------ Gaussian
def test_gaussian_distribution(ledger: Ledger) -> None:
    mech = make_gaussian(rho=0.125, sensitivity=1.0)
    assert mech.sigma == pytest.approx(2.0 * (1 + ROUNDING_SLACK))
    x = mech(np.full(60_000, -1.5), scope=ledger)
    assert_ks(x, stats.norm(loc=-1.5, scale=mech.sigma).cdf)
    assert_variance(x, mech.sigma**2, mean=-1.5)


def test_gaussian_discrete(ledger: Ledger) -> None:
    mech = make_gaussian(rho=0.5, discrete=True)
    assert mech.sigma == pytest.approx(1.0)
    x = mech(np.zeros(60_000, dtype=int), scope=ledger)
    assert x.dtype == np.int64
    assert_mean(x, 0.0, 1.0)


def test_the_discrete_gaussian_is_charged_without_the_continuous_ones_gdp() -> None:
    """Its exact epsilon at delta = 1e-5 (sigma = 1) is 4.430; the continuous
    Gaussian's GDP figure, 4.377, would understate it (tests/ledger/test_ledger_gdp.py)."""
    entry = make_gaussian(sigma=1.0, discrete=True).entry()
    assert isinstance(entry, DiscreteGaussian)
    assert entry.gdp_mu is None and entry.rho == pytest.approx(0.5)
    continuous = make_gaussian(sigma=1.0).entry()
    assert not isinstance(continuous, DiscreteGaussian) and continuous.gdp_mu is not None


def test_gaussian_epsilon_delta_calibration() -> None:
    mech = make_gaussian(epsilon=1.0, delta=1e-6, sensitivity=3.0)
    entry = mech.entry()
    assert isinstance(entry, Gaussian)
    assert entry.delta == 1e-6
    assert entry.epsilon <= 1.0 + 1e-9
    assert entry.epsilon == pytest.approx(1.0, rel=1e-6)
    assert zcdp_to_epsilon(mech.zcdp_map(), 1e-6) <= 1.0 + 1e-9
    assert entry.rho == pytest.approx(mech.zcdp_map())
    # zCDP-only Gaussian has no (eps, delta) statement of its own
    assert math.isinf(make_gaussian(rho=0.1).privacy_map().epsilon)
    assert calibrate_gaussian_sigma(1.0, rho=0.5, discrete=True) == pytest.approx(1.0)


def test_gaussian_dp_check() -> None:
    ledger = Ledger(Guarantee(1e9, 0.5))  # Guarantee.unbounded() has delta = 0
    mech = make_gaussian(epsilon=1.0, delta=1e-5)
    res = check_dp(
        lambda n: mech(np.zeros(n), scope=ledger),
        lambda n: mech(np.ones(n), scope=ledger),
        n=40_000,
        delta=1e-5,
    )
    assert res.consistent_with(1.0), res


def test_gaussian_zcdp_charge_needs_delta_in_budget() -> None:
    led = Ledger(Guarantee(2.0, 1e-5))
    mech = make_gaussian(rho=0.05)
    mech(np.zeros(3), scope=led)
    spent = led.spent()
    assert spent.delta > 0 and spent.epsilon < 2.0


# ---------------------------------------------------------------- selection
UTILITIES = np.array([0.0, 1.0, 2.0, 2.5, 4.0])


def test_exponential_mechanism_frequencies(ledger: Ledger) -> None:
    mech = make_exponential(1.0, sensitivity=1.0)
    assert mech.scale == 2.0
    rows = np.tile(UTILITIES, (20_000, 1))
    picks = mech(rows, scope=ledger, disjoint_rows=True)
    probs = mech.probabilities(UTILITIES)
    assert probs == pytest.approx(np.exp(UTILITIES / 2) / np.exp(UTILITIES / 2).sum())
    assert_frequencies(picks, probs)
    assert len(ledger._charges) == 1


def test_exponential_mechanism_monotone_variant(ledger: Ledger) -> None:
    mech = make_exponential(1.0, sensitivity=2.0, monotone=True)
    assert mech.scale == 2.0  # Delta / eps
    assert isinstance(mech.entry(), Exponential) and mech.entry().monotone
    picks = mech(np.tile(UTILITIES, (20_000, 1)), scope=ledger, disjoint_rows=True)
    assert_frequencies(picks, exponential_mechanism_probabilities(UTILITIES, 2.0))


def test_gumbel_noisy_max_is_the_exponential_mechanism(ledger: Ledger) -> None:
    """Two-sample chi-square: Gumbel report-noisy-max vs the exponential mechanism."""
    rnm = make_report_noisy_max(1.0, noise="gumbel")
    em = make_exponential(1.0)
    rows = np.tile(UTILITIES, (15_000, 1))
    a = np.bincount(rnm(rows, scope=ledger, disjoint_rows=True), minlength=5)
    b = np.bincount(em(rows, scope=ledger, disjoint_rows=True), minlength=5)
    res = stats.chi2_contingency(np.vstack([a, b]))
    assert res.pvalue > ALPHA, (a, b)
    assert isinstance(rnm.entry(), Exponential)


def test_exponential_noise_rnm_is_permute_and_flip_not_the_exponential_mechanism(
    ledger: Ledger,
) -> None:
    """With exponential noise report-noisy-max has the permute-and-flip distribution
    (Ding et al. 2021), which differs from the exponential mechanism's: the
    frequencies fit the former and a two-sample test separates it from Gumbel noise."""
    rnm = make_report_noisy_max(1.0, noise="exponential")
    gum = make_report_noisy_max(1.0, noise="gumbel")
    rows = np.tile(UTILITIES, (15_000, 1))
    picks = rnm(rows, scope=ledger, disjoint_rows=True)
    pf = permute_and_flip_probabilities(UTILITIES, rnm.scale)
    em = exponential_mechanism_probabilities(UTILITIES, rnm.scale)
    assert pf[-1] > em[-1] + 0.05  # PF favours the best candidate
    assert_frequencies(picks, pf)
    other = gum(rows, scope=ledger, disjoint_rows=True)
    table = np.vstack([np.bincount(picks, minlength=5), np.bincount(other, minlength=5)])
    assert stats.chi2_contingency(table).pvalue < ALPHA
    assert isinstance(rnm.entry(), NoisyMax)
    assert rnm.entry().epsilon == 1.0


def test_permute_and_flip_two_candidates_closed_form() -> None:
    # P(best) = 1 - e^{-gap/s}/2 for two candidates
    p = permute_and_flip_probabilities([0.0, 1.0], 2.0)
    assert p[1] == pytest.approx(1 - 0.5 * math.exp(-0.5), rel=1e-8)


def test_selection_returns_an_index_and_rejects_unmarked_batches(ledger: Ledger) -> None:
    mech = make_exponential(1.0)
    i = mech([1.0, 5.0, 2.0], scope=ledger)
    assert isinstance(i, int) and 0 <= i < 3
    with pytest.raises(Exception, match="disjoint_rows=True"):
        mech(np.zeros((2, 3)), scope=ledger)


@pytest.mark.parametrize("noise", ["gumbel", "exponential"])
def test_selection_dp_check(ledger: Ledger, noise: str) -> None:
    """Utilities change by at most Delta = 1 between neighbours: [1, 0] vs [0, 1]."""
    mech = make_report_noisy_max(1.0, noise=noise)
    res = check_dp(
        lambda n: mech(np.tile([1.0, 0.0], (n, 1)), scope=ledger, disjoint_rows=True),
        lambda n: mech(np.tile([0.0, 1.0], (n, 1)), scope=ledger, disjoint_rows=True),
        n=20_000,
    )
    assert res.consistent_with(1.0), res


# --------------------------------------------------------------- histograms
def test_noisy_histogram_one_charge_parallel_over_bins(ledger: Ledger) -> None:
    hist = make_noisy_histogram(0.5)
    counts = np.arange(200).reshape(50, 4)
    noisy = hist(counts, scope=ledger, caller="test", step="leaves")
    assert noisy.shape == (50, 4) and noisy.dtype == np.int64
    assert len(ledger._charges) == 1
    record = next(iter(ledger._charges.values()))
    assert record.mechanism == "noisy_histogram" and record.step == "leaves"
    assert record.entry.epsilon == pytest.approx(0.5)


def test_noisy_histogram_sensitivity_per_relation() -> None:
    assert make_noisy_histogram(1.0).sensitivity == 1
    rep = make_noisy_histogram(1.0, relation="replace_one")
    assert rep.sensitivity == 2 and rep.scale == 2.0
    many = make_noisy_histogram(1.0, contributions=16)
    assert many.sensitivity == 16 and many.scale == 16.0
    assert make_noisy_histogram(1.0, discrete=False).scale == pytest.approx(1 + ROUNDING_SLACK)


def test_noisy_histogram_moments(ledger: Ledger) -> None:
    hist = make_noisy_histogram(1.0)
    out = hist(np.full(N, 7), scope=ledger)
    r = math.exp(-1.0)
    assert_mean(out, 7, 2 * r / (1 - r) ** 2)


def test_noisy_argmax_labels_leaves(ledger: Ledger) -> None:
    hist = make_noisy_histogram(2.0)
    counts = np.zeros((3000, 4), dtype=int)
    truth = np.arange(3000) % 4
    counts[np.arange(3000), truth] = 40
    labels = hist.argmax(counts, scope=ledger)
    assert labels.shape == (3000,)
    assert (labels == truth).mean() > 0.999
    record = next(iter(ledger._charges.values()))
    assert record.mechanism == "noisy_histogram[argmax]" and len(ledger._charges) == 1
    # all-equal counts: the noisy argmax is uniform over the classes
    even = hist.argmax(np.zeros((20_000, 4), dtype=int), scope=ledger)
    assert_frequencies(even, np.full(4, 0.25))


def test_noisy_argmax_dp_check(ledger: Ledger) -> None:
    """Class counts [3, 3] vs [4, 3] (one record added to class 0)."""
    hist = make_noisy_histogram(1.0)
    res = check_dp(
        lambda n: hist.argmax(np.tile([3, 3], (n, 1)), scope=ledger),
        lambda n: hist.argmax(np.tile([4, 3], (n, 1)), scope=ledger),
        n=60_000,
    )
    assert res.consistent_with(1.0), res


# ---------------------------------------------------------------- calibration
def test_calibration_functions() -> None:
    assert calibrate_laplace_scale(0.5, 2.0, discrete=True) == 4.0
    assert calibrate_laplace_scale(0.5, 2.0) == pytest.approx(4.0 * (1 + ROUNDING_SLACK))
    mech = calibrate(lambda s: LaplaceMechanism(scale=s, sensitivity=1.0), 0.25, (1e-3, 1e3))
    assert mech.privacy_map().epsilon <= 0.25 * (1 + 1e-9)
    assert mech.scale == pytest.approx(4.0, rel=1e-6)
