"""Plaintext reference path: evaluate the random trees directly, record by record.

This is the non-matrix form of the matrix random forest (seed 002): the leaf
each record reaches in each tree, the class counts at the leaves (C = T D),
and the weighted votes of a batch of queries (V = Q T^T C). The matrix forms
of :mod:`.matrices` must give exactly the same numbers (tests check it); the
estimator uses these functions for the exact (private) statistics, so the
data matrix D is never needed except as the matrix mechanism's input.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from privet.learners.matrix_forest.trees import Ensemble

__all__ = ["hard_votes", "leaf_counts", "leaf_index", "weighted_votes"]


def leaf_index(ensemble: Ensemble, codes: NDArray[np.int64]) -> NDArray[np.int64]:
    """(N, tau) row of T (global leaf id) reached by each record in each tree.

    ``codes`` are the records' codes on the ensemble's features only (N x d_bar).
    Within a tree the leaves partition the domain, so exactly one leaf matches.
    """
    values = ensemble.paths.values
    dom = np.asarray(ensemble.domain, dtype=np.int64)
    n_rec = codes.shape[0]
    out = np.full((n_rec, ensemble.n_trees), -1, dtype=np.int64)
    for t in range(ensemble.n_trees):
        rows = np.arange(ensemble.n_leaves)[ensemble.tree_rows(t)]
        masks = values[rows] >= 0
        keys = masks @ (1 << np.arange(len(dom)))
        for key in np.unique(keys):
            grp = rows[keys == key]
            tested = np.flatnonzero(masks[np.searchsorted(rows, grp[0])])
            radix = dom[tested]
            mult = np.concatenate([np.cumprod(radix[::-1])[::-1][1:], [1]]).astype(np.int64)
            row_key = values[grp][:, tested] @ mult
            rec_key = codes[:, tested] @ mult
            order = np.argsort(row_key)
            pos = np.searchsorted(row_key[order], rec_key)
            pos = np.minimum(pos, len(order) - 1)
            hit = row_key[order][pos] == rec_key
            out[hit, t] = grp[order[pos[hit]]]
    if (out < 0).any():  # pragma: no cover - the leaves of a tree partition the domain
        raise AssertionError("a record reached no leaf")
    return out


def leaf_counts(
    ensemble: Ensemble, leaves: NDArray[np.int64], y: NDArray[np.int64], n_classes: int
) -> NDArray[np.float64]:
    """C (o x k): class counts of the records at every leaf (C = T D, Fig. 1c)."""
    c = np.zeros((ensemble.n_leaves, n_classes))
    for t in range(leaves.shape[1]):
        np.add.at(c, (leaves[:, t], y), 1.0)
    return c


def weighted_votes(
    leaf_values: NDArray[np.float64], query_leaves: NDArray[np.int64]
) -> NDArray[np.float64]:
    """V (b x k) = Q T^T C: the leaf values summed over the trees (weight voting, Fig. 1f)."""
    return leaf_values[query_leaves].sum(axis=1)


def hard_votes(
    leaf_values: NDArray[np.float64], query_leaves: NDArray[np.int64]
) -> NDArray[np.float64]:
    """(b x k): one vote per tree for the argmax class of the leaf reached (standard voting)."""
    k = leaf_values.shape[1]
    labels = np.argmax(leaf_values, axis=1)
    return np.eye(k)[labels[query_leaves]].sum(axis=1)
