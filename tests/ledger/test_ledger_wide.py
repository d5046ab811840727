"""Wide partitions (a forest's trees) keep their parts' costs in arrays: same figures.

:data:`privet.ledger.tree.WIDE` switches a partition with that many parts to
:class:`~privet.ledger.tree._WideCosts`, so a charge in one part recomputes
that part only and a forest of k trees charges in time linear in k. These
tests run one scenario with the switch at 2 parts and out of reach, and ask for
the same spend, remaining budget and refusals at every step. The state
machines in ``test_ledger_state_machine.py`` also run with every partition wide.
"""

from __future__ import annotations

import random

import pytest

from privet.errors import BudgetExceededError
from privet.ledger import ApproxDP, Guarantee, Laplace, Ledger
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
        entry = Laplace(scale=1 / eps, sensitivity=1.0) if step % 3 else ApproxDP(epsilon=eps, delta=1e-8)
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
