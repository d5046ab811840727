"""ODP+FMPC-ID3 (seed 000, Sec. 3, Algorithms 1-4): the plan and the plaintext reference path.

The paper's proposal builds a *complete* ``w``-ary tree to depth ``h`` on
one-hot data padded to the common width ``w`` (App. C.1), choosing each split
by an exact argmax of the max-operator scores inside MPC, and adds Laplace
noise only at the leaves, with the full budget per leaf. The model stays
secret-shared; oblivious prediction (Alg. 4) reveals only the label.

The exact split selection is not randomised, and every released prediction
depends on it, so it is a release with no DP guarantee (see
:class:`ObliviousID3Classifier`, Notes). The paper-faithful mode is kept, and
runs only on a ledger that accepts non-private releases; the sound variant
chooses the (still hidden) split with the exponential mechanism.

:func:`plan_oblivious` writes the plan; :func:`grow_oblivious` is the control flow of
Algorithm 1 over an ops object (:class:`OneHotOps` on plaintext).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from privet.data import Schema, one_hot, one_hot_target
from privet.learners._trees.accounting import (
    ClaimRule,
    NoiseAccounting,
    reference_accounting,
)
from privet.learners._trees.ops import ReferenceOps, scope_labels
from privet.learners._trees.scores import max_scores_one_hot
from privet.learners._trees.tree import Tree, TreeBuilder
from privet.ledger import (
    Claim,
    Entry,
    NeighbouringRelation,
    NonPrivate,
    PlanNode,
    Scope,
)

CLAIM_SOURCE = "seed 000, Sec. 3.1 and App. C.2 (ODP+FMPC-ID3, Alg. 1)"


SPLIT_CLAIM_SOURCE = "seed 000, App. C.2.1 (f, the hidden split selection, is 0-DP)"


LEAF_CLAIM_SOURCE = "seed 000, App. C.2.1 (g, the Laplace leaf, is epsilon-DP)"


EXACT_SPLIT_REASON = (
    "exact argmax split on max-operator scores (seed 000, Alg. 1 step 15): hidden by MPC, "
    "but not randomised, and every released prediction depends on it"
)


class OneHotOps(ReferenceOps):
    """The data operations of Algorithm 1 on plaintext one-hot data.

    ``onehot`` is ``(n, m, w)`` with the dummy columns of App. C.1 (all zero);
    ``classes`` the ``(n, u)`` class-partition vectors ``C`` (Alg. 1 step 6).
    """

    def __init__(
        self,
        codes: np.ndarray,
        y_codes: np.ndarray,
        schema: Schema,
        *,
        caller: str,
        noise: str = "paper",
        em_form: str = "paper",
    ) -> None:
        super().__init__(
            codes,
            y_codes,
            schema.domain_sizes,
            schema.n_classes,
            caller=caller,
            noise=noise,
            em_form=em_form,
        )
        self.width = schema.max_domain_size
        self._schema = schema

    @functools.cached_property
    def onehot(self) -> np.ndarray:
        """``(n, m, w)`` one-hot records, dummy columns zero (App. C.1); built on first use."""
        return one_hot(self.codes, self._schema, dtype=np.int64)

    @functools.cached_property
    def classes(self) -> np.ndarray:
        """``(n, u)`` class-partition vectors ``C`` (Alg. 1 step 6); built on first use."""
        return one_hot_target(self.y, self.n_classes, dtype=np.int64)

    def count(self, rows: np.ndarray) -> np.ndarray:
        """Alg. 1 steps 5-7: ``z_i = sum_j (D_0,i × T)_j``."""
        return self.classes[rows].sum(axis=0)

    def scores(self, rows: np.ndarray, attrs: Any = None) -> np.ndarray:
        """Alg. 1 steps 12-13: the MAX protocol (Alg. 2) for every attribute."""
        return max_scores_one_hot(self.onehot[rows], self.classes[rows])

    def level_scores(self, nodes: list[np.ndarray]) -> np.ndarray:
        """Alg. 1 steps 12-13 for every node of a level at once: ``(N, m)`` MAX scores.

        The contingency tables of all ``N`` nodes are one count over (node,
        attribute, value, class), as the protocol's ``T @ DC`` is one product;
        the same integers as :meth:`scores` node by node.
        """
        n_nodes, m, w, u = len(nodes), self.n_attributes, self.width, self.n_classes
        rows = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
        node = np.repeat(np.arange(n_nodes), [r.size for r in nodes])
        cell = ((node[:, None] * m + np.arange(m)) * w + self.codes[rows]) * u
        cell += self.y[rows][:, None]
        table = np.bincount(cell.ravel(), minlength=n_nodes * m * w * u)
        return table.reshape(n_nodes, m, w, u).max(axis=3).sum(axis=2).astype(float)

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        """Alg. 1 steps 17-21: ``T_i = T × X_i`` for all ``w`` columns, dummies included.

        A dummy column is zero in every record, so its part is always empty.
        """
        col = self.codes[rows, attr]
        order = np.argsort(col, kind="stable")
        bounds = np.searchsorted(col[order], np.arange(self.width + 1))
        return [rows[order[bounds[v] : bounds[v + 1]]] for v in range(self.width)]


def plan_oblivious(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    split: str,
    split_epsilon: float,
    leaf_epsilon: float,
    leaf: str,
    relation: NeighbouringRelation,
    claim: ClaimRule,
    accounting: NoiseAccounting | None = None,
) -> None:
    """Write Algorithm 1's charges into ``node``: per level a split, then the leaves.

    The same shape as :func:`grow_oblivious` and the replay of a protocol run:
    under add/remove neighbours every level, and the leaves, are one charge in
    the tree's scope; under replace-one every node of a level has its own scope
    of a ``width``-way partition. ``accounting`` says what each DP step is
    charged (default: the paper's mechanisms on the reference path).
    """
    acc = accounting if accounting is not None else reference_accounting(relation)
    disjoint = relation is NeighbouringRelation.ADD_REMOVE
    tree = node
    for level in range(depth):
        entry, name, split_claim = split_charge(acc, split, split_epsilon, claim)
        node.charge(entry, mechanism=name, step=f"split, depth {level}", claim=split_claim)
        if not disjoint:
            node = node.partition(max(width, 2), label=f"depth {level + 1}")
    entry, name = acc.leaf(leaf, leaf_epsilon)
    leaves = tree if leaves_in_tree_scope(leaf, relation) else node
    leaves.charge(entry, mechanism=name, step="leaf", claim=claim("leaf", leaf_epsilon))


def leaves_in_tree_scope(leaf: str, relation: NeighbouringRelation) -> bool:
    """Whether a tree's leaves are one charge in its scope (else one per leaf).

    Laplace leaves are one noisy histogram over leaves x classes: a record adds
    1 to one cell (add/remove, L1 sensitivity 1), a replaced record moves 1
    between at most two cells (replace-one, L1 sensitivity 2, the sensitivity
    every leaf's noise is calibrated for), so one charge at the leaf budget
    covers them all. The MPC samplers' delta depends only on how many cells
    can differ (:func:`~privet.mechanisms.bitwise_geometric.discrete_laplace_delta`),
    the same for one leaf as for the whole histogram. Exponential-mechanism
    leaves are one charge under add/remove (one record changes one leaf); under
    replace-one each leaf keeps its scope.
    """
    return leaf == "laplace" or relation is NeighbouringRelation.ADD_REMOVE


def split_charge(
    accounting: NoiseAccounting, split: str, epsilon: float, claim: ClaimRule
) -> tuple[Entry, str, Claim | None]:
    """Entry, mechanism name and claim of one node's split (Alg. 1 steps 12-16)."""
    if split == "exact":
        return NonPrivate(reason=EXACT_SPLIT_REASON), "exact argmax (hidden)", claim("split", 0.0)
    entry, name = accounting.selection(epsilon)
    return entry, name + " (hidden)", claim("split", epsilon)


def grow_oblivious(
    ops: OneHotOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    split: str,
    split_epsilon: float,
    leaf_epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rows: np.ndarray | None = None,
) -> Tree:
    """Algorithm 1 (ODP+FMPC-ID3): grow the complete ``w``-ary secret tree, level by level.

    Every internal node has ``w`` children: one per real value of its attribute,
    then the dummy values. A dummy branch holds no record of any dataset, so its
    subtree is data independent: it is kept as a single zero leaf (its flags in
    Alg. 4 are always 0) and gets no ledger scope. The real subtrees are grown
    to depth exactly ``depth``, whatever their size: the stopping rule only
    checks the depth (Sec. 3.1), so a level's nodes are known before any of
    them is released, as in the protocol, which computes a level in one batch.

    Charges: the nodes of a level hold disjoint records. Under add/remove
    neighbours one record changes one node's scores, so a level's selections
    are one charge in the tree's scope, and so are the leaves (one noisy
    histogram over leaves x classes, or one selection per leaf). Under
    replace-one every node has its own scope of the split's partition and a
    level is charged as one batch (:meth:`~privet.ledger.Ledger.charge_many`);
    Laplace leaves stay one histogram (:func:`leaves_in_tree_scope`).
    """
    w = ops.width
    builder = TreeBuilder(ops.n_classes)
    disjoint = scope.ledger.relation is NeighbouringRelation.ADD_REMOVE
    tree_scope = scope if disjoint else None
    start = ops.all_rows() if rows is None else rows
    # the frontier: (node, scope, rows, attributes available) of one level
    frontier = [(builder.add_node(0), scope, start, np.ones(ops.n_attributes, dtype=bool))]
    for level in range(depth):
        step = f"split, depth {level}"
        candidates = [np.flatnonzero(avail) for *_, avail in frontier]
        # steps 12-14: the MAX protocol (Alg. 2) for the available attributes (y x R)
        table = ops.level_scores([r for _, _, r, _ in frontier])
        scores = [row[idx] for row, idx in zip(table, candidates, strict=True)]
        if split == "exact":
            entry, name, split_claim = split_charge(
                reference_accounting(scope.ledger.relation), split, 0.0, claim
            )
            pairs = [(scope, entry)] if disjoint else [(sc, entry) for _, sc, _, _ in frontier]
            scope.ledger.charge_many(
                pairs, mechanism=name, caller=ops.caller, step=step, claim=split_claim
            )
            # step 15: argmax, ties (e.g. an empty node) to the lowest available index
            picks = [int(np.argmax(s)) for s in scores]
        else:
            # The sound variant: MPC-EM (Alg. 13) with the index kept secret.
            picks = ops.select_level(
                [(sc, r, s) for (_, sc, r, _), s in zip(frontier, scores, strict=True)],
                tree_scope=tree_scope,
                epsilon=split_epsilon,
                step=step,
                claim=claim("split", split_epsilon),
            )
        nxt = []
        for (node, sc, r, avail), idx, pick in zip(frontier, candidates, picks, strict=True):
            best = int(idx[pick])
            kids = builder.split(node, best, w)  # steps 16-19: indicator, w encodings
            subsets = ops.partition(r, best)
            real = ops.sizes[best]
            parts = [scope] * real if disjoint else sc.partition(scope_labels(schema, best))
            rest = avail.copy()
            rest[best] = False  # step 22: R - k
            nxt.extend((kids[v], parts[v], subsets[v], rest) for v in range(real))
            # kids[real:] are the dummy branches: zero leaves, never selected by Alg. 4.
            assert all(s.size == 0 for s in subsets[real:])
        frontier = nxt
    # steps 5-11: DP class sizes (MPC-LM), the leaf keeps only its label
    values = ops.release_leaves(
        [(sc, r) for _, sc, r, _ in frontier],
        leaf=leaf,
        epsilon=leaf_epsilon,
        claim=claim("leaf", leaf_epsilon),
        tree_scope=scope if leaves_in_tree_scope(leaf, scope.ledger.relation) else None,
    )
    labels = ops.labels(np.stack(values)) if values else []  # the leaf keeps only its label
    for (node, *_), label in zip(frontier, labels, strict=True):
        builder.set_leaf(node, label)
    return builder.build()
