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
import math
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
    """Algorithm 7 with Algorithms 8-10 on a secretly sorted table, in the vector engine.

    The same scores, selections (report-noisy-max with the discrete samplers' noise,
    first maximum) and DP leaf updates as :func:`partial_mpc_id3` with
    ``mpc_noise="discrete"``, on the same secret contingency tables, and the same
    values opened under the same labels and mechanisms; only how they are computed
    differs: the tables from a :class:`~privet.learners._protocols.grouped.SortedTable`
    (a cost linear in the rows whatever the number of nodes, instead of one
    partition vector per node), the comparisons, noise and openings in the vector
    engine (:mod:`privet.mpc.vector`) instead of MPyC. The opened split attributes
    (public) reach the rows through :meth:`SortedTable.gather`. Besides the DP
    releases only data-independent values are opened (shuffled group starts and
    destinations, masked comparisons), labelled as such.

    ``table`` is None for ``depth = 0``; ``root_counts`` (engine shares, (1, u)) is
    then the leaf's counts.
    """
    from privet.mpc import field61 as F
    from privet.mpc.discrete import SecureDiscreteLaplace, SecureReportNoisyMax
    from privet.mpc.vector import argmax_onehot, maximum

    if leaf not in LEAVES:
        raise InvalidParameterError(f"leaf must be one of {LEAVES}, got {leaf!r}.")
    discrete = (SecureDiscreteLaplace, SecureReportNoisyMax)
    if not (isinstance(split_mechanism, discrete) and isinstance(leaf_mechanism, discrete)):
        raise InvalidParameterError(
            "the sorted-table CDP+PMPC-ID3 draws the discrete samplers' noise "
            "(mpc_noise='discrete'); the paper's fixed-point samplers run on the partition path."
        )
    noise = SecureNoise() if noise is None else noise
    tag = noise.label_suffix
    sizes = [int(s) for s in sizes]
    m, u = len(sizes), int(n_classes)
    if not 0 <= depth <= m:
        raise InvalidParameterError(f"depth must be in [0, {m}] (the attributes), got {depth}.")
    seg = segment_matrix(sizes)
    S = int(seg.shape[0])
    attribute_of = np.argmax(seg, axis=1)
    w = max(sizes)
    eng = table.eng if table is not None else None
    nodes: dict[tuple[int, ...], dict[str, Any]] = {}
    paths: list[tuple[int, ...]] = [()]
    attrs: list[tuple[int, ...]] = [tuple(range(m))]
    counts = root_counts
    count_bits = int(n_records + 1).bit_length() + 1
    for level in range(depth):
        assert table is not None and eng is not None
        label = f"CDP+PMPC-ID3 depth {level}"
        every, view = await table.counts(label=label)
        keys = np.asarray([group_key(p, w) for p in paths], dtype=np.int64)
        N = len(paths)
        node_tables = every[keys].reshape(N, S, u)
        best = await maximum(eng, node_tables, count_bits, label=f"{label}: scores")  # (N, S)
        scores = np.zeros((N, m), dtype=np.uint64)
        for a in range(m):  # Eq. 1: sum over the attribute's values of the class maximum
            scores[:, a] = F.sum(best[:, attribute_of == a], axis=1)
        candidates = np.asarray(attrs, dtype=np.int64)  # (N, m - level), increasing
        d = candidates.shape[1]
        bound = int(split_mechanism.noise_bound)
        z = await noise.engine_values(eng, split_mechanism, paths, "split", d)
        k = max(1, math.ceil(math.log2(d + 1)))
        rank = np.arange(d, 0, -1, dtype=np.uint64)  # first maximum, as argmax_first
        noisy = F.add(F.add(scores[np.arange(N)[:, None], candidates], z), F.const(bound))
        onehot = await argmax_onehot(
            eng,
            F.add(F.mul(noisy, F.const(1 << k)), rank),
            (int(n_records + 2 * bound + 1) << k).bit_length() + 1,
            label=f"{label}: split",
        )
        index = F.sum(F.mul(onehot, np.arange(d, dtype=np.uint64)), axis=1)
        picks = await eng.open(  # Alg. 8: noisy max, then MPC-Recover of the index
            index,
            label=f"CDP+PMPC-ID3 depth {level}: EM split attributes{tag}",
            entry=split_mechanism,
        )
        assert picks is not None
        splits = []
        for i, pick in enumerate(picks):
            a = int(candidates[i, pick])
            nodes[paths[i]] = {"split": a, "position": int(pick)}
            splits.append((i, a))
        new_paths, new_attrs, node_rows, columns = split_frontier(paths, attrs, splits, sizes)
        if level + 1 < depth:
            indicator = np.zeros((w**level, m), dtype=np.uint64)
            for (_, a), key in zip(splits, keys, strict=True):
                indicator[key, a] = 1
            await table.advance(await table.gather(view, indicator), label=label)
        else:
            counts = node_tables[node_rows, columns]  # (leaves, u)
        paths, attrs = new_paths, new_attrs
    assert counts is not None
    if eng is None:
        raise InvalidParameterError("the sorted-table path needs depth >= 1.")
    n_leaves = len(paths)
    bound = int(leaf_mechanism.noise_bound)
    if leaf == "laplace":  # Alg. 9: discrete Laplace on every count, opened, argmax in the clear
        z = await noise.engine_values(eng, leaf_mechanism, paths, "laplace", u)
        values = await eng.open(
            F.add(counts, z),
            label=f"CDP+PMPC-ID3: Laplace-noised leaf counts{tag}",
            entry=leaf_mechanism,
        )
        assert values is not None
        for path, value in zip(paths, values.reshape(n_leaves, u), strict=True):
            nodes[path] = {"value": [float(x) for x in value]}
    else:  # Alg. 10: noisy max with the counts as utilities, the index opened
        z = await noise.engine_values(eng, leaf_mechanism, paths, "leaf", u)
        k = max(1, math.ceil(math.log2(u + 1)))
        rank = np.arange(u, 0, -1, dtype=np.uint64)
        shifted = F.add(F.add(counts, z), F.const(bound))
        onehot = await argmax_onehot(
            eng,
            F.add(F.mul(shifted, F.const(1 << k)), rank),
            (int(n_records + 2 * bound + 1) << k).bit_length() + 1,
            label="CDP+PMPC-ID3: leaf labels",
        )
        labels = await eng.open(
            F.sum(F.mul(onehot, np.arange(u, dtype=np.uint64)), axis=1),
            label=f"CDP+PMPC-ID3: EM leaf labels{tag}",
            entry=leaf_mechanism,
        )
        assert labels is not None
        for path, lab in zip(paths, labels, strict=True):
            nodes[path] = {"label": int(lab)}
    return nodes
