"""The matrix forms of the forest equal direct evaluation of the trees, exactly (no noise)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.reference import (
    hard_votes,
    leaf_counts,
    leaf_index,
    weighted_votes,
)
from privet.learners.matrix_forest.trees import Ensemble, _tree_of_leaf, build_forest
from privet.mechanisms.matrix import ProductQueries


def tennis() -> tuple[Ensemble, np.ndarray, np.ndarray]:
    """Seed 002, Fig. 1: outlook (sunny, overcast, rainy) x windy (false, true), play (no, yes)."""
    paths = ProductQueries((3, 2), [[0, -1], [1, -1], [2, -1], [-1, 0], [-1, 1]])
    ens = Ensemble((0, 1), (3, 2), paths, _tree_of_leaf(paths, 2))
    x = np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 0], [2, 1]])
    y = np.array([0, 0, 1, 1, 1, 0])
    return ens, x, y


def test_figure_1_leaf_counts_and_votes() -> None:
    ens, x, y = tennis()
    d = mx.data_matrix(ens, x, y, 2)
    assert d.tolist() == [[1, 0], [1, 0], [0, 1], [0, 0], [0, 2], [1, 0]]  # Fig. 1c, D
    c = ens.paths.matmul(d)
    expected_c = [[2, 0], [0, 1], [1, 2], [1, 3], [2, 0]]  # Fig. 1c, C = T D
    assert c.tolist() == expected_c
    assert leaf_counts(ens, leaf_index(ens, x), y, 2).tolist() == expected_c
    queries = np.array([[0, 1], [1, 1], [1, 0]])  # Fig. 1d
    assert mx.query_matrix(ens, queries).toarray().tolist() == [
        [0, 1, 0, 0, 0, 0],
        [0, 0, 0, 1, 0, 0],
        [0, 0, 1, 0, 0, 0],
    ]
    w = mx.prediction_workload(ens, leaf_index(ens, queries))
    assert w.toarray().tolist() == [  # Fig. 1f, Q T^T T
        [1, 2, 0, 1, 0, 1],
        [0, 1, 1, 2, 0, 1],
        [1, 0, 2, 1, 1, 0],
    ]
    assert (w @ d).tolist() == [[4, 0], [2, 1], [1, 4]]  # Fig. 1f, V
    assert weighted_votes(c, leaf_index(ens, queries)).tolist() == [[4, 0], [2, 1], [1, 4]]


def brute_force_leaves(ens: Ensemble, codes: np.ndarray) -> np.ndarray:
    """Walk every tree record by record: the leaf whose tested values all match."""
    out = np.zeros((codes.shape[0], ens.n_trees), dtype=int)
    for r, rec in enumerate(codes):
        for t in range(ens.n_trees):
            rows = range(ens.n_leaves)[ens.tree_rows(t)]
            hits = [
                j
                for j in rows
                if all(v < 0 or v == rec[a] for a, v in enumerate(ens.paths.values[j]))
            ]
            assert len(hits) == 1
            out[r, t] = hits[0]
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("sizes", "depth", "q", "d_bar"), [((3, 2, 4), 2, 1, 3), ((2, 3, 2, 3), 3, 2, 3)]
)
def test_matrix_forms_equal_direct_evaluation(seed, sizes, depth, q, d_bar) -> None:
    rng = np.random.default_rng(seed)
    forest = build_forest(
        sizes, n_trees=6, max_depth=depth, n_ensembles=q, max_features=d_bar, rng=rng
    )
    assert len(forest) == q and sum(e.n_trees for e in forest) == 6
    k = 3
    x = np.column_stack([rng.integers(s, size=40) for s in sizes])
    y = rng.integers(k, size=40)
    queries = np.array(list(itertools.product(*(range(s) for s in sizes))))[::3]
    for ens in forest:
        assert len(ens.features) == d_bar
        sub, qsub = x[:, list(ens.features)], queries[:, list(ens.features)]
        leaves = leaf_index(ens, sub)
        assert (leaves == brute_force_leaves(ens, sub)).all()
        d = mx.data_matrix(ens, sub, y, k)
        c = leaf_counts(ens, leaves, y, k)
        t_dense = ens.paths.to_sparse().toarray()
        assert np.array_equal(ens.paths.matmul(d), c)  # C = T D, implicit T
        assert np.array_equal(t_dense @ d, c)  # and explicit T
        assert (t_dense.sum(axis=0) == ens.n_trees).all()  # each tree partitions the domain
        q_leaves = leaf_index(ens, qsub)
        v = weighted_votes(c, q_leaves)
        q_mat = mx.query_matrix(ens, qsub).toarray()
        assert np.array_equal(q_mat @ t_dense.T @ t_dense @ d, v)  # V = Q T^T T D
        assert np.array_equal(mx.prediction_workload(ens, q_leaves) @ d, v)
        assert np.array_equal(mx.leaf_query_matrix(ens, q_leaves) @ c, v)  # V = Q T^T C
        assert np.array_equal(mx.leaf_query_matrix(ens, q_leaves).toarray(), q_mat @ t_dense.T)
        h = hard_votes(c, q_leaves)
        assert (h.sum(axis=1) == ens.n_trees).all()


def test_trees_depend_on_the_schema_and_seed_only() -> None:
    def forest_of_seed_3():
        return build_forest(
            (4, 3, 3),
            n_trees=5,
            max_depth=2,
            n_ensembles=1,
            max_features=3,
            rng=np.random.default_rng(3),
        )

    a, b = forest_of_seed_3(), forest_of_seed_3()
    assert np.array_equal(a[0].paths.values, b[0].paths.values)
    assert a[0].paths.l1_norm() == 5  # ||T||_1 = tau: every cell in one leaf per tree


def test_implicit_prediction_workload_equals_the_explicit_one() -> None:
    rng = np.random.default_rng(0)
    (ens,) = build_forest((3, 4, 2), n_trees=4, max_depth=2, n_ensembles=1, max_features=3, rng=rng)
    q_leaves = leaf_index(ens, np.column_stack([rng.integers(s, size=7) for s in ens.domain]))
    d = rng.integers(0, 5, size=(ens.n_cells, 3)).astype(float)
    implicit = mx.ImplicitPredictionWorkload(ens, q_leaves)
    assert np.array_equal(implicit.matmul(d), mx.prediction_workload(ens, q_leaves) @ d)


@pytest.mark.parametrize("seed", range(4))
def test_implicit_prediction_workload_has_the_explicit_frobenius_norm(seed, monkeypatch) -> None:
    """||W||_F^2 from the leaves' boxes equals that of the explicit W = Q T^T T (a
    batch-prediction fit above the explicit limit needed it, and formed T to get it)."""
    rng = np.random.default_rng(seed)
    domain = (3, 4, 2, 3)
    (ens,) = build_forest(domain, n_trees=5, max_depth=3, n_ensembles=1, max_features=4, rng=rng)
    q_leaves = leaf_index(ens, np.column_stack([rng.integers(s, size=300) for s in ens.domain]))
    explicit = mx.prediction_workload(ens, q_leaves)
    implicit = mx.ImplicitPredictionWorkload(ens, q_leaves)
    expected = explicit.multiply(explicit).sum()

    def never(*_):
        raise AssertionError("formed the explicit decision-path matrix")

    monkeypatch.setattr(type(ens.paths), "to_sparse", never)  # 8.8 million cells at d_bar = 10
    assert implicit.frobenius_sq() == pytest.approx(expected, rel=1e-12)
