"""The sorted-table protocols (issue 35): the same trees and labels as the partition-vector ones.

CDP+PMPC-ID3 and ODP+FMPC-ID3 with ``sorted_table=True`` keep the outsourced rows
secretly sorted by node in the vector engine (privet.learners._protocols.grouped);
oblivious prediction with ``method="sorted"`` follows each query's path. Under
public testing noise they must open (or hold) exactly what the partition-vector
protocols do, and besides the DP releases open only values labelled
data-independent.
"""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import load_dataset
from privet.errors import InvalidParameterError, MPCError
from privet.learners._protocols.grouped import dummy_digits
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.testing import allow_testing_noise
from privet.learners.oblivious_id3.host import run_oblivious_id3, run_oblivious_predict
from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3
from privet.mpc.vector import DATA_INDEPENDENT

NUMBERS = SecureNumbers(mpc_noise="discrete", bit_length=32)


@pytest.fixture(scope="module")
def car():
    ds = load_dataset("car")
    codes, y = ds.codes()
    return ds, codes[:300], y[:300]


def test_dummies_are_ordered_so_that_dummy_g_starts_group_g_at_every_level():
    digits = dummy_digits(3, 3)
    index = digits @ 3 ** np.arange(3)
    assert np.array_equal(index, np.arange(27))
    for level in range(4):
        key = digits[:, :level] @ 3 ** np.arange(level)
        order = np.argsort(key, kind="stable")
        starts = order[np.flatnonzero(np.diff(np.concatenate(([-1], key[order]))) != 0)]
        assert starts.tolist() == list(range(3**level))


@pytest.mark.parametrize("leaf", ["laplace", "exponential"])
def test_cdp_sorted_table_opens_the_partition_vector_tree(car, leaf):
    ds, codes, y = car
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    kw = {"depth": 3, "epsilon": 0.5, "leaf": leaf, "numbers": NUMBERS, "backend": "local"}
    with allow_testing_noise():
        before = run_partial_mpc_id3(codes, y, sizes, u, _testing_noise=5, **kw)
        now = run_partial_mpc_id3(codes, y, sizes, u, _testing_noise=5, sorted_table=True, **kw)
    assert now.nodes == before.nodes
    paid = [r for r in now.reveals if r["entry"] is not None]
    assert [(r["label"], r["shape"], r["entry"]) for r in paid] == [
        (r["label"], r["shape"], r["entry"]) for r in before.reveals
    ]
    assert all(DATA_INDEPENDENT in r["label"] for r in now.reveals if r["entry"] is None)


@pytest.mark.parametrize("split", ["exponential", "exact"])
def test_odp_sorted_table_holds_the_partition_vector_model(car, split):
    ds, codes, y = car
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    kw = {"depth": 2, "split": split, "split_epsilon": 0.25, "leaf_epsilon": 0.75}
    kw.update(numbers=NUMBERS, backend="local")
    with allow_testing_noise():
        before = run_oblivious_id3(codes, y, sizes, u, _testing_noise=9, **kw)
        now = run_oblivious_id3(codes, y, sizes, u, _testing_noise=9, sorted_table=True, **kw)
    a, b = before.reconstruct(), now.reconstruct()
    for x, z in zip(a["indicators"], b["indicators"], strict=True):
        assert np.array_equal(x, z)
    assert np.array_equal(a["leaves"], b["leaves"])
    assert before.reveals == ()
    assert all(DATA_INDEPENDENT in r["label"] and r["entry"] is None for r in now.reveals)


def test_sorted_prediction_gives_the_labels_of_every_leaf_evaluation(car):
    ds, codes, y = car
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    model = run_oblivious_id3(
        codes, y, sizes, u, depth=3, split="exponential", split_epsilon=0.3, leaf_epsilon=0.7,
        numbers=NUMBERS, backend="local",
    )  # fmt: skip
    queries = load_dataset("car").codes()[0][300:500]
    leaves = run_oblivious_predict(model, queries, sizes, backend="local", method="leaves")
    paths = run_oblivious_predict(model, queries, sizes, backend="local", method="sorted")
    assert np.array_equal(paths.labels, leaves.labels)
    with pytest.raises(InvalidParameterError, match="method"):
        run_oblivious_predict(model, queries, sizes, backend="local", method="all")


def test_bad_inputs_are_refused_with_a_named_error(car):
    ds, codes, y = car
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    model = run_oblivious_id3(
        codes, y, sizes, u, depth=1, split="exponential", split_epsilon=0.3, leaf_epsilon=0.7,
        numbers=NUMBERS, backend="local",
    )  # fmt: skip
    bad = codes[:5].copy()
    bad[0, 0] = sizes[0]  # outside the schema
    with pytest.raises(InvalidParameterError, match="outside its attribute's domain"):
        run_oblivious_predict(model, bad, sizes, backend="local")  # refused before launch
    with pytest.raises((MPCError, InvalidParameterError), match="mpc_noise='discrete'"):
        run_partial_mpc_id3(
            codes, y, sizes, u, depth=2, epsilon=0.5, numbers=SecureNumbers(), backend="local",
            sorted_table=True,
        )  # fmt: skip


@pytest.mark.mpc
def test_three_parties_agree_with_the_partition_path_on_tennis():
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    kw = {"depth": 2, "epsilon": 0.5, "numbers": NUMBERS, "backend": "mpc", "timeout": 120.0}
    with allow_testing_noise():
        before = run_partial_mpc_id3(codes, y, sizes, u, _testing_noise=7, **kw)
        now = run_partial_mpc_id3(codes, y, sizes, u, _testing_noise=7, sorted_table=True, **kw)
    assert now.nodes == before.nodes
    model = run_oblivious_id3(
        codes, y, sizes, u, depth=2, split="exponential", split_epsilon=0.25, leaf_epsilon=0.75,
        numbers=NUMBERS, backend="mpc", timeout=120.0, sorted_table=True,
    )  # fmt: skip
    leaves = run_oblivious_predict(model, codes, sizes, method="leaves", timeout=120.0)
    paths = run_oblivious_predict(model, codes, sizes, method="sorted", timeout=120.0)
    assert np.array_equal(paths.labels, leaves.labels)
    assert all(other is None for other in paths.others_learnt)


def test_a_sorted_path_that_cannot_run_is_refused_before_launch_and_charges_nothing(car):
    from privet.learners import ObliviousID3Classifier, PartialMPCID3Classifier
    from privet.learners._protocols.programs import sorted_table_fits
    from privet.ledger import Guarantee, Ledger

    ds = car[0]
    X = ds.X.iloc[:300]
    yy = np.asarray(ds.y)[:300]
    for model in (
        PartialMPCID3Classifier(noise="paper", max_depth=2, data_path="sorted"),
        ObliviousID3Classifier(noise="paper", max_depth=2, data_path="sorted"),
    ):
        led = Ledger(budget=Guarantee.unbounded())
        model.set_params(schema=ds.schema, ledger=led, backend="local")
        with pytest.raises(InvalidParameterError, match="data_path='sorted' needs"):
            model.fit(X, yy)
        assert led.charge_rows() == []
    # keys too wide for 30 bits of masking: 'auto' falls back, 'sorted' is refused
    kw = {"n_classes": 2, "parties": 3, "split_epsilon": 0.1, "leaf_epsilon": 0.1}
    assert sorted_table_fits(10**4, NUMBERS, 12, **kw)
    assert not sorted_table_fits(10**7, NUMBERS, 12, **kw)


def test_sorted_table_fits_counts_the_classes_and_the_parties():
    """Review of issue 35, F2/F3: a leaf's noisy-max key carries the classes' rank bits,
    and the masking room shrinks with the parties; either must refuse before launch."""
    from privet.learners._protocols.programs import sorted_table_fits
    from privet.mpc.vector import comparison_kappa

    run = {"split_epsilon": 1.0, "leaf_epsilon": 1.0, "leaf": "exponential"}
    assert sorted_table_fits(2 * 10**6, NUMBERS, 1, n_classes=2, parties=3, **run)
    assert not sorted_table_fits(2 * 10**6, NUMBERS, 1, n_classes=100, parties=3, **run)
    assert comparison_kappa(16, 3) == 40
    assert comparison_kappa(26, 3) == 30 and comparison_kappa(24, 16) == 31
    with pytest.raises(InvalidParameterError, match="among 16 parties"):
        comparison_kappa(26, 16)
