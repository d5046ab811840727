"""The private selection entry (Papernot & Steinke 2022, Thm. 2) and the base run's curve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.errors import BudgetExceededError, InvalidParameterError
from privet.ledger import Entry, Gaussian, Guarantee, Ledger, NeighbouringRelation, PlanNode
from privet.ledger.renyi import RDP_ORDERS
from privet.ledger.selection import (
    PrivateSelection,
    base_run_curve,
    expected_runs,
    gamma_for_mean,
    sample_runs,
)


def _theorem_2(tau, a, a_hat, tau_hat, eta, gamma):
    """Papernot & Steinke (2022), Thm. 2, written out for one (lambda, lambda_hat)."""
    if eta == 0:
        mean = (1 / gamma - 1) / math.log(1 / gamma)
    else:
        mean = eta * (1 - gamma) / (gamma * (1 - gamma**eta))
    return (
        tau
        + (1 + eta) * (1 - 1 / a_hat) * tau_hat
        + (1 + eta) * math.log(1 / gamma) / a_hat
        + math.log(mean) / (a - 1)
    )


@pytest.mark.parametrize("eta", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5])
def test_curve_is_theorem_2_at_the_best_lambda_hat(eta, rho):
    gamma = gamma_for_mean(eta, 8.0)
    entry = PrivateSelection(base_rdp=tuple(a * rho for a in RDP_ORDERS), eta=eta, gamma=gamma)
    extras = [_theorem_2(0.0, 2.0, 1.0, 0.0, eta, gamma) - math.log(expected_runs(eta, gamma))]
    extras += [
        _theorem_2(0.0, 2.0, ah, ah * rho, eta, gamma) - math.log(expected_runs(eta, gamma))
        for ah in RDP_ORDERS
    ]
    for a, got in zip(RDP_ORDERS, entry.rdp_curve(), strict=True):
        want = a * rho + min(extras) + math.log(expected_runs(eta, gamma)) / (a - 1)
        assert got == pytest.approx(want, rel=1e-12)
    # epsilon: the Canonne-Kamath-Steinke conversion of that curve, at the best order
    eps = min(
        t + math.log1p(-1 / a) - (math.log(1e-5) + math.log(a)) / (a - 1)
        for a, t in zip(RDP_ORDERS, entry.rdp_curve(), strict=True)
    )
    assert entry.epsilon == pytest.approx(max(0.0, eps), rel=1e-12)
    assert entry.delta == 1e-5


def test_selection_costs_more_than_one_run_and_grows_with_the_runs():
    """The best of K runs is not free (about (2 + eta) times a run's RDP plus
    log E[K] terms) but does not grow like K runs composed."""
    rho = 0.005
    run = Gaussian(sigma=1 / math.sqrt(2 * rho), sensitivity=1.0)
    one = Ledger(budget=Guarantee(100.0, 1e-5))
    one.root.charge(run, mechanism="gaussian")
    curve = tuple(a * rho for a in RDP_ORDERS)
    few = PrivateSelection(base_rdp=curve, gamma=gamma_for_mean(0.0, 2.0))
    many = PrivateSelection(base_rdp=curve, gamma=gamma_for_mean(0.0, 50.0))
    assert one.spent().epsilon < few.epsilon < many.epsilon
    fifty = Ledger(budget=Guarantee(100.0, 1e-5))
    for _ in range(50):
        fifty.root.charge(run, mechanism="gaussian")
    assert many.epsilon < fifty.spent().epsilon


def test_ledger_charges_the_entry_as_its_epsilon_delta_and_reads_it_back(tmp_path):
    curve = tuple(a * 0.01 for a in RDP_ORDERS)
    entry = PrivateSelection(base_rdp=curve, eta=1.0, gamma=0.2, delta=1e-6)
    led = Ledger(budget=Guarantee(5.0, 1e-5))
    led.root.charge(entry, mechanism="private_selection")
    assert led.spent().epsilon == pytest.approx(entry.epsilon)
    assert led.spent().delta == pytest.approx(1e-6)
    back = Ledger.from_json(led.to_json())
    assert back.charges[0].entry == entry
    assert Entry.from_dict(entry.to_dict()) == entry
    path = tmp_path / "budget.sqlite"
    with Ledger.open(path, dataset="d", budget=Guarantee(5.0, 1e-5)) as disk:
        disk.root.charge(entry, mechanism="private_selection")
    with Ledger.open(path, dataset="d") as disk:
        assert disk.charges[0].entry == entry
        # too little left for a second one: refused, nothing charged
        with pytest.raises(BudgetExceededError):
            disk.root.charge(PrivateSelection(base_rdp=tuple(a * 5 for a in RDP_ORDERS)),
                             mechanism="private_selection")  # fmt: skip
        assert len(disk.charges) == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_rdp": (0.1,) * 3},
        {"base_rdp": (-0.1,) * len(RDP_ORDERS)},
        {"base_rdp": (0.1,) * len(RDP_ORDERS), "gamma": 1.0},
        {"base_rdp": (0.1,) * len(RDP_ORDERS), "eta": -1.0},
        {"base_rdp": (0.1,) * len(RDP_ORDERS), "delta": 2.0},
    ],
)
def test_malformed_entry_is_refused(kwargs):
    with pytest.raises(InvalidParameterError):
        PrivateSelection(**kwargs)


@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_number_of_runs_has_the_stated_mean(eta):
    """20,000 draws of K: the sample mean lies within 4.5 standard errors of E[K]
    (a false alarm below 1e-5); K >= 1 always."""
    gamma = gamma_for_mean(eta, 6.0)
    assert expected_runs(eta, gamma) == pytest.approx(6.0, rel=1e-9)
    rng = np.random.default_rng(0)
    ks = np.array([sample_runs(eta, gamma, rng) for _ in range(20000)])
    assert ks.min() >= 1
    assert abs(ks.mean() - 6.0) <= 4.5 * ks.std() / math.sqrt(len(ks))


def test_base_run_is_the_costliest_candidate_and_the_score_a_partition_part():
    def plan(mu):
        p = PlanNode()
        p.charge(Gaussian(sigma=1 / mu, sensitivity=1.0), mechanism="gaussian")
        return p

    cheap, dear, score = plan(0.1), plan(0.3), plan(0.2)
    add = base_run_curve([cheap, dear], score, NeighbouringRelation.ADD_REMOVE, 1e-5)
    assert add == pytest.approx([a * 0.3**2 / 2 for a in RDP_ORDERS])  # max, not a sum
    swap = base_run_curve([cheap, dear], score, NeighbouringRelation.REPLACE_ONE, 1e-5)
    # replace-one: a replaced record may leave the training part for the validation one
    assert swap[0] >= add[0] + RDP_ORDERS[0] * 0.2**2 / 2 * (1 - 1e-9)


def test_plan_without_a_renyi_view_is_refused():
    p = PlanNode()
    p.charge(Guarantee(0.5, 1e-6), mechanism="approx")
    with pytest.raises(InvalidParameterError, match="Rényi"):
        base_run_curve([p], PlanNode(), NeighbouringRelation.ADD_REMOVE, 1e-5)
