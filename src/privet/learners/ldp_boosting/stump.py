"""Decision stumps from perturbed cross-table differences (seed 004, Sec. 3.5.3, Eq. 5).

Binary classes. Each candidate binary attribute is ``A_j = [x_f >= t]`` for a
public threshold t of feature f (the schema's bin edges, or the middle of the
public range). For attribute j and branch b, the owner's cross-table difference
is s_{b,0} - s_{b,1}: the weight of its rows in branch b with class 0 minus
that with class 1. Each owner reports the 2J differences (averaged over its
rows, so that they lie in [-1, 1]) perturbed once; the data user adds them up
(scaled back by the public row counts) and picks (Eq. 5)

    argmax_j |sum_l (s^j_{0,0} - s^j_{0,1})'| + |sum_l (s^j_{1,0} - s^j_{1,1})'|.

Branch labels: the paper has each owner report its exact majority label per
branch (no noise); the strict variant reads the label from the sign of the
same perturbed sums (post-processing, no extra cost).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privet.learners.ldp_boosting._owners import OwnerGroup


@dataclass(frozen=True)
class Stump:
    """A fitted stump: predict ``labels[int(x[feature] >= threshold)]`` (unit scale)."""

    feature: int
    threshold: float
    labels: tuple[int, int]
    candidate: int

    def predict(self, Xu: np.ndarray) -> np.ndarray:
        branch = (Xu[:, self.feature] >= self.threshold).astype(np.int64)
        return np.asarray(self.labels, dtype=np.int64)[branch]


class StumpLearner:
    """Sec. 3.5.3 base learner. ``candidates``: (feature, unit threshold) pairs."""

    name = "stump"
    per_row_share = False

    def __init__(self, candidates: list[tuple[int, float]], n_classes: int) -> None:
        self.features = np.asarray([f for f, _ in candidates], dtype=np.int64)
        self.thresholds = np.asarray([t for _, t in candidates], dtype=float)
        self.n_classes = n_classes

    @property
    def dimension(self) -> int:
        return 2 * self.features.size

    def row_differences(self, Xu: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Per row, shape (n, J, 2): w * (+1 if y = 0 else -1) in the row's branch of each A_j."""
        branch = Xu[:, self.features] >= self.thresholds  # (n, J)
        signed = w * np.where(y == 0, 1.0, -1.0)
        out = np.zeros((*branch.shape, 2))
        out[..., 1] = np.where(branch, signed[:, None], 0.0)
        out[..., 0] = np.where(branch, 0.0, signed[:, None])
        return out

    def shares(self, group: OwnerGroup, Xu: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Each owner's 2J cross-table differences, averaged over its rows: (owners, 2J)."""
        r = group.rows
        diffs = self.row_differences(Xu[r], y[r], w[r]).reshape(r.size, -1)
        return group.owner_mean(diffs)

    @staticmethod
    def scores(sums: np.ndarray) -> np.ndarray:
        """Eq. (5): |D_0^j| + |D_1^j| for summed differences (J, 2)."""
        return np.abs(sums).sum(axis=1)

    def aggregate(
        self,
        perturbed: np.ndarray,
        group: OwnerGroup,
        *,
        exact_rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> Stump:
        """Pick the attribute by Eq. (5) on the perturbed sums; label the branches.

        ``exact_rows = (Xu, y, w)`` of the group (paper-faithful): branch labels
        are the exact weighted majorities; otherwise the signs of the perturbed sums.
        """
        sums = (perturbed * group.counts[:, None]).sum(axis=0).reshape(-1, 2)
        j = int(np.argmax(self.scores(sums)))
        if exact_rows is not None:
            Xu, y, w = exact_rows
            d = self.row_differences(Xu, y, w)[:, j, :].sum(axis=0)
        else:
            d = sums[j]
        labels = (0 if d[0] >= 0 else 1, 0 if d[1] >= 0 else 1)
        return Stump(int(self.features[j]), float(self.thresholds[j]), labels, j)


__all__ = ["Stump", "StumpLearner"]
