"""Composition arithmetic checked against closed forms and independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _ledger_helpers import close_enough
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from privet.errors import InvalidParameterError, UnsupportedEntryError
from privet.ledger import (
    ADD_REMOVE,
    REPLACE_ONE,
    ApproxDP,
    Cost,
    Gaussian,
    Guarantee,
    Ledger,
    PlanNode,
    PureDP,
    amplify,
    best_guarantee,
    zcdp_to_epsilon,
)
from privet.ledger.composition import sequential
from privet.ledger.renyi import RDP_ORDERS

eps_st = st.floats(0.0, 20.0, allow_nan=False)
rate_st = st.floats(1e-6, 1.0, allow_nan=False)
delta_st = st.floats(0.0, 0.5, allow_nan=False)


# ------------------------------------------------------------------ amplification
@settings(max_examples=300, deadline=None)
@given(eps=eps_st, delta=delta_st, rate=rate_st)
def test_amplification_is_exact_and_never_exceeds_unamplified(eps, delta, rate):
    g = amplify(Guarantee(eps, delta), rate, "poisson", ADD_REMOVE)
    exact = math.log1p(rate * math.expm1(eps))
    assert close_enough(g.epsilon, exact, 1e-12)
    assert g.epsilon <= eps
    assert g.epsilon >= rate * eps * (1 - 1e-12)  # the linearised g*eps is a lower bound
    assert close_enough(g.delta, rate * delta, 1e-12)
    w = amplify(Guarantee(eps, delta), rate, "without_replacement", REPLACE_ONE)
    assert w == g


@settings(max_examples=100, deadline=None)
@given(eps=eps_st, delta=delta_st)
def test_amplification_at_rate_one_is_the_identity(eps, delta):
    assert amplify(Guarantee(eps, delta), 1.0, "poisson", ADD_REMOVE) == Guarantee(eps, delta)


@settings(max_examples=100, deadline=None)
@given(eps=eps_st, r1=rate_st, r2=rate_st)
def test_amplification_is_monotone_in_rate(eps, r1, r2):
    lo, hi = sorted((r1, r2))
    a = amplify(Guarantee(eps), lo, "poisson", ADD_REMOVE).epsilon
    b = amplify(Guarantee(eps), hi, "poisson", ADD_REMOVE).epsilon
    assert a <= b * (1 + 1e-12)


def test_amplification_known_value():
    # ln(1 + 0.1 (e - 1)) = 0.158565...
    g = amplify(Guarantee(1.0), 0.1, "poisson", ADD_REMOVE)
    assert g.epsilon == pytest.approx(0.158565, abs=1e-6)


def test_amplification_of_a_large_epsilon_does_not_overflow():
    g = amplify(Guarantee(800.0), 0.5, "poisson", ADD_REMOVE)
    assert g.epsilon == pytest.approx(800.0 + math.log(0.5), rel=1e-12)


@pytest.mark.parametrize(
    ("rate", "method", "relation", "error", "match"),
    [
        (0.1, "bernoulli", ADD_REMOVE, InvalidParameterError, "Unknown sampling method"),
        (0.0, "poisson", ADD_REMOVE, InvalidParameterError, r"\(0, 1\]"),
        (-0.5, "poisson", ADD_REMOVE, InvalidParameterError, r"\(0, 1\]"),
        (1.01, "poisson", ADD_REMOVE, InvalidParameterError, r"\(0, 1\]"),
        (math.nan, "poisson", ADD_REMOVE, InvalidParameterError, r"\(0, 1\]"),
        ("a", "poisson", ADD_REMOVE, InvalidParameterError, r"\(0, 1\]"),
        (0.1, "poisson", REPLACE_ONE, UnsupportedEntryError, "add/remove neighbours only"),
        (0.1, "without_replacement", ADD_REMOVE, UnsupportedEntryError, "replace-one"),
    ],
)
def test_amplification_refuses_unproven_pairings(rate, method, relation, error, match):
    with pytest.raises(error, match=match):
        amplify(Guarantee(1.0), rate, method, relation)


# ------------------------------------------------------------------ zCDP conversion
def _gaussian_delta(eps: float, rho: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with rho = Delta^2 / (2 sigma^2)
    (Balle & Wang 2018, Thm. 8), with Delta = 1."""
    sigma = math.sqrt(1 / (2 * rho))
    return norm.cdf(-eps * sigma + 1 / (2 * sigma)) - math.exp(eps) * norm.cdf(
        -eps * sigma - 1 / (2 * sigma)
    )


@settings(max_examples=200, deadline=None)
@given(
    rho=st.floats(1e-5, 20.0),
    delta=st.floats(1e-12, 0.2),
)
def test_zcdp_conversion_is_sound_for_the_gaussian(rho, delta):
    """The Gaussian is rho-zCDP, so a valid conversion can never be below its exact eps."""
    eps = zcdp_to_epsilon(rho, delta)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
    assert _gaussian_delta(eps, rho) <= delta * (1 + 1e-6) + 1e-15


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.125, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_zcdp_conversion_agrees_with_opendp(rho, delta):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    gauss = dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        scale=math.sqrt(1 / (2 * rho)),
    )
    assert gauss.map(1.0) == pytest.approx(rho)
    theirs = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta).map(1.0)[0]
    ours = zcdp_to_epsilon(rho, delta)
    assert ours >= theirs * (1 - 1e-9)  # never tighter than OpenDP's conversion
    assert ours <= theirs * (1 + 1e-4)  # and not needlessly loose


def test_zcdp_conversion_edge_cases():
    assert zcdp_to_epsilon(0.0, 1e-6) == 0.0
    assert zcdp_to_epsilon(0.5, 0.0) == math.inf
    assert zcdp_to_epsilon(math.inf, 1e-6) == math.inf


# ------------------------------------------------------------------ advanced composition
def _kov(eps: list[float], slack: float) -> float:
    """Kairouz, Oh & Viswanath (2015) Thm 3.5, heterogeneous, third form."""
    kl = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in eps)
    return kl + math.sqrt(2 * math.log(1 / slack) * sum(e * e for e in eps))


def _rr_rdp_epsilon(eps: list[float], delta: float) -> float:
    """The RDP accountant's bound, written out: each eps-DP release at its randomised
    response's Rényi divergence (summed from the two outcomes' probabilities), then
    Canonne, Kamath & Steinke's conversion at the best order."""
    best = math.inf
    for a in RDP_ORDERS:
        tau = 0.0
        for e in eps:
            lp, lq = -math.log1p(math.exp(-e)), -math.log1p(math.exp(e))  # log p, log(1-p)
            div = np.logaddexp(a * lp + (1 - a) * lq, a * lq + (1 - a) * lp) / (a - 1)
            tau += min(div, e, a * e * e / 2)
        best = min(best, tau + math.log(1 - 1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return max(0.0, best)


@settings(max_examples=200, deadline=None)
@given(
    eps=st.lists(st.floats(1e-4, 2.0), min_size=1, max_size=60),
    delta=st.floats(1e-12, 0.1),
)
def test_best_guarantee_is_the_minimum_of_the_accountants(eps, delta):
    cost = sequential(Cost.of(PureDP(epsilon=e)) for e in eps)
    bound = best_guarantee(cost, delta)
    basic = math.fsum(eps)
    adv = _kov(eps, delta)
    zc = zcdp_to_epsilon(sum(e * e / 2 for e in eps), delta)
    rd = _rr_rdp_epsilon(eps, delta)
    assert bound.guarantee.epsilon <= basic * (1 + 1e-9)
    assert bound.guarantee.epsilon == pytest.approx(min(basic, adv, zc, rd), rel=1e-9)
    assert bound.guarantee.delta <= delta
    if bound.method == "basic":
        assert bound.guarantee.delta == 0.0


def test_best_guarantee_is_basic_at_delta_zero():
    cost = sequential(Cost.of(PureDP(epsilon=0.01)) for _ in range(1000))
    bound = best_guarantee(cost, 0.0)
    assert bound.method == "basic"
    assert bound.guarantee.epsilon == pytest.approx(10.0)


def test_advanced_composition_drv_sanity():
    """k-fold eps: KOV is at most the Dwork-Rothblum-Vadhan bound."""
    k, e, d = 200, 0.05, 1e-6
    cost = sequential(Cost.of(PureDP(epsilon=e)) for _ in range(k))
    bound = best_guarantee(cost, d)
    drv = math.sqrt(2 * k * math.log(1 / d)) * e + k * e * math.expm1(e)
    assert bound.method in ("advanced", "zcdp", "rdp")
    assert bound.guarantee.epsilon <= drv
    assert bound.guarantee.epsilon < k * e


@pytest.mark.parametrize("inner_stable", [False, True])
def test_a_fixed_size_sample_in_a_part_amplifies_a_substitution(inner_stable):
    """Replace-one; a split {A, B} by value; in each part a sample of half its records
    (m of n, a fixed size), split again (by value, or stably by owner) and a count
    (eps = 1) charged in each inner part. The replaced record x leaves A for B. A's sample
    holds x with probability 1/2 and otherwise another record of A, which can sit in the
    other inner part: with A's other records all there, A's two counts move by (1, -1)
    with probability 1/2, a loss of ln(1/2 + e^2/2) at the far tails, and B's of
    -ln(1/2 + e^-2/2): 2.0 in all, pure DP. The ledger charged 1.43 (1.24 with the
    stable inner split): it amplified one record's cost (1), not a substitution's (2)."""
    led = Ledger(budget=Guarantee(100.0), relation="replace_one")
    plan = PlanNode()
    for part in led.root.partition(["A", "B"]):
        sample = part.subsample(0.5, "without_replacement")
        for inner in sample.partition(["a", "b"], stable=inner_stable):
            inner.charge(Guarantee(1.0), mechanism="laplace")
    plan.partition(2).subsample(0.5, "without_replacement").partition(
        2, stable=inner_stable
    ).charge(Guarantee(1.0), mechanism="laplace")
    g = 0.5
    achieved = math.log(1 - g + g * math.e**2) - math.log(1 - g + g * math.e**-2)
    assert achieved == pytest.approx(2.0)
    assert led.spent().epsilon >= achieved
    assert led.plan_cost(plan).epsilon == pytest.approx(led.spent().epsilon, rel=1e-12)
    # with both records in one part the sample sees their substitution only (unchanged)
    led = Ledger(budget=Guarantee(100.0), relation="replace_one")
    sample = led.root.subsample(0.5, "without_replacement")
    for inner in sample.partition(["a", "b"], stable=inner_stable):
        inner.charge(Guarantee(1.0), mechanism="laplace")
    inside = 1.0 if inner_stable else 2.0
    assert led.spent().epsilon == pytest.approx(math.log1p(g * math.expm1(inside)))


def test_advanced_composition_accounts_the_releases_own_deltas():
    cost = sequential(Cost.of(ApproxDP(epsilon=0.05, delta=1e-7)) for _ in range(100))
    # The releases already use 1e-5; nothing is left for advanced composition.
    assert best_guarantee(cost, 1e-5).method == "basic"
    bound = best_guarantee(cost, 1e-4)
    assert bound.guarantee.delta == 1e-4
    assert bound.guarantee.epsilon == pytest.approx(_kov([0.05] * 100, 1e-4 - 1e-5), rel=1e-9)


def test_gaussian_with_an_eps_delta_statement_uses_the_better_view():
    g = Gaussian(sigma=10.0, sensitivity=1.0, epsilon=0.5, delta=1e-7)
    cost = Cost.of(g)
    assert cost.rho == pytest.approx(1 / 200)
    single = best_guarantee(cost, 1e-6)
    assert single.guarantee.epsilon <= 0.5


# ------------------------------------------------------------------ Guarantee
@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        (-1.0, 0.0, ">= 0"),
        (math.nan, 0.0, "nan"),
        ("x", 0.0, "must be a number"),
        (None, 0.0, "must be a number"),
        (1.0, 1.0, r"\[0, 1\)"),
        (1.0, -0.1, r"\[0, 1\)"),
        (1.0, math.nan, r"\[0, 1\)"),
        (1.0, "x", "must be a number"),
    ],
)
def test_guarantee_rejects_invalid_values(eps, delta, match):
    with pytest.raises(InvalidParameterError, match=match):
        Guarantee(eps, delta)


def test_guarantee_fits_in_tolerates_rounding_only():
    total = math.fsum([0.1] * 10)
    assert Guarantee(sum([0.1] * 10)).fits_in(Guarantee(1.0))
    assert Guarantee(total).fits_in(Guarantee(1.0))
    assert not Guarantee(1.0 + 1e-6).fits_in(Guarantee(1.0))
    assert not Guarantee(0.5, 2e-6).fits_in(Guarantee(1.0, 1e-6))
    assert Guarantee(math.inf).fits_in(Guarantee.unbounded())
    assert not Guarantee(math.inf).fits_in(Guarantee(1e300))


def test_guarantee_str():
    assert str(Guarantee(0.5)) == "ε=0.5"
    assert str(Guarantee(0.5, 1e-6)) == "ε=0.5, δ=1e-06"
    assert str(Guarantee.unbounded()) == "ε=∞"


@pytest.mark.parametrize("delta", [1e-6, 1e-3, 1e-2])
def test_a_plans_cost_at_a_delta_is_what_spent_proves_once_it_is_charged(delta):
    """``plan_cost(plan, delta=)`` gives the plan's smallest epsilon within ``delta``, the
    figure ``spent(delta=)`` reports after charging exactly the plan: here 8 Laplace counts
    at 0.125 and 4 Gaussians, in a partition of 3 parts, and below the pure sum."""
    led = Ledger(budget=Guarantee(100.0, 1e-3), relation="add_remove")
    plan = PlanNode()
    parts = plan.partition(3)
    gauss = Gaussian(sigma=8.0, sensitivity=1.0)
    for _ in range(8):
        parts.charge(PureDP(epsilon=0.125), mechanism="laplace")
    for _ in range(4):
        parts.charge(gauss, mechanism="gaussian")
    for part in led.root.partition(["a", "b", "c"]):
        for _ in range(8):
            part.charge(PureDP(epsilon=0.125), mechanism="laplace")
        for _ in range(4):
            part.charge(gauss, mechanism="gaussian")
    planned = led.plan_cost(plan, delta=delta)
    assert planned.delta <= delta
    assert close_enough(planned.epsilon, led.spent(delta=delta).epsilon)
    # one pure entry: at any delta no more than its epsilon, and its own epsilon at 0
    assert led.plan_cost(PureDP(epsilon=0.5), delta=delta).epsilon <= 0.5
    assert led.plan_cost(PureDP(epsilon=0.5), delta=0.0) == Guarantee(0.5)
    assert led.plan_cost(Guarantee(0.3, 1e-9), delta=delta) == Guarantee(0.3, 1e-9)


@pytest.mark.parametrize("bad", [-1e-3, 1.0, float("nan"), [0.01]])
def test_plan_cost_refuses_a_delta_that_is_not_a_probability(bad):
    led = Ledger(budget=Guarantee(1.0))
    plan = PlanNode().charge(PureDP(epsilon=0.5), mechanism="laplace")
    with pytest.raises(InvalidParameterError, match="delta"):
        led.plan_cost(plan, delta=bad)
