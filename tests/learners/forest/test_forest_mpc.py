"""Forests of secret ODP+FMPC-ID3 trees (seed 000, App. D) on the MPC backends.

Each tree is trained by the protocol (Alg. 1-3) on its subset and stays
secret-shared; one MPC run evaluates every tree (Alg. 4), sums the secret votes
and opens only the majority label to the querier. The ledger is charged the
forest's plan, as on the reference path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.data import one_hot
from privet.errors import BudgetExceededError, InvalidParameterError, MPCError
from privet.learners import DPRandomForestClassifier, ObliviousID3Classifier
from privet.learners._trees.tree import Tree, TreeBuilder, oblivious_predict
from privet.learners.oblivious_id3.host import SharedModel, run_oblivious_id3
from privet.learners.oblivious_id3.protocol import reconstruct
from privet.ledger import Guarantee, Ledger
from privet.mpc.vector import DATA_INDEPENDENT

pytestmark = pytest.mark.filterwarnings("ignore::privet.learners.PrivacyWarning")


class Exploding:
    def __getattr__(self, name):
        raise AssertionError("data was read before the budget check")


@pytest.fixture
def no_launch(monkeypatch):
    """Fail the test if any MPC party is started (processes or the local runtime)."""
    import privet.learners._protocols.host as host
    import privet.learners.forest.protocol as forest_protocol
    import privet.learners.oblivious_id3.host as oblivious_host

    def boom(*args, **kwargs):
        raise AssertionError("an MPC party was started")

    for module in (host, oblivious_host, forest_protocol):
        for name in ("launch", "run_local"):
            if hasattr(module, name):  # the forest launches through oblivious_host
                monkeypatch.setattr(module, name, boom)


def secret_tree(shares, schema) -> Tree:
    """The complete w-ary tree recombined from every party's shares (tests only)."""
    opened = reconstruct(shares)
    ind, leaves = opened["indicators"], opened["leaves"]
    w, u = schema.max_domain_size, schema.n_classes
    builder = TreeBuilder(u)

    def build(node: int, level: int, j: int) -> None:
        if level == len(ind):
            assert leaves[j].sum() == 1  # a one-hot label
            builder.set_leaf(node, leaves[j])
            return
        assert ind[level][j].sum() == 1  # a one-hot attribute indicator
        kids = builder.split(node, int(np.argmax(ind[level][j])), w)
        for v, kid in enumerate(kids):  # node j's children are w*j, ..., w*j + w - 1
            build(kid, level + 1, w * j + v)

    build(builder.add_node(0), 0, 0)
    return builder.build()


def plaintext_majority(models, codes, schema) -> np.ndarray:
    """Alg. 4 on each reconstructed tree in plaintext, then the reference forest's vote."""
    H = one_hot(codes, schema, width=schema.max_domain_size)
    votes = np.zeros((codes.shape[0], schema.n_classes))
    for model in models:
        votes += oblivious_predict(secret_tree(model.shares, schema), H)
    return np.argmax(votes, axis=1)  # DPRandomForestClassifier's rule: lowest index on ties


def reference_forest(**kw) -> DPRandomForestClassifier:
    return DPRandomForestClassifier(**{**kw, "backend": "reference"})


# ------------------------------------------------------------------ local party


@pytest.mark.parametrize("sampling", ["disjoint", "poisson"])
def test_local_forest_keeps_its_trees_secret_and_is_charged_its_plan(car, sampling):
    kw = {
        "n_estimators": 3,
        "epsilon": 1.0,
        "max_depth": 2,
        "sampling": sampling,
        "sampling_rate": 0.5 if sampling == "poisson" else None,
        "schema": car.schema,
        "random_state": 0,
    }
    led = Ledger(budget=Guarantee(3.0, 1e-9))
    m = DPRandomForestClassifier(backend="local", ledger=led, **kw)
    plan_cost = led.plan_cost(m.privacy_plan())
    m.fit(car.X, car.y)

    assert m.trees_ is None and len(m.models_) == 3  # secret-shared, one model per tree
    assert all(isinstance(t, SharedModel) and t.n_parties == 1 for t in m.models_)
    # training opens nothing that depends on the data (the sorted-table path opens shuffled,
    # masked values labelled data-independent; issue 35)
    assert all(
        r["entry"] is None and DATA_INDEPENDENT in r["label"] for t in m.models_ for r in t.reveals
    )
    assert m.privacy_spent_.epsilon == pytest.approx(plan_cost.epsilon, rel=1e-12)
    assert m.privacy_spent_.delta == pytest.approx(plan_cost.delta, rel=1e-9)
    assert led.spent().epsilon == pytest.approx(plan_cost.epsilon, rel=1e-12)
    # The same steps at the same epsilons as the reference path; the MPC samplers are
    # charged as (epsilon, tiny delta) entries, whose privacy loss distribution is the
    # worst case for their epsilon, while the reference path's Laplace and exponential
    # mechanisms have tighter ones: the reference plan proves at most what this run does.
    ref_led = Ledger(budget=Guarantee(3.0, 1e-9))
    ref = reference_forest(ledger=ref_led, **kw).fit(car.X, car.y)
    steps = lambda ledger: sorted((c.step, round(c.guarantee.epsilon, 12)) for c in ledger.charges)  # noqa: E731
    assert steps(led) == steps(ref_led)
    assert ref.privacy_spent_.epsilon <= m.privacy_spent_.epsilon * (1 + 1e-12)
    if sampling == "disjoint":
        assert m.privacy_spent_.epsilon == pytest.approx(1.0)  # parallel composition
    else:  # exact amplification, k trees in sequence (no view beats it for these entries)
        assert m.privacy_spent_.epsilon == pytest.approx(3 * math.log1p(0.5 * math.expm1(1.0)))
    tops = {c.path.split("/")[1] for c in led.charges}
    assert len(tops) == 3  # every charge inside its tree's part or subsample
    assert {c.caller for c in led.charges} == {"ObliviousID3Classifier"}

    if sampling == "poisson":  # drawn inside MPC: every run gets all rows and the rate
        assert all(t.params["sample_rate"] == 0.5 for t in m.models_)
    else:
        assert all(t.params["sample_rate"] is None for t in m.models_)

    labels = m.predict(car.X.iloc[:40])
    assert set(labels) <= set(car.schema.classes)
    proba = m.predict_proba(car.X.iloc[:40])  # one-hot of the only thing revealed: the label
    assert proba.shape == (40, 4) and set(np.unique(proba)) <= {0.0, 1.0}
    np.testing.assert_array_equal(m.classes_[proba.argmax(axis=1)], labels)


def test_local_forest_predicts_the_plaintext_majority_of_its_reconstructed_trees(car):
    from privet.learners.forest.protocol import run_oblivious_forest_predict

    m = DPRandomForestClassifier(
        n_estimators=4,
        epsilon=1.0,
        max_depth=2,
        schema=car.schema,
        backend="local",
        random_state=1,
    ).fit(car.X, car.y)
    codes, _ = car.codes()
    queries = codes[::7]
    expected = plaintext_majority(m.models_, queries, car.schema)
    np.testing.assert_array_equal(m.predict(car.X.iloc[::7]), m.classes_[expected])

    run = run_oblivious_forest_predict(m.models_, queries, car.schema.domain_sizes, backend="local")
    np.testing.assert_array_equal(run.labels, expected)
    assert run.n_trees == 4
    # exactly one opening, the majority labels; no tree's label is opened
    assert [(r["label"], r["shape"]) for r in run.reveals] == [
        ("forest of ODP+FMPC-ID3: majority labels (querier only)", [len(queries)])
    ]


def _constant_tree(template: dict, label: int, n_classes: int) -> SharedModel:
    """A depth-0 secret tree that always answers ``label`` (one party: share = value)."""
    scaled = np.zeros((1, n_classes), dtype=object)
    scaled[0, label] = 1 << int(template["frac_length"])
    share = {**template, "arrays": [scaled]}
    return SharedModel(shares=(share,), reveals=(), stats=None)


@pytest.mark.parametrize(
    "labels, winner",
    [([2, 1, 1, 2], 1), ([1, 2, 2, 1, 0], 1), ([3, 0], 0), ([3, 2, 3], 3), ([2], 2)],
)
def test_the_secret_vote_breaks_ties_to_the_lowest_class_like_the_reference(tennis, labels, winner):
    from privet.learners.forest.protocol import run_oblivious_forest_predict

    codes, y = tennis.codes()
    sizes = tennis.schema.domain_sizes
    template = run_oblivious_id3(codes, y, sizes, 4, depth=0, backend="local").shares[0]
    models = [_constant_tree(template, c, 4) for c in labels]
    assert [int(reconstruct(t.shares)["leaves"].argmax()) for t in models] == labels
    run = run_oblivious_forest_predict(models, codes[:3], sizes, backend="local")
    votes = np.bincount(labels, minlength=4)
    assert winner == int(np.argmax(votes))  # the reference forest's rule
    np.testing.assert_array_equal(run.labels, [winner] * 3)


# -------------------------------------------------------------- three parties


@pytest.mark.mpc
def test_three_party_forest_trains_and_predicts_the_plaintext_majority(tennis, monkeypatch):
    import privet.learners.forest.protocol as forest_protocol

    runs = []
    real = forest_protocol.run_oblivious_forest_predict

    def spy(*args, **kwargs):
        runs.append(real(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(forest_protocol, "run_oblivious_forest_predict", spy)
    kw = {"n_estimators": 2, "epsilon": 1.0, "max_depth": 1, "schema": tennis.schema}
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    m = DPRandomForestClassifier(
        backend="mpc", parties=3, ledger=led, random_state=0, timeout=30, **kw
    ).fit(tennis.X, tennis.y)
    assert m.trees_ is None
    assert [t.n_parties for t in m.models_] == [3, 3]
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    plan_cost = led.plan_cost(m.privacy_plan())
    assert m.privacy_spent_.epsilon == pytest.approx(plan_cost.epsilon, rel=1e-12)
    assert m.privacy_spent_.delta == pytest.approx(plan_cost.delta, rel=1e-9)
    assert plan_cost.epsilon == pytest.approx(
        led.plan_cost(reference_forest(ledger=led, **kw).privacy_plan()).epsilon
    )

    labels = m.predict(tennis.X)  # one MPC run over both secret trees
    codes, _ = tennis.codes()
    expected = plaintext_majority(m.models_, codes, tennis.schema)
    np.testing.assert_array_equal(labels, m.classes_[expected])
    (run,) = runs
    assert len(run.stats.parties) == 3
    assert run.others_learnt == (None, None)  # only the querier learns the labels
    assert len(run.reveals) == 1 and run.reveals[0]["shape"] == [len(tennis.X)]


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("sampling", ["disjoint", "poisson"])
def test_over_budget_is_refused_before_any_party_starts(car, sampling, no_launch):
    led = Ledger(budget=Guarantee(0.9))
    m = DPRandomForestClassifier(
        n_estimators=3,
        sampling=sampling,
        epsilon=1.0,
        max_depth=2,
        schema=car.schema,
        ledger=led,
        backend="mpc",
    )
    with pytest.raises(BudgetExceededError, match="over its budget"):
        m.fit(Exploding(), Exploding())
    assert led.charges == [] and led.remaining() == Guarantee(0.9)
    assert not hasattr(m, "models_")


@pytest.mark.parametrize("ledger", [None, "finite"], ids=["ledger=None", "finite ledger"])
def test_exact_split_trees_are_refused_on_a_finite_budget_like_the_tree(tennis, ledger, no_launch):
    led = Ledger(budget=Guarantee(100.0)) if ledger == "finite" else None
    tree = ObliviousID3Classifier(split="exact", schema=tennis.schema, ledger=led, backend="mpc")
    with pytest.raises(BudgetExceededError, match="split='exact'") as tree_refusal:
        tree.fit(Exploding(), Exploding())
    forest = DPRandomForestClassifier(
        n_estimators=2, split="exact", schema=tennis.schema, ledger=led, backend="mpc"
    )
    with pytest.raises(BudgetExceededError, match="split='exact'") as forest_refusal:
        forest.fit(Exploding(), Exploding())
    assert str(tree_refusal.value) in str(forest_refusal.value)  # the tree's own refusal
    if led is not None:
        assert led.charges == [] and led.remaining() == Guarantee(100.0)


def test_exact_split_trees_run_knowingly_on_an_unbounded_ledger(tennis):
    led = Ledger(budget=Guarantee.unbounded())
    m = DPRandomForestClassifier(
        n_estimators=2,
        split="exact",
        epsilon=1.0,
        max_depth=2,
        schema=tennis.schema,
        ledger=led,
        backend="local",
        random_state=0,
    ).fit(tennis.X, tennis.y)
    assert math.isinf(m.privacy_spent_.epsilon)
    assert m.privacy_claim_.epsilon == 1.0  # App. D: each tree claimed epsilon-DP
    splits = [c for c in led.charges if c.step.startswith("split")]
    assert splits and all(math.isinf(c.guarantee.epsilon) for c in splits)
    assert all(c.claim.epsilon == 0.0 for c in splits)  # the paper's "0-DP" split claim
    assert set(m.predict(tennis.X)) <= set(tennis.schema.classes)


@pytest.mark.parametrize("tree", ["oblivious", "partial_mpc"])
def test_the_trees_noise_refusal_flows_through_the_forest(tennis, tree, no_launch):
    led = Ledger(budget=Guarantee(5.0))
    forest = DPRandomForestClassifier(
        tree=tree, noise="paper", n_estimators=2, schema=tennis.schema, ledger=led, backend="mpc"
    )
    with pytest.raises(BudgetExceededError, match="noise='paper'"):
        forest.fit(Exploding(), Exploding())
    assert led.charges == [] and led.remaining() == Guarantee(5.0)


def test_split_applies_to_oblivious_trees_only(tennis):
    led = Ledger(budget=Guarantee(1.0))
    with pytest.raises(InvalidParameterError, match="tree='oblivious' only"):
        DPRandomForestClassifier(
            tree="partial_mpc", split="exact", schema=tennis.schema, ledger=led
        ).fit(tennis.X, tennis.y)
    assert led.charges == []


def test_an_empty_subset_is_refused_before_any_party_starts(tennis, no_launch):
    led = Ledger(budget=Guarantee(1.0, 1e-9))
    m = DPRandomForestClassifier(
        n_estimators=20, max_depth=1, schema=tennis.schema, ledger=led, backend="mpc"
    )  # 14 records over 20 disjoint subsets
    with pytest.raises(InvalidParameterError, match="no record"):
        m.fit(tennis.X, tennis.y)
    assert led.charges == [] and led.remaining() == Guarantee(1.0, 1e-9)


# -------------------------------------------------------------------- failure


@pytest.mark.parametrize("sampling", ["disjoint", "poisson"])
def test_a_failed_tree_run_is_charged_its_plan_once(car, sampling, monkeypatch):
    """The failing tree's whole plan is charged in its scope (by the tree learner),
    never again by the forest; trees not yet launched read nothing."""
    import privet.learners.oblivious_id3.host as protocols

    real = protocols.run_oblivious_id3
    calls = []

    def second_dies(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise MPCError("party 1 died")
        return real(*args, **kwargs)

    monkeypatch.setattr(protocols, "run_oblivious_id3", second_dies)
    kw = {
        "epsilon": 1.0,
        "max_depth": 2,
        "sampling": sampling,
        "sampling_rate": 0.5 if sampling == "poisson" else None,
        "schema": car.schema,
        "backend": "local",
        "random_state": 0,
    }
    led = Ledger(budget=Guarantee(5.0, 1e-9))
    m = DPRandomForestClassifier(n_estimators=3, ledger=led, **kw)
    with pytest.raises(MPCError, match="died"):
        m.fit(car.X, car.y)
    assert len(calls) == 2  # the third tree was never launched
    aborted = [c for c in led.charges if c.mechanism.startswith("aborted MPC run")]
    assert len(aborted) == 1 and aborted[0].caller == "ObliviousID3Classifier"
    if sampling == "disjoint":  # parallel: the failed tree's plan is the forest's cost
        expected = led.plan_cost(m.privacy_plan()).epsilon
    else:  # two trees charged in sequence, each amplified
        expected = led.plan_cost(DPRandomForestClassifier(n_estimators=2, **kw).privacy_plan())
        expected = expected.epsilon
    assert led.spent().epsilon == pytest.approx(expected, rel=1e-9)
    assert led.reserved() == Guarantee(0.0)  # the reservation is closed


def test_refitting_on_the_reference_path_drops_the_secret_models(tennis):
    m = DPRandomForestClassifier(
        n_estimators=2, max_depth=1, schema=tennis.schema, backend="local", random_state=0
    ).fit(tennis.X, tennis.y)
    assert m.trees_ is None and len(m.models_) == 2
    m.set_params(backend="reference").fit(tennis.X, tennis.y)
    assert len(m.trees_) == 2 and not hasattr(m, "models_")
