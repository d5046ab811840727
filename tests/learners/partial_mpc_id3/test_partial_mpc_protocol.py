"""CDP+PMPC-ID3 protocol (Alg. 7-10) against the reference path, under the testing hook."""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import load_dataset
from privet.errors import InvalidParameterError
from privet.learners._protocols.noise import FixedNoiseRefused
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.testing import (
    agreement_runs,
    allow_testing_noise,
    compare_trees,
)
from privet.learners._trees.scores import contingency, max_operator
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3
from privet.learners.partial_mpc_id3.reference import grow_partial_mpc
from privet.learners.partial_mpc_id3.replay import ReplayOps
from privet.learners.partial_mpc_id3.testing import reference_partial_mpc_id3
from privet.ledger import Guarantee, Ledger


@pytest.fixture(scope="module")
def car_sample():
    ds = load_dataset("car")
    codes, y = ds.codes()
    rows = np.random.default_rng(2).choice(len(y), size=240, replace=False)
    return ds.schema, codes[rows], y[rows]


def agree(schema, codes, y, *, depth, epsilon, leaf, mpc_noise="fixed_point", **options):
    """CDP+PMPC-ID3's reference and protocol with the same testing noise: (run, tree, seed).

    ``options``: ``backend`` and ``start`` of :func:`agreement_runs`.
    """
    numbers = SecureNumbers(mpc_noise=mpc_noise)
    params = {"depth": depth, "epsilon": epsilon, "leaf": leaf, "numbers": numbers}
    return agreement_runs(
        reference_partial_mpc_id3, run_partial_mpc_id3, schema, codes, y, **options, **params
    )


@pytest.mark.parametrize("mpc_noise", ["fixed_point", "discrete"])
@pytest.mark.parametrize("leaf", ["laplace", "exponential"])
@pytest.mark.parametrize("name", ["tennis", "heart"])
def test_one_party_run_agrees_with_the_reference_under_the_same_noise(name, leaf, mpc_noise):
    ds = load_dataset(name)
    codes, y = ds.codes()
    run, ref, _ = agree(ds.schema, codes, y, depth=2, epsilon=0.3, leaf=leaf, mpc_noise=mpc_noise)
    assert run.testing_noise
    assert compare_trees(run.tree(ds.schema.domain_sizes, ds.schema.n_classes), ref) == []
    assert all(r["label"].endswith("[TESTING NOISE]") for r in run.reveals)


@pytest.mark.parametrize("mpc_noise", ["fixed_point", "discrete"])
def test_the_agreement_check_notices_different_noise(tennis, mpc_noise):
    codes, y = tennis.codes()
    run, _, seed = agree(
        tennis.schema, codes, y, depth=2, epsilon=0.3, leaf="laplace", mpc_noise=mpc_noise
    )
    with allow_testing_noise():
        other, _ = reference_partial_mpc_id3(
            codes,
            y,
            tennis.schema,
            depth=2,
            epsilon=0.3,
            leaf="laplace",
            seed=seed + 1,
            numbers=SecureNumbers(mpc_noise=mpc_noise),
        )
    assert compare_trees(run.tree(tennis.schema.domain_sizes, 2), other) != []


def test_testing_noise_is_refused_outside_a_test(tennis, monkeypatch):
    monkeypatch.delenv("PRIVET_TESTING_NOISE", raising=False)
    codes, y = tennis.codes()
    with pytest.raises(FixedNoiseRefused, match="removes all privacy"):
        run_partial_mpc_id3(
            codes, y, (3, 3, 2, 2), 2, depth=1, epsilon=1.0, backend="local", _testing_noise=1
        )
    monkeypatch.setenv("PRIVET_TESTING_NOISE", "1")  # any other value is refused too
    with pytest.raises(FixedNoiseRefused):
        run_partial_mpc_id3(
            codes, y, (3, 3, 2, 2), 2, depth=1, epsilon=1.0, backend="local", _testing_noise=1
        )


def test_secure_noise_at_a_huge_budget_gives_best_splits_and_near_exact_counts(tennis):
    codes, y = tennis.codes()
    run = run_partial_mpc_id3(codes, y, (3, 3, 2, 2), 2, depth=2, epsilon=500.0, backend="local")
    assert not run.testing_noise
    tree = run.tree((3, 3, 2, 2), 2)
    scores = [
        max_operator(contingency(codes[:, a], y, size, 2)) for a, size in enumerate((3, 3, 2, 2))
    ]
    assert scores[tree.feature[0]] == max(scores)  # EM at scale 0.004: a best attribute
    exact = np.zeros_like(tree.value)
    np.add.at(exact, (tree.apply(codes), y), 1)
    leaves = tree.feature < 0
    np.testing.assert_allclose(tree.value[leaves], exact[leaves], atol=0.2)


@pytest.mark.parametrize("noise", ["paper", "discrete"])
def test_replay_charges_the_plan_and_rebuilds_the_opened_tree(tennis, noise):
    codes, y = tennis.codes()
    learner = PartialMPCID3Classifier(
        epsilon=0.9, max_depth=2, schema=tennis.schema, backend="local", noise=noise
    )
    accounting = learner._accounting(tennis.schema)
    eps = 0.9 / 3
    run = run_partial_mpc_id3(
        codes,
        y,
        (3, 3, 2, 2),
        2,
        depth=2,
        epsilon=eps,
        backend="local",
        numbers=SecureNumbers(mpc_noise=accounting.mpc_noise, monotone=accounting.monotone),
    )
    # the learner's default form: monotone noisy max under add/remove (discrete noise only)
    assert accounting.monotone == (noise == "discrete")
    led = Ledger(budget=Guarantee.unbounded() if noise == "paper" else Guarantee(0.9, 1e-9))
    plan = learner.privacy_plan(tennis.schema)
    with led.reserve(plan, scope=led.root) as res:
        tree = grow_partial_mpc(
            ReplayOps(run, tennis.schema, caller="test", accounting=accounting),
            led.root,
            tennis.schema,
            depth=2,
            epsilon=eps,
            leaf="laplace",
            claim=learner._claim_rule(),
        )
        assert res.used() == led.plan_cost(plan)
    assert compare_trees(tree, run.tree((3, 3, 2, 2), 2), atol=0) == []
    spent = led.spent()
    if noise == "paper":  # fixed-point Alg. 12-13: no proof, recorded as non-private
        assert spent.epsilon == float("inf")
        assert {c.mechanism for c in led.charges} == {
            "secure exponential (MPC, Alg. 13)",
            "secure laplace (MPC, Alg. 12)",
        }
        # the paper's claim is kept next to each non-private charge
        assert all(c.claim.epsilon == pytest.approx(eps) for c in led.charges)
    else:  # exact discrete samplers: (0.9, delta) with delta from the TV bound
        assert spent.epsilon == pytest.approx(0.9)
        assert 0 < spent.delta < 1e-10
        assert {c.mechanism for c in led.charges} == {
            "secure report-noisy-max (MPC, discrete Laplace)",
            "secure discrete laplace (MPC)",
        }
    with pytest.raises(InvalidParameterError, match="epsilon"):
        grow_partial_mpc(
            ReplayOps(run, tennis.schema, caller="test", accounting=accounting),
            Ledger(budget=Guarantee.unbounded()).root,
            tennis.schema,
            depth=2,
            epsilon=2 * eps,
            leaf="laplace",
            claim=learner._claim_rule(),
        )
    if noise == "discrete":  # a run in the other form is not what the learner charges
        paper_form = learner.set_params(em_form="paper")._accounting(tennis.schema)
        with pytest.raises(InvalidParameterError, match="monotone"):
            ReplayOps(run, tennis.schema, caller="test", accounting=paper_form)
    other = learner.set_params(noise="paper" if noise == "discrete" else "discrete", em_form="auto")
    with pytest.raises(InvalidParameterError, match="mpc_noise"):
        ReplayOps(run, tennis.schema, caller="test", accounting=other._accounting(tennis.schema))


def test_replay_refuses_a_run_with_testing_noise(tennis):
    codes, y = tennis.codes()
    run, _, _ = agree(tennis.schema, codes, y, depth=1, epsilon=0.5, leaf="laplace")
    accounting = PartialMPCID3Classifier(backend="local", noise="paper")._accounting(tennis.schema)
    with pytest.raises(InvalidParameterError, match="testing noise"):
        ReplayOps(run, tennis.schema, caller="test", accounting=accounting)


@pytest.mark.mpc
def test_three_parties_agree_with_the_reference_on_a_car_subsample(car_sample):
    schema, codes, y = car_sample
    run, ref, _ = agree(
        schema,
        codes,
        y,
        depth=2,
        epsilon=0.3,
        leaf="exponential",
        backend="mpc",
        start=10,
        mpc_noise="discrete",
    )
    assert compare_trees(run.tree(schema.domain_sizes, schema.n_classes), ref) == []
    assert len(run.stats.parties) == 3 and run.stats.bytes_sent > 0


def test_a_secret_poisson_subsample_drawn_inside_mpc_removes_unsampled_records(tennis):
    """sample_rate: records enter the counts only through secret coins (App. D.1 forests)."""
    codes, y = tennis.codes()
    kw = {"depth": 1, "epsilon": 500.0, "backend": "local"}
    kw["numbers"] = SecureNumbers(mpc_noise="discrete")
    # at epsilon = 500 the discrete noise is 0 with probability 1 - 2e-3 per count
    none = run_partial_mpc_id3(codes, y, (3, 3, 2, 2), 2, sample_rate=1e-9, **kw)
    every = run_partial_mpc_id3(codes, y, (3, 3, 2, 2), 2, sample_rate=1.0, **kw)
    leaves = lambda run: np.array([n["value"] for n in run.nodes.values() if "value" in n])  # noqa: E731
    assert np.abs(leaves(none)).sum() <= 2  # nobody sampled (P(any coin) < 1e-7)
    assert abs(leaves(every).sum() - len(y)) <= 2  # everybody sampled
    assert none.params["sample_rate"] == 1e-9
