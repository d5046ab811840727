"""ODP+FMPC-ID3 (seed 000, Alg. 1-4): the faithful mode's honest accounting, the
sound variant's proof, the complete w-ary tree and oblivious prediction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.data import one_hot, one_hot_target
from privet.errors import BudgetExceededError, NotFittedError
from privet.learners import ID3Classifier
from privet.learners._trees.scores import contingency, max_operator, max_scores_one_hot
from privet.learners._trees.tree import oblivious_predict
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.ledger import Exponential, Guarantee, Laplace, Ledger, NonPrivate


def unbounded():
    return Ledger(budget=Guarantee.unbounded())


class Exploding:
    def __getattr__(self, name):
        raise AssertionError("data was read before the budget check")


# -- the paper-faithful mode -------------------------------------------------------------


@pytest.mark.parametrize("where", ["ledger", "scope", "none"])
def test_faithful_mode_is_refused_on_a_finite_budget_and_charges_nothing(car, where):
    led = Ledger(budget=Guarantee(5.0))
    target = {"ledger": led, "scope": led.root.partition(2)[0], "none": None}[where]
    m = ObliviousID3Classifier(epsilon=1.0, split="exact", schema=car.schema, ledger=target)
    with pytest.raises(BudgetExceededError, match=r"no DP guarantee.*split='exponential'"):
        m.fit(Exploding(), Exploding())
    assert led.charges == [] and led.remaining().epsilon == 5.0
    assert not hasattr(m, "ledger_") and not hasattr(m, "tree_")


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_faithful_mode_on_an_unbounded_ledger_records_the_leak_and_the_claim(car, relation):
    led = Ledger(budget=Guarantee.unbounded(), relation=relation)
    m = ObliviousID3Classifier(
        epsilon=0.5, max_depth=2, split="exact", schema=car.schema, ledger=led
    )
    assert math.isinf(led.plan_cost(m.privacy_plan()).epsilon)
    m.fit(car.X, car.y)
    assert math.isinf(led.spent().epsilon) and math.isinf(m.privacy_spent_.epsilon)
    assert m.privacy_claim_.epsilon == 0.5 and "ODP+FMPC" in m.privacy_claim_.source
    splits = [c for c in led.charges if isinstance(c.entry, NonPrivate)]
    leaves = [c for c in led.charges if c.step == "leaf"]
    n_real_internal = int(np.sum(m.tree_.feature >= 0))
    n_real_leaves = int(np.sum((m.tree_.feature < 0) & (m.tree_.value.sum(axis=1) > 0)))
    assert n_real_internal == 5  # root + its 4 children
    if relation == "add_remove":
        # one record changes one node per level: a level, and the leaves, are one charge
        assert [c.step for c in led.charges] == ["split, depth 0", "split, depth 1", "leaf"]
        assert all(c.path == led.charges[0].path for c in led.charges)
    else:  # every real node in its own scope; dummy branches hold no record: no charge
        assert len(splits) == n_real_internal and len({c.path for c in splits}) == 5
        # the Laplace leaves: one histogram over leaves x classes, L1 sensitivity 2
        assert len(leaves) == 1 and leaves[0].entry.sensitivity == 2.0
        assert n_real_leaves > 1
    assert all(c.claim.epsilon == 0.0 and "0-DP" in c.claim.source for c in splits)
    assert all("exact argmax" in c.entry.reason for c in splits)
    for c in leaves:
        assert isinstance(c.entry, Laplace) and c.guarantee.epsilon == pytest.approx(0.5)
        assert c.claim.epsilon == pytest.approx(0.5)
    assert len(led.claims()) == len(led.charges)


def test_faithful_splits_are_the_exact_argmax(car):
    codes, yc = car.codes()
    sizes = car.schema.domain_sizes
    q = [max_operator(contingency(codes[:, a], yc, sizes[a], 4)) for a in range(len(sizes))]
    fits = [
        ObliviousID3Classifier(
            epsilon=1.0, max_depth=3, split="exact", schema=car.schema, ledger=unbounded()
        ).fit(car.X, car.y)
        for _ in range(2)
    ]
    assert fits[0].tree_.feature[0] == int(np.argmax(q))
    assert fits[0].tree_.same_structure(fits[1].tree_)  # no noise in the splits
    base = ID3Classifier(max_depth=1, criterion="max", schema=car.schema).fit(car.X, car.y)
    assert fits[0].tree_.feature[0] == base.tree_.feature[0]


def test_tree_is_complete_and_w_ary_with_dummy_branches(car):
    w = car.schema.max_domain_size
    sizes = car.schema.domain_sizes
    m = ObliviousID3Classifier(epsilon=1.0, max_depth=3, schema=car.schema, ledger=unbounded())
    t = m.fit(car.X, car.y).tree_
    assert m.width_ == w
    internal = np.flatnonzero(t.feature >= 0)
    assert t.children.shape[0] == w * internal.size  # every internal node has w children
    dummies = []
    for i in internal:
        kids = t.children[t.child_start[i] : t.child_start[i] + w]
        dummies += list(kids[sizes[t.feature[i]] :])
    dummies = np.asarray(dummies, dtype=int)
    assert dummies.size == sum(w - sizes[t.feature[i]] for i in internal) > 0
    assert np.all(t.value[dummies] == 0) and np.all(t.feature[dummies] == -1)
    real_leaves = np.setdiff1d(np.flatnonzero(t.feature < 0), dummies)
    assert np.all(t.depth[real_leaves] == 3)
    assert np.allclose(t.value[real_leaves].sum(axis=1), 1.0)  # one-hot labels only


def test_max_protocol_on_one_hot_equals_the_max_operator(car):
    codes, yc = car.codes()
    rows = np.arange(0, car.n_rows, 3)
    H, C = one_hot(codes[rows], car.schema), one_hot_target(yc[rows], 4)
    sizes = car.schema.domain_sizes
    want = [max_operator(contingency(codes[rows, a], yc[rows], sizes[a], 4)) for a in range(6)]
    assert np.array_equal(max_scores_one_hot(H, C), want)


@pytest.mark.parametrize("split", ["exact", "exponential"])
def test_oblivious_prediction_equals_traversal_and_ignores_dummy_branches(car, split):
    led = unbounded() if split == "exact" else None
    m = ObliviousID3Classifier(epsilon=2.0, max_depth=2, split=split, schema=car.schema, ledger=led)
    m.fit(car.X, car.y)
    X = car.X.iloc[::7]
    assert np.array_equal(m.predict_oblivious(X), m.predict(X))
    # Each record selects exactly one leaf: the flags of all other paths,
    # dummy branches included, are zero.
    H = one_hot(car.schema.encode(X), car.schema)
    t = m.tree_
    poisoned = t.value.copy()
    poisoned[(t.feature < 0) & (t.value.sum(axis=1) == 0)] = 1e6  # dummy leaves
    from privet.learners._trees.tree import Tree

    t2 = Tree(t.feature, t.child_start, t.children, poisoned, t.depth)
    out = oblivious_predict(t2, H)
    assert np.allclose(out.sum(axis=1), 1.0)


# -- the sound variant -----------------------------------------------------------------


@pytest.mark.parametrize(
    "depth, fraction, leaf",
    [(0, 0.25, "laplace"), (1, 0.5, "laplace"), (3, 0.25, "laplace"), (3, 0.7, "exponential")],
)
def test_sound_variant_proves_the_requested_epsilon(car, depth, fraction, leaf):
    led = Ledger(budget=Guarantee(1.0))
    m = ObliviousID3Classifier(
        epsilon=1.0,
        max_depth=depth,
        split="exponential",
        split_fraction=fraction,
        leaf=leaf,
        schema=car.schema,
        ledger=led,
    )
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(1.0)
    m.fit(car.X, car.y)
    assert m.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-12)
    assert led.spent().epsilon == pytest.approx(1.0, rel=1e-12)
    assert m.privacy_claim_.epsilon == 1.0
    eps_leaf = 1.0 if depth == 0 else 1.0 - fraction
    for c in led.charges:
        if c.step == "leaf":
            assert c.guarantee.epsilon == pytest.approx(eps_leaf)
        else:
            assert isinstance(c.entry, Exponential)
            assert c.guarantee.epsilon == pytest.approx(fraction / depth)
    assert not any(isinstance(c.entry, NonPrivate) for c in led.charges)


def test_two_sound_fits_compose_and_a_third_is_refused(car):
    led = Ledger(budget=Guarantee(1.0))
    kw = {"epsilon": 0.5, "split": "exponential", "schema": car.schema, "ledger": led}
    a = ObliviousID3Classifier(**kw).fit(car.X, car.y)
    ObliviousID3Classifier(**kw).fit(car.X, car.y)
    assert a.privacy_spent_.epsilon == pytest.approx(0.5)
    assert led.spent().epsilon == pytest.approx(1.0)
    n = len(led.charges)
    with pytest.raises(BudgetExceededError, match="over its budget"):
        ObliviousID3Classifier(**{**kw, "epsilon": 0.1}).fit(Exploding(), Exploding())
    assert len(led.charges) == n


def test_predictions_are_valid(car):
    m = ObliviousID3Classifier(epsilon=1.0, split="exponential", schema=car.schema)
    with pytest.raises(NotFittedError, match="fit"):
        m.predict_oblivious(car.X)
    m.fit(car.X, car.y)
    p = m.predict_proba(car.X.iloc[:30])
    assert np.allclose(p.sum(axis=1), 1.0) and set(np.unique(p)) <= {0.0, 1.0}
    assert set(m.predict(car.X)) <= set(car.schema.classes)


def test_replace_one_plan_counts_the_lower_split_levels_twice_and_the_fit_is_scaled(car):
    """The plan at epsilon: (1 - f) eps for the one Laplace histogram of L1 sensitivity 2
    over all leaves, and f eps / h per split level, twice below the root (a replaced
    record can change branch). That is more than eps, so the fit scales every step
    (``calibrated_epsilon_``) until the ledger proves eps."""
    eps, h, f = 1.0, 3, 0.25
    led = Ledger(budget=Guarantee(2.0), relation="replace_one")
    m = ObliviousID3Classifier(
        epsilon=eps, max_depth=h, split_fraction=f, schema=car.schema, ledger=led
    )
    expected = (1 - f) * eps + f * eps * (2 - 1 / h)
    assert led.plan_cost(m.privacy_plan()).epsilon == pytest.approx(expected)
    assert eps < expected < (1 + f) * eps
    m.fit(car.X, car.y)
    # pure charges on a pure budget compose linearly in epsilon: the largest scale that
    # fits is eps / expected (bisection to 1e-9)
    scaled = m.calibrated_epsilon_
    assert scaled == pytest.approx(eps * eps / expected, rel=1e-8)
    assert m.privacy_spent_.epsilon <= eps * (1 + 1e-9)
    assert m.privacy_spent_.epsilon == pytest.approx(eps, rel=1e-8)
    assert led.spent().epsilon == pytest.approx(m.privacy_spent_.epsilon)
    (leaves,) = [c for c in led.charges if c.step == "leaf"]
    assert leaves.entry.sensitivity == 2.0
    assert leaves.guarantee.epsilon == pytest.approx((1 - f) * scaled)
