"""CDP+PMPC-ID3 (seed 000, App. B, Algorithm 7): the plan and the public control flow.

* :func:`plan_partial_mpc` writes the privacy plan (what is charged, in which
  scope) from public parameters only;
* :func:`grow_partial_mpc` is the control flow of Algorithm 7: it opens the
  ledger scopes, decides what is charged where, and asks an ops object
  (:class:`~privet.learners._trees.ops.ReferenceOps` on plaintext, the replay of
  a protocol run in :mod:`.replay`) for every data operation.
"""

from __future__ import annotations

import numpy as np

from privet.data import Schema
from privet.learners._trees.accounting import (
    ClaimRule,
    NoiseAccounting,
    reference_accounting,
)
from privet.learners._trees.ops import ReferenceOps, scope_labels
from privet.learners._trees.tree import Tree, TreeBuilder
from privet.ledger import (
    NeighbouringRelation,
    PlanNode,
    Scope,
)


def plan_partial_mpc(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    epsilon: float,
    leaf: str,
    relation: NeighbouringRelation,
    claim: ClaimRule,
    accounting: NoiseAccounting | None = None,
) -> None:
    """Write Algorithm 7's charges into ``node``: per level one EM split, then a leaf.

    ``epsilon`` is the per-query budget ``ε/(h+1)``; nodes of a level hold
    disjoint records (a partition), so a level costs one query. ``accounting``
    says what each step is charged (default: the paper's mechanisms on the
    reference path).
    """
    acc = accounting if accounting is not None else reference_accounting(relation)
    for level in range(depth):
        entry, name = acc.selection(epsilon)
        node.charge(
            entry, mechanism=name, step=f"split, depth {level}", claim=claim("split", epsilon)
        )
        node = node.partition(max(width, 2), label=f"depth {level + 1}")
    entry, name = acc.leaf(leaf, epsilon)
    node.charge(entry, mechanism=name, step="leaf", claim=claim("leaf", epsilon))


def grow_partial_mpc(
    ops: ReferenceOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rows: np.ndarray | None = None,
) -> Tree:
    """Algorithm 7 (CDP+PMPC-ID3): grow the public DP tree, charging ``scope``.

    Every node charges ``epsilon`` (the per-query budget) in its own scope;
    children are a partition of their parent's scope. The stopping rule is
    data independent (depth reached or no attribute left, App. A.2.4), so the
    tree is complete.
    """
    builder = TreeBuilder(ops.n_classes)
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def grow(node: int, sc: Scope, rows: np.ndarray, attrs: list[int], h: int) -> None:
        if h == 0 or not attrs:  # Alg. 7 steps 2-5: a leaf, released below
            leaves.append((node, sc, rows))
            return
        level = depth - h
        scores = ops.scores(rows, attrs)  # steps 6-7: MPC-Score (max operator)
        pick = ops.select(  # step 8: MPC-DPNodeSplit (Alg. 8), revealed
            sc, scores, epsilon=epsilon, step=f"split, depth {level}", claim=claim("split", epsilon)
        )
        best = attrs[pick]
        kids = builder.split(node, best, ops.sizes[best])
        parts = sc.partition(scope_labels(schema, best))
        subsets = ops.partition(rows, best)  # step 9: MPC-Partition
        rest = [a for a in attrs if a != best]
        for kid, part, sub in zip(kids, parts, subsets, strict=True):
            grow(kid, part, sub, rest, h - 1)  # steps 10-12

    root = builder.add_node(0)
    start = ops.all_rows() if rows is None else rows
    grow(root, scope, start, list(range(ops.n_attributes)), depth)
    # MPC-Count and the DP leaf update (Alg. 9 or 10) of every leaf
    values = ops.release_leaves(
        [(sc, r) for _, sc, r in leaves], leaf=leaf, epsilon=epsilon, claim=claim("leaf", epsilon)
    )
    for (node, _, _), value in zip(leaves, values, strict=True):
        builder.set_leaf(node, value)
    return builder.build()
