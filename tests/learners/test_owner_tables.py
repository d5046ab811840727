"""OwnerTables: an owner's local counts of public paths (privet.learners._protocols.common)."""

from __future__ import annotations

import numpy as np
import pytest

from privet.errors import InvalidParameterError
from privet.learners._protocols.common import OwnerTables, flat_one_hot, path_conditions
from privet.mpc import get_runtime


def test_local_tables_equal_the_partition_vector_products():
    rng = np.random.default_rng(3)
    sizes, u, n = [3, 2, 4], 3, 200
    codes = np.column_stack([rng.integers(0, s, n) for s in sizes])
    y = rng.integers(0, u, n)
    mpc = get_runtime()
    tables = OwnerTables(codes, y, sizes, u, mpc.SecInt(32))
    conditions = [[(0, 1)], [(0, 2), (2, 3)], [(1, 0), (0, 0), (2, 1)]]
    local = tables.local(conditions).reshape(len(conditions), sum(sizes), u)
    root = tables.local([[]]).reshape(sum(sizes), u)
    D0, C0 = flat_one_hot(codes, sizes), np.eye(u, dtype=np.int64)[y]
    assert np.array_equal(root, D0.T @ C0)
    with pytest.raises(InvalidParameterError, match="overlap"):
        tables.local([[], [(0, 1)]])
    D, C = flat_one_hot(codes, sizes), np.eye(u, dtype=np.int64)[y]
    for j, path in enumerate(conditions):
        T = np.ones(n, dtype=np.int64)
        for a, v in path:
            T = T * (codes[:, a] == v)
        assert np.array_equal(local[j], (D * T[:, None]).T @ C), path
    # the secret tables of the one-party runtime open to the same values
    opened = mpc.run(mpc.output(tables(conditions)))
    assert np.array_equal(np.asarray(opened, dtype=np.int64), local)


def test_an_owner_without_rows_counts_zeros_and_paths_come_from_the_opened_splits():
    tables = OwnerTables(np.zeros((0, 2)), np.zeros(0), [2, 3], 2, get_runtime().SecInt(16))
    assert not tables.local([[], [(1, 2)]]).any()
    nodes = {(): {"split": 1}, (2,): {"split": 0}}
    assert path_conditions(nodes, (2, 1)) == [(1, 2), (0, 1)]
    assert path_conditions(nodes, ()) == []


def test_owner_tables_refuse_a_secret_subsample():
    from privet.data import load_dataset
    from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3

    ds = load_dataset("tennis")
    codes, y = ds.codes()
    with pytest.raises(Exception, match="secret subsample") as info:
        run_partial_mpc_id3(
            codes,
            y,
            ds.schema.domain_sizes,
            ds.schema.n_classes,
            depth=1,
            epsilon=0.5,
            sample_rate=0.5,
            owner_tables=True,
            backend="local",
        )
    assert isinstance(info.value, InvalidParameterError) or "InvalidParameterError" in str(
        info.value
    )


@pytest.mark.mpc
def test_learners_with_owner_tables_open_the_same_tree_and_charge_the_plan():
    from privet.data import load_dataset
    from privet.learners import MPCID3Classifier, PartialMPCID3Classifier
    from privet.ledger import Guarantee, Ledger

    ds = load_dataset("tennis")
    trees = []
    for owners in (False, True):
        led = Ledger(budget=Guarantee.unbounded())
        model = MPCID3Classifier(
            max_depth=3, schema=ds.schema, ledger=led, owner_tables=owners
        ).fit(ds.X, ds.y)
        trees.append((list(model.predict(ds.X)), model.tree_.node_count, len(led.charges)))
    assert trees[0] == trees[1]
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=ds.schema, ledger=led, backend="mpc", owner_tables=True
    ).fit(ds.X, ds.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert model.get_params()["owner_tables"] is True
