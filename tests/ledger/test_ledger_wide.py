"""Wide partitions (a forest's trees) and scopes with many groups (DP-SGD's batches)
keep their costs in arrays: same figures.

:data:`privet.ledger.tree.WIDE` switches a partition with that many parts, and a
scope with that many partition or subsample groups below it, to
:class:`~privet.ledger.tree._WideCosts`, so a charge recomputes the part or group
it lands in only: a forest of k trees, or k steps of DP-SGD, charge in time
linear in k. These tests run scenarios with the switch at 2 and out of reach,
and ask for the same spend, remaining budget and refusals at every step. The
state machines in ``test_ledger_state_machine.py`` also run with the switch at 2.
"""

from __future__ import annotations

import random

import pytest

from privet.errors import BudgetExceededError
from privet.ledger import ApproxDP, Gaussian, Guarantee, Laplace, Ledger
from privet.ledger import tree as ledger_tree


def scenario(relation: str, stable: bool) -> list[tuple]:
    """A forest-like run: 80 parts, charges and refusals, a reservation, a nested partition."""
    rng = random.Random(7)
    led = Ledger(budget=Guarantee(1.5, 1e-6), relation=relation)
    parts = led.root.partition([f"tree {t}" for t in range(80)], stable=stable)
    seen = []
    for step in range(400):
        t = rng.randrange(80)
        eps = rng.choice([0.05, 0.1, 0.2, 0.4])
        entry = (
            Laplace(scale=1 / eps, sensitivity=1.0)
            if step % 3
            else ApproxDP(epsilon=eps, delta=1e-8)
        )
        try:
            parts[t].charge(entry, mechanism="laplace")
            outcome = "charged"
        except BudgetExceededError:
            outcome = "refused"
        if step == 20:  # a nested partition inside one tree, charged in a reservation
            inner = parts[3].partition(70, stable=stable)
            with led.reserve(Guarantee(0.2), scope=parts[3]) as res:
                for k in range(0, 70, 7):
                    inner[k].charge(Laplace(scale=10.0, sensitivity=1.0), mechanism="laplace")
                seen.append(("reserved used", res.used().epsilon))
        seen.append((outcome, led.spent().epsilon, led.spent().delta, led.remaining().epsilon))
    seen.append(("json", Ledger.from_json(led.to_json()).spent().epsilon))
    return seen


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize("stable", [False, True])
def test_wide_partitions_give_the_figures_of_the_part_by_part_composition(
    monkeypatch, relation, stable
):
    monkeypatch.setattr(ledger_tree, "WIDE", 10**9)  # every partition part by part
    narrow = scenario(relation, stable)
    monkeypatch.setattr(ledger_tree, "WIDE", 2)  # every partition in arrays
    wide = scenario(relation, stable)
    assert wide == narrow
    outcomes = {o for o, *_ in narrow}
    assert {"charged", "refused"} <= outcomes  # the budget was reached: refusals compared too


def batches_scenario(relation: str) -> list[tuple]:
    """A DP-SGD-like run: 150 Poisson or fixed-size batches under the root, some with a
    partition inside, a reservation, and steps until the budget refuses."""
    rng = random.Random(11)
    led = Ledger(budget=Guarantee(3.0, 1e-5), relation=relation)
    method = "poisson" if relation == "add_remove" else "without_replacement"
    seen = []
    for step in range(150):
        batch = led.root.subsample(rng.choice([0.01, 0.02, 0.05]), method)
        try:
            if step % 10 == 3:  # a batch split by a public feature, charged in a reservation
                with led.reserve(Guarantee(0.5, 1e-7), scope=batch) as res:
                    for part in batch.partition(3):
                        part.charge(Laplace(scale=4.0, sensitivity=1.0), mechanism="laplace")
                    seen.append(("reserved used", res.used().epsilon))
            else:
                sigma = rng.choice([0.7, 1.0, 1.5])
                batch.charge(Gaussian(sigma=sigma, sensitivity=1.0), mechanism="gaussian")
            outcome = "charged"
        except BudgetExceededError:
            outcome = "refused"
        spent = led.spent_bound()
        seen.append((outcome, spent.method, spent.guarantee.epsilon, led.remaining().epsilon))
    again = Ledger.from_json(led.to_json()).spent()
    seen.append(("json", again.epsilon, again.delta))
    return seen


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_many_batches_give_the_figures_of_the_group_by_group_sum(monkeypatch, relation):
    monkeypatch.setattr(ledger_tree, "WIDE", 10**9)  # the root adds its batches one by one
    narrow = batches_scenario(relation)
    monkeypatch.setattr(ledger_tree, "WIDE", 2)  # the root keeps its batches in rows
    wide = batches_scenario(relation)
    assert [row[:2] for row in wide] == [row[:2] for row in narrow]  # outcomes, accountants
    for w, n in zip(wide, narrow, strict=True):  # summed in another order: equal to rounding
        assert w[2:] == pytest.approx(n[2:], rel=1e-12, abs=1e-15)
    outcomes = {o for o, *_ in narrow}
    assert {"charged", "refused"} <= outcomes


def _old_batches_charged_again(led: Ledger) -> None:
    """90 batches; every fourth step charges an earlier batch again (an old block changes)."""
    rng = random.Random(5)
    batches = []
    for step in range(90):
        batches.append(led.root.subsample(rng.choice([0.01, 0.03]), "poisson"))
        target = batches[-1] if step % 4 else rng.choice(batches)
        sigma = rng.choice([0.8, 1.3])
        target.charge(Gaussian(sigma=sigma, sensitivity=1.0), mechanism="gaussian")
        led.spent()  # the live ledger sums after every charge


def _figures(led: Ledger) -> tuple:
    """The reported bound, and the Rényi view, whose rows are summed in blocks."""
    bound, rdp = led.spent_bound(), led.bounds()["rdp"]
    return bound.method, bound.guarantee.epsilon, bound.guarantee.delta, rdp.epsilon


def test_a_reopened_ledger_sums_its_many_batches_to_the_same_figures(monkeypatch):
    """The rows are summed in blocks of ``BLOCK``, and a charge re-adds its own block
    only. The sum must depend on the rows alone, not on the order they changed in,
    so a ledger rebuilt from its events gives the live ledger's figures to the bit;
    and blocks of 4 rows give the figures of one block (to rounding)."""
    monkeypatch.setattr(ledger_tree, "WIDE", 2)
    monkeypatch.setattr(ledger_tree, "BLOCK", 4)
    led = Ledger(budget=Guarantee(50.0, 1e-5))
    _old_batches_charged_again(led)
    live = _figures(led)
    assert _figures(Ledger.from_json(led.to_json())) == live
    assert live[0] == "pld" and live[1] < live[3]  # the PLD is tighter than Rényi DP

    monkeypatch.setattr(ledger_tree, "BLOCK", 10**9)
    whole = Ledger(budget=Guarantee(50.0, 1e-5))
    _old_batches_charged_again(whole)
    assert _figures(whole)[0] == live[0]
    assert _figures(whole)[1:] == pytest.approx(live[1:], rel=1e-12)


def test_a_scope_that_reaches_wide_groups_replays_to_the_same_bits():
    """An empty group that brings a scope to ``WIDE`` groups switches it to summing rows,
    another order of the same additions; the live ledger recomposes then, as a replay
    does (it kept its old sum, one unit in the last place off, until the next charge)."""
    led = Ledger(Guarantee(10.0, 1e-5))
    led.root.charge(0.7, mechanism="laplace")
    for eps in [0.1, 0.2] + [0.1] * (ledger_tree.WIDE - 3):
        led.root.partition(1)[0].charge(eps, mechanism="laplace")
    led.spent()
    led.root.partition(1)  # the WIDE-th group, nothing charged in it
    assert Ledger.from_json(led.to_json()).spent() == led.spent()
