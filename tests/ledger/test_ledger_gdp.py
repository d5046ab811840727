"""The Gaussian-DP accountant (Dong, Roth & Su): exact for compositions of Gaussians.

Issue 18 asks the ledger to be as tight as a privacy-loss-distribution accountant for
the Gaussian mechanism; for Gaussians the PLD answer is the mu-GDP curve. These tests
check the curve against a numerical hockey-stick divergence of two normals, and that the
ledger uses it (sequential: mu adds in squares; partitions: the largest mu).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privet.errors import BudgetExceededError, InvalidParameterError
from privet.ledger import (
    ADD_REMOVE,
    DiscreteGaussian,
    Gaussian,
    Guarantee,
    Laplace,
    Ledger,
    PrivacyPlan,
)
from privet.ledger.composition import (
    Cost,
    amplify_cost,
    gdp_delta,
    gdp_to_epsilon,
    zcdp_to_epsilon,
)


def _hockey_stick(mu: float, eps: float) -> float:
    """sup_S P[N(mu,1) in S] - e^eps P[N(0,1) in S], integrated numerically."""
    f = lambda x: max(0.0, stats.norm.pdf(x, mu) - math.exp(eps) * stats.norm.pdf(x))  # noqa: E731
    value, _ = integrate.quad(f, -20 + mu, 20 + mu, limit=400, points=[mu / 2 + eps / mu])
    return value


@pytest.mark.parametrize(
    ("mu", "eps"), [(0.2, 0.1), (0.5, 0.5), (1.0, 1.0), (1.0, 3.0), (3.0, 2.0)]
)
def test_the_gdp_curve_is_the_gaussians_hockey_stick_divergence(mu, eps):
    assert gdp_delta(mu, eps) == pytest.approx(_hockey_stick(mu, eps), rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_conversion_is_tight_and_never_worse_than_zcdp(mu, delta):
    eps = gdp_to_epsilon(mu, delta)
    assert gdp_delta(mu, eps) <= delta * (1 + 1e-9)
    assert gdp_delta(mu, eps * (1 - 1e-6)) > delta  # the smallest such epsilon
    assert eps <= zcdp_to_epsilon(mu * mu / 2, delta)


def test_the_ledger_composes_gaussians_exactly_and_beats_zcdp():
    led = Ledger(budget=Guarantee(10.0, 1e-5))
    sigmas = [4.0, 5.0, 6.0] * 8
    for s in sigmas:
        led.root.charge(Gaussian(sigma=s, sensitivity=1.0), mechanism="gaussian", caller="t")
    mu = math.sqrt(sum(1 / s**2 for s in sigmas))
    spent = led.spent()
    assert spent.epsilon == pytest.approx(gdp_to_epsilon(mu, 1e-5), rel=1e-9)
    assert spent.epsilon < zcdp_to_epsilon(mu * mu / 2, 1e-5)


def test_partitions_take_the_largest_mu_and_other_releases_add_up():
    led = Ledger(budget=Guarantee(10.0, 1e-5))
    parts = led.root.partition(3)
    for part, s in zip(parts, (2.0, 3.0, 9.0), strict=True):
        part.charge(Gaussian(sigma=s, sensitivity=1.0), mechanism="gaussian", caller="t")
    led.root.charge(Laplace(scale=4.0, sensitivity=1.0), mechanism="laplace", caller="t")
    gdp_view = gdp_to_epsilon(0.5, 1e-5) + 0.25
    assert led.bounds()["gdp"].epsilon == pytest.approx(gdp_view, rel=1e-9)
    # The PLD accountant composes the largest Gaussian (mu = 1/2) with the Laplace
    # entry's curve, randomised response at 1/4 (it covers the discrete Laplace):
    # delta(eps) = p delta_G(eps - 1/4) + (1 - p) delta_G(eps + 1/4), p = e^(1/4) / (1 + e^(1/4)).
    p = 1 / (1 + math.exp(-0.25))

    def delta(eps: float) -> float:
        return p * gdp_delta(0.5, eps - 0.25) + (1 - p) * gdp_delta(0.5, eps + 0.25)

    lo, hi = 0.0, gdp_view
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta(mid) > 1e-5 else (lo, mid)
    spent = led.spent()
    assert spent.epsilon >= hi and spent.epsilon == pytest.approx(hi, rel=1e-4)
    assert spent.epsilon < gdp_view


def test_a_plan_calibrated_on_the_ledger_uses_the_tighter_bound():
    """Budget check and plan cost read the same accountant (no formula outside the ledger)."""
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    k = 24
    sigma = np.sqrt(k) / 0.2  # each mu_i = 0.2 / sqrt(k): mu = 0.2 in all
    for _ in range(k):
        led.root.charge(Gaussian(sigma=sigma, sensitivity=1.0), mechanism="gaussian", caller="t")
    assert led.spent().epsilon == pytest.approx(gdp_to_epsilon(0.2, 1e-5), rel=1e-6)
    assert led.spent().epsilon < 0.73


def _gaussian_plan(sigma: float, delta: float | None) -> PrivacyPlan:
    plan = PrivacyPlan(caller="t", delta=delta)
    for _ in range(4):
        plan.charge(Gaussian(sigma=sigma, sensitivity=1.0), mechanism="gaussian")
    return plan


def test_a_plan_is_reserved_at_its_own_delta_so_a_second_gaussian_fit_fits():
    """A reservation holds an (epsilon, delta) amount: at the plan's own delta
    (``PrivacyPlan.delta``) two fits of the same Gaussian plan both fit, and the ledger
    composes their charges exactly."""
    led = Ledger(budget=Guarantee(10.0, 1e-5))
    plan = _gaussian_plan(4.0, 1e-6)
    mu = math.sqrt(4) / 4.0  # four Gaussians of sensitivity 1: mu = sqrt(4) / sigma
    for _ in range(2):
        with led.reserve(plan) as res:
            assert res.amount.delta == 1e-6
            assert res.amount.epsilon == pytest.approx(gdp_to_epsilon(mu, 1e-6), rel=1e-6)
            for c in plan.charges:
                led.root.charge(c.entry, mechanism=c.mechanism)
        assert res.used() == res.amount  # the plan is exactly what was charged
    # two fits: mu composes as sqrt(mu1^2 + mu2^2), converted at the budget's delta
    assert led.spent().epsilon == pytest.approx(gdp_to_epsilon(math.sqrt(2) * mu, 1e-5), rel=1e-6)

    # A plan with no delta of its own is reserved at the budget's whole delta. Its amount
    # then leaves no delta for a second one; the check composes the plan's own cost
    # instead (Gaussian DP), so the second fit fits, and the figures are the same.
    whole = Ledger(budget=Guarantee(10.0, 1e-5))
    for _ in range(2):
        with whole.reserve(_gaussian_plan(4.0, None)) as res:
            assert res.amount.delta == 1e-5
            for c in plan.charges:
                whole.root.charge(c.entry, mechanism=c.mechanism)
    assert whole.spent().epsilon == pytest.approx(led.spent().epsilon, rel=1e-12)
    # a budget below the composed cost still refuses, and charges nothing
    tight = Ledger(budget=Guarantee(led.spent().epsilon * 0.99, 1e-5))
    with tight.reserve(_gaussian_plan(4.0, None)):
        for c in plan.charges:
            tight.root.charge(c.entry, mechanism=c.mechanism)
    with pytest.raises(BudgetExceededError):
        tight.reserve(_gaussian_plan(4.0, None))
    assert len(tight.charges) == 4


def test_a_plan_delta_above_the_budget_is_reserved_at_the_budget_and_bad_ones_refused():
    led = Ledger(budget=Guarantee(10.0, 1e-7))
    with led.reserve(_gaussian_plan(4.0, 1e-3)) as res:
        assert res.amount.delta == 1e-7
    for bad in (0.0, -1e-6, 1.0, 2.0, float("nan")):
        with pytest.raises(InvalidParameterError, match="delta"):
            led.reserve(_gaussian_plan(4.0, bad))
    assert led.charges == [] and led.reserved() == Guarantee(0.0)


def test_an_unbounded_budget_reserves_a_plan_at_its_own_delta():
    """``Guarantee.unbounded()`` is (inf, 0): it limits nothing, so a Gaussian plan is
    reserved at the plan's delta, not capped at the budget's 0 (where every Gaussian
    costs epsilon = inf). What the fit used is then finite; what the ledger has spent,
    stated at the budget's delta of 0, stays inf, which is also true."""
    led = Ledger(budget=Guarantee.unbounded())
    plan = _gaussian_plan(4.0, 1e-6)
    mu = math.sqrt(4) / 4.0
    with led.reserve(plan) as res:
        for c in plan.charges:
            led.root.charge(c.entry, mechanism=c.mechanism)
    assert res.amount.delta == 1e-6
    assert res.used().delta == 1e-6
    assert res.used().epsilon == pytest.approx(gdp_to_epsilon(mu, 1e-6), rel=1e-6)
    assert math.isinf(led.spent().epsilon)
    for bad in (0.0, 1.0, 2.0):
        with pytest.raises(InvalidParameterError, match="delta"):
            led.reserve(_gaussian_plan(4.0, bad))


def _discrete_gaussian_epsilon(sigma: float, delta: float) -> float:
    """Exact epsilon at ``delta`` of N_Z(0, sigma^2) against N_Z(1, sigma^2)
    (Canonne, Kamath & Steinke 2020, Thm. 7: the hockey-stick divergence summed over
    the integers), by bisection on epsilon, rounded down."""
    from scipy.special import logsumexp

    y = np.arange(-60 * math.ceil(sigma) - 60, 60 * math.ceil(sigma) + 61)
    lp = -(y**2) / (2 * sigma**2)
    lq = -((y - 1) ** 2) / (2 * sigma**2)
    lp, lq = lp - logsumexp(lp), lq - logsumexp(lq)

    def hockey(eps: float) -> float:
        m = lp > lq + eps
        return float(np.sum(np.exp(lp[m]) * -np.expm1(lq[m] + eps - lp[m])))

    lo, hi = 0.0, 50.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hockey(mid) > delta else (lo, mid)
    return lo


@pytest.mark.parametrize("sigma", [0.7, 1.0, 2.0])
def test_a_discrete_gaussian_is_not_charged_as_a_continuous_ones_gdp(sigma):
    """The discrete Gaussian has the continuous one's zCDP but not its GDP curve: at
    sigma = 1, delta = 1e-5 its exact epsilon is 4.430, the GDP figure 4.377. Its entry
    has no GDP view, so the ledger never states less than the exact figure."""
    exact = _discrete_gaussian_epsilon(sigma, 1e-5)
    assert gdp_to_epsilon(1 / sigma, 1e-5) < exact  # the continuous curve is below it
    entry = DiscreteGaussian(sigma=sigma, sensitivity=1.0)
    assert entry.rho == pytest.approx(1 / (2 * sigma**2))
    led = Ledger(budget=Guarantee(100.0, 1e-5))
    led.root.charge(entry, mechanism="gaussian", caller="t")
    assert led.spent().epsilon >= exact
    # a budget between the GDP figure and the exact one is refused
    led = Ledger(budget=Guarantee((gdp_to_epsilon(1 / sigma, 1e-5) + exact) / 2, 1e-5))
    with pytest.raises(BudgetExceededError):
        led.root.charge(entry, mechanism="gaussian", caller="t")


def test_a_discrete_gaussian_on_a_poisson_subsample_gets_no_sampled_gaussian_curve():
    cont = Cost.of(Gaussian(sigma=1.0, sensitivity=1.0))
    disc = Cost.of(DiscreteGaussian(sigma=1.0, sensitivity=1.0))
    assert cont.mu2 == 1.0 and disc.mu2 == 0.0
    assert disc.rho == cont.rho and disc.rdp == cont.rdp  # the zCDP/RDP views stay
    amp_disc = amplify_cost(disc, 0.01, "poisson", ADD_REMOVE, 1e-5)
    amp_cont = amplify_cost(cont, 0.01, "poisson", ADD_REMOVE, 1e-5)
    plain = Cost.of_guarantee(Guarantee(amp_disc.eps, amp_disc.delta))
    assert amp_disc == plain  # only its amplified (eps, delta)
    assert amp_cont.rdp != Cost.of_guarantee(Guarantee(amp_cont.eps, amp_cont.delta)).rdp
