"""Split scores of the ID3 family, vectorised over an attribute's values.

``contingency(codes, y, w, c)`` is the (w, c) table of counts N[j, k] = number
of rows with attribute value j and class k.
"""

from __future__ import annotations

import numpy as np


def contingency(codes: np.ndarray, y: np.ndarray, n_values: int, n_classes: int) -> np.ndarray:
    flat = codes.astype(np.int64) * n_classes + y.astype(np.int64)
    return np.bincount(flat, minlength=n_values * n_classes).reshape(n_values, n_classes)


def max_operator(table: np.ndarray) -> float:
    """Seed 000, Eq. (1): q(D, A) = sum_j max_c |D_{A=j, C=c}|; sensitivity 1
    under add/remove and replace-one neighbours (one record moves one count)."""
    return float(table.max(axis=1).sum())


def information_gain(table: np.ndarray) -> float:
    """Quinlan's ID3 gain, up to the constant parent entropy: -sum_j |D_j| H(C | A=j)."""
    n_j = table.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n_j > 0, table / np.where(n_j > 0, n_j, 1), 0.0)
        h = -np.sum(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0.0), axis=1)
    return float(-(n_j[:, 0] * h).sum())


def gini_gain(table: np.ndarray) -> float:
    """Negative weighted Gini impurity of the split (higher is better)."""
    n_j = table.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gini = np.where(
            n_j > 0, 1.0 - np.sum((table / np.where(n_j > 0, n_j, 1)[:, None]) ** 2, axis=1), 0.0
        )
    return float(-(n_j * gini).sum())


SCORES = {"max": max_operator, "entropy": information_gain, "gini": gini_gain}


def max_scores_one_hot(onehot: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Seed 000, Alg. 2 (MAX) for every attribute at once, on one-hot data.

    ``onehot`` is ``(n, m, w)`` (:func:`privet.data.one_hot`, dummy columns
    zero), ``classes`` the ``(n, u)`` class-partition vectors ``C``. For
    attribute ``i``: ``y_i = sum_j max_k D_ij · C_k`` (dot products over the
    records). Dummy columns are zero and add nothing, so the result equals
    :func:`max_operator` on each attribute's contingency table.
    """
    H = np.asarray(onehot, dtype=np.int64)
    C = np.asarray(classes, dtype=np.int64)
    table = np.einsum("njw,nk->jwk", H, C)  # (m, w, u): D_ij · C_k
    return table.max(axis=2).sum(axis=1).astype(float)
