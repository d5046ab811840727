"""The matrix mechanism with optimised strategies (seed 002, Tajima et al.; McKenna et al. 2018).

Given a workload W (l x n) of linear counting queries over a data matrix D
(n x k: one row per cell of the feature domain, one column per class), and a
strategy A (m x n) whose row space contains W's, the matrix mechanism (Li et al.
2015; seed 002, Def. 2) releases

    W D + W A^+ Lap(||A||_1 / epsilon)^{m x k},

computed as W x_hat with x_hat = A^+ (A D + noise) the least-squares estimate of
D. ||A||_1 (the largest column L1 norm) is the L1 sensitivity of A D when one
record is added or removed (it changes one cell of D by 1); replace-one
doubles it. The expected total squared error per column of D is (seed 002,
Def. 3)

    Err_eps(W, A) = 2 / eps^2 ||A||_1^2 ||W A^+||_F^2,
    ||W A^+||_F^2 = tr[W^T W (A^T A)^+].

Strategies. The identity (A = I), the workload itself (A = W), explicit
p-Identity strategies A(Theta) = [I; Theta] diag(1 / (1 + 1^T Theta)) with Theta
>= 0 of shape p x n, optimised by L-BFGS-B on the error with its analytic
gradient (McKenna, Miklau, Hay & Machanavajjhala 2018, "Optimizing error of
high-dimensional statistical queries under differential privacy", Sec. 5,
OPT_0 with the p-Identity parameterisation), and Kronecker products of
p-Identity strategies for product domains (McKenna et al. 2018, Sec. 6, OPT_x),
optimised factor by factor: for A = A_1 x ... x A_d and a workload that is a
union of Kronecker products, sum_j W_j1 x ... x W_jd,

    ||A||_1 = prod_i ||A_i||_1,
    ||W A^+||_F^2 = sum_j prod_i tr[W_ji^T W_ji (A_i^T A_i)^+],

so with the other factors fixed each factor solves an explicit OPT_p problem on
a weighted sum of its Gram matrices. Only the factors' n_i x n_i matrices are
ever formed, so domains of 10^4 - 10^6 cells stay tractable.

:func:`optimize_strategy` compares the optimised strategy with the identity
and with W itself and returns the best of them, so it is never worse than
either.

Gradient of the p-Identity objective (derived here). With d = 1 + Theta^T 1,
M = I + Theta^T Theta, X = M^{-1} = I - Theta^T (I + Theta Theta^T)^{-1} Theta
(Woodbury) and G = W^T W, the objective is f = tr[diag(d) X diag(d) G] =
sum_ij d_i X_ij d_j G_ij and

    grad f = -2 Theta X (D G D) X + 1_p g^T,   g = 2 (X o G) d,

where D = diag(d), o is the elementwise product, and Theta X = (I + Theta
Theta^T)^{-1} Theta, so one evaluation costs O(p n^2).
"""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, optimize, sparse

from privet.errors import InvalidParameterError
from privet.ledger import ADD_REMOVE, Claim, Entry, Guarantee, Laplace, NeighbouringRelation
from privet.mechanisms import _opendp
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms.base import Mechanism

__all__ = [
    "DenseWorkload",
    "IdentityStrategy",
    "KroneckerStrategy",
    "KroneckerWorkload",
    "MatrixMechanism",
    "MatrixStrategy",
    "OptimisationResult",
    "PIdentityStrategy",
    "ProductQueries",
    "Strategy",
    "UnionWorkload",
    "Workload",
    "as_workload",
    "decision_path_workload",
    "expected_error",
    "make_matrix_mechanism",
    "optimize_kronecker",
    "optimize_p_identity",
    "optimize_strategy",
    "squared_error",
]

EXPLICIT_LIMIT = 8192
"""Largest domain for which n x n matrices (Gram, explicit OPT_p) are formed."""


def _as_2d(x: NDArray[Any]) -> tuple[NDArray[Any], bool]:
    return (x[:, None], True) if x.ndim == 1 else (x, False)


# ======================================================================= workloads
class _KronStructure(abc.ABC):
    """A union of Kronecker products sum_j w_j (W_j1 x ... x W_jd), seen through its Grams."""

    domain: tuple[int, ...]
    weights: NDArray[np.float64]  # w_j^2, one per term

    @abc.abstractmethod
    def traces(self, i: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """tr[G_ji x] for every term j, with G_ji = W_ji^T W_ji."""

    @abc.abstractmethod
    def weighted_gram(self, i: int, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """sum_j c_j G_ji."""


class _ExplicitKron(_KronStructure):
    def __init__(self, terms: list[list[NDArray[np.float64]]], weights: NDArray[np.float64]):
        self.grams = [[f.T @ f for f in factors] for factors in terms]
        self.domain = tuple(f.shape[1] for f in terms[0])
        self.weights = np.asarray(weights, dtype=float) ** 2

    def traces(self, i: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([np.sum(g[i] * x) for g in self.grams])

    def weighted_gram(self, i: int, c: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.einsum("j,jab->ab", c, np.stack([g[i] for g in self.grams]))


class Workload(abc.ABC):
    """A matrix of linear queries over a domain of ``n`` cells."""

    shape: tuple[int, int]
    domain: tuple[int, ...]

    @property
    def n(self) -> int:
        return self.shape[1]

    @abc.abstractmethod
    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """W @ x for x of shape (n,) or (n, k)."""

    @abc.abstractmethod
    def to_sparse(self) -> sparse.csr_matrix:
        """The explicit matrix (only for domains up to EXPLICIT_LIMIT)."""

    def gram(self) -> NDArray[np.float64]:
        """W^T W as a dense n x n matrix."""
        _explicit_ok(self.n, "the Gram matrix of the workload")
        w = self.to_sparse()
        return np.asarray((w.T @ w).toarray(), dtype=float)

    def l1_norm(self) -> float:
        """Largest column L1 norm ||W||_1."""
        w = self.to_sparse()
        return float(abs(w).sum(axis=0).max())

    def frobenius_sq(self) -> float:
        w = self.to_sparse()
        return float(w.multiply(w).sum())

    def kron_structure(self) -> _KronStructure | None:
        """The workload as a union of Kronecker products, if it is one."""
        return None

    def rank(self) -> int:
        g = self.gram()
        ev = linalg.eigvalsh(g)
        return int(np.sum(ev > ev.max() * g.shape[0] * 1e-13))


def _explicit_ok(n: int, what: str) -> None:
    if n > EXPLICIT_LIMIT:
        raise InvalidParameterError(
            f"Forming {what} needs an n x n matrix with n={n} > {EXPLICIT_LIMIT} cells; use the "
            "Kronecker form (optimize_kronecker, KroneckerStrategy) for product domains."
        )


class DenseWorkload(Workload):
    """An explicit workload matrix (dense array or scipy sparse matrix)."""

    def __init__(self, matrix: Any) -> None:
        if sparse.issparse(matrix):
            m = sparse.csr_matrix(matrix, dtype=float)
            if m.nnz and not np.isfinite(m.data).all():
                raise InvalidParameterError("The workload matrix must be finite.")
        else:
            m = v.finite_array(matrix, "workload", "DenseWorkload")
            if m.ndim != 2:
                raise InvalidParameterError(f"A workload matrix must be 2-D; got shape {m.shape}.")
        if min(m.shape) == 0:
            raise InvalidParameterError(f"A workload matrix must be non-empty; got {m.shape}.")
        self.matrix = m
        self.shape = (int(m.shape[0]), int(m.shape[1]))
        self.domain = (self.shape[1],)

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.matrix @ x)

    def to_sparse(self) -> sparse.csr_matrix:
        return sparse.csr_matrix(self.matrix)


class KroneckerWorkload(Workload):
    """W = W_1 x ... x W_d (implicit; the index of a cell is row-major, as np.kron)."""

    def __init__(self, factors: Sequence[Any]) -> None:
        if not factors:
            raise InvalidParameterError("A Kronecker workload needs at least one factor.")
        self.factors = [
            v.finite_array(f.toarray() if sparse.issparse(f) else f, "factor", "KroneckerWorkload")
            for f in factors
        ]
        if any(f.ndim != 2 or min(f.shape) == 0 for f in self.factors):
            raise InvalidParameterError("Every Kronecker factor must be a non-empty 2-D matrix.")
        self.domain = tuple(f.shape[1] for f in self.factors)
        self.shape = (
            math.prod(f.shape[0] for f in self.factors),
            math.prod(self.domain),
        )

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x2, flat = _as_2d(np.asarray(x, dtype=float))
        out = _kron_apply([lambda t, f=f: f @ t for f in self.factors], x2, self.domain)
        return out[:, 0] if flat else out

    def to_sparse(self) -> sparse.csr_matrix:
        _explicit_ok(self.n, "the explicit Kronecker workload")
        m = sparse.csr_matrix(self.factors[0])
        for f in self.factors[1:]:
            m = sparse.kron(m, sparse.csr_matrix(f), format="csr")
        return m

    def l1_norm(self) -> float:
        return math.prod(float(np.abs(f).sum(axis=0).max()) for f in self.factors)

    def frobenius_sq(self) -> float:
        return math.prod(float(np.sum(f**2)) for f in self.factors)

    def rank(self) -> int:
        return math.prod(int(np.linalg.matrix_rank(f)) for f in self.factors)

    def kron_structure(self) -> _KronStructure:
        return _ExplicitKron([self.factors], np.ones(1))


class UnionWorkload(Workload):
    """Rows of several Kronecker workloads stacked, each with an optional weight."""

    def __init__(self, terms: Sequence[KroneckerWorkload], weights: Sequence[float] | None = None):
        if not terms:
            raise InvalidParameterError("A union workload needs at least one term.")
        self.terms = list(terms)
        self.domain = self.terms[0].domain
        if any(t.domain != self.domain for t in self.terms):
            raise InvalidParameterError("All terms of a union workload need the same domain.")
        w = np.ones(len(self.terms)) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (len(self.terms),) or not np.isfinite(w).all() or (w <= 0).any():
            raise InvalidParameterError("Union weights must be positive and one per term.")
        self.weights = w
        self.shape = (sum(t.shape[0] for t in self.terms), math.prod(self.domain))

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.concatenate(
            [w * t.matmul(x) for w, t in zip(self.weights, self.terms, strict=True)], axis=0
        )

    def to_sparse(self) -> sparse.csr_matrix:
        return sparse.vstack(
            [w * t.to_sparse() for w, t in zip(self.weights, self.terms, strict=True)],
            format="csr",
        )

    def frobenius_sq(self) -> float:
        return float(
            sum(w**2 * t.frobenius_sq() for w, t in zip(self.weights, self.terms, strict=True))
        )

    def kron_structure(self) -> _KronStructure:
        return _ExplicitKron([t.factors for t in self.terms], self.weights)


class _ProductStructure(_KronStructure):
    def __init__(self, domain: tuple[int, ...], values: NDArray[np.int64]):
        self.domain = domain
        self.values = values
        self.weights = np.ones(values.shape[0])

    def traces(self, i: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        col = self.values[:, i]
        per_value = np.append(np.diag(x), x.sum())  # index -1 -> 1^T x 1
        return per_value[col]

    def weighted_gram(self, i: int, c: NDArray[np.float64]) -> NDArray[np.float64]:
        n_i = self.domain[i]
        col = self.values[:, i]
        tested = col >= 0
        g = np.full((n_i, n_i), float(c[~tested].sum()))
        g[np.diag_indices(n_i)] += np.bincount(col[tested], weights=c[tested], minlength=n_i)
        return g


class ProductQueries(Workload):
    """Conjunctions of equality predicates over a product domain.

    Row j counts the cells whose attribute i equals ``values[j, i]`` for every
    i with ``values[j, i] >= 0`` (-1 means "any value"): exactly a root-to-leaf
    decision path of a multi-way tree (seed 002, "Decision Path Query Matrix").
    As a matrix it is the union of the Kronecker products of e_v^T (tested) or
    1^T (untested) rows.
    """

    def __init__(self, domain: Sequence[int], values: Any) -> None:
        self.domain = tuple(v.integer(d, "domain size", "ProductQueries") for d in domain)
        vals = np.asarray(values)
        if vals.ndim != 2 or vals.shape[1] != len(self.domain) or vals.shape[0] == 0:
            raise InvalidParameterError(
                f"ProductQueries needs values of shape (rows, {len(self.domain)}); got {vals.shape}."
            )
        vals = vals.astype(np.int64)
        if ((vals < -1) | (vals >= np.asarray(self.domain))).any():
            raise InvalidParameterError("ProductQueries values must be -1 or in [0, domain size).")
        self.values = vals
        self.shape = (vals.shape[0], math.prod(self.domain))

    def _groups(self) -> dict[tuple[int, ...], NDArray[np.int64]]:
        masks = self.values >= 0
        keys = masks @ (1 << np.arange(len(self.domain)))
        out = {}
        for key in np.unique(keys):
            rows = np.flatnonzero(keys == key)
            tested = tuple(int(i) for i in np.flatnonzero(masks[rows[0]]))
            out[tested] = rows
        return out

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x2, flat = _as_2d(np.asarray(x, dtype=float))
        k = x2.shape[1]
        t = x2.reshape(*self.domain, k)
        out = np.empty((self.shape[0], k))
        d = len(self.domain)
        for tested, rows in self._groups().items():
            untested = tuple(i for i in range(d) if i not in tested)
            marg = t.sum(axis=untested) if untested else t
            idx = tuple(self.values[rows, i] for i in tested)
            out[rows] = marg[idx] if tested else np.broadcast_to(marg, (rows.size, k))
        return out[:, 0] if flat else out

    def to_sparse(self) -> sparse.csr_matrix:
        _explicit_ok(self.n, "the explicit decision-path matrix")
        coords = np.indices(self.domain).reshape(len(self.domain), -1).T  # row-major cells
        rows_out, cols_out = [], []
        for tested, rows in self._groups().items():
            radix = np.array([self.domain[i] for i in tested], dtype=np.int64)
            mult = np.concatenate([np.cumprod(radix[::-1])[::-1][1:], [1]]) if tested else []
            cell_key = coords[:, list(tested)] @ mult if tested else np.zeros(self.n, np.int64)
            row_key = self.values[rows][:, list(tested)] @ mult if tested else np.zeros(rows.size)
            order = np.argsort(cell_key, kind="stable")
            sorted_keys = cell_key[order]
            lo = np.searchsorted(sorted_keys, row_key, side="left")
            hi = np.searchsorted(sorted_keys, row_key, side="right")
            counts = hi - lo
            rows_out.append(np.repeat(rows, counts))
            cols_out.append(
                order[np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])]
            )
        r = np.concatenate(rows_out)
        c = np.concatenate(cols_out)
        return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=self.shape)

    def l1_norm(self) -> float:
        if self.n <= EXPLICIT_LIMIT:
            return super().l1_norm()
        # each column's L1 norm is the number of rows whose predicate the cell satisfies
        ones = np.ones(self.shape[0])
        return float(_transpose_matmul(self, ones).max())

    def frobenius_sq(self) -> float:
        dom = np.asarray(self.domain)
        sizes = np.where(self.values >= 0, 1, dom[None, :])
        return float(np.prod(sizes, axis=1).sum())

    def kron_structure(self) -> _KronStructure:
        return _ProductStructure(self.domain, self.values)


def _transpose_matmul(w: ProductQueries, y: NDArray[np.float64]) -> NDArray[np.float64]:
    """W^T y for a product-query workload without forming W."""
    d = len(w.domain)
    out = np.zeros(w.domain)
    for tested, rows in w._groups().items():
        untested = tuple(i for i in range(d) if i not in tested)
        shape_t = tuple(w.domain[i] for i in tested)
        marg = np.zeros(shape_t) if tested else np.zeros(())
        if tested:
            np.add.at(marg, tuple(w.values[rows, i] for i in tested), y[rows])
        else:
            marg = np.asarray(y[rows].sum())
        expand = np.expand_dims(marg, untested) if untested else marg
        out = out + expand
    return out.ravel()


def as_workload(w: Any) -> Workload:
    """Accept a Workload, a dense array or a scipy sparse matrix."""
    if isinstance(w, Workload):
        return w
    return DenseWorkload(w)


def decision_path_workload(
    domain: Sequence[int],
    n_trees: int,
    depth: int,
    *,
    random_state: int | np.random.Generator | None = None,
) -> ProductQueries:
    """Decision paths of ``n_trees`` random multi-way trees of ``depth`` (seed 002).

    Each internal node tests an attribute drawn uniformly from those not yet
    tested on its path and has one child per value (the ID3-style random
    decision tree of seed 002, "Random Decision Trees"); a path stops at
    ``depth`` tests or when every attribute is tested. Every tree's leaves
    partition the domain, so ||T||_1 = n_trees. Tree shapes use the non-private
    ``random_state``; they depend on the schema alone.
    """
    owner = "decision_path_workload"
    dom = tuple(v.integer(d, "domain size", owner) for d in domain)
    trees = v.integer(n_trees, "n_trees", owner)
    h = v.integer(depth, "depth", owner, minimum=0)
    rng = np.random.default_rng(random_state)
    rows: list[list[int]] = []

    def grow(path: list[int], free: list[int], left: int) -> None:
        if left == 0 or not free:
            rows.append(path.copy())
            return
        attr = free[int(rng.integers(len(free)))]
        rest = [a for a in free if a != attr]
        for value in range(dom[attr]):
            path[attr] = value
            grow(path, rest, left - 1)
        path[attr] = -1

    for _ in range(trees):
        grow([-1] * len(dom), list(range(len(dom))), h)
    return ProductQueries(dom, np.asarray(rows, dtype=np.int64))


# ====================================================================== strategies
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


def _kron_apply(
    funcs: Sequence[Callable[[NDArray[np.float64]], NDArray[np.float64]]],
    x: NDArray[np.float64],
    dims: tuple[int, ...],
) -> NDArray[np.float64]:
    """(F_1 x ... x F_d) x for x of shape (prod dims, k), one mode product per factor."""
    k = x.shape[1]
    t = np.asarray(x, dtype=float).reshape(*dims, k)
    for i, f in enumerate(funcs):
        t = np.moveaxis(t, i, 0)
        rest = t.shape[1:]
        t = np.asarray(f(t.reshape(t.shape[0], -1)))
        t = np.moveaxis(t.reshape(t.shape[0], *rest), 0, i)
    return t.reshape(-1, k)


# ========================================================================= errors
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


# =================================================================== optimisation
def _p_identity_objective(
    flat: NDArray[np.float64], gram: NDArray[np.float64], p: int
) -> tuple[float, NDArray[np.float64]]:
    """f(Theta) = tr[(A^T A)^{-1} G] and its gradient (module docstring)."""
    n = gram.shape[0]
    theta = flat.reshape(p, n)
    d = 1.0 + theta.sum(axis=0)
    chol = linalg.cho_factor(np.eye(p) + theta @ theta.T)
    r_theta = linalg.cho_solve(chol, theta)  # (I + Theta Theta^T)^{-1} Theta = Theta X
    x = np.eye(n) - theta.T @ r_theta
    dgd = gram * np.outer(d, d)
    f = float(np.sum(x * dgd))
    b = r_theta @ dgd  # Theta X D G D
    bx = b - (b @ theta.T) @ r_theta  # Theta X D G D X
    g = 2.0 * np.sum(x * gram * d[None, :], axis=1)
    grad = -2.0 * bx + g[None, :]
    return f, grad.ravel()


def _opt_p_on_gram(
    gram: NDArray[np.float64],
    p: int,
    rng: np.random.Generator,
    theta0: NDArray[np.float64] | None,
    maxiter: int,
) -> PIdentityStrategy:
    n = gram.shape[0]
    norm = float(np.trace(gram)) or 1.0
    g = gram / norm  # scale-free objective for the optimiser
    x0 = rng.random((p, n)) if theta0 is None else np.asarray(theta0, dtype=float)
    res = optimize.minimize(
        _p_identity_objective,
        x0.ravel(),
        args=(g, p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (p * n),
        options={"maxiter": maxiter},
    )
    best = res.x if res.fun <= _p_identity_objective(x0.ravel(), g, p)[0] else x0.ravel()
    return PIdentityStrategy(best.reshape(p, n))


def optimize_p_identity(
    workload: Any,
    p: int | None = None,
    *,
    random_state: int | np.random.Generator | None = None,
    maxiter: int = 500,
) -> PIdentityStrategy:
    """OPT_p: the p-Identity strategy minimising ||W A^+||_F^2, by L-BFGS-B.

    Needs W^T W explicitly (n <= EXPLICIT_LIMIT). ``p`` defaults to max(1, n // 16).
    The strategy depends on the workload only, so the optimisation costs no
    privacy; ``random_state`` seeds the starting point.
    """
    w = as_workload(workload)
    _explicit_ok(w.n, "OPT_p on an explicit workload")
    p = max(1, w.n // 16) if p is None else v.integer(p, "p", "optimize_p_identity")
    rng = np.random.default_rng(random_state)
    return _opt_p_on_gram(w.gram(), p, rng, None, maxiter)


def optimize_kronecker(
    workload: Any,
    ps: Sequence[int] | None = None,
    *,
    rounds: int = 10,
    random_state: int | np.random.Generator | None = None,
    maxiter: int = 200,
    rtol: float = 1e-6,
) -> KroneckerStrategy:
    """OPT_x: a Kronecker product of p-Identity factors, optimised factor by factor.

    With every factor but one fixed, the error is tr[(A_i^T A_i)^{-1} G_i] for
    the weighted Gram G_i = sum_j w_j (prod_{l != i} tr[G_jl X_l]) G_ji, an
    explicit OPT_p problem on an n_i x n_i matrix (module docstring). Starts
    from the identity and keeps a factor's update only if it lowers the error;
    ``ps`` defaults to ceil(n_i / 16) (one extra aggregate row for small
    attributes, so the strategy has at most prod(n_i + p_i) rows).
    """
    w = as_workload(workload)
    structure = w.kron_structure()
    if structure is None:
        raise InvalidParameterError(
            "optimize_kronecker needs a Kronecker, union-of-Kronecker or product-query workload; "
            "use optimize_p_identity for an explicit matrix."
        )
    dom = structure.domain
    if ps is None:
        ps = [max(1, math.ceil(n_i / 16)) for n_i in dom]
    ps = [v.integer(p, "p", "optimize_kronecker") for p in ps]
    if len(ps) != len(dom):
        raise InvalidParameterError(f"optimize_kronecker needs one p per attribute ({len(dom)}).")
    rng = np.random.default_rng(random_state)
    factors: list[Strategy] = [IdentityStrategy(n_i) for n_i in dom]
    traces = [structure.traces(i, np.eye(n_i)) for i, n_i in enumerate(dom)]
    thetas: list[NDArray[np.float64] | None] = [None] * len(dom)
    previous = math.inf
    for _ in range(v.integer(rounds, "rounds", "optimize_kronecker")):
        for i in range(len(dom)):
            others = structure.weights.copy()
            for l_, tr in enumerate(traces):
                if l_ != i:
                    others = others * tr
            gram_i = structure.weighted_gram(i, others)
            current = float(np.sum(gram_i * factors[i].gram_pinv()))
            cand = _opt_p_on_gram(gram_i, ps[i], rng, thetas[i], maxiter)
            if float(np.sum(gram_i * cand.gram_pinv())) < current:
                factors[i], thetas[i] = cand, cand.theta
                traces[i] = structure.traces(i, cand.gram_pinv())
        err = float((structure.weights * np.prod(traces, axis=0)).sum())
        if previous - err <= rtol * err:
            break
        previous = err
    return KroneckerStrategy(factors)


@dataclass(frozen=True)
class OptimisationResult:
    """The chosen strategy and the squared errors ||A||_1^2 ||W A^+||_F^2 compared.

    ``errors`` maps "optimised", "identity" and "workload" to their squared
    errors (multiply by 2 / epsilon^2 for Err_eps); ``chosen`` names the winner.
    """

    strategy: Strategy
    chosen: str
    errors: dict[str, float]
    seconds: float
    method: str
    details: dict[str, Any] = field(default_factory=dict)

    def ratio(self, baseline: str) -> float:
        """Chosen strategy's error over a baseline's (<= 1 by construction)."""
        return self.errors[self.chosen] / self.errors[baseline]


def optimize_strategy(
    workload: Any,
    *,
    method: str = "auto",
    p: int | Sequence[int] | None = None,
    random_state: int | np.random.Generator | None = None,
    maxiter: int | None = None,
) -> OptimisationResult:
    """Optimise a strategy for ``workload`` and keep it only if it beats both baselines.

    ``method``: "explicit" (OPT_p on W^T W), "kronecker" (OPT_x) or "auto"
    (Kronecker when the workload has that structure, explicit otherwise). The
    identity and, where its error can be computed (n <= EXPLICIT_LIMIT), the
    workload itself are the baselines; the strategy with the smallest error is
    returned (the simpler one on a tie), so the result is never worse than the
    better baseline.
    """
    w = as_workload(workload)
    if method not in ("auto", "explicit", "kronecker"):
        raise InvalidParameterError(
            f"The 'method' parameter of optimize_strategy must be 'auto', 'explicit' or "
            f"'kronecker'; got {method!r}."
        )
    if method == "auto":
        method = "kronecker" if w.kron_structure() is not None else "explicit"
    start = time.perf_counter()
    if method == "kronecker":
        ps = [p] * len(w.domain) if isinstance(p, int) else p
        opt: Strategy = optimize_kronecker(w, ps, random_state=random_state, maxiter=maxiter or 200)
    else:
        if p is not None and not isinstance(p, int):
            raise InvalidParameterError("The explicit OPT_p takes one int p.")
        opt = optimize_p_identity(w, p, random_state=random_state, maxiter=maxiter or 500)
    seconds = time.perf_counter() - start
    identity: Strategy = (
        KroneckerStrategy([IdentityStrategy(n) for n in w.domain])
        if isinstance(opt, KroneckerStrategy)
        else IdentityStrategy(w.n)
    )
    candidates: dict[str, Strategy] = {"optimised": opt, "identity": identity}
    errors = {"optimised": squared_error(w, opt), "identity": squared_error(w, identity)}
    if w.n <= EXPLICIT_LIMIT:
        errors["workload"] = w.l1_norm() ** 2 * w.rank()
        candidates["workload"] = _LazyWorkloadStrategy(w)  # type: ignore[assignment]
    # the smallest error wins; within a relative 1e-9 the simpler strategy wins
    # (identity, then the workload), as an optimiser that converged to Theta = 0
    # has found the identity and should not pay for its extra rows of noise
    low = min(errors.values())
    order = ("identity", "workload", "optimised")
    chosen = next(k for k in order if k in errors and errors[k] <= low * (1 + 1e-9))
    strategy = candidates[chosen]
    if isinstance(strategy, _LazyWorkloadStrategy):
        strategy = MatrixStrategy(w.to_sparse())
    return OptimisationResult(strategy, chosen, errors, seconds, method)


class _LazyWorkloadStrategy:
    """Placeholder for A = W, built only if it wins."""

    def __init__(self, w: Workload) -> None:
        self.w = w


# ====================================================================== mechanism
class MatrixMechanism(Mechanism):
    """The matrix mechanism (Li et al. 2015; seed 002, Def. 2 and Alg. 1-2).

    Releases W x_hat with x_hat = A^+ (A D + Lap(scale)^{m x k}), scale =
    ||A||_1 c (1 + 2^-30) / epsilon, c = 1 under add/remove and 2 under
    replace-one (one replaced record changes two cells of D). One charge of a
    Laplace entry with sensitivity ||A||_1 c covers the whole release.

    Parameters
    ----------
    workload : Workload, array or sparse matrix
    strategy : Strategy, optional
        Default: the identity.
    epsilon, scale : float
        Exactly one.
    relation : {"add_remove", "replace_one"}
    """

    mechanism = "matrix"

    def __init__(
        self,
        *,
        workload: Any,
        strategy: Strategy | None = None,
        epsilon: float | None = None,
        scale: float | None = None,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self.workload = as_workload(workload)
        self.strategy = IdentityStrategy(self.workload.n) if strategy is None else strategy
        if not isinstance(self.strategy, Strategy):
            raise InvalidParameterError(f"The 'strategy' parameter of {owner} must be a Strategy.")
        if self.strategy.shape[1] != self.workload.n:
            raise InvalidParameterError(
                f"{owner}: the strategy has {self.strategy.shape[1]} columns, the workload "
                f"{self.workload.n}."
            )
        if not self.strategy.supports(self.workload):
            raise InvalidParameterError(
                f"{owner}: the workload's rows are not in the strategy's row space, so W A^+ A != "
                "W and the answers would be biased; add the identity to the strategy."
            )
        self.relation = v.relation(relation, owner)
        self.sensitivity = self.strategy.l1_norm() * (1 if self.relation is ADD_REMOVE else 2)
        which = v.one_of({"epsilon": epsilon, "scale": scale}, owner)
        if which == "epsilon":
            self.scale = (
                self.sensitivity * (1 + ROUNDING_SLACK) / v.positive(epsilon, "epsilon", owner)
            )
        else:
            self.scale = v.positive(scale, "scale", owner)

    def entry(self) -> Entry:
        return Laplace(scale=self.scale, sensitivity=self.sensitivity * (1 + ROUNDING_SLACK))

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return Guarantee(self._d_in(d_in) * (1 + ROUNDING_SLACK) / self.scale)

    def expected_error(self, columns: int = 1) -> float:
        """E ||W x_hat - W D||_F^2 = 2 scale^2 ||W A^+||_F^2 per column, times ``columns``."""
        wa = squared_error(self.workload, self.strategy) / self.strategy.l1_norm() ** 2
        return 2 * self.scale**2 * wa * v.integer(columns, "columns", "expected_error")

    def _repr_extra(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "workload": self.workload.shape,
            "strategy": type(self.strategy).__name__,
        }

    def __call__(
        self,
        data: Any,
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
        return_estimate: bool = False,
    ) -> Any:
        """Charge ``scope``, then return the noisy answers W x_hat (and x_hat if asked).

        ``data`` is the data vector (n,) or data matrix D (n x k) of counts.
        """
        owner = type(self).__name__
        arr = v.finite_array(data, "data", owner)
        if arr.ndim not in (1, 2) or arr.shape[0] != self.workload.n:
            raise InvalidParameterError(
                f"The 'data' argument of {owner} must have {self.workload.n} rows (one per cell "
                f"of the domain); got shape {arr.shape}."
            )
        d2, flat = _as_2d(arr)
        self._charge(scope, caller, step, claim)
        measured = _opendp.laplace_float(self.strategy.matmul(d2), self.scale, self.sensitivity)
        x_hat = self.strategy.solve(measured)
        answers = np.asarray(self.workload.matmul(x_hat))
        if flat:
            answers, x_hat = answers[:, 0], x_hat[:, 0]
        return (answers, x_hat) if return_estimate else answers


def make_matrix_mechanism(
    workload: Any,
    epsilon: float,
    *,
    strategy: Strategy | str = "optimised",
    relation: NeighbouringRelation | str = ADD_REMOVE,
    random_state: int | np.random.Generator | None = None,
) -> MatrixMechanism:
    """A matrix mechanism for ``workload`` at ``epsilon``.

    ``strategy``: a Strategy, "identity", "workload", or "optimised" (the best
    of :func:`optimize_strategy` and both baselines).
    """
    w = as_workload(workload)
    if isinstance(strategy, str):
        if strategy == "identity":
            a: Strategy = IdentityStrategy(w.n)
        elif strategy == "workload":
            a = MatrixStrategy(w.to_sparse())
        elif strategy == "optimised":
            a = optimize_strategy(w, random_state=random_state).strategy
        else:
            raise InvalidParameterError(
                "The 'strategy' parameter of make_matrix_mechanism must be a Strategy or one of "
                f"'identity', 'workload', 'optimised'; got {strategy!r}."
            )
    else:
        a = strategy
    return MatrixMechanism(workload=w, strategy=a, epsilon=epsilon, relation=relation)
