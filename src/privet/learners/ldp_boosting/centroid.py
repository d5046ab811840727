"""Nearest centroid classifier from perturbed weighted samples (seed 004, Sec. 3.5.1).

The paper: each owner submits ``(x*', y)`` with ``x* = w x`` perturbed by Alg. 4
and the label in the clear; the data user averages the perturbed samples of
each class and predicts the class of the nearest centroid.

privet estimates the weighted centroid sum_i w_i x_i / sum_i w_i, so each
share also carries the weight: a row's record is ``(w x, w)`` in [-1, 1]^{d+1}
(weights are scaled into (0, 1] by a public bound, see the SAMME driver).

- paper-faithful (``strict=False``): one record per row, perturbed, label in the
  clear (the label is a release without noise: charged as NonPrivate);
- strict: the label is hidden in the record's position: each owner reports one
  vector of K blocks of d+1, its rows' ``(w x, w)`` in the block of their class
  and zeros elsewhere, averaged over its rows and perturbed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privet.learners.ldp_boosting._owners import OwnerGroup


@dataclass(frozen=True)
class Centroids:
    """Fitted centroids (K, d) on the unit scale; predicts the nearest (Euclidean)."""

    centroids: np.ndarray

    def predict(self, Xu: np.ndarray) -> np.ndarray:
        d2 = (
            (Xu**2).sum(axis=1)[:, None]
            - 2 * Xu @ self.centroids.T
            + (self.centroids**2).sum(axis=1)[None, :]
        )
        return np.argmin(d2, axis=1).astype(np.int64)


def _ratio(sums: np.ndarray, floor: float) -> np.ndarray:
    """Centroids from (K, d+1) sums of (w x, w); the weight sum floored (noise can make it <= 0)."""
    return sums[:, :-1] / np.maximum(sums[:, -1:], floor)[:, :]


class CentroidLearner:
    """Sec. 3.5.1 base learner."""

    name = "centroid"

    def __init__(self, n_features: int, n_classes: int, *, strict: bool) -> None:
        self.d = n_features
        self.n_classes = n_classes
        self.strict = strict
        self.per_row_share = not strict

    @property
    def dimension(self) -> int:
        return (self.n_classes if self.strict else 1) * (self.d + 1)

    def _records(self, Xu: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.concatenate([Xu * w[:, None], w[:, None]], axis=1)

    def shares(self, group: OwnerGroup, Xu: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        r = group.rows
        rec = self._records(Xu[r], w[r])
        if not self.strict:
            return rec  # one record per row (faithful)
        blocks = np.zeros((r.size, self.n_classes, self.d + 1))
        blocks[np.arange(r.size), y[r]] = rec
        return group.owner_mean(blocks.reshape(r.size, -1))

    def aggregate(
        self, perturbed: np.ndarray, group: OwnerGroup, *, labels: np.ndarray | None = None
    ) -> Centroids:
        k = self.n_classes
        if self.strict:
            sums = (perturbed * group.counts[:, None]).sum(axis=0).reshape(k, self.d + 1)
        else:
            sums = np.zeros((k, self.d + 1))
            np.add.at(sums, labels, perturbed)
        floor = 1e-3 * max(float(group.counts.sum()) / k, 1.0)
        return Centroids(_ratio(sums, floor))


__all__ = ["CentroidLearner", "Centroids"]
