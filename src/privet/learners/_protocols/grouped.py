"""Node-wise counts of a tree level from a secretly sorted table (Hamada et al. 2023 style).

The seed-000 protocols compute a level's contingency tables with one secret
0/1 *partition vector* per node over all n rows (Alg. 1 steps 17-21, App. B's
MPC-Partition): N x n products and an (N, n) x (n, S u) product of shares per
level, a cost that grows with the number of nodes N (w**l for the complete
tree). Here the rows instead carry their node as a secret *group key* and are
kept secretly sorted by it, so that every group-wise quantity is a linear
function of prefix sums, and a level costs O(n) work whatever N is (Hamada,
Ikarashi, Kikuchi & Chida, "Efficient decision tree training with new data
structure for secure multi-party computation", PoPETs 2023, whose table keeps
the records grouped by node and replaces per-node work by group-wise prefix
operations; their trees are binary, these are w-ary). All shares live in the
vector engine (:mod:`privet.mpc.vector`).

The table
    Rows are the n records and d = w**(h-1) public *dummy* rows, one per node
    of level h - 1 of the complete w-ary tree (h the depth). A dummy has no
    attribute value and no class (its one-hot columns are zero, so it adds to no
    count) and a public path of digits (d_0, ..., d_{h-2}): it belongs to the
    group of that path at every level. Every group of every level l <= h - 1
    (w**l groups) therefore holds at least one row, which makes the group of
    key g the g-th group in sorted order. The dummies come first, ordered so
    that the first dummy of every group at every level is the one whose
    remaining digits are all 0 (the order of sum_i d_i w**i).

The key
    A record's key at level l is k_l = sum_{i<l} v_i w**i, v_i its value of the
    attribute split at its level-i node (a dummy's: d_i). A stable counting sort
    by the next digit v_l (least significant digit first: the previous order is
    the tie-break) keeps the table sorted by k_{l+1} = k_l + v_l w**l.

One level (:meth:`SortedTable.counts`, :meth:`SortedTable.gather`, :meth:`SortedTable.advance`)
    * group starts: s_r = k_r - k_{r-1} (k_{-1} = -1) is 1 at the first row of
      each group and 0 elsewhere (consecutive keys differ by 0 or 1);
      exclusive prefix sums E of the rows' one-hot (attribute value, class)
      columns; both linear, free.
    * the table [s, k, E] is shuffled (:meth:`~privet.mpc.vector.Engine.shuffle`);
      s is opened: its w**l ones sit at uniformly random positions whatever the
      data; the keys of those rows are opened: each of 0 .. w**l - 1 once, in
      uniformly random order. Group g's counts are E at the start of group g + 1
      minus E at the start of group g (the total for the last).
    * gather: a value per group reaches every row of the group as a prefix sum
      of the differences between consecutive groups' values placed at the group
      starts, placed in the shuffled order and brought back by
      :meth:`~privet.mpc.vector.Engine.unshuffle`.
    * advance: with the rows' attribute indicator of their group (gathered), the
      digit one-hot X (n x w) is sum_a K_a D_{a, v} (one product per one-hot
      column), each row's place in the stable sort is
      dest_r = sum_v X_rv (#rows with digit < v + #rows up to r with digit v - 1),
      one product per (row, digit); the table with dest is shuffled, dest
      opened (a uniformly random permutation of 0 .. n' - 1 whatever the data)
      and the rows put in place.

What is opened besides the protocol's own releases: the shuffled start flags,
the keys of the flagged rows, the shuffled destinations, each with a
distribution that does not depend on the data (the statements above, given a
shuffle no coalition of t parties knows), labelled
:data:`~privet.mpc.vector.DATA_INDEPENDENT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privet.errors import InvalidParameterError, MPCError
from privet.learners._protocols.common import offsets
from privet.mpc import field61 as F
from privet.mpc.vector import DATA_INDEPENDENT, Engine, ShuffleKey


def dummy_digits(width: int, levels: int) -> np.ndarray:
    """Digits (d_0, ..., d_{levels-1}) of the w**levels dummies, in the order of sum_i d_i w**i."""
    index = np.arange(width**levels, dtype=np.int64)
    if levels == 0:  # depth 1: one dummy, the root's
        return np.zeros((1, 0), dtype=np.int64)
    return np.stack([(index // width**i) % width for i in range(levels)], axis=1).reshape(
        width**levels, levels
    )


@dataclass
class LevelView:
    """What :meth:`SortedTable.counts` learnt about the shuffled table of one level."""

    key: ShuffleKey
    starts: np.ndarray  # positions (in the shuffled order) of the group starts, by group key
    groups: int


class SortedTable:
    """The rows of a tree's training data, secretly sorted by their node at the current level.

    Parameters
    ----------
    engine : Engine
    onehot : shares (n, S * u)
        Each record's one-hot (attribute value, class) columns, column s * u + k
        for flat one-hot column s (attributes with their real widths, as
        :func:`~privet.learners._protocols.common.flat_one_hot`) and class k.
    sizes : domain sizes of the m attributes.
    n_classes : u.
    depth : h, the number of split levels the table will serve (>= 1).
    """

    def __init__(
        self,
        engine: Engine,
        onehot: np.ndarray,
        sizes: Sequence[int],
        n_classes: int,
        depth: int,
    ) -> None:
        if depth < 1:
            raise InvalidParameterError(f"a sorted table serves depth >= 1, got {depth}.")
        self.eng = engine
        self.sizes = [int(s) for s in sizes]
        self.m = len(self.sizes)
        self.u = int(n_classes)
        self.width = max(self.sizes)
        self.S = int(offsets(self.sizes)[-1])
        self.depth = int(depth)
        self.level = 0
        n = onehot.shape[0]
        digits = dummy_digits(self.width, depth - 1)  # (d, h - 1)
        d = digits.shape[0]
        self.n_dummies = d
        self.n_records = n
        # payload columns: one-hot (S u) | key | dummy digit one-hots of levels 0 .. h-2 (w each)
        w = self.width
        dummy_onehot = np.zeros((d, (depth - 1) * w), dtype=np.uint64)
        for i in range(depth - 1):
            dummy_onehot[np.arange(d), i * w + digits[:, i]] = 1
        dummies = np.hstack([np.zeros((d, self.S * self.u + 1), dtype=np.uint64), dummy_onehot])
        records = np.hstack(
            [
                np.asarray(onehot, dtype=np.uint64).reshape(n, self.S * self.u),
                np.zeros((n, 1 + (depth - 1) * w), dtype=np.uint64),
            ]
        )
        self.rows = np.vstack([dummies, records])  # shares (public dummies: constants)
        flat_attr = np.repeat(np.arange(self.m), self.sizes)
        starts = offsets(self.sizes)
        self.column_attribute = flat_attr  # attribute of each flat one-hot column
        self.column_value = np.arange(self.S) - starts[flat_attr]  # its value

    @property
    def n_rows(self) -> int:
        return int(self.rows.shape[0])

    @property
    def _onehot(self) -> np.ndarray:
        return self.rows[:, : self.S * self.u]

    @property
    def _key(self) -> np.ndarray:
        return self.rows[:, self.S * self.u]

    # -- one level ------------------------------------------------------------------
    async def counts(self, *, label: str) -> tuple[np.ndarray, LevelView]:
        """Shares of every group's counts (w**l, S * u) at the current level, group by key."""
        eng = self.eng
        groups = self.width**self.level
        key = self._key
        previous = np.empty_like(key)
        previous[0] = F.P - 1  # k_{-1} = -1, a public constant
        previous[1:] = key[:-1]
        start = F.sub(key, previous)
        inclusive = F.cumsum(self._onehot, axis=0)
        exclusive = F.sub(inclusive, self._onehot)
        total = inclusive[-1]
        table = np.hstack([start[:, None], key[:, None], exclusive])
        shuffled, shuffle_key = await eng.shuffle(table)
        flags = await eng.open(
            shuffled[:, 0], label=f"{label}: shuffled group starts {DATA_INDEPENDENT}"
        )
        assert flags is not None
        where = np.flatnonzero(flags == 1)
        if where.size != groups or np.any((flags != 0) & (flags != 1)):
            raise MPCError(
                f"{label}: {where.size} group starts opened where {groups} were expected; the "
                "table lost its order (a party deviated or the data broke an assumption)."
            )
        keys = await eng.open(
            shuffled[where, 1], label=f"{label}: keys of the group starts {DATA_INDEPENDENT}"
        )
        assert keys is not None
        if not np.array_equal(np.sort(keys), np.arange(groups)):
            raise MPCError(f"{label}: the opened group keys are not 0 .. {groups - 1}.")
        positions = np.empty(groups, dtype=np.int64)
        positions[keys] = where
        at_start = shuffled[positions, 2:]  # (groups, S u): E at each group's start
        following = np.vstack([at_start[1:], total[None, :]])
        return F.sub(following, at_start), LevelView(shuffle_key, positions, groups)

    async def gather(self, view: LevelView, values: np.ndarray) -> np.ndarray:
        """Shares, per row, of ``values[g]`` (shares or public field values, (groups, c)) of its group."""
        values = np.asarray(values, dtype=np.uint64).reshape(view.groups, -1)
        delta = F.sub(values, np.vstack([np.zeros((1, values.shape[1]), np.uint64), values[:-1]]))
        payload = np.zeros((self.n_rows, values.shape[1]), dtype=np.uint64)
        payload[view.starts] = delta
        back = await self.eng.unshuffle(view.key, payload)
        return F.cumsum(back, axis=0)

    async def advance(self, indicator: np.ndarray, *, label: str) -> None:
        """Sort the rows by their next key, given each row's attribute indicator (n', m) of its node."""
        if self.level + 1 >= self.depth:
            raise InvalidParameterError("the table is at its last split level already.")
        eng, w, level = self.eng, self.width, self.level
        n_rows = self.n_rows
        D = F.sum(self._onehot.reshape(n_rows, self.S, self.u), axis=2)  # (n', S)
        products = F.mul(indicator[:, self.column_attribute], D)  # K_a(s) D_s, degree 2t
        local = np.zeros((n_rows, w), dtype=np.uint64)
        for v in range(w):
            cols = np.flatnonzero(self.column_value == v)
            if cols.size:
                local[:, v] = F.sum(products[:, cols], axis=1)
        X = await eng.reshare(local)
        base = self.S * self.u + 1
        X = F.add(X, self.rows[:, base + level * w : base + (level + 1) * w])  # dummies' digits
        running = F.cumsum(X, axis=0)  # rows up to r with digit v
        totals = running[-1]
        before = F.sub(F.cumsum(totals), totals)  # rows with a smaller digit
        target = F.sub(F.add(running, before[None, :]), F.const(1))
        dest = await eng.reshare(F.sum(F.mul(X, target), axis=1))
        digit = F.sum(F.mul(X, np.arange(w, dtype=np.uint64)[None, :]), axis=1)
        key = F.add(self._key, F.mul(digit, F.const(w**level)))
        rows = self.rows.copy()
        rows[:, self.S * self.u] = key
        shuffled, _ = await eng.shuffle(np.hstack([rows, dest[:, None]]))
        places = await eng.open(
            shuffled[:, -1], label=f"{label}: shuffled sort destinations {DATA_INDEPENDENT}"
        )
        assert places is not None
        if not np.array_equal(np.sort(places), np.arange(n_rows)):
            raise MPCError(f"{label}: the opened destinations are not a permutation.")
        out = np.empty_like(rows)
        out[places] = shuffled[:, :-1]
        self.rows = out
        self.level += 1


__all__ = ["LevelView", "SortedTable", "dummy_digits"]
