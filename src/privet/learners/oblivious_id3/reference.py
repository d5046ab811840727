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
    ) -> None:
        super().__init__(
            codes, y_codes, schema.domain_sizes, schema.n_classes, caller=caller, noise=noise
        )
        self.width = schema.max_domain_size
        self.onehot = one_hot(self.codes, schema, dtype=np.int64)
        self.classes = one_hot_target(self.y, schema.n_classes, dtype=np.int64)

    def count(self, rows: np.ndarray) -> np.ndarray:
        """Alg. 1 steps 5-7: ``z_i = sum_j (D_0,i × T)_j``."""
        return self.classes[rows].sum(axis=0)

    def scores(self, rows: np.ndarray, attrs: Any = None) -> np.ndarray:
        """Alg. 1 steps 12-13: the MAX protocol (Alg. 2) for every attribute."""
        return max_scores_one_hot(self.onehot[rows], self.classes[rows])

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        """Alg. 1 steps 17-21: ``T_i = T × X_i`` for all ``w`` columns, dummies included.

        A dummy column is zero in every record, so its part is always empty.
        """
        block = self.onehot[rows, attr, :]
        return [rows[block[:, i] == 1] for i in range(self.width)]


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
    """Write Algorithm 1's charges into ``node``: per level a split, then a leaf.

    ``accounting`` says what each DP step is charged (default: the paper's
    mechanisms on the reference path).
    """
    acc = accounting if accounting is not None else reference_accounting(relation)
    for level in range(depth):
        step = f"split, depth {level}"
        if split == "exact":
            node.charge(
                NonPrivate(reason=EXACT_SPLIT_REASON),
                mechanism="exact argmax (hidden)",
                step=step,
                claim=claim("split", 0.0),
            )
        else:
            entry, name = acc.selection(split_epsilon)
            node.charge(
                entry, mechanism=name + " (hidden)", step=step, claim=claim("split", split_epsilon)
            )
        node = node.partition(max(width, 2), label=f"depth {level + 1}")
    entry, name = acc.leaf(leaf, leaf_epsilon)
    node.charge(entry, mechanism=name, step="leaf", claim=claim("leaf", leaf_epsilon))


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
    """Algorithm 1 (ODP+FMPC-ID3): grow the complete ``w``-ary secret tree.

    Every internal node has ``w`` children: one per real value of its attribute,
    then the dummy values. A dummy branch holds no record of any dataset, so its
    subtree is data independent: it is kept as a single zero leaf (its flags in
    Alg. 4 are always 0) and gets no ledger scope. The real subtrees are grown
    to depth exactly ``depth``, whatever their size: the stopping rule only
    checks the depth (Sec. 3.1).
    """
    w = ops.width
    builder = TreeBuilder(ops.n_classes)
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def grow(node: int, sc: Scope, rows: np.ndarray, available: np.ndarray, h: int) -> None:
        if h == 0:  # steps 5-11: a leaf, released below
            leaves.append((node, sc, rows))
            return
        step = f"split, depth {depth - h}"
        scores = ops.scores(rows) * available  # steps 12-14: y × R
        idx = np.flatnonzero(available)
        if split == "exact":
            sc.charge(
                NonPrivate(reason=EXACT_SPLIT_REASON),
                mechanism="exact argmax (hidden)",
                caller=ops.caller,
                step=step,
                claim=claim("split", 0.0),
            )
            # step 15: argmax, ties (e.g. an empty node) to the lowest available index
            best = int(idx[np.argmax(scores[idx])])
        else:
            # The sound variant: MPC-EM (Alg. 13) with the index kept secret.
            pick = ops.select(
                sc,
                scores[idx],
                epsilon=split_epsilon,
                step=step,
                claim=claim("split", split_epsilon),
            )
            best = int(idx[pick])
        kids = builder.split(node, best, w)  # step 16-19: indicator, w encodings
        subsets = ops.partition(rows, best)
        real = ops.sizes[best]
        parts = sc.partition(scope_labels(schema, best))
        rest = available.copy()
        rest[best] = False  # step 22: R - k
        for v in range(real):
            grow(kids[v], parts[v], subsets[v], rest, h - 1)
        # kids[real:] are the dummy branches: zero leaves, never selected by Alg. 4.
        assert all(s.size == 0 for s in subsets[real:])

    root = builder.add_node(0)
    start = ops.all_rows() if rows is None else rows
    grow(root, scope, start, np.ones(ops.n_attributes, dtype=bool), depth)
    # steps 5-11: DP class sizes (MPC-LM), the leaf keeps only its label
    values = ops.release_leaves(
        [(sc, r) for _, sc, r in leaves],
        leaf=leaf,
        epsilon=leaf_epsilon,
        claim=claim("leaf", leaf_epsilon),
    )
    for (node, _, _), value in zip(leaves, values, strict=True):
        builder.set_leaf(node, ops.label(value))  # the leaf keeps only its label
    return builder.build()
