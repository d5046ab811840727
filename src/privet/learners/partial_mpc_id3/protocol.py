"""CDP+PMPC-ID3 (seed 000, App. B, Algorithms 7-10) on secret shares.

DP ID3 (Algorithm 6) trained on secret-shared data: the max-operator scores
(MPC-Score) and class counts (MPC-Count) are computed on shares, the split
attribute is drawn by the MPC exponential mechanism and opened (Algorithm 8),
the records are partitioned by secret indicator vectors (MPC-Partition), and
each leaf either opens its Laplace-noised class counts, whose argmax is then
taken in the clear (Algorithm 9), or opens a label drawn by the MPC
exponential mechanism (Algorithm 10). Only DP outputs are opened.

The stopping rule is data independent (depth reached or no attribute left),
so the tree is complete and every level is processed as one batch: one matrix
product for all contingency tables, one batched exponential mechanism for
all splits of the level, one opening. The leaves' noise is drawn in one
batch too. The plaintext reference is
:func:`privet.learners.partial_mpc_id3.grow_partial_mpc`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.learners._protocols.common import (
    ContingencyTables,
    OwnerTables,
    path_conditions,
    reveal_index,
    segment_matrix,
    split_frontier,
)
from privet.learners._protocols.grouped import SortedTable
from privet.learners._protocols.noise import SecureNoise
from privet.mpc._runtime import get_runtime
from privet.mpc.sharing import reveal

mpc = get_runtime()

LEAVES = ("laplace", "exponential")


@mpc.coroutine
async def partial_mpc_id3(
    D: Any,
    C: Any,
    sizes: Sequence[int],
    depth: int,
    *,
    split_mechanism: Any,
    leaf_mechanism: Any,
    leaf: str = "laplace",
    noise: SecureNoise | None = None,
    tables: OwnerTables | None = None,
) -> asyncio.Future:
    """Algorithm 7 (CDP+PMPC-ID3) with Algorithms 8-10, on secret shares.

    Parameters
    ----------
    D : secure fixed-point array, shape (n, S)
        One-hot attribute values with their real widths (S = sum(sizes)),
        shared as integral values of ``split_mechanism.sectype``.
    C : secure fixed-point array, shape (n, u)
        One-hot classes.
    sizes : sequence of int
        Public domain sizes of the m attributes.
    depth : int
        Number of split levels h (at most m).
    split_mechanism : SecureExponentialMechanism
        MPC-EM of Algorithm 8 (sensitivity 1: the max operator), at the
        per-query budget epsilon / (h + 1).
    leaf_mechanism : SecureLaplace or SecureExponentialMechanism
        MPC-LM of Algorithm 9 or MPC-EM of Algorithm 10, per-query budget.
    leaf : {"laplace", "exponential"}, default="laplace"
    noise : SecureNoise or None
        Where noise comes from; ``None`` is the mechanisms themselves. Tests
        pass a :class:`~privet.learners._protocols.noise.FixedNoise`.

    Returns
    -------
    dict
        ``{path: node}``, path the tuple of branch indices from the root;
        internal nodes ``{"split": attribute, "position": index among the
        remaining attributes}``, leaves ``{"value": noisy counts}``
        (Algorithm 9) or ``{"label": class}`` (Algorithm 10).
    """
    if leaf not in LEAVES:
        raise InvalidParameterError(f"leaf must be one of {LEAVES}, got {leaf!r}.")
    noise = SecureNoise() if noise is None else noise
    tag = noise.label_suffix
    sizes = [int(s) for s in sizes]
    u = C.shape[1] if tables is None else tables.u
    m = len(sizes)
    if not 0 <= depth <= m:
        raise InvalidParameterError(f"depth must be in [0, {m}] (the attributes), got {depth}.")
    seg = segment_matrix(sizes)
    nodes: dict[tuple[int, ...], dict[str, Any]] = {}

    paths: list[tuple[int, ...]] = [()]
    attrs: list[tuple[int, ...]] = [tuple(range(m))]
    if tables is None:
        contingency = ContingencyTables(D, C)
        Dt = D.T
        counts = mpc.np_sum(C, axis=0).reshape(1, u)
    elif depth == 0:  # one leaf: the root's class sizes, one attribute's sum of its table
        counts = mpc.np_sum(tables([[]])[:, : sizes[0], :], axis=1).reshape(1, u)
    T = None  # partition vectors of the current level (None: the root, all records)
    for level in range(depth):  # Alg. 7 steps 6-12, one level at a time
        if tables is None:
            table = contingency(T)  # MPC-Score: contingency tables (N, S, u)
        else:  # the owners count the public paths locally
            table = tables([path_conditions(nodes, p) for p in paths])
        splits = await _split_level(
            table, seg, paths, attrs, nodes, level, split_mechanism, noise, tag
        )
        paths, attrs, node_rows, columns = split_frontier(paths, attrs, splits, sizes)
        if level + 1 < depth and tables is not None:
            pass  # the next level's tables come from the owners
        elif level + 1 < depth:  # MPC-Partition: T_child = T x D[:, a = v]
            cols = Dt[columns]
            T = cols if T is None else T[node_rows] * cols
        else:  # the children are leaves: their counts are read off this level's tables
            counts = table[node_rows, columns]
    await _release_leaves(counts, paths, nodes, u, leaf, leaf_mechanism, noise, tag)
    return nodes


async def _split_level(
    table: Any,
    seg: np.ndarray,
    paths: list[tuple[int, ...]],
    attrs: list[tuple[int, ...]],
    nodes: dict[tuple[int, ...], dict[str, Any]],
    level: int,
    split_mechanism: Any,
    noise: SecureNoise,
    tag: str,
) -> list[tuple[int, int]]:
    """Alg. 7 steps 6-8 for a level's nodes: scores (Eq. 1), DP choice, opened; ``(node, attribute)``."""
    scores = mpc.np_amax(table, axis=(2,)) @ seg  # Eq. 1, (N, m)
    candidates = np.asarray(attrs, dtype=np.int64)  # (N, m - level), increasing
    rows = np.arange(len(paths))[:, None]
    drawn = await noise.draw(split_mechanism, tuple(candidates.shape))
    onehot = noise.select(
        split_mechanism, scores[rows, candidates], paths, kind="split", drawn=drawn
    )
    picks = await reveal_index(  # Alg. 8: MPC-EM, then MPC-Recover of the index
        onehot,
        label=f"CDP+PMPC-ID3 depth {level}: EM split attributes{tag}",
        entry=split_mechanism,
    )
    splits = []
    for i, pick in enumerate(picks):
        a = int(candidates[i, pick])
        nodes[paths[i]] = {"split": a, "position": int(pick)}
        splits.append((i, a))
    return splits


async def _release_leaves(
    counts: Any,
    paths: list[tuple[int, ...]],
    nodes: dict[tuple[int, ...], dict[str, Any]],
    u: int,
    leaf: str,
    leaf_mechanism: Any,
    noise: SecureNoise,
    tag: str,
) -> None:
    """Alg. 7 steps 2-5 for every leaf: the DP leaf update of its counts, opened (Alg. 9 or 10)."""
    drawn = await noise.draw(leaf_mechanism, (len(paths), u))
    if leaf == "laplace":  # Alg. 9: MPC-LM on every count, opened, argmax in the clear
        noisy = noise.laplace(leaf_mechanism, counts, paths, drawn=drawn)
        values = await reveal(
            noisy, label=f"CDP+PMPC-ID3: Laplace-noised leaf counts{tag}", entry=leaf_mechanism
        )
        values = np.asarray(values, dtype=float).reshape(len(paths), u)
        for path, value in zip(paths, values, strict=True):
            nodes[path] = {"value": [float(x) for x in value]}
    else:  # Alg. 10: MPC-EM with the counts as utilities, the index opened
        onehot = noise.select(leaf_mechanism, counts, paths, kind="leaf", drawn=drawn)
        labels = await reveal_index(
            onehot, label=f"CDP+PMPC-ID3: EM leaf labels{tag}", entry=leaf_mechanism
        )
        for path, k in zip(paths, labels, strict=True):
            nodes[path] = {"label": int(k)}


def group_key(path: Sequence[int], width: int) -> int:
    """The key of a node in a :class:`~privet.learners._protocols.grouped.SortedTable`: sum_i v_i w**i."""
    return int(sum(int(v) * width**i for i, v in enumerate(path)))


async def partial_mpc_id3_sorted(
    table: SortedTable | None,
    root_counts: Any,
    sizes: Sequence[int],
    n_classes: int,
    n_records: int,
    depth: int,
    *,
    split_mechanism: Any,
    leaf_mechanism: Any,
    leaf: str = "laplace",
    noise: SecureNoise | None = None,
) -> dict[tuple[int, ...], dict[str, Any]]:
    """Algorithm 7 with Algorithms 8-10 on a secretly sorted table (outsourced data, any size).

    The same secure steps and openings as :func:`partial_mpc_id3` on the same
    secret contingency tables; only how the tables are computed differs: from a
    :class:`~privet.learners._protocols.grouped.SortedTable` in the vector
    engine, a cost linear in the rows whatever the number of nodes, instead of
    one partition vector per node. The tables of the level's real nodes (the
    groups of their paths) are moved into MPyC (:meth:`~privet.mpc.vector.Engine.to_mpyc`)
    for the comparisons; the opened split attributes (public) reach the rows
    through :meth:`SortedTable.gather`.

    ``table`` is None for ``depth = 0``; ``root_counts`` (MPyC, (1, u)) is then the leaf's counts.
    """
    if leaf not in LEAVES:
        raise InvalidParameterError(f"leaf must be one of {LEAVES}, got {leaf!r}.")
    noise = SecureNoise() if noise is None else noise
    tag = noise.label_suffix
    sizes = [int(s) for s in sizes]
    m, u = len(sizes), int(n_classes)
    if not 0 <= depth <= m:
        raise InvalidParameterError(f"depth must be in [0, {m}] (the attributes), got {depth}.")
    sectype = split_mechanism.sectype
    seg = segment_matrix(sizes)
    S = int(seg.shape[0])
    w = max(sizes)
    nodes: dict[tuple[int, ...], dict[str, Any]] = {}
    paths: list[tuple[int, ...]] = [()]
    attrs: list[tuple[int, ...]] = [tuple(range(m))]
    counts = root_counts
    for level in range(depth):
        assert table is not None
        label = f"CDP+PMPC-ID3 depth {level}"
        every, view = await table.counts(label=label)
        keys = np.asarray([group_key(p, w) for p in paths], dtype=np.int64)
        mine = await table.eng.to_mpyc(
            every[keys], sectype, lower=0, upper=n_records, label=f"{label}: node tables"
        )
        node_tables = mine.reshape(len(paths), S, u)
        node_tables.integral = True
        splits = await _split_level(
            node_tables, seg, paths, attrs, nodes, level, split_mechanism, noise, tag
        )
        new_paths, new_attrs, node_rows, columns = split_frontier(paths, attrs, splits, sizes)
        if level + 1 < depth:
            indicator = np.zeros((w**level, m), dtype=np.uint64)
            for (i, a), k in zip(splits, keys, strict=True):
                indicator[k, a] = 1
            await table.advance(await table.gather(view, indicator), label=label)
        else:
            counts = node_tables[node_rows, columns]
        paths, attrs = new_paths, new_attrs
    await _release_leaves(counts, paths, nodes, u, leaf, leaf_mechanism, noise, tag)
    return nodes
