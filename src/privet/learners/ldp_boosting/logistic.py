"""Logistic regression from perturbed local models (seed 004, Sec. 3.5.2, Eqs. 3-4).

Each owner fits a weighted, L2-regularised logistic regression on its own rows
(Eq. 3; privet weights the loss terms, the paper writes w x inside the loss),
clips the parameters to the public box [-B, B] (``coef_bound``), scales them to
[-1, 1] and perturbs the vector once with Alg. 4 (or Duchi, Laplace). The data
user averages the perturbed vectors (Eq. 4). Binary: one vector of d + 1
parameters; K > 2 classes: multinomial, K (d + 1) parameters.

The local fits are vectorised over all owners of a group: full-batch gradient
descent with Nesterov momentum on each owner's regularised mean loss (smooth,
strongly convex), ``LOCAL_ITERATIONS`` steps of size 1 / L.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, softmax

from privet.learners.ldp_boosting._owners import OwnerGroup

LOCAL_ITERATIONS = 150
L2 = 1e-2


@dataclass(frozen=True)
class LinearModel:
    """theta (K', d + 1) with the intercept last; K' = 1 for two classes."""

    theta: np.ndarray

    def predict(self, Xu: np.ndarray) -> np.ndarray:
        z = Xu @ self.theta[:, :-1].T + self.theta[:, -1]
        if self.theta.shape[0] == 1:
            return (z[:, 0] > 0).astype(np.int64)
        return np.argmax(z, axis=1).astype(np.int64)


class LogisticLearner:
    """Sec. 3.5.2 base learner."""

    name = "logistic"
    per_row_share = False

    def __init__(self, n_features: int, n_classes: int, coef_bound: float) -> None:
        self.d = n_features
        self.n_classes = n_classes
        self.k = 1 if n_classes == 2 else n_classes
        self.bound = float(coef_bound)

    @property
    def dimension(self) -> int:
        return self.k * (self.d + 1)

    def local_fit(
        self, group: OwnerGroup, Xu: np.ndarray, y: np.ndarray, w: np.ndarray
    ) -> np.ndarray:
        """Each owner's minimiser of Eq. (3), shape (owners, K', d + 1)."""
        r = group.rows
        X = np.concatenate([Xu[r], np.ones((r.size, 1))], axis=1)
        ww = w[r] / np.repeat(group.owner_mean(w[r]), group.counts)  # mean weight 1 per owner
        ww = ww / np.repeat(group.counts, group.counts)  # mean over the owner's rows
        owner = group.owner_of_row()
        n_own, p, k = group.n_owners, X.shape[1], self.k
        target = np.zeros((r.size, k))
        if k == 1:
            target[:, 0] = y[r] == 1
        else:
            target[np.arange(r.size), y[r]] = 1.0
        row_sq = (X**2).sum(axis=1)
        lip = np.add.reduceat(ww * row_sq, group.starts) * (0.25 if k == 1 else 0.5) + L2
        step = (1.0 / lip)[:, None, None]
        theta = np.zeros((n_own, k, p))
        prev = theta.copy()
        for it in range(LOCAL_ITERATIONS):
            look = theta + (it / (it + 3)) * (theta - prev)
            z = np.einsum("np,nkp->nk", X, look[owner])
            prob = expit(z) if k == 1 else softmax(z, axis=1)
            g_rows = (prob - target) * ww[:, None]
            grad = np.add.reduceat(g_rows[:, :, None] * X[:, None, :], group.starts, axis=0)
            grad += L2 * look
            prev = theta
            theta = look - step * grad
        return theta

    def shares(self, group: OwnerGroup, Xu: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        theta = self.local_fit(group, Xu, y, w)
        return np.clip(theta / self.bound, -1.0, 1.0).reshape(group.n_owners, -1)

    def aggregate(self, perturbed: np.ndarray, group: OwnerGroup) -> LinearModel:
        """Eq. (4): the mean of the perturbed local parameters, scaled back by B."""
        theta = self.bound * perturbed.mean(axis=0).reshape(self.k, self.d + 1)
        return LinearModel(theta)


__all__ = ["LinearModel", "LogisticLearner"]
