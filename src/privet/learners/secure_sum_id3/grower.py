"""Seed 001 (Emekci et al.): Alg. 3 (ID3 over many parties), grown level by level.

:class:`LevelGrower` grows the tree that the recursion of Alg. 3 grows. The
tree is public to every party. One *summation round* carries every count
that the open nodes of one tree level need (per node: the class totals
|T(c_j)| and, for every candidate attribute A in R, all |T(a_i, c_j)| and,
in the exact protocol, all |T(a_i)|), so a tree of depth h costs h + 1
rounds (two per level in the exact protocol), not one per count.
Conditional entropy E(T|A) (Eq. 1) is computed from the summed counts
(:func:`information_gains`); the attribute with the largest gain (smallest
E(T|A)) is chosen, ties to the lowest index; leaves by the single-class and
no-attribute rules of Alg. 3. :func:`local_counts` is one party's count
vector of a round (its secret values of Alg. 2), :func:`route` moves its rows
to the next round (step 8).

Shared by the party program (:mod:`.protocol`) and the in-process reference
path (:mod:`.reference`); it imports nothing of :mod:`privet` (see
:mod:`.protocol` why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class OpenNode:
    """A tree node whose counts the next summation round computes."""

    node: int
    depth: int
    attrs: tuple[int, ...]
    splittable: bool
    offset: int = 0
    length: int = 0
    totals: np.ndarray | None = None


@dataclass
class Level:
    """The public layout of one summation round: the open nodes and their counts.

    ``phase`` is ``"totals"`` (Alg. 3 step 2: the class totals of every open
    node), ``"tables"`` (step 7: |T(a_i, c_j)| and |T(a_i)| of every candidate
    attribute, only for the nodes that steps 1-6 did not close), or
    ``"both"`` (the DP variant: totals and tables in one noisy round, so that
    the stopping rule costs no extra budget).
    """

    depth: int
    nodes: list[OpenNode]
    length: int
    phase: str = "both"


@dataclass
class TreeArrays:
    """A finished tree as plain arrays (see :mod:`privet.learners._trees.tree`), BFS order."""

    feature: list[int]
    child_start: list[int]
    children: list[int]
    value: list[list[float]]
    depth: list[int]
    parent: list[int]
    rounds: int = 0
    opened: list[int] = field(default_factory=list)


class LevelGrower:
    """Algorithm 3 grown one level at a time (identical tree to the recursion).

    The exact protocol runs two summation rounds per level, as Alg. 3 does per
    node: the class totals of every open node (steps 1-6), then the split
    counts of the nodes still open (step 7). The DP variant (``noisy``) sums
    both in one round.

    Parameters
    ----------
    sizes : sequence of int
        Domain size of every attribute (public schema).
    n_classes : int
    max_depth : int
        Maximum number of splits on a path.
    marginals : bool
        Also sum |T(a_i)| per attribute value (the exact protocol, as in the
        paper); the DP variant derives them from the noisy |T(a_i, c_j)|.
    noisy : bool
        Counts carry DP noise: negative counts are clipped to 0 before use.
    """

    def __init__(
        self,
        sizes: Sequence[int],
        n_classes: int,
        max_depth: int,
        *,
        marginals: bool,
        noisy: bool,
    ) -> None:
        self.sizes = [int(s) for s in sizes]
        self.c = int(n_classes)
        self.max_depth = int(max_depth)
        self.marginals = marginals
        self.noisy = noisy
        self.tree = TreeArrays([], [], [], [], [], [])

    def _add(self, depth: int, parent: int) -> int:
        t = self.tree
        t.feature.append(-1)
        t.child_start.append(-1)
        t.value.append([0.0] * self.c)
        t.depth.append(depth)
        t.parent.append(parent)
        return len(t.feature) - 1

    def table_length(self, attrs: Sequence[int]) -> int:
        """Split counts of one node: per candidate attribute its table (and marginals)."""
        return sum(self.sizes[a] * (self.c + (1 if self.marginals else 0)) for a in attrs)

    def _layout(self, depth: int, nodes: list[OpenNode], phase: str) -> Level:
        off = 0
        for nd in nodes:
            self.tree.opened.append(nd.node)
            nd.offset = off
            if phase == "totals":
                nd.length = self.c
            elif phase == "tables":
                nd.length = self.table_length(nd.attrs)
            else:
                nd.length = self.c + (self.table_length(nd.attrs) if nd.splittable else 0)
            off += nd.length
        return Level(depth, nodes, off, phase)

    def _open(self, depth: int, nodes: list[OpenNode]) -> Level:
        return self._layout(depth, nodes, "both" if self.noisy else "totals")

    def root(self) -> Level:
        root = self._add(0, -1)
        attrs = tuple(range(len(self.sizes)))
        return self._open(0, [OpenNode(root, 0, attrs, self.max_depth > 0 and bool(attrs))])

    def decide(self, level: Level, sums: np.ndarray) -> tuple[Level | None, list[Any]]:
        """Alg. 3 for every node of ``level`` from its summed counts.

        Returns the next round's level (or None) and, per node, its routing:
        None (a leaf), ``("same", slot)`` (still open, same node, next round)
        or ``(attr, child_slot_per_value)`` with -1 for a child that is a leaf.
        """
        c, t = self.c, self.tree
        sums = np.asarray(sums, dtype=np.int64)
        if self.noisy:
            sums = np.clip(sums, 0, None)
        t.rounds += 1
        if level.phase == "totals":
            keep: list[OpenNode] = []
            routes: list[Any] = []
            for nd in level.nodes:
                nd.totals = sums[nd.offset : nd.offset + c]
                if self._closes(nd, nd.totals):
                    routes.append(None)
                else:
                    keep.append(nd)
                    routes.append(("same", len(keep) - 1))
            return (self._layout(level.depth, keep, "tables") if keep else None), routes
        nxt: list[OpenNode] = []
        routes = []
        for nd in level.nodes:
            seg = sums[nd.offset : nd.offset + nd.length]
            if level.phase == "both":
                nd.totals, seg = seg[:c], seg[c:]
                if self._closes(nd, nd.totals):
                    routes.append(None)
                    continue
            totals = nd.totals
            tables, margins = self._tables(nd, seg)
            best_k = int(np.argmax(information_gains(tables, [self.sizes[a] for a in nd.attrs])))
            best = nd.attrs[best_k]
            t.feature[nd.node] = best
            t.child_start[nd.node] = len(t.children)
            rest = tuple(a for a in nd.attrs if a != best)
            slots = []
            for v in range(self.sizes[best]):
                kid = self._add(nd.depth + 1, nd.node)
                t.children.append(kid)
                if margins[best_k][v] <= 0:  # empty branch: the parent's majority
                    t.value[kid] = [float(x) for x in totals]
                    slots.append(-1)
                else:
                    splittable = nd.depth + 1 < self.max_depth and bool(rest)
                    nxt.append(OpenNode(kid, nd.depth + 1, rest, splittable))
                    slots.append(len(nxt) - 1)
            routes.append((best, slots))
        return (self._open(level.depth + 1, nxt) if nxt else None), routes

    def _closes(self, nd: OpenNode, totals: np.ndarray) -> bool:
        """Alg. 3 steps 1-6: no attribute left (or depth reached), or one category only."""
        if not nd.splittable or np.count_nonzero(totals) <= 1:
            self.tree.value[nd.node] = [float(x) for x in totals]
            return True
        return False

    def _tables(self, nd: OpenNode, seg: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        c = self.c
        pos = 0
        tables, margins = [], []
        for a in nd.attrs:
            w = self.sizes[a]
            table = seg[pos : pos + w * c].reshape(w, c)
            pos += w * c
            if self.marginals:
                margins.append(seg[pos : pos + w])
                pos += w
            else:
                margins.append(table.sum(axis=1))
            tables.append(table)
        return tables, margins

    def run(self, summation: Callable[[Level], np.ndarray]) -> TreeArrays:
        """Grow the whole tree with ``summation(level) -> summed counts``."""
        level: Level | None = self.root()
        while level is not None:
            level, _ = self.decide(level, summation(level))
        return self.tree


def information_gains(tables: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """Eq. (1) for every candidate attribute: -|T| E(T|A) (larger is better).

    Computed per attribute width group, with exactly the operations of
    :func:`privet.learners._trees.scores.information_gain`, so the exact protocol
    picks the same attribute as the plaintext ID3 even on ties.
    """
    out = np.empty(len(tables))
    widths = np.asarray(widths)
    for w in np.unique(widths):
        idx = np.flatnonzero(widths == w)
        table = np.stack([tables[i] for i in idx])
        n_j = table.sum(axis=2, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(n_j > 0, table / np.where(n_j > 0, n_j, 1), 0.0)
            h = -np.sum(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0.0), axis=2)
        for row, i in enumerate(idx):
            out[i] = float(-(n_j[row, :, 0] * h[row]).sum())
    return out


def local_counts(
    grower: LevelGrower, level: Level, codes: np.ndarray, y: np.ndarray, slot: np.ndarray
) -> np.ndarray:
    """One party's count vector for ``level`` (its secret values v_i of Alg. 2).

    ``slot[r]`` is the index in ``level.nodes`` of the node that row r reaches,
    or -1 once the row sits in a leaf.
    """
    c = grower.c
    out = np.zeros(level.length, dtype=np.int64)
    live = np.flatnonzero(slot >= 0)
    if live.size == 0:
        return out
    order = live[np.argsort(slot[live], kind="stable")]
    bounds = np.searchsorted(slot[order], np.arange(len(level.nodes) + 1))
    for k, nd in enumerate(level.nodes):
        rows = order[bounds[k] : bounds[k + 1]]
        if rows.size == 0:
            continue
        yk = y[rows]
        idx = []
        pos = nd.offset
        if level.phase != "tables":
            idx.append(pos + yk)
            pos += c
        if level.phase == "tables" or (level.phase == "both" and nd.splittable):
            for a in nd.attrs:
                w = grower.sizes[a]
                col = codes[rows, a]
                idx.append(pos + col * c + yk)
                pos += w * c
                if grower.marginals:
                    idx.append(pos + col)
                    pos += w
        flat = np.concatenate(idx)
        out += np.bincount(flat, minlength=level.length)
    return out


def route(codes: np.ndarray, slot: np.ndarray, routes: list[Any]) -> np.ndarray:
    """Move each party's rows to the next round (Alg. 3 step 8: partition locally)."""
    new = np.full_like(slot, -1)
    for k, r in enumerate(routes):
        if r is None:
            continue
        rows = np.flatnonzero(slot == k)
        if r[0] == "same":
            new[rows] = r[1]
            continue
        attr, slots = r
        new[rows] = np.asarray(slots, dtype=np.int64)[codes[rows, attr]]
    return new
