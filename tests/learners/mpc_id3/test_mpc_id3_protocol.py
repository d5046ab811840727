"""MPC-ID3 protocol (max operator, tree opened) against the plaintext ID3Classifier."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privet.data import Categorical, Schema, load_dataset
from privet.learners import ID3Classifier
from privet.learners.mpc_id3.host import run_mpc_id3


def reference(codes, y, schema, depth):
    names = zip(schema.feature_names, schema.attributes, strict=True)
    frame = pd.DataFrame(
        {name: np.asarray(a.labels, dtype=object)[codes[:, i]] for i, (name, a) in enumerate(names)}
    )
    labels = np.asarray(schema.classes, dtype=object)[y]
    return ID3Classifier(max_depth=depth, schema=schema, criterion="max").fit(frame, labels).tree_


def assert_same_tree(run, ref, schema):
    tree = run.tree(schema.domain_sizes, schema.n_classes)
    assert tree.same_structure(ref), (tree.splits(), ref.splits())
    leaves = ref.feature < 0
    np.testing.assert_array_equal(tree.value[leaves].argmax(1), ref.value[leaves].argmax(1))


@pytest.mark.parametrize(("name", "depth"), [("tennis", 4), ("car", 2), ("car", 3)])
def test_one_party_run_equals_id3_max(name, depth):
    ds = load_dataset(name)
    codes, y = ds.codes()
    run = run_mpc_id3(
        codes, y, ds.schema.domain_sizes, ds.schema.n_classes, depth=depth, backend="local"
    )
    assert_same_tree(run, reference(codes, y, ds.schema, depth), ds.schema)
    assert not run.testing_noise
    assert run.stats.parties[0].bytes_sent == 0


def test_car_subsample_with_empty_branches_takes_the_parents_majority():
    ds = load_dataset("car")
    codes, y = ds.codes()
    rows = np.random.default_rng(4).choice(len(y), size=150, replace=False)
    codes, y = codes[rows], y[rows]
    ref = reference(codes, y, ds.schema, 4)
    # the subsample leaves some branches empty (ID3 gives them the parent's counts)
    empty = set(np.flatnonzero(ref.feature < 0)) - set(ref.apply(codes).tolist())
    assert empty
    run = run_mpc_id3(codes, y, ds.schema.domain_sizes, 4, depth=4, backend="local")
    assert_same_tree(run, ref, ds.schema)


@pytest.mark.parametrize("depth", [1, 3])
def test_ties_break_to_the_first_attribute_and_the_first_class(depth):
    # attributes a and b are identical (equal scores); where a = 0, classes 1 and 2 tie
    schema = Schema(
        [
            Categorical("a", ["0", "1"]),
            Categorical("b", ["0", "1"]),
            Categorical("c", ["x", "y", "z"]),
        ],
        Categorical("t", ["p", "q", "r"]),
    )
    a = np.tile([0, 1], 30)
    codes = np.column_stack([a, a, np.random.default_rng(0).integers(0, 3, size=60)])
    y = np.zeros(60, dtype=np.int64)
    y[a == 0] = np.tile([1, 2], 15)
    ref = reference(codes, y, schema, depth)
    assert ref.feature[0] == 0  # the first of two equal scores
    if depth == 1:
        assert ref.value[1].argmax() == 1  # the first of two equal counts
    run = run_mpc_id3(codes, y, schema.domain_sizes, 3, depth=depth, backend="local")
    assert_same_tree(run, ref, schema)


def test_openings_are_logged_with_their_nonprivate_entries():
    ds = load_dataset("tennis")
    codes, y = ds.codes()
    run = run_mpc_id3(codes, y, ds.schema.domain_sizes, 2, depth=4, backend="local")
    labels = [r["label"] for r in run.reveals]
    assert labels[0] == "MPC-ID3 depth 0: stop tests"
    assert {r["entry"] for r in run.reveals} == {"NonPrivate"}
    assert any("split attributes" in x for x in labels)
    assert any("leaf labels" in x for x in labels)


@pytest.mark.mpc
def test_three_parties_on_a_car_subsample_equal_id3():
    ds = load_dataset("car")
    codes, y = ds.codes()
    rows = np.random.default_rng(1).choice(len(y), size=300, replace=False)
    codes, y = codes[rows], y[rows]
    run = run_mpc_id3(codes, y, ds.schema.domain_sizes, 4, depth=3, backend="mpc", timeout=60)
    assert_same_tree(run, reference(codes, y, ds.schema, 3), ds.schema)
    assert len(run.stats.parties) == 3
    assert all(p.bytes_sent > 0 and p.message_batches > 0 for p in run.stats.parties)
