"""SecureSumID3Classifier plans at most its ``epsilon`` on the ledger it charges (issue 31).

Under replace-one every level's counts have sensitivity 2, and the ledger charges a
record that leaves one node of a level while its replacement enters another node of
the same level in both nodes: at ``epsilon / (h + 1)`` per level the plan of ``h + 1``
levels costs ``(2h + 1) / (h + 1)`` epsilon (1.75 at depth 3), and a fit on a budget
equal to ``epsilon`` used to be refused. The fit now splits ``calibrated_epsilon_``
over the levels instead. Fits here use the in-process backend (the same plan and
charges as the party processes; a process run is in test_secure_sum_processes.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone

from privet.data import load_dataset
from privet.learners import SecureSumID3Classifier
from privet.ledger import Guarantee, Ledger

EPS = 1.0
RELATIONS = ["add_remove", "replace_one"]


@pytest.fixture(scope="module", params=["adult", "car", "nursery"])
def data(request):
    d = load_dataset(request.param)
    idx = np.random.default_rng(3).permutation(d.n_rows)[:400]
    return d.schema, d.X.iloc[idx].reset_index(drop=True), np.asarray(d.y)[idx]


def _levels_share(relation: str, depth: int) -> float:
    """What the levels share: all of epsilon under add/remove; under replace-one the
    root level once and each of the ``depth`` levels below it twice."""
    return EPS if relation == "add_remove" else EPS * (depth + 1) / (2 * depth + 1)


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_plan_a_fit_reserves_costs_at_most_epsilon(data, relation, depth):
    schema, X, y = data
    led = Ledger(budget=Guarantee.unbounded(), relation=relation)
    est = SecureSumID3Classifier(
        epsilon=EPS, max_depth=depth, schema=schema, ledger=led, random_state=0
    ).fit(X, y)
    assert est.epsilon == EPS  # the public parameter is the user's
    # the plan at the calibrated epsilon is what fit reserved: within epsilon, and tight
    at_calibrated = clone(est).set_params(epsilon=est.calibrated_epsilon_)
    cost = led.plan_cost(at_calibrated.privacy_plan(schema)).epsilon
    assert EPS * (1 - 1e-6) <= cost <= EPS * (1 + 1e-9)
    assert est.calibrated_epsilon_ == pytest.approx(_levels_share(relation, depth), rel=1e-6)
    assert est.privacy_spent_.epsilon <= EPS * (1 + 1e-9)
    # the plan at the user's epsilon is unchanged: it still costs 1 + h/(h+1) on replace-one
    uncalibrated = led.plan_cost(est.privacy_plan(schema)).epsilon
    expected = EPS if relation == "add_remove" else EPS * (2 * depth + 1) / (depth + 1)
    assert uncalibrated == pytest.approx(expected)


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_fit_on_a_budget_of_epsilon_succeeds_and_spends_at_most_it(data, relation, depth):
    schema, X, y = data
    led = Ledger(budget=Guarantee(EPS), relation=relation)
    est = SecureSumID3Classifier(
        epsilon=EPS, max_depth=depth, schema=schema, ledger=led, random_state=0
    ).fit(X, y)
    assert 0 < est.privacy_spent_.epsilon <= EPS * (1 + 1e-9)
    assert led.spent().epsilon <= EPS * (1 + 1e-9)
    assert est.predict(X).shape == y.shape
    # the noise follows the calibrated epsilon: the root's counts (one class total and
    # one count per attribute, sensitivity 2 under replace-one) at (h+1)/epsilon'
    root = led.charges[0]
    assert root.step == "node counts, depth 0"
    factor = 1 if relation == "add_remove" else 2
    sens = factor * (1 + schema.n_features)
    assert root.entry.scale == pytest.approx(sens * (depth + 1) / est.calibrated_epsilon_)


def test_the_reserved_plan_says_it_was_scaled(monkeypatch):
    """The plan fit reserves (seen by wrapping ``Ledger.reserve``) names the factor."""
    reserved = []
    original = Ledger.reserve

    def spy(self, plan, **kw):
        reserved.append(plan)
        return original(self, plan, **kw)

    monkeypatch.setattr(Ledger, "reserve", spy)
    car = load_dataset("car")
    X, y = car.X.iloc[:300], np.asarray(car.y)[:300]
    for relation in RELATIONS:
        led = Ledger(budget=Guarantee(EPS), relation=relation)
        SecureSumID3Classifier(epsilon=EPS, max_depth=3, schema=car.schema, ledger=led).fit(X, y)
    kept, scaled = reserved
    assert "scaled" not in kept.description
    assert "every step scaled by 0.5714" in scaled.description  # 4/7 at depth 3
    assert "replace-one" in scaled.description


def test_the_exact_protocol_is_not_calibrated():
    car = load_dataset("car")
    led = Ledger(budget=Guarantee.unbounded(), relation="replace_one")
    est = SecureSumID3Classifier(max_depth=2, schema=car.schema, ledger=led)
    est.fit(car.X.iloc[:300], np.asarray(car.y)[:300])
    assert est.calibrated_epsilon_ is None
    assert math.isinf(est.privacy_spent_.epsilon)
