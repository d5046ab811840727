"""ODP+FMPC-ID3 protocol (Alg. 1-4): the secret tree against the reference, oblivious prediction."""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import load_dataset, one_hot
from privet.errors import InvalidParameterError
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.testing import allow_testing_noise, compare_secret_tree, robust_seed
from privet.learners._trees.tree import oblivious_predict
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.oblivious_id3.host import run_oblivious_id3, run_oblivious_predict
from privet.learners.oblivious_id3.protocol import reconstruct
from privet.learners.oblivious_id3.replay import charge_oblivious_run
from privet.learners.oblivious_id3.testing import reference_oblivious_id3
from privet.ledger import Guarantee, Ledger


def agree(ds, codes, y, *, backend="local", start=0, **params):
    schema = ds.schema
    with allow_testing_noise():
        seed, ref = robust_seed(
            lambda s: reference_oblivious_id3(codes, y, schema, seed=s, **params), start=start
        )
        model = run_oblivious_id3(
            codes,
            y,
            schema.domain_sizes,
            schema.n_classes,
            backend=backend,
            _testing_noise=seed,
            **params,
        )
    return model, ref


def params(split, leaf, depth=2, mpc_noise="fixed_point"):
    return {
        "depth": depth,
        "split": split,
        "split_epsilon": 0.25 / max(depth, 1),
        "leaf_epsilon": 0.75,
        "leaf": leaf,
        "numbers": SecureNumbers(mpc_noise=mpc_noise),
    }


@pytest.mark.parametrize("mpc_noise", ["fixed_point", "discrete"])
@pytest.mark.parametrize(
    ("split", "leaf"),
    [("exact", "laplace"), ("exponential", "laplace"), ("exponential", "exponential")],
)
@pytest.mark.parametrize("name", ["tennis", "heart"])
def test_one_party_secret_tree_agrees_with_the_reference(name, split, leaf, mpc_noise):
    ds = load_dataset(name)
    codes, y = ds.codes()
    model, ref = agree(ds, codes, y, **params(split, leaf, mpc_noise=mpc_noise))
    opened = model.reconstruct()
    w = ds.schema.max_domain_size
    assert [a.shape for a in opened["indicators"]] == [
        (1, ds.schema.n_features),
        (w, ds.schema.n_features),
    ]
    assert opened["leaves"].shape == (w**2, ds.schema.n_classes)
    assert compare_secret_tree(opened, ref, ds.schema.domain_sizes, w) == []
    assert model.reveals == ()  # training opens nothing


@pytest.mark.parametrize("mpc_noise", ["fixed_point", "discrete"])
def test_exponential_splits_never_reuse_an_attribute_on_a_path(mpc_noise):
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    # a tiny split budget: the choices are close to uniform, used attributes must still get 0
    model = run_oblivious_id3(
        codes,
        y,
        (3, 3, 2, 2),
        2,
        depth=4,
        split="exponential",
        split_epsilon=0.01,
        leaf_epsilon=1.0,
        backend="local",
        numbers=SecureNumbers(mpc_noise=mpc_noise),
    )
    ind = model.reconstruct()["indicators"]
    w = 3
    for j in range(w**3):
        path = [ind[0][0], ind[1][j // w**2], ind[2][j // w], ind[3][j]]
        assert np.array_equal(np.sum(path, axis=0), np.ones(4, dtype=np.int64))


def test_oblivious_prediction_returns_the_reference_labels():
    ds = load_dataset("heart")
    codes, y = ds.codes()
    model, ref = agree(ds, codes, y, **params("exact", "laplace", depth=3))
    queries = codes[:25]
    run = run_oblivious_predict(model, queries, ds.schema.domain_sizes, backend="local")
    H = one_hot(queries, ds.schema, width=ds.schema.max_domain_size)
    np.testing.assert_array_equal(run.labels, oblivious_predict(ref, H).argmax(axis=1))


def test_depth_zero_is_one_noisy_leaf():
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    model, ref = agree(ds, codes, y, **params("exact", "laplace", depth=0))
    assert model.reconstruct()["indicators"] == []
    run = run_oblivious_predict(model, codes[:3], (3, 3, 2, 2), backend="local")
    assert np.all(run.labels == np.argmax(ref.value[0]))


def test_a_split_budget_too_small_for_the_fixed_point_type_is_refused():
    ds = load_dataset("heart")
    codes, y = ds.codes()
    with pytest.raises(InvalidParameterError, match="bit_length"):
        run_oblivious_id3(
            codes,
            y,
            ds.schema.domain_sizes,
            2,
            depth=2,
            split="exponential",
            split_epsilon=1e-4,
            backend="local",
        )


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize(
    ("split", "noise"),
    [("exact", "discrete"), ("exponential", "discrete"), ("exponential", "paper")],
)
def test_charging_a_run_costs_what_the_learner_planned(split, noise, relation):
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    proven = split != "exact" and noise == "discrete"
    # replace-one: a record can leave one node and enter another, so the split levels below
    # the root cost twice; the Laplace leaves are one histogram of L1 sensitivity 2
    cost = 1.0 if relation == "add_remove" else 0.125 + 2 * 0.125 + 0.75
    budget = Guarantee(cost, 1e-9) if proven else Guarantee.unbounded()
    learner = ObliviousID3Classifier(
        epsilon=1.0,
        max_depth=2,
        split=split,
        schema=ds.schema,
        backend="local",
        noise=noise,
        ledger=Ledger(budget=budget, relation=relation),
    )
    accounting = learner._accounting(ds.schema)
    eps_split, eps_leaf = learner._budgets(ds.schema)
    model = run_oblivious_id3(
        codes,
        y,
        (3, 3, 2, 2),
        2,
        depth=2,
        split=split,
        split_epsilon=eps_split,
        leaf_epsilon=eps_leaf,
        backend="local",
        numbers=SecureNumbers(
            mpc_noise=accounting.mpc_noise,
            laplace_sensitivity=1.0 if relation == "add_remove" else 2.0,
            monotone=accounting.monotone,
        ),
    )
    led = Ledger(budget=budget, relation=relation)
    plan = learner.privacy_plan(ds.schema)
    with led.reserve(plan, scope=led.root) as res:
        charge_oblivious_run(
            led.root,
            model,
            split_epsilon=eps_split,
            leaf_epsilon=eps_leaf,
            claim=learner._claim_rule(),
            caller="test",
            accounting=accounting,
        )
        assert res.used() == led.plan_cost(plan)
    if proven:
        assert led.spent().epsilon == pytest.approx(cost)
        assert 0 < led.spent().delta < 1e-10
    else:
        assert led.spent().epsilon == float("inf")
    assert not any("Outlook" in c.path or "Humidity" in c.path for c in led.charges)
    if relation == "add_remove":  # a level, and the leaves, are one charge in the tree's scope
        assert [c.step for c in led.charges] == ["split, depth 0", "split, depth 1", "leaf"]
    else:  # every split node of the complete 3-ary tree in its own scope, the leaves in one
        assert len([c for c in led.charges if c.step == "split, depth 1"]) == 3
        (leaves,) = [c for c in led.charges if c.step == "leaf"]
        assert leaves.path == led.root.path
    with pytest.raises(InvalidParameterError, match="leaf_epsilon"):
        charge_oblivious_run(
            Ledger(budget=Guarantee.unbounded()).root,
            model,
            split_epsilon=eps_split,
            leaf_epsilon=2 * eps_leaf,
            claim=learner._claim_rule(),
            caller="test",
            accounting=accounting,
        )


@pytest.mark.mpc
def test_three_parties_train_a_secret_tree_and_only_the_querier_learns_labels():
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    model, ref = agree(
        ds, codes, y, backend="mpc", **params("exponential", "laplace", mpc_noise="discrete")
    )
    assert model.n_parties == 3 and model.stats.bytes_sent > 0
    # one party's shares are not the model (random field elements); all three together are
    alone = reconstruct([model.shares[0]])["indicators"][0]
    assert not np.isin(alone, [0, 1]).all()
    assert compare_secret_tree(model.reconstruct(), ref, (3, 3, 2, 2), 3) == []
    run = run_oblivious_predict(model, codes, (3, 3, 2, 2), querier=1, backend="mpc")
    H = one_hot(codes, ds.schema, width=3)
    np.testing.assert_array_equal(run.labels, oblivious_predict(ref, H).argmax(axis=1))
    assert run.others_learnt == (None, None)


def test_mpc_leaf_selections_are_charged_the_delta_of_their_class_count():
    """An exponential-mechanism leaf draws noise for every class (protocol.py, leaf
    selection), not for every attribute: its delta counts the classes (found in review:
    2 attributes and 6 classes were charged the delta of 2 candidates)."""
    from privet.learners._trees.accounting import NoiseAccounting
    from privet.ledger import NeighbouringRelation
    from privet.mechanisms.bitwise_geometric import noisy_max_delta

    acc = NoiseAccounting("discrete", "mpc", NeighbouringRelation.ADD_REMOVE, 2, 6)
    leaf, _ = acc.leaf("exponential", 1.0)
    split, _ = acc.selection(1.0)
    assert leaf.delta == pytest.approx(noisy_max_delta(1.0, 1.0, 6, 40), rel=1e-12)
    assert split.delta == pytest.approx(noisy_max_delta(1.0, 1.0, 2, 40), rel=1e-12)
    assert leaf.delta > split.delta
