"""Matrix forms of the random forest (seed 002, "Matrix Random Forests") and their strategies.

- D (n x k): the data matrix over an ensemble's sub-domain (Fig. 1c); formed
  only as the input of the matrix mechanism, and refused above
  ``MAX_CELLS`` cells (the full feature domain is never formed: each ensemble
  sees only its d_bar features).
- T (o x n): implicit :class:`~privet.mechanisms.matrix.ProductQueries`.
- Q (b x n), Q T^T (b x o) and W = Q T^T T (b x n): sparse; Q T^T is built from
  the leaves the queries reach, and Q T^T T only for sub-domains up to the
  mechanism's explicit limit (Alg. 2 optimises an explicit p-Identity
  strategy on W^T W, as the authors do).

The strategies are data independent (they depend on the schema, the tree
shapes and the public queries), so choosing them costs no privacy. They are
cached by workload, so a benchmark that refits the same trees at several
epsilons optimises once.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from privet.errors import InvalidParameterError
from privet.learners.matrix_forest.trees import Ensemble
from privet.mechanisms.matrix import (
    DenseWorkload,
    IdentityStrategy,
    KroneckerStrategy,
    MatrixStrategy,
    OptimisationResult,
    Strategy,
    Workload,
    optimize_kronecker,
    optimize_strategy,
    squared_error,
)

__all__ = [
    "EXPLICIT_CELLS",
    "MAX_CELLS",
    "ImplicitPredictionWorkload",
    "choose_strategy",
    "data_matrix",
    "leaf_query_matrix",
    "prediction_workload",
    "query_matrix",
]

MAX_CELLS = 1 << 25
"""Largest sub-domain (cells of one ensemble) for which D and the noise are formed.

D (n x k), the strategy answers and their noise are dense over the n cells of an
ensemble's sub-domain (the matrix mechanism measures every cell: Alg. 1 line 2,
noise generation O(n^d_bar), seed 002 "Complexity"); T, Q T^T T and the Kronecker
strategies stay implicit. Measured (``benchmarks/seed002_dbar10.py``): one ensemble
of 25 trees of depth 8 over 8.8 million cells of Adult (d_bar = 10) peaks at 4.5 GB
resident, so 2^25 (33.5 million) cells stay within about 17 GB. What takes the time
is the noise: OpenDP's float Laplace draws about 1.3e5 values a second, n k of them."""

EXPLICIT_CELLS = 2048
"""Largest sub-domain / leaf count for which explicit n x n Grams are formed here.

The mechanism allows 8192, but an explicit OPT_p and the rank of W^T W (the
"workload" baseline of optimize_strategy) cost O(n^3) time and O(n^2) memory;
above 2048 cells the Kronecker form is used instead (Mushroom with d_bar = 4
has sub-domains of up to 9720 cells)."""


def _cell_index(codes: NDArray[np.int64], domain: tuple[int, ...]) -> NDArray[np.int64]:
    return np.ravel_multi_index(tuple(codes.T), domain).astype(np.int64)


def check_cells(ensemble: Ensemble, what: str) -> None:
    if ensemble.n_cells > MAX_CELLS:
        raise InvalidParameterError(
            f"{what} forms the data matrix of an ensemble over {ensemble.n_cells} cells "
            f"(features {list(ensemble.features)}), more than {MAX_CELLS}; lower max_features "
            "(d_bar) or raise n_ensembles so that each ensemble's sub-domain is smaller."
        )


def data_matrix(
    ensemble: Ensemble, codes: NDArray[np.int64], y: NDArray[np.int64], n_classes: int
) -> NDArray[np.float64]:
    """D (n x k): counts of (cell, class) over the ensemble's sub-domain."""
    check_cells(ensemble, "The matrix mechanism")
    cells = _cell_index(codes, ensemble.domain)
    flat = np.bincount(cells * n_classes + y, minlength=ensemble.n_cells * n_classes)
    return flat.reshape(ensemble.n_cells, n_classes).astype(float)


def query_matrix(ensemble: Ensemble, codes: NDArray[np.int64]) -> sparse.csr_matrix:
    """Q (b x n): one indicator row per query (Fig. 1d)."""
    cells = _cell_index(codes, ensemble.domain)
    b = codes.shape[0]
    return sparse.csr_matrix((np.ones(b), (np.arange(b), cells)), shape=(b, ensemble.n_cells))


def leaf_query_matrix(ensemble: Ensemble, query_leaves: NDArray[np.int64]) -> sparse.csr_matrix:
    """Q T^T (b x o): row i has a 1 at each leaf that query i reaches."""
    b, tau = query_leaves.shape
    rows = np.repeat(np.arange(b), tau)
    return sparse.csr_matrix(
        (np.ones(b * tau), (rows, query_leaves.ravel())), shape=(b, ensemble.n_leaves)
    )


def prediction_workload(ensemble: Ensemble, query_leaves: NDArray[np.int64]) -> sparse.csr_matrix:
    """W = Q T^T T (b x n), the weighted-vote workload of Alg. 2 (Fig. 1f), explicit."""
    if ensemble.n_cells > EXPLICIT_CELLS:
        raise InvalidParameterError(
            f"The explicit W = Q T^T T needs a sub-domain of at most {EXPLICIT_CELLS} cells; "
            f"this ensemble's has {ensemble.n_cells}. Use implicit_prediction_workload."
        )
    return leaf_query_matrix(ensemble, query_leaves) @ ensemble.paths.to_sparse()


class ImplicitPredictionWorkload(Workload):
    """W = (Q T^T) T kept as the product of a sparse b x o matrix and the implicit T.

    For sub-domains above the explicit limit: W x = (Q T^T)(T x), never forming W.
    """

    def __init__(self, ensemble: Ensemble, query_leaves: NDArray[np.int64]) -> None:
        self.left = leaf_query_matrix(ensemble, query_leaves)
        self.paths = ensemble.paths
        self.query_leaves = np.asarray(query_leaves, dtype=np.int64)
        self.shape = (int(self.left.shape[0]), ensemble.n_cells)
        self.domain = ensemble.domain

    def matmul(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.left @ self.paths.matmul(x))

    def to_sparse(self) -> sparse.csr_matrix:
        return self.left @ self.paths.to_sparse()

    def frobenius_sq(self) -> float:
        """||W||_F^2 without forming W (or T): query i's row is the sum of its leaves'
        rows of T, one per tree, so ||W||_F^2 = sum_i sum_{t, t'} |l_it & l_it'|, and two
        leaves (conjunctions of "attribute = value") share no cell if they test one
        attribute at different values, else the product of the domain sizes of the
        attributes neither tests."""
        values = self.paths.values
        log_sizes = np.log(np.asarray(self.domain, dtype=float))
        total = 0.0
        for start in range(0, self.query_leaves.shape[0], 256):
            v = values[self.query_leaves[start : start + 256]]  # (queries, trees, attributes)
            a, b = v[:, :, None, :], v[:, None, :, :]
            clash = ((a >= 0) & (b >= 0) & (a != b)).any(axis=-1)
            shared = np.exp(((a < 0) & (b < 0)) @ log_sizes)
            total += float(shared[~clash].sum())
        return total


# ------------------------------------------------------------------ strategies
_CACHE: dict[str, tuple[Strategy, dict[str, float], float, str]] = {}
_CACHE_SIZE = 32


def _key(kind: str, *parts: Any) -> str:
    h = hashlib.sha1(kind.encode())
    for p in parts:
        if sparse.issparse(p):
            p = sparse.csr_matrix(p)
            for a in (p.indptr, p.indices, p.data):
                h.update(np.ascontiguousarray(a).tobytes())
            h.update(repr(p.shape).encode())
        elif isinstance(p, np.ndarray):
            h.update(np.ascontiguousarray(p).tobytes())
            h.update(repr(p.shape).encode())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()


def choose_strategy(
    workload: Any,
    strategy: str,
    *,
    kind: str,
    seed: int,
    extra_candidates: dict[str, Strategy] | None = None,
) -> tuple[Strategy, dict[str, float], float, str]:
    """A strategy for ``workload``: (A, squared errors of the candidates, seconds, chosen).

    ``strategy``: "identity", "workload" (A = W) or "optimized"
    (:func:`~privet.mechanisms.matrix.optimize_strategy`: OPT_x for the implicit
    T of batch training, explicit OPT_p with p = 1 for the explicit workloads
    of batch prediction and subsample-and-aggregate, as the authors do; the
    best of it, the identity and W, plus ``extra_candidates``).
    """
    raw = workload.values if kind == "training" else workload
    key = _key(kind, strategy, seed, raw, getattr(workload, "domain", None))
    if key in _CACHE:
        return _CACHE[key]
    w = workload if kind == "training" else DenseWorkload(workload)
    if strategy == "identity":
        a: Strategy = (
            KroneckerStrategy([IdentityStrategy(n) for n in w.domain])
            if kind == "training"
            else IdentityStrategy(w.n)
        )
        out = (a, {"identity": squared_error(w, a)}, 0.0, "identity")
    elif strategy == "workload":
        if w.n > EXPLICIT_CELLS:
            raise InvalidParameterError(
                f"strategy='workload' needs the explicit workload matrix; its domain has {w.n} "
                f"cells (> {EXPLICIT_CELLS}). Use strategy='optimized' or 'identity'."
            )
        a = MatrixStrategy(w.to_sparse())
        out = (a, {"workload": squared_error(w, a)}, 0.0, "workload")
    else:
        if kind == "training" and w.n > EXPLICIT_CELLS:
            start = time.perf_counter()
            opt = optimize_kronecker(w, random_state=seed)
            ident = KroneckerStrategy([IdentityStrategy(n) for n in w.domain])
            errs = {"optimised": squared_error(w, opt), "identity": squared_error(w, ident)}
            best = "optimised" if errs["optimised"] < errs["identity"] * (1 - 1e-9) else "identity"
            res = OptimisationResult(
                opt if best == "optimised" else ident,
                best,
                errs,
                time.perf_counter() - start,
                "kronecker",
            )
        elif kind == "training":
            res = optimize_strategy(w, random_state=seed)
        else:
            if w.n > EXPLICIT_CELLS:
                raise InvalidParameterError(
                    f"The explicit strategy optimisation needs a workload over at most "
                    f"{EXPLICIT_CELLS} columns; this one has {w.n}. Lower n_trees or max_depth "
                    "(subsample-and-aggregate: the columns are leaves) or max_features."
                )
            res = optimize_strategy(w, method="explicit", p=1, random_state=seed)
        a, errors, chosen = res.strategy, dict(res.errors), res.chosen
        seconds = res.seconds
        for name, cand in (extra_candidates or {}).items():
            err = squared_error(w, cand)
            errors[name] = err
            if err < errors[chosen]:
                a, chosen = cand, name
        out = (a, errors, seconds, chosen)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = out
    return out


def expected_squared_error(workload: Any, strategy: Strategy) -> float:
    """||A||_1^2 ||W A^+||_F^2 per class column (multiply by 2 / eps^2 for Err_eps)."""
    return squared_error(workload, strategy)


_ = math
