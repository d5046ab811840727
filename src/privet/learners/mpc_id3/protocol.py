"""MPC-ID3: ID3 with the max operator on secret shares, the tree opened in the clear.

The baseline of seed 000 (Sec. 4, "MPC-ID3"): de Hoogh et al.'s Protocol 4.1
with the max-operator score of seed 000's Eq. 1 instead of the Gini index.
The data stay secret-shared; what is opened is the tree itself, as in de
Hoogh et al.: for each node whether it stops (pure or empty), the split
attribute of each internal node, and the label of each leaf. These openings
are exact functions of the data (no DP): the ledger records them as
:class:`~privet.ledger.NonPrivate`.

The protocol is the plaintext :class:`~privet.learners.ID3Classifier`
(``criterion="max"``) step for step, with the same deterministic rules:

* a node is a leaf if the depth is reached, no attribute is left, or it is
  pure or empty (``sum(counts) - max(counts) == 0``, opened by a masked zero
  test);
* the split attribute is the first maximiser of the score among the
  remaining attributes (keys of :func:`~privet.learners._protocols.common.first_max_keys`);
* a leaf's label is the first maximiser of its class counts, or of its
  parent's counts if it is empty (chosen obliviously: whether a leaf is empty
  is not opened).

Nodes are processed level by level: the contingency tables of all nodes of a
level are one matrix product ``T @ DC`` (T the nodes' secret 0/1 partition
vectors, DC the records' attribute-times-class indicators), and all stop
tests, argmaxes and openings of a level are batched, so the number of
communication rounds grows with the depth, not with the number of nodes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.learners._protocols.common import (
    ContingencyTables,
    OwnerTables,
    first_max_keys,
    path_conditions,
    public_zero_test,
    segment_matrix,
    split_frontier,
)
from privet.ledger import NonPrivate
from privet.mpc._runtime import get_runtime
from privet.mpc.sharing import reveal

mpc = get_runtime()

STOP_TEST = NonPrivate(
    reason="MPC-ID3 opens whether a node is pure or empty (its stopping test), in the clear"
)
SPLIT_OPENED = NonPrivate(
    reason="MPC-ID3 opens the split attribute, an exact argmax of the max-operator scores"
)
LEAF_OPENED = NonPrivate(reason="MPC-ID3 opens each leaf's label, an exact argmax of its counts")


@mpc.coroutine
async def mpc_id3(
    D: Any, C: Any, sizes: Sequence[int], depth: int, *, tables: OwnerTables | None = None
) -> asyncio.Future:
    """ID3 with the max operator (seed 000, Eq. 1) on secret shares, tree opened.

    Parameters
    ----------
    D : secure integer array, shape (n, S)
        One-hot attribute values, the attributes side by side with their real
        widths ``sizes`` (S = sum(sizes); no dummy columns: the tree is opened).
    C : secure integer array, shape (n, u)
        One-hot classes (the class-partition vectors of seed 000, Alg. 1 step 6).
    sizes : sequence of int
        Public domain size of each of the m attributes.
    depth : int
        Maximum number of splits on a root-to-leaf path.
    tables : OwnerTables or None
        Owners' local counts (:class:`~privet.learners._protocols.common.OwnerTables`):
        the same tables without partition vectors (D and C may then be None).

    Returns
    -------
    dict
        ``{path: node}`` with ``path`` the tuple of branch indices from the
        root and ``node`` either ``{"split": attribute, "tested": bool}`` or
        ``{"label": class, "tested": bool}`` (``tested``: its stop test was
        opened).
    """
    sizes = [int(s) for s in sizes]
    m = len(sizes)
    seg = segment_matrix(sizes)
    nodes: dict[tuple[int, ...], dict[str, Any]] = {}
    if tables is None:
        u = C.shape[1]
        contingency = ContingencyTables(D, C)
        Dt = D.T  # (S, n): column s is the partition vector of one attribute value
        root_counts = mpc.np_sum(C, axis=0).reshape(1, u)
    else:
        u = tables.u
        root_table = tables([[]])  # the root's table; its class sizes are one attribute's sum
        root_counts = mpc.np_sum(root_table[:, : sizes[0], :], axis=1).reshape(1, u)

    # The frontier: one entry per node of the current level.
    paths: list[tuple[int, ...]] = [()]
    attrs: list[tuple[int, ...]] = [tuple(range(m))]
    counts = root_counts  # class sizes, Alg. 1 steps 5-7
    parents = None  # the parents' class counts (for empty leaves)
    T_parent = None  # partition vectors of the parents (None: the root, all records)
    parent_of = np.zeros(1, dtype=np.int64)  # row of each node's parent in T_parent
    column_of = np.zeros(1, dtype=np.int64)  # one-hot column selecting the node's records

    for level in range(depth + 1):
        if not paths:
            break
        left = depth - level
        may_split = np.array([left > 0 and len(a) > 0 for a in attrs])
        stop = ~may_split
        tested = np.flatnonzero(may_split)
        if tested.size:  # stop test: pure or empty
            c = counts[tested]
            gap = mpc.np_sum(c, axis=1) - mpc.np_amax(c, axis=(1,))
            stop[tested] = await public_zero_test(
                gap, label=f"MPC-ID3 depth {level}: stop tests", entry=STOP_TEST
            )
        leaves = np.flatnonzero(stop)
        if leaves.size:  # leaf labels: first argmax of the counts (parent's if empty)
            c = counts[leaves]
            if parents is not None:
                empty = mpc.np_equal(mpc.np_sum(c, axis=1), 0).reshape(leaves.size, 1)
                c = c + empty * parents[leaves]
            keys = first_max_keys(c, np.ones((leaves.size, u), dtype=np.int64))
            label = mpc.np_argmax(keys, axis=1, arg_unary=False, arg_only=True)
            opened = await reveal(
                label, label=f"MPC-ID3 depth {level}: leaf labels", entry=LEAF_OPENED
            )
            for i, k in zip(leaves, np.asarray(opened).reshape(-1), strict=True):
                nodes[paths[i]] = {"label": int(k), "tested": bool(may_split[i])}
        split = np.flatnonzero(~stop)
        if not split.size:
            break

        # Partition vectors of the nodes that split (computed only now: a node
        # that stops never needs its own).
        T = None
        if tables is not None:  # the owners count the public paths locally
            if level == 0:
                table = root_table
            else:
                table = tables([path_conditions(nodes, paths[i]) for i in split])
        else:
            if level == 0:
                T = None
            elif T_parent is None:
                T = Dt[column_of[split]]
            else:
                T = T_parent[parent_of[split]] * Dt[column_of[split]]
            table = contingency(T)  # (N, S, u): Alg. 2's dot products
        scores = mpc.np_amax(table, axis=(2,)) @ seg  # Eq. 1: sum over values of the max
        available = np.zeros((split.size, m), dtype=np.int64)
        for row, i in enumerate(split):
            available[row, list(attrs[i])] = 1
        keys = first_max_keys(scores, available)
        best = mpc.np_argmax(keys, axis=1, arg_unary=False, arg_only=True)
        chosen = np.asarray(
            await reveal(best, label=f"MPC-ID3 depth {level}: split attributes", entry=SPLIT_OPENED)
        ).reshape(-1)

        # Children: their counts are read off the parent's table.
        splits = [(int(i), int(a)) for i, a in zip(split, chosen, strict=True)]
        for i, a in splits:
            nodes[paths[i]] = {"split": a, "tested": True}
        paths, attrs, node_rows, columns = split_frontier(paths, attrs, splits, sizes)
        parents = counts[split][node_rows]  # for the empty-leaf rule
        counts = table[node_rows, columns]
        T_parent, parent_of, column_of = T, node_rows, columns
    return nodes
