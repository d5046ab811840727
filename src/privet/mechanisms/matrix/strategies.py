"""Strategies: the matrices A whose noisy answers A D + noise the matrix mechanism measures.

The identity, an explicit matrix (e.g. the workload itself), p-Identity
strategies (McKenna et al. 2018, Sec. 5.1) and Kronecker products of those,
plus the error of a strategy on a workload (seed 002, Def. 3).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, sparse

from privet.errors import InvalidParameterError
from privet.mechanisms import _validate as v
from privet.mechanisms.matrix._linalg import _explicit_ok, _kron_apply
from privet.mechanisms.matrix.workloads import Workload, as_workload

__all__ = [
    "IdentityStrategy",
    "KroneckerStrategy",
    "MatrixStrategy",
    "PIdentityStrategy",
    "Strategy",
    "expected_error",
    "squared_error",
]


class Strategy(abc.ABC):
    """A strategy matrix A (m x n) that answers A x and solves for x_hat = A^+ y."""

    shape: tuple[int, int]

    @abc.abstractmethod
    def l1_norm(self) -> float:
        """||A||_1, the largest column L1 norm."""

    @abc.abstractmethod
    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """A @ x for x of shape (n, k)."""

    @abc.abstractmethod
    def solve(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """A^+ @ y for y of shape (m, k)."""

    @abc.abstractmethod
    def gram_pinv(self) -> NDArray[np.float64]:
        """(A^T A)^+ as a dense n x n matrix."""

    def supports(self, workload: Workload) -> bool:
        """Whether W's rows lie in A's row space (W A^+ A = W)."""
        return True


class IdentityStrategy(Strategy):
    """A = I: the Laplace mechanism on every cell."""

    def __init__(self, n: int) -> None:
        self.shape = (v.integer(n, "n", "IdentityStrategy"),) * 2

    def l1_norm(self) -> float:
        return 1.0

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array(x, dtype=float)

    def solve(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array(y, dtype=float)

    def gram_pinv(self) -> NDArray[np.float64]:
        return np.eye(self.shape[1])


class MatrixStrategy(Strategy):
    """An explicit strategy matrix (dense or sparse), e.g. the workload itself."""

    def __init__(self, matrix: Any) -> None:
        if isinstance(matrix, Workload):
            matrix = matrix.to_sparse()
        self.matrix = (
            sparse.csr_matrix(matrix, dtype=float)
            if sparse.issparse(matrix)
            else v.finite_array(matrix, "strategy", "MatrixStrategy")
        )
        if self.matrix.ndim != 2 or min(self.matrix.shape) == 0:
            raise InvalidParameterError("A strategy matrix must be a non-empty 2-D matrix.")
        self.shape = (int(self.matrix.shape[0]), int(self.matrix.shape[1]))
        _explicit_ok(self.shape[1], "the pseudo-inverse of an explicit strategy")
        g = self.matrix.T @ self.matrix
        g = np.asarray(g.toarray() if sparse.issparse(g) else g, dtype=float)
        ev, vec = linalg.eigh(g)
        keep = ev > ev.max() * g.shape[0] * 1e-13
        self._rank = int(keep.sum())
        self._vec = vec[:, keep]
        self._ginv = (vec[:, keep] / ev[keep]) @ vec[:, keep].T
        if self._rank == 0:
            raise InvalidParameterError("A strategy matrix must not be zero.")

    def l1_norm(self) -> float:
        return float(np.asarray(abs(self.matrix).sum(axis=0)).max())

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.matrix @ x)

    def solve(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._ginv @ np.asarray(self.matrix.T @ y)

    def gram_pinv(self) -> NDArray[np.float64]:
        return self._ginv

    def supports(self, workload: Workload) -> bool:
        if self._rank == self.shape[1]:
            return True
        w = workload.to_sparse()
        residual = w - sparse.csr_matrix((w @ self._vec) @ self._vec.T)
        scale = max(1.0, float(abs(w).max()))
        return float(abs(residual).max()) <= 1e-8 * scale


class PIdentityStrategy(Strategy):
    """A(Theta) = [I; Theta] diag(1 / (1 + 1^T Theta)), Theta >= 0 of shape p x n.

    Every column has L1 norm 1, so ||A||_1 = 1, and A has full column rank, so
    it supports every workload (McKenna et al. 2018, Sec. 5.1).
    """

    def __init__(self, theta: Any) -> None:
        t = v.finite_array(theta, "theta", "PIdentityStrategy")
        if t.ndim != 2 or (t < 0).any():
            raise InvalidParameterError("p-Identity needs a non-negative 2-D theta (p x n).")
        self.theta = t
        p, n = t.shape
        self.shape = (n + p, n)
        self._d = 1.0 + t.sum(axis=0)
        self._chol = linalg.cho_factor(np.eye(p) + t @ t.T) if p else None

    @property
    def p(self) -> int:
        return self.theta.shape[0]

    def l1_norm(self) -> float:
        return 1.0

    def matrix(self) -> NDArray[np.float64]:
        return np.vstack([np.eye(self.shape[1]), self.theta]) / self._d

    def _x_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """(I + Theta^T Theta)^{-1} z by Woodbury."""
        if self._chol is None:
            return z
        return z - self.theta.T @ linalg.cho_solve(self._chol, self.theta @ z)

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        scaled = x / self._d[:, None]
        return np.vstack([scaled, self.theta @ scaled])

    def solve(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        n = self.shape[1]
        z = y[:n] + self.theta.T @ y[n:]
        return self._d[:, None] * self._x_apply(z)

    def gram_pinv(self) -> NDArray[np.float64]:
        x = self._x_apply(np.eye(self.shape[1]))
        return self._d[:, None] * x * self._d[None, :]


class KroneckerStrategy(Strategy):
    """A = A_1 x ... x A_d (implicit), for product domains."""

    def __init__(self, factors: Sequence[Strategy]) -> None:
        if not factors or not all(isinstance(f, Strategy) for f in factors):
            raise InvalidParameterError("A Kronecker strategy needs a list of strategies.")
        self.factors = list(factors)
        self.domain = tuple(f.shape[1] for f in self.factors)
        self.shape = (math.prod(f.shape[0] for f in self.factors), math.prod(self.domain))

    def l1_norm(self) -> float:
        return math.prod(f.l1_norm() for f in self.factors)

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return _kron_apply([f.matmul for f in self.factors], x, self.domain)

    def solve(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return _kron_apply(
            [f.solve for f in self.factors], y, tuple(f.shape[0] for f in self.factors)
        )

    def gram_pinv(self) -> NDArray[np.float64]:
        _explicit_ok(self.shape[1], "the Gram pseudo-inverse of a Kronecker strategy")
        out = np.ones((1, 1))
        for f in self.factors:
            out = np.kron(out, f.gram_pinv())
        return out

    def supports(self, workload: Workload) -> bool:
        if all(not isinstance(f, MatrixStrategy) or f._rank == f.shape[1] for f in self.factors):
            return True  # every factor has full column rank
        _explicit_ok(workload.n, "the support check of a rank-deficient Kronecker strategy")
        return MatrixStrategy(self._explicit()).supports(workload)

    def _explicit(self) -> NDArray[np.float64]:
        out = np.ones((1, 1))
        for f in self.factors:
            out = np.kron(out, f.matmul(np.eye(f.shape[1])))
        return out


def squared_error(workload: Any, strategy: Strategy) -> float:
    """||A||_1^2 ||W A^+||_F^2: the error per unit of 2 / epsilon^2.

    Uses the Kronecker form when both are Kronecker-structured, never forming
    n x n matrices; otherwise tr[W^T W (A^T A)^+].
    """
    w = as_workload(workload)
    if strategy.shape[1] != w.n:
        raise InvalidParameterError(
            f"Strategy has {strategy.shape[1]} columns but the workload has {w.n}."
        )
    structure = w.kron_structure()
    if isinstance(strategy, KroneckerStrategy) and structure is not None:
        if structure.domain != strategy.domain:
            raise InvalidParameterError("Kronecker strategy and workload domains differ.")
        prod = structure.weights.copy()
        for i, f in enumerate(strategy.factors):
            prod = prod * structure.traces(i, f.gram_pinv())
        return strategy.l1_norm() ** 2 * float(prod.sum())
    if isinstance(strategy, IdentityStrategy):
        return w.frobenius_sq()
    return strategy.l1_norm() ** 2 * float(np.sum(w.gram() * strategy.gram_pinv()))


def expected_error(workload: Any, strategy: Strategy, epsilon: float) -> float:
    """Err_eps(W, A) = 2 / eps^2 ||A||_1^2 ||W A^+||_F^2 (seed 002, Def. 3), per column of D."""
    eps = v.positive(epsilon, "epsilon", "expected_error")
    return 2.0 / eps**2 * squared_error(workload, strategy)
