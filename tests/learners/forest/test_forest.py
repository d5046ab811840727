"""DP forests (seed 000, App. D): disjoint = parallel, Poisson = exact amplification,
Claim D.1 recorded next to the larger proven value; extra trees charge only leaves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.data import Categorical, Schema
from privet.errors import BudgetExceededError, UnsupportedEntryError
from privet.learners.forest import DPExtraTreesClassifier, DPRandomForestClassifier
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
from privet.ledger import Guarantee, Ledger

FORESTS = [
    pytest.param(DPRandomForestClassifier, {"tree": "oblivious"}, id="oblivious"),
    pytest.param(DPRandomForestClassifier, {"tree": "partial_mpc"}, id="partial_mpc"),
    pytest.param(DPExtraTreesClassifier, {}, id="extra"),
]


def exact_poisson(eps: float, g: float, k: int) -> float:
    return k * math.log1p(g * math.expm1(eps))


@pytest.mark.parametrize("cls, kw", FORESTS)
def test_disjoint_forest_costs_its_costliest_tree(car, cls, kw):
    led = Ledger(budget=Guarantee(1.0))
    m = cls(n_estimators=10, epsilon=1.0, max_depth=2, schema=car.schema, ledger=led, **kw)
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(1.0)
    m.fit(car.X, car.y)
    assert len(m.trees_) == 10
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert m.privacy_claim_.epsilon == 1.0
    # ten disjoint parts, every charge inside one of them
    tops = {c.path.split("/")[1] for c in led.charges}
    assert tops == {f"tree {t}" for t in range(10)}
    assert all(c.claim.epsilon == pytest.approx(c.guarantee.epsilon) for c in led.charges)


@pytest.mark.parametrize("cls, kw", FORESTS)
def test_poisson_forest_proves_exact_amplification_above_claim_d1(car, cls, kw):
    eps, g, k = 1.0, 0.1, 10
    proven = exact_poisson(eps, g, k)
    claimed = k * g * eps
    assert proven > claimed  # ln(1 + g(e^eps - 1)) > g eps: Claim D.1 is not an upper bound
    led = Ledger(budget=Guarantee(2.0))
    m = cls(
        n_estimators=k,
        sampling="poisson",
        sampling_rate=g,
        epsilon=eps,
        max_depth=2,
        schema=car.schema,
        ledger=led,
        **kw,
    )
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(proven)
    m.fit(car.X, car.y)
    assert m.calibrated_epsilon_ == eps  # epsilon is each tree's: the forest is not scaled to it
    assert m.privacy_spent_.epsilon == pytest.approx(proven, rel=1e-9)
    assert led.spent().epsilon == pytest.approx(proven, rel=1e-9)
    assert m.privacy_claim_.epsilon == pytest.approx(claimed)
    assert "Claim D.1" in m.privacy_claim_.source
    assert m.privacy_spent_.epsilon > m.privacy_claim_.epsilon + 0.5
    # every charge carries the linearised per-charge claim g * eps_charge
    for c in led.charges:
        assert c.claim.epsilon == pytest.approx(g * c.guarantee.epsilon)
        assert "Claim D.1" in c.claim.source
    assert len({c.path.split("/")[1] for c in led.charges}) == k  # one subsample per tree


def test_poisson_default_rate_is_one_over_k_and_default_ledger_fits_the_proof(car):
    m = DPExtraTreesClassifier(
        n_estimators=4, sampling="poisson", epsilon=2.0, max_depth=1, schema=car.schema
    )
    m.fit(car.X, car.y)
    proven = exact_poisson(2.0, 0.25, 4)
    assert m.privacy_claim_.epsilon == pytest.approx(2.0)  # k * (1/k) * eps
    assert m.privacy_spent_.epsilon == pytest.approx(proven)
    assert m.ledger_.budget.epsilon == pytest.approx(proven)


def test_extra_trees_charge_only_their_leaves(car):
    led = Ledger(budget=Guarantee(1.0))
    m = DPExtraTreesClassifier(
        n_estimators=3, epsilon=1.0, max_depth=3, schema=car.schema, ledger=led, random_state=0
    )
    m.fit(car.X, car.y)
    assert {c.step for c in led.charges} == {"leaf"}
    assert all(c.guarantee.epsilon == pytest.approx(1.0) for c in led.charges)
    # one histogram over each tree's leaves x classes (L1 sensitivity 1): one charge a tree
    assert len(led.charges) == 3
    assert all(c.sensitivity == 1.0 for c in led.charges)
    # splits come from random_state alone: the same seed gives the same shapes
    m2 = DPExtraTreesClassifier(
        n_estimators=3, epsilon=1.0, max_depth=3, schema=car.schema, random_state=0
    ).fit(car.X, car.y)
    assert all(a.same_structure(b) for a, b in zip(m.trees_, m2.trees_, strict=True))


@pytest.mark.parametrize("leaf", ["laplace", "exponential"])
def test_extra_trees_release_every_leaf_at_the_cost_of_one(car, leaf):
    """The one-release path and the leaf-by-leaf path prove the same cost.

    Under replace-one, exponential leaves keep a scope each (a replaced record can
    change two leaves' utilities, so a tree at epsilon costs 2 epsilon and ``fit``
    scales its leaves to epsilon / 2); Laplace leaves are one histogram of L1
    sensitivity 2 in either case.
    """
    kw = {"n_estimators": 2, "max_depth": 2, "leaf": leaf, "schema": car.schema, "random_state": 1}
    for relation in ("add_remove", "replace_one"):
        led = Ledger(budget=Guarantee(10.0), relation=relation)
        m = DPExtraTreesClassifier(epsilon=1.0, ledger=led, **kw)
        by_leaf = leaf == "exponential" and relation == "replace_one"
        # a replaced record can reach two leaves' EM labels: 2 epsilon; else epsilon
        planned = led.plan_cost(m.privacy_plan(car.schema)).epsilon
        assert planned == pytest.approx(2.0 if by_leaf else 1.0)
        m.fit(car.X, car.y)
        n_leaves = sum(t.n_leaves for t in m.trees_)
        assert len(led.charges) == (n_leaves if by_leaf else 2)
        # the fit costs the epsilon asked: pure leaves compose linearly, so each leaf
        # gets epsilon / (planned / epsilon)
        assert m.calibrated_epsilon_ == pytest.approx(1.0 / planned)
        assert all(c.guarantee.epsilon == pytest.approx(1.0 / planned) for c in led.charges)
        at_calibrated = DPExtraTreesClassifier(epsilon=m.calibrated_epsilon_, ledger=led, **kw)
        calibrated_cost = led.plan_cost(at_calibrated.privacy_plan(car.schema)).epsilon
        assert m.privacy_spent_.epsilon == pytest.approx(calibrated_cost, rel=1e-12)
        assert m.privacy_spent_.epsilon == pytest.approx(1.0)
        assert m.privacy_spent_.epsilon <= 1.0 * (1 + 1e-12)
        assert m.predict(car.X.iloc[:50]).shape == (50,)


def test_disjoint_partition_is_stable_under_replace_one(car):
    """Rows go to trees by position, so a replaced record stays in its tree: the
    forest costs what one tree costs on a replace-one ledger, not two trees.

    A CDP+PMPC-ID3 tree at depth 2 plans 5/3 epsilon under replace-one (a record
    moving between two nodes is charged in both), so ``fit`` scales every tree's
    steps to cost epsilon; the forest is scaled by the same factor as one tree.
    """
    led = Ledger(budget=Guarantee(10.0), relation="replace_one")
    m = DPRandomForestClassifier(
        n_estimators=5, tree="partial_mpc", epsilon=1.0, max_depth=2, schema=car.schema, ledger=led
    )
    one_tree = PartialMPCID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema)
    single = led.plan_cost(one_tree.privacy_plan()).epsilon
    assert single == pytest.approx(5.0 / 3.0)
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(single)  # not 2 * single
    m.fit(car.X, car.y)
    one_tree.set_params(ledger=Ledger(budget=Guarantee(10.0), relation="replace_one"))
    one_tree.fit(car.X, car.y)
    assert one_tree.calibrated_epsilon_ == pytest.approx(1.0 / single)
    assert m.calibrated_epsilon_ == pytest.approx(one_tree.calibrated_epsilon_)
    assert m.privacy_spent_.epsilon == pytest.approx(one_tree.privacy_spent_.epsilon)
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)


def test_disjoint_subsets_do_not_follow_the_public_random_state():
    """With the subsets drawn from random_state (which get_params shows), a dataset
    whose labels follow the seed's draws put only class 1 in tree 0, and removing
    its first row shifted every later row to the previous row's draw: tree 0's
    counts went from (0, ~200) to (~100, ~90), a release the charged epsilon=1
    does not cover. The coins are secret now: tree 0 holds about half of each class."""
    n, k, seed = 400, 2, 0
    y = (np.random.RandomState(seed).randint(k, size=n) == 0).astype(int)
    schema = Schema([Categorical("x", ["a", "b"])], Categorical("y", [0, 1]))
    X = np.array([["a"]] * n, dtype=object)
    m = DPExtraTreesClassifier(
        n_estimators=k, epsilon=50.0, max_depth=0, schema=schema, random_state=seed
    ).fit(X, y)
    counts = m.trees_[0].value[0]  # noise scale 1/50
    # tree 0 gets Binomial(n, 1/2) rows, about half of them of class 0 (~100, sd ~9):
    # fewer than 40 is over 6 sd away
    assert counts[0] > 40 and counts[1] > 40


def test_extra_tree_splits_do_not_depend_on_the_row_count(car):
    """The split attributes are public randomness from random_state: drawing the
    disjoint subsets from the same generator first made them a function of the
    number of rows (released through trees_ under add/remove, uncharged)."""
    kw = {"n_estimators": 4, "epsilon": 1.0, "max_depth": 3, "schema": car.schema}
    a = DPExtraTreesClassifier(random_state=3, **kw).fit(car.X, car.y)
    b = DPExtraTreesClassifier(random_state=3, **kw).fit(car.X.iloc[1:], car.y.iloc[1:])
    assert all(s.same_structure(t) for s, t in zip(a.trees_, b.trees_, strict=True))


def test_poisson_on_a_replace_one_ledger_is_refused_before_data(car):
    led = Ledger(budget=Guarantee(10.0), relation="replace_one")
    m = DPExtraTreesClassifier(sampling="poisson", schema=car.schema, ledger=led)

    class Exploding:
        def __getattr__(self, name):
            raise AssertionError("data was read before the budget check")

    with pytest.raises(UnsupportedEntryError, match="add/remove"):
        m.fit(Exploding(), Exploding())
    assert led.charges == []


def test_forest_over_budget_is_refused_before_data(car):
    led = Ledger(budget=Guarantee(1.5))
    m = DPRandomForestClassifier(
        n_estimators=10, sampling="poisson", sampling_rate=0.1, schema=car.schema, ledger=led
    )
    with pytest.raises(BudgetExceededError, match="over its budget"):
        m.fit(car.X, car.y)  # proven 1.586 > 1.5 although the claim is 1.0
    assert led.charges == [] and led.remaining().epsilon == 1.5


@pytest.mark.parametrize("cls, kw", FORESTS)
def test_predictions_are_valid_votes(car, cls, kw):
    m = cls(n_estimators=3, epsilon=1.0, max_depth=2, schema=car.schema, random_state=1, **kw)
    m.fit(car.X, car.y)
    p = m.predict_proba(car.X.iloc[:50])
    assert p.shape == (50, 4) and np.allclose(p.sum(axis=1), 1.0)
    assert set(np.unique(p * 3)) <= {0.0, 1.0, 2.0, 3.0}  # shares of 3 votes
    assert set(m.predict(car.X)) <= set(car.schema.classes)


def test_forest_at_large_epsilon_beats_the_majority_class(car):
    majority = car.y.value_counts(normalize=True).max()
    m = DPRandomForestClassifier(
        n_estimators=3, epsilon=40.0, max_depth=3, schema=car.schema, random_state=0
    ).fit(car.X, car.y)
    single = ObliviousID3Classifier(
        epsilon=40.0, max_depth=3, split="exponential", schema=car.schema
    ).fit(car.X, car.y)
    acc = np.mean(m.predict(car.X) == car.y.to_numpy())
    assert acc > majority + 0.05
    assert acc > np.mean(single.predict(car.X) == car.y.to_numpy()) - 0.1
