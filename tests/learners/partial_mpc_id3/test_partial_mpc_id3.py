"""CDP+PMPC-ID3 (seed 000, Alg. 7-10): claimed = proven, budget checks, distribution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privet.errors import BudgetExceededError, NotFittedError
from privet.learners import DPID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
from privet.ledger import Guarantee, Ledger


@pytest.mark.parametrize("depth", [0, 1, 3])
@pytest.mark.parametrize("leaf", ["laplace", "exponential"])
def test_proven_equals_claimed_equals_requested(car, depth, leaf):
    led = Ledger(budget=Guarantee(2.0))
    m = PartialMPCID3Classifier(
        epsilon=0.9, max_depth=depth, leaf=leaf, schema=car.schema, ledger=led
    )
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(0.9)  # no data needed
    m.fit(car.X, car.y)
    assert m.privacy_spent_.epsilon == pytest.approx(0.9, rel=1e-12)
    assert m.privacy_claim_.epsilon == 0.9
    assert led.spent().epsilon == pytest.approx(0.9, rel=1e-12)
    # every charge carries the paper's claim, equal to what it proves: eps/(h+1)
    assert len(led.claims()) == len(led.charges) == m.tree_.node_count
    for c in led.charges:
        assert c.claim.epsilon == pytest.approx(c.guarantee.epsilon)
        assert c.guarantee.epsilon == pytest.approx(0.9 / (depth + 1))
        assert "Alg. 7-10" in c.claim.source


def test_tree_is_complete_and_levels_are_revealed(car):
    m = PartialMPCID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema).fit(car.X, car.y)
    leaves = m.tree_.feature < 0
    assert np.all(m.tree_.depth[leaves] == 2)
    # a path never reuses an attribute (ID3)
    root = int(m.tree_.feature[0])
    assert all(f != root for _, f in m.tree_.splits()[1:])
    steps = {c.step for c in m.ledger_.charges}
    assert steps == {"split, depth 0", "split, depth 1", "leaf"}


def test_depth_is_capped_at_the_number_of_attributes(toy):
    X, y, schema = toy
    m = PartialMPCID3Classifier(epsilon=1.0, max_depth=5, schema=schema).fit(X, y)
    assert m.tree_.max_depth == 2
    # eps/(h+1) uses the effective depth 2, so nothing is wasted
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    assert {round(c.guarantee.epsilon, 12) for c in m.ledger_.charges} == {round(1 / 3, 12)}


def test_refused_before_reading_data_and_nothing_charged(car):
    led = Ledger(budget=Guarantee(1.0))
    PartialMPCID3Classifier(epsilon=0.8, schema=car.schema, ledger=led).fit(car.X, car.y)
    n = len(led.charges)

    class Exploding:
        def __getattr__(self, name):
            raise AssertionError("data was read before the budget check")

    with pytest.raises(BudgetExceededError, match="over its budget"):
        PartialMPCID3Classifier(epsilon=0.3, schema=car.schema, ledger=led).fit(
            Exploding(), Exploding()
        )
    assert len(led.charges) == n
    assert led.remaining().epsilon == pytest.approx(0.2)


def test_predictions_are_valid(car):
    m = PartialMPCID3Classifier(epsilon=2.0, max_depth=2, schema=car.schema)
    with pytest.raises(NotFittedError, match="fit"):
        m.predict(car.X)
    m.fit(car.X, car.y)
    assert set(m.predict(car.X)) <= set(car.schema.classes)
    p = m.predict_proba(car.X.iloc[:40])
    assert p.shape == (40, 4) and np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()


@pytest.mark.parametrize("em_form", ["auto", "paper"])
def test_output_distribution_matches_dp_id3(toy, em_form):
    """Same (root split, leaf labels) distribution as DP ID3 with the same ``em_form``
    (two-sample chi-square): the monotone form under add/remove, or Alg. 6 as written."""
    X, y, schema = toy

    def outcome(model):
        t = model.tree_
        labels = tuple(int(np.argmax(t.value[i])) for i in np.flatnonzero(t.feature < 0))
        return (int(t.feature[0]), *labels)

    trials = 300
    kw = {"epsilon": 0.6, "max_depth": 1, "leaf": "exponential", "schema": schema}
    kw["em_form"] = em_form
    a = [outcome(PartialMPCID3Classifier(**kw).fit(X, y)) for _ in range(trials)]
    b = [outcome(DPID3Classifier(**kw).fit(X, y)) for _ in range(trials)]
    keys = sorted(set(a) | set(b))
    table = np.array([[a.count(k) for k in keys], [b.count(k) for k in keys]])
    table = table[:, table.sum(axis=0) >= 5]  # chi-square needs non-tiny cells
    assert stats.chi2_contingency(table).pvalue > 1e-4, table


def test_replace_one_ledger_proves_more_than_the_claim(car):
    led = Ledger(budget=Guarantee(10.0), relation="replace_one")
    m = PartialMPCID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema, ledger=led)
    # the paper's algorithm at epsilon: the claim is 1, the ledger proves 1/3 for the root
    # split and 2/3 for each of the level below and the leaves (a replaced record can
    # cross two branches; one noisy count per leaf): 5/3, as DP ID3 with leaf-by-leaf charges
    plan = m.privacy_plan()
    assert plan.claim.epsilon == 1.0
    assert led.plan_cost(plan).epsilon == pytest.approx(5.0 / 3.0)
    m.fit(car.X, car.y)
    assert all(c.sensitivity == 2.0 for c in led.charges if c.step == "leaf")
    # the fit scales every step to cost epsilon (3/5: pure charges compose linearly);
    # the paper's claim for what ran is then 3/5, and the ledger still proves more
    assert m.calibrated_epsilon_ == pytest.approx(3.0 / 5.0, rel=1e-8)
    assert m.privacy_claim_.epsilon == m.calibrated_epsilon_
    assert m.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-8)
    assert m.privacy_spent_.epsilon <= 1.0 + 1e-9
    assert m.privacy_spent_.epsilon > m.privacy_claim_.epsilon
