"""Workloads: matrices of linear counting queries over a (product) domain (seed 002).

A workload W (l x n) is applied as W @ x without always being formed: explicit
matrices (:class:`DenseWorkload`), Kronecker products of small factors
(:class:`KroneckerWorkload`), unions of those (:class:`UnionWorkload`) and
conjunctions of equality predicates (:class:`ProductQueries`, the decision paths
of seed 002). Each exposes its union-of-Kronecker structure to the optimiser
through the Gram matrices of its factors (:mod:`privet.mechanisms.matrix`).
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
from privet.mechanisms.matrix._linalg import EXPLICIT_LIMIT, _as_2d, _explicit_ok, _kron_apply

__all__ = [
    "DenseWorkload",
    "KroneckerWorkload",
    "ProductQueries",
    "UnionWorkload",
    "Workload",
    "as_workload",
    "decision_path_workload",
]


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
