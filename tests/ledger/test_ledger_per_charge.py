"""Each charge on its own, at the budget's delta, next to its noise's parameters (issue 33,
item 4), and the collapsed report of a ledger that repeats itself (item 5)."""

from __future__ import annotations

import csv
import io
import math

from _ledger_helpers import render_text

from privet.ledger import (
    Gaussian,
    Guarantee,
    Laplace,
    Ledger,
    best_guarantee,
    gdp_to_epsilon,
)
from privet.ledger.composition import Cost
from privet.ledger.per_charge import alone


def test_a_gaussian_charge_shows_its_epsilon_at_the_budgets_delta_and_its_sigma():
    led = Ledger(budget=Guarantee(2.0, 1e-5))
    entry = Gaussian(sigma=4.0, sensitivity=1.0)
    led.root.charge(entry, mechanism="gaussian", step="leaf")
    (row,) = led.charge_rows()
    assert math.isfinite(row["epsilon"]) and row["delta"] == 1e-5
    assert row["epsilon"] == best_guarantee(Cost.of(entry), 1e-5).guarantee.epsilon
    assert row["epsilon"] == led.spent().epsilon  # one charge: the ledger's total
    assert (row["sigma"], row["mu"], row["rho"]) == (4.0, 0.25, 0.25**2 / 2)
    assert row["accountant"] == "gdp" and row["at_delta"] == 1e-5
    assert "σ=4" in row["noise"] and "μ=0.25" in row["noise"]
    # at delta 0 a Gaussian has no finite guarantee, and says so
    assert alone(entry, 0.0).guarantee.epsilon == math.inf


def test_the_total_is_rebuilt_from_the_exported_rows():
    """Ten Gaussians in sequence: the CSV's mu column gives the ledger's total back."""
    led = Ledger(budget=Guarantee(5.0, 1e-6))
    for k in range(10):
        led.root.charge(Gaussian(sigma=3.0 + k, sensitivity=1.0), mechanism="gaussian")
    buf = io.StringIO()
    rows = led.charge_rows()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    read = list(csv.DictReader(io.StringIO(buf.getvalue())))
    mus = [float(r["mu"]) for r in read]
    assert mus == [1.0 / float(r["sigma"]) for r in read]
    rebuilt = gdp_to_epsilon(math.sqrt(sum(m * m for m in mus)), 1e-6)
    assert math.isclose(rebuilt, led.spent().epsilon, rel_tol=1e-12)
    # each row is the charge alone, never the total divided up
    assert all(float(r["epsilon"]) < led.spent().epsilon for r in read)


def test_a_pure_charge_keeps_its_own_epsilon():
    led = Ledger(budget=Guarantee(1.0, 1e-6))
    led.root.charge(Laplace(scale=4.0, sensitivity=1.0), mechanism="laplace")
    (row,) = led.charge_rows()
    assert (row["epsilon"], row["delta"], row["scale"], row["sigma"]) == (0.25, 0.0, 4.0, None)


def _boosted(trees: int, leaves: int) -> Ledger:
    """The shape of a boosted model: one partition per tree, one Gaussian per leaf."""
    led = Ledger(budget=Guarantee(10.0, 1e-5), dataset="credit")
    for t in range(trees):
        parts = led.root.partition(leaves + t % 3)
        led.charge_many(
            [(p, Gaussian(sigma=17.6, sensitivity=1.03)) for p in parts],
            mechanism="gaussian",
            caller="DPGradientBoostingClassifier",
            step=f"tree {t}: leaf (G, H)",
        )
    return led


def test_the_report_shows_repeated_trees_and_leaves_once():
    led = _boosted(14, 5)
    short = render_text(led.report())
    full = render_text(led.report(collapse=False, max_parts=None))
    assert len(short.splitlines()) < 12 < 100 < len(full.splitlines())
    assert "14 partitions like this one, 5 to 7 parts each" in short
    assert str(led.spent()) in short  # the total is the ledger's
    assert "0, 1, 2, 3, 4  cost" in short and "each" in short  # the first of the costliest
    assert short.count("gaussian") == 1
    assert full.count("gaussian") == sum(5 + t % 3 for t in range(14))  # every leaf
    # the costliest tree is the one shown, and every charge is at the budget's delta
    assert "ε=∞" not in short and "ε=∞" not in full


def test_different_scopes_are_not_collapsed():
    led = Ledger(budget=Guarantee(3.0), dataset="car")
    a, b = led.root.partition(2)
    a.charge(Laplace(scale=2.0, sensitivity=1.0), mechanism="laplace", step="split 1")
    b.charge(Laplace(scale=4.0, sensitivity=1.0), mechanism="laplace", step="split 1")
    led.root.partition(3)[0].charge(0.1, mechanism="other")
    text = render_text(led.report())
    assert "like this one" not in text
    assert "0  cost ε=0.5" in text and "1  cost ε=0.25" in text
