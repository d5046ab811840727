"""Random decision trees built from the public schema alone (seed 002, Alg. 3 lines 1-3).

Each ensemble ``i`` of Algorithm 3 draws a random feature subset ``S_i`` of
size ``d_bar`` and grows ``tau_i`` random multi-way trees of depth ``h`` over
it (:func:`privet.mechanisms.matrix.decision_path_workload`): every internal
node tests an attribute not yet tested on its path and has one child per
value. Nothing here reads data, so the construction costs no privacy; the
estimator records it on the ledger as a zero-cost, data-independent step.

The decision-path matrix ``T`` of an ensemble (one row per leaf, one column
per cell of the sub-domain prod_{j in S_i} n_j) is kept implicit as a
:class:`~privet.mechanisms.matrix.ProductQueries`: row ``r`` is the conjunction
"attribute j = values[r, j]" over the tested attributes, i.e. a Kronecker
product of indicator rows e_v^T (tested) and 1^T (untested).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.mechanisms.matrix import ProductQueries, decision_path_workload

__all__ = ["Ensemble", "build_forest", "split_trees"]


@dataclass(frozen=True)
class Ensemble:
    """One ensemble F_{S_i}: its features, its sub-domain and its decision paths T.

    Attributes
    ----------
    features : tuple of int
        Indices of the schema's features in ``S_i`` (sorted).
    domain : tuple of int
        Their domain sizes; the sub-domain has ``prod(domain)`` cells.
    paths : ProductQueries
        The decision-path matrix T (o x n), implicit.
    tree_of_leaf : ndarray of shape (o,)
        The tree (0 .. n_trees - 1) that owns each row of T.
    """

    features: tuple[int, ...]
    domain: tuple[int, ...]
    paths: ProductQueries
    tree_of_leaf: NDArray[np.int64]

    @property
    def n_trees(self) -> int:
        return int(self.tree_of_leaf[-1]) + 1

    @property
    def n_leaves(self) -> int:
        return int(self.paths.shape[0])

    @property
    def n_cells(self) -> int:
        return math.prod(self.domain)

    def tree_rows(self, t: int) -> slice:
        """The rows of T that belong to tree ``t`` (rows of one tree are contiguous)."""
        idx = np.flatnonzero(self.tree_of_leaf == t)
        return slice(int(idx[0]), int(idx[-1]) + 1)


def split_trees(n_trees: int, n_ensembles: int) -> list[int]:
    """tau_i: ``n_trees`` spread over ``n_ensembles`` as evenly as possible (Alg. 3)."""
    if n_ensembles > n_trees:
        raise InvalidParameterError(
            f"n_ensembles={n_ensembles} is larger than n_trees={n_trees}: every ensemble needs "
            "at least one tree; lower n_ensembles or raise n_trees."
        )
    base, extra = divmod(n_trees, n_ensembles)
    return [base + (1 if i < extra else 0) for i in range(n_ensembles)]


def _tree_of_leaf(paths: ProductQueries, n_trees: int) -> NDArray[np.int64]:
    """Recover tree boundaries: each tree's leaves partition the domain (cells sum to n)."""
    dom = np.asarray(paths.domain, dtype=np.int64)
    cells = np.prod(np.where(paths.values >= 0, 1, dom[None, :]), axis=1)
    ends = np.cumsum(cells)
    n = int(np.prod(dom))
    tree = (ends - 1) // n
    if ends[-1] != n * n_trees:
        raise AssertionError("decision paths do not partition the domain tree by tree")
    return tree.astype(np.int64)


def build_forest(
    domain_sizes: tuple[int, ...],
    *,
    n_trees: int,
    max_depth: int,
    n_ensembles: int,
    max_features: int,
    rng: np.random.Generator,
) -> list[Ensemble]:
    """Alg. 3 lines 1-3 for every ensemble, from the schema's domain sizes and ``rng`` only."""
    d = len(domain_sizes)
    if max_features > d:
        raise InvalidParameterError(
            f"max_features (d_bar) = {max_features} is larger than the schema's {d} features; "
            f"pass max_features <= {d} (or None for all of them)."
        )
    out = []
    for tau in split_trees(n_trees, n_ensembles):
        feats = tuple(sorted(int(f) for f in rng.choice(d, size=max_features, replace=False)))
        dom = tuple(int(domain_sizes[f]) for f in feats)
        paths = decision_path_workload(dom, tau, max_depth, random_state=rng)
        out.append(Ensemble(feats, dom, paths, _tree_of_leaf(paths, tau)))
    return out
