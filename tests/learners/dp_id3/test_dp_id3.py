"""DP ID3 (seed 000, Alg. 6): accounting, budget checks, errors, accuracy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privet.data import load_dataset
from privet.errors import BudgetExceededError, NotFittedError, SchemaError
from privet.learners import DPID3Classifier, PrivacyWarning
from privet.ledger import Guarantee, Ledger


def test_spent_equals_requested_epsilon(car):
    for depth in (0, 1, 3):
        for leaf in ("laplace", "exponential"):
            m = DPID3Classifier(epsilon=0.7, max_depth=depth, leaf=leaf, schema=car.schema)
            m.fit(car.X, car.y)
            assert m.privacy_spent_.epsilon == pytest.approx(0.7, rel=1e-12)
            assert m.ledger_.spent().epsilon == pytest.approx(0.7, rel=1e-12)
            assert m.privacy_claim_.epsilon == 0.7


def test_plan_is_available_without_data_and_matches_charges(car):
    led = Ledger(budget=Guarantee(5.0))
    m = DPID3Classifier(epsilon=1.3, max_depth=2, schema=car.schema, ledger=led)
    plan = m.privacy_plan()
    assert led.plan_cost(plan).epsilon == pytest.approx(1.3)
    m.fit(car.X, car.y)
    # add/remove: one charge per level (its nodes hold disjoint rows) and one leaf
    # histogram over every leaf, all in the tree's scope
    assert [c.step for c in led.charges] == ["split, depth 0", "split, depth 1", "leaf"]
    assert {c.caller for c in led.charges} == {"DPID3Classifier"}
    assert led.spent().epsilon == pytest.approx(1.3)


@pytest.mark.parametrize("leaf", ["laplace", "exponential"])
def test_replace_one_gives_every_node_its_scope_and_the_fit_is_scaled_to_its_epsilon(car, leaf):
    led = Ledger(budget=Guarantee(5.0), relation="replace_one")
    m = DPID3Classifier(epsilon=1.2, max_depth=2, leaf=leaf, schema=car.schema, ledger=led)
    unscaled = led.plan_cost(m.privacy_plan()).epsilon
    # a replaced record can cross two branches of every split: the plan at the user's
    # epsilon costs more than it, at most twice
    assert 1.2 < unscaled <= 2 * 1.2 + 1e-9
    m.fit(car.X, car.y)
    tree = m.tree_
    n_inner, n_leaves = int(np.sum(tree.feature >= 0)), tree.n_leaves
    # a split charge per internal node; the leaves: one histogram, or one EM per leaf
    assert len(led.charges) == n_inner + (1 if leaf == "laplace" else n_leaves)
    # so the fit scaled every step (calibrated_epsilon) and costs at most epsilon: the
    # spend is what the ledger proves for the scaled plan
    scaled = m.calibrated_epsilon_
    assert scaled < 1.2
    assert m.epsilon == 1.2  # restored after the fit
    assert led.spent().epsilon <= 1.2 * (1 + 1e-9)
    at_scaled = DPID3Classifier(
        epsilon=scaled, max_depth=2, leaf=leaf, schema=car.schema, ledger=led
    ).privacy_plan()
    assert led.spent().epsilon == pytest.approx(led.plan_cost(at_scaled).epsilon)
    # pure charges on a pure budget compose basically, linearly in epsilon: the scale is
    # epsilon / unscaled cost (the largest that fits; bisection to 1e-9)
    assert scaled == pytest.approx(1.2 * 1.2 / unscaled, rel=1e-8)
    assert led.spent().epsilon == pytest.approx(1.2, rel=1e-8)


def test_tree_is_complete_to_depth(car):
    m = DPID3Classifier(epsilon=1.0, max_depth=3, schema=car.schema).fit(car.X, car.y)
    leaves = m.tree_.feature < 0
    assert np.all(m.tree_.depth[leaves] == 3)


def test_two_fits_compose_sequentially_and_third_is_refused_before_reading_data(car):
    led = Ledger(budget=Guarantee(1.0))
    DPID3Classifier(epsilon=0.5, max_depth=2, schema=car.schema, ledger=led).fit(car.X, car.y)
    DPID3Classifier(epsilon=0.5, max_depth=2, schema=car.schema, ledger=led).fit(car.X, car.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    n = len(led.charges)

    class Exploding:
        """Data that fails the moment anyone reads it."""

        def __getattr__(self, name):
            raise AssertionError("data was read before the budget check")

    with pytest.raises(BudgetExceededError, match="over its budget"):
        DPID3Classifier(epsilon=0.1, max_depth=2, schema=car.schema, ledger=led).fit(
            Exploding(), Exploding()
        )
    assert len(led.charges) == n
    assert led.spent().epsilon == pytest.approx(1.0)


def test_bad_data_charges_nothing(car):
    led = Ledger(budget=Guarantee(1.0))
    X = car.X.copy()
    X.iloc[3, 0] = "expensive"  # not a public category
    with pytest.raises(SchemaError, match="expensive"):
        DPID3Classifier(epsilon=0.5, schema=car.schema, ledger=led).fit(X, car.y)
    X = car.X.copy()
    X.iloc[0, 1] = None
    with pytest.raises(SchemaError):
        DPID3Classifier(epsilon=0.5, schema=car.schema, ledger=led).fit(X, car.y)
    with pytest.raises(SchemaError, match="rows"):
        DPID3Classifier(epsilon=0.5, schema=car.schema, ledger=led).fit(car.X, car.y[:10])
    assert led.charges == [] and led.spent().epsilon == 0.0
    assert led.remaining().epsilon == 1.0  # reservations were returned


def test_missing_schema_is_refused_unless_opted_in():
    X = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": [1, 2, 1, 2]})
    y = ["p", "q", "p", "q"]
    with pytest.raises(SchemaError, match="public schema"):
        DPID3Classifier(epsilon=1.0).fit(X, y)
    with pytest.warns(PrivacyWarning, match="not public"):
        m = DPID3Classifier(epsilon=1.0, public_domain="infer").fit(X, y)
    assert set(m.predict(X)) <= {"p", "q"}


def test_predict_before_fit(car):
    with pytest.raises(NotFittedError, match="fit"):
        DPID3Classifier(schema=car.schema).predict(car.X)


def test_predict_proba_rows_sum_to_one(car):
    m = DPID3Classifier(epsilon=2.0, max_depth=2, schema=car.schema).fit(car.X, car.y)
    p = m.predict_proba(car.X.iloc[:50])
    assert p.shape == (50, car.schema.n_classes)
    assert np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()
    assert list(m.classes_) == list(car.schema.classes)


def test_replace_one_ledger_uses_sensitivity_two_and_charges_two_branches(car):
    led = Ledger(budget=Guarantee(10.0), relation="replace_one")
    m = DPID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema, ledger=led)
    # single path costs eps; a replaced record can sit in two branches that share
    # the root split, so the depth-1 splits count twice: 1/3 + 2 * 1/3. The leaves are
    # one histogram over leaves x classes, whose L1 sensitivity 2 already covers a
    # record moving between two leaves: 1/3 once. Total 4/3 for the plan at epsilon
    # (node-by-node leaf charges would have counted the leaves twice too: 5/3).
    assert math.isclose(led.plan_cost(m.privacy_plan()).epsilon, 4.0 / 3.0)
    m.fit(car.X, car.y)
    leaf_charges = [c for c in led.charges if c.step == "leaf"]
    assert all(c.sensitivity == 2.0 for c in leaf_charges)
    assert len(leaf_charges) == 1
    # The fit scales every step so that it costs epsilon (calibrated_epsilon): by 3/4,
    # since pure charges on a pure budget compose linearly in epsilon. Each of the three
    # steps (two split levels, the leaves) gets 1/3 of 3/4.
    assert m.calibrated_epsilon_ == pytest.approx(0.75, rel=1e-8)
    assert all(c.entry.guarantee().epsilon == pytest.approx(0.25, rel=1e-8) for c in led.charges)
    assert led.spent().epsilon == pytest.approx(1.0, rel=1e-8)
    assert led.spent().epsilon <= 1.0 + 1e-12


def test_scope_of_a_ledger_can_be_given(car):
    led = Ledger(budget=Guarantee(1.0))
    part_a, part_b = led.root.partition(["first half", "second half"])
    half = car.n_rows // 2
    DPID3Classifier(epsilon=1.0, max_depth=1, schema=car.schema, ledger=part_a).fit(
        car.X.iloc[:half], car.y.iloc[:half]
    )
    DPID3Classifier(epsilon=1.0, max_depth=1, schema=car.schema, ledger=part_b).fit(
        car.X.iloc[half:], car.y.iloc[half:]
    )
    assert led.spent().epsilon == pytest.approx(1.0)  # parallel composition


def test_max_depth_above_the_attributes_is_capped_in_plan_and_noise():
    """Issue 11, item 6: max_depth=1000 on Car (6 attributes) used to spend 0.007 of
    epsilon=1 and add Laplace noise at scale 1001 instead of 7."""
    from privet.data import load_dataset
    from privet.ledger import Guarantee, Ledger

    car = load_dataset("car")
    led = Ledger(budget=Guarantee(1.0))
    model = DPID3Classifier(epsilon=1.0, max_depth=1000, schema=car.schema, ledger=led)
    plan = model.privacy_plan()
    assert "capped at the 6 attributes" in plan.description
    assert led.plan_cost(plan).epsilon == pytest.approx(1.0)
    model.fit(car.X, car.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    leaf_scales = {c.entry.scale for c in led.charges if c.step == "leaf"}
    assert len(leaf_scales) == 1 and leaf_scales.pop() == pytest.approx(7.0)


def test_a_fit_on_another_datasets_schema_is_refused_and_charges_nothing(tmp_path):
    """Issue 11, item 11: Heart's rows could be charged to the 'car' budget."""
    from privet.errors import SchemaError

    car, heart = load_dataset("car"), load_dataset("heart")
    path = tmp_path / "budget.sqlite"
    led = Ledger.open(path, dataset="car", budget=Guarantee(3.0))
    DPID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema, ledger=led).fit(car.X, car.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    with pytest.raises(SchemaError, match="fingerprint"):
        DPID3Classifier(epsilon=1.0, max_depth=2, schema=heart.schema, ledger=led).fit(
            heart.X, heart.y
        )
    assert led.spent().epsilon == pytest.approx(1.0)
