"""The scope tree in memory: scopes, partition and subsample groups, charges,
reservations, and the composed cost of any subtree.

:class:`ScopeTree` is the model a :class:`~privet.ledger.Ledger` keeps of its
store's events; it computes costs and knows nothing of storage or budgets'
persistence. Costs are cached per scope and dropped along the path to the root
whenever something below changes.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privet.ledger.composition import (
    ZERO,
    Bound,
    Cost,
    Pair,
    amplify_cost,
    best_guarantee,
    group_pair,
    group_pair_arrays,
    sequential,
)
from privet.ledger.entries import Entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.pld import MIN_DELTA, PLDTooLargeError
from privet.ledger.pld_tree import EMPTY, ZERO_PAIR, PLDComposer, PLDPair
from privet.ledger.records import ChargeRecord
from privet.ledger.relation import NeighbouringRelation


@dataclass
class ReservationState:
    id: int
    amount: Guarantee
    status: str  # "open" | "closed"
    caller: str
    pid: int
    host: str
    created: float
    scope_id: int = 0
    #: The plan's own cost (every view of it), which the reservation holds while open;
    #: None: it holds its ``amount`` (a reservation of a bare (epsilon, delta), or one
    #: stored by a privet before format 3).
    cost: Cost | None = None
    #: The plan's privacy loss distributions (digest, pair), known to the process that
    #: reserved only (not stored): until it charges, the PLD check holds the plan at
    #: its scope; otherwise, and in other processes, its amount less what it used.
    pld: tuple[bytes, PLDPair] | None = None


#: Suffix of a reservation's caller when its unused rest is charged, not released, if its
#: process dies with it open (``Ledger.reserve(..., on_abandon="charge")``).
ABANDON_MARK = " [charged in full if abandoned]"


def reservation_cost(amount: Guarantee) -> Cost:
    # An (eps, delta) reservation composes as an approximate-DP release; only a
    # pure one also has the zCDP view.
    return Cost.of_guarantee(amount)


# Keys of the composed costs the tree caches per scope (see ScopeTree._pair):
ALL = "all"  # every committed charge: what has been spent
# ("check", rid): every committed charge plus the open reservations other than rid
# at their scopes: what the budget must cover when rid (or, for None, nobody) charges.


#: A partition with at least this many parts keeps its parts' costs in arrays
#: (:class:`_WideCosts`), so a charge in one part recomputes that part only; a
#: scope with at least this many groups below it (a DP-SGD run's thousands of
#: Poisson batches) keeps their contributions the same way.
WIDE = 64

#: A report keeps a bound spending less delta (pure DP, say) over the PLD accountant's
#: figure at the budget's delta unless that is smaller by more than this fraction.
PREFER_LESS_DELTA = 1e-3

#: How deep scopes may nest (the root is depth 0). Costs are composed by
#: recursion, a few Python frames a level; a decision tree's scopes are
#: tens of levels deep.
MAX_DEPTH = 128

#: Rows a block of :meth:`_WideCosts.sums` holds: a charge re-adds the block of
#: the row it changed and then the blocks' sums, about ``BLOCK + rows / BLOCK``
#: rows instead of all of them.
BLOCK = 128


@dataclass
class _WideCosts:
    """(single, double) costs in rows: the parts of a wide partition, or the
    contributions of the groups below a scope with many.

    A row whose cost may have changed since the rows were filled is ``stale``;
    a part or group with nothing charged (or, for a reservation's key, nothing
    charged in it) has a zero row, which changes neither the maximum, nor the
    sum of the two largest, nor the sum (costs are non-negative and a part's
    double is at least its single). Rows past the last part or group are
    spare room, zero too.
    """

    single: np.ndarray
    double: np.ndarray
    stale: set[int]
    #: Per block of :data:`BLOCK` rows, the column sums of ``single`` and ``double``
    #: (used by :meth:`sums` only), and the blocks whose rows changed since.
    block_single: np.ndarray | None = None
    block_double: np.ndarray | None = None
    dirty: set[int] = field(default_factory=set)

    @staticmethod
    def empty(rows: int, width: int) -> _WideCosts:
        return _WideCosts(np.zeros((rows, width)), np.zeros((rows, width)), set(range(rows)))

    def grow(self, rows: int) -> None:
        """Make room for at least ``rows`` rows (doubling), the new ones stale."""
        have = self.single.shape[0]
        if rows <= have:
            return
        new = max(rows, 2 * have)
        pad = np.zeros((new - have, self.single.shape[1]))
        self.single = np.vstack([self.single, pad])
        self.double = np.vstack([self.double, pad])
        self.stale.update(range(have, rows))
        self.block_single = self.block_double = None  # the blocks are laid out again

    def sums(self, changed: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Column sums of both arrays, re-adding the blocks of the ``changed`` rows only.

        Every block is always summed the same way (its rows in order), so the
        result depends on the rows alone, never on which of them changed when:
        a ledger reopened from its file gets the same figures as the live one.
        """
        if self.block_single is None or self.block_double is None:
            n_blocks = -(-self.single.shape[0] // BLOCK)
            self.block_single = np.zeros((n_blocks, self.single.shape[1]))
            self.block_double = np.zeros_like(self.block_single)
            self.dirty = set(range(n_blocks))
        self.dirty.update(row // BLOCK for row in changed)
        for b in self.dirty:
            self.block_single[b] = self.single[b * BLOCK : (b + 1) * BLOCK].sum(axis=0)
            self.block_double[b] = self.double[b * BLOCK : (b + 1) * BLOCK].sum(axis=0)
        self.dirty.clear()
        return self.block_single.sum(axis=0), self.block_double.sum(axis=0)


@dataclass
class _RowCosts:
    """The (single, double) contributions of a scope's many groups (a DP-SGD run's
    thousands of Poisson batches), one row per group, summed in blocks of
    :data:`BLOCK` rows like :meth:`_WideCosts.sums`. Rows hold the costs themselves (a
    run's batches share a handful of cost objects), not copies of their statistics:
    100,000 batches take a pointer each, where rows of floats took 700 bytes."""

    single: list[Cost] = field(default_factory=list)
    double: list[Cost] = field(default_factory=list)
    stale: set[int] = field(default_factory=set)
    block_single: list[np.ndarray] = field(default_factory=list)
    block_double: list[np.ndarray] = field(default_factory=list)
    dirty: set[int] = field(default_factory=set)

    def grow(self, rows: int) -> None:
        """Make room for ``rows`` rows, the new ones stale."""
        have = len(self.single)
        if rows > have:
            self.single.extend([ZERO] * (rows - have))
            self.double.extend([ZERO] * (rows - have))
            self.stale.update(range(have, rows))

    def sums(self, changed: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Column sums of both, re-adding the blocks of the ``changed`` rows only; every
        block is summed the same way (its rows in order), so the result depends on the
        rows alone (a reopened ledger gets the live ledger's figures)."""
        n_blocks = -(-len(self.single) // BLOCK)
        while len(self.block_single) < n_blocks:
            self.dirty.add(len(self.block_single))
            self.block_single.append(np.zeros(len(ZERO.v)))
            self.block_double.append(np.zeros(len(ZERO.v)))
        self.dirty.update(row // BLOCK for row in changed)
        for b in self.dirty:
            rows = slice(b * BLOCK, (b + 1) * BLOCK)
            self.block_single[b] = np.array([c.v for c in self.single[rows]]).sum(axis=0)
            self.block_double[b] = np.array([c.v for c in self.double[rows]]).sum(axis=0)
        self.dirty.clear()
        if not self.block_single:
            return np.zeros(len(ZERO.v)), np.zeros(len(ZERO.v))
        return np.sum(self.block_single, axis=0), np.sum(self.block_double, axis=0)


@dataclass
class _PLDRows:
    """The PLD contributions of a scope's many groups (a DP-SGD run's batches), per row:
    a charge in one group recomposes that group only, and the scope's items are kept
    counted by digest."""

    digests: list[bytes] = field(default_factory=list)
    pairs: dict[bytes, PLDPair] = field(default_factory=dict)
    counts: Counter[bytes] = field(default_factory=Counter)
    stale: set[int] = field(default_factory=set)


@dataclass(slots=True)
class _Group:
    id: int
    parent: int
    kind: str  # "partition" | "subsample"
    row: int  # its place in the parent's ``groups``
    stable: bool = False
    rate: float = 1.0
    method: str = ""
    members: list[int] = field(default_factory=list)
    position: dict[int, int] = field(default_factory=dict)  # member id -> row
    wide: dict[Any, _WideCosts] = field(default_factory=dict)  # per cache key


@dataclass(slots=True)
class _Node:
    id: int
    parent: int | None
    group: int | None
    label: str
    path: str
    depth: int = 0
    own_all: Cost = ZERO  # every committed charge here, summed in charge order
    own: dict[int, Cost] = field(default_factory=dict)  # charges of open reservations
    groups: list[int] = field(default_factory=list)
    group_rows: dict[Any, _RowCosts] = field(default_factory=dict)  # per key, many groups
    buckets: set[int] = field(default_factory=set)  # open reservations charged below
    active: bool = False  # anything charged or reserved here or below
    charges: list[int] = field(default_factory=list)
    reserved: dict[int, Cost] = field(default_factory=dict)  # open reservations here
    pending: list[tuple[Entry, int | None]] = field(default_factory=list)  # charges on trial
    pld_rows: dict[Any, _PLDRows] = field(default_factory=dict)  # per key, many groups


class ScopeTree:
    """The in-memory model of one dataset's scopes, charges and reservations."""

    budget: Guarantee
    relation: NeighbouringRelation
    dataset: str

    def _init_tree(self, root_id: int) -> None:
        self._nodes: dict[int, _Node] = {}
        self._groups: dict[int, _Group] = {}
        self._charges: dict[int, ChargeRecord] = {}
        self._reservations: dict[int, ReservationState] = {}
        self._cache: dict[int, dict[Any, Pair]] = {}
        self._placed = 0  # reservations held at their scopes (the open ones, and a trial)
        self._paths: set[str] = set()
        self._root_id = self._new_node_local(root_id, None, None, self.dataset, self.dataset)

    def _new_node_local(
        self, node_id: int, parent: int | None, group: int | None, label: str, path: str
    ) -> int:
        depth = 0 if parent is None else self._nodes[parent].depth + 1
        self._nodes[node_id] = _Node(node_id, parent, group, label, path, depth)
        self._paths.add(path)
        return node_id

    def _apply_group(
        self,
        group_id: int,
        parent: int,
        kind: str,
        members: list[tuple[int, str]],
        *,
        stable: bool = False,
        rate: float = 1.0,
        method: str = "",
    ) -> list[int]:
        parent_node = self._nodes[parent]
        kind, method = sys.intern(kind), sys.intern(method)  # a run's groups share them
        group = _Group(group_id, parent, kind, len(parent_node.groups), stable, rate, method)
        self._groups[group_id] = group
        parent_node.groups.append(group_id)
        for node_id, label in members:
            label = sys.intern(label)
            path = (
                f"{parent_node.path}/{label}"
                if kind == "partition"
                else (f"{parent_node.path}/[{label}]")
            )
            path = f"{path}#{group_id}" if path in self._paths else path
            self._new_node_local(node_id, parent, group_id, label, path)
            if len(members) > 1:  # a subsample's one member is row 0 (no dict kept)
                group.position[node_id] = len(group.members)
            group.members.append(node_id)
        # One more group can switch the parent to summing its groups' rows, another order
        # of the same additions: recompute, so that a replay gives the same figures.
        cur: int | None = parent
        while cur is not None:
            self._invalidate(self._nodes[cur])
            cur = self._nodes[cur].parent
        return group.members

    def unstable_part_above(self, node_id: int) -> str | None:
        """The path of the nearest part of a non-stable partition at or above ``node_id``
        (a scope a replaced record can leave or enter), or None."""
        cur: int | None = node_id
        while cur is not None:
            node = self._nodes[cur]
            if node.group is not None:
                group = self._groups[node.group]
                if group.kind == "partition" and not group.stable:
                    return node.path
            cur = node.parent
        return None

    def _is_open(self, reservation: int | None) -> bool:
        state = self._reservations.get(reservation) if reservation is not None else None
        return state is not None and state.status == "open"

    def _apply_charge(self, record: ChargeRecord) -> None:
        """Add a committed charge to the in-memory model (in charge-id order)."""
        self._charges[record.id] = record
        rid = record.reservation if self._is_open(record.reservation) else None
        self._add_cost(record.scope_id, Cost.of(record.entry), rid)
        self._nodes[record.scope_id].charges.append(record.id)

    def _add_cost(self, node_id: int, cost: Cost, rid: int | None) -> None:
        node = self._nodes[node_id]
        node.own_all = node.own_all + cost
        if rid is not None:
            node.own[rid] = node.own.get(rid, ZERO) + cost
        self._touch(node_id, rid)

    def _touch(self, node_id: int, rid: int | None) -> None:
        """Mark the path to the root active (and holding rid) and drop its caches."""
        cur: int | None = node_id
        while cur is not None:
            n = self._nodes[cur]
            n.active = True
            if rid is not None:
                n.buckets.add(rid)
            self._invalidate(n)
            cur = n.parent

    def _invalidate(self, node: _Node) -> None:
        """Drop a node's cached costs, and its row in its partition's arrays."""
        self._cache.pop(node.id, None)
        if node.group is not None:
            group = self._groups[node.group]
            for wide in group.wide.values():
                wide.stale.add(group.position.get(node.id, 0))
            parent = self._nodes[group.parent]
            for rows in parent.group_rows.values():
                rows.stale.add(group.row)
            for pld_rows in parent.pld_rows.values():
                pld_rows.stale.add(group.row)

    def _cost(self, node_id: int, key: Any = ALL, only: int | None = None) -> Cost:
        """Composed cost of a subtree (the ``double`` cost, see composition.group_pair).

        ``key`` is :data:`ALL` (every committed charge), ``("check", rid)`` (the
        budget check) or a reservation id (its own charges). With ``only`` set,
        count the charges made inside that reservation, open or closed.
        """
        if only is not None:
            return self._pair_filtered(node_id, lambda rec: rec.reservation == only)[1]
        return self._pair(node_id, key)[1]

    def _pair(self, node_id: int, key: Any) -> Pair:
        """(single, double) cost of a subtree (see composition.group_pair).

        One merged tree: settled charges and the charges of open reservations
        compose together, because amplification and the replace-one rule are
        not additive (two trees added up can under-count a subsample).
        """
        node = self._nodes[node_id]
        if not node.groups and not node.reserved and key == ALL:  # a leaf: nothing to keep
            return node.own_all, node.own_all
        node_cache = self._cache.setdefault(node_id, {})
        cached = node_cache.get(key)
        if cached is not None:
            return cached
        if isinstance(key, tuple):  # ("check", excluded reservation)
            rests = [self._reservation_rest(r) for r in node.reserved if r != key[1]]
            own = sequential([node.own_all, *rests])
        elif key == ALL:
            own = node.own_all
        else:
            own = node.own.get(key, ZERO)
        if len(node.groups) >= WIDE:
            s, d = self._rows_pair(node, key)
            single = own + s
            double = single if s == d else own + d
        else:
            single, double = own, own
            for gid in node.groups:
                contribution = self._contribution(self._groups[gid], key)
                if contribution is None:
                    continue
                s, d = contribution
                if single is double and s is d:  # add/remove: one cost, one addition
                    single = double = single + s
                else:
                    single, double = single + s, double + d
        pair = (single, double)
        node_cache[key] = pair
        return pair

    def _contribution(self, group: _Group, key: Any) -> Pair | None:
        """(single, double) that a group adds to its parent's cost; None for nothing."""
        if group.kind == "partition" and len(group.members) >= WIDE:
            return self._wide_pair(group, key)
        members = [m for m in group.members if self._counts(m, key)]
        if not members:
            return None
        pairs = [self._pair(m, key) for m in members]
        if group.kind == "partition" and len(pairs) == 1 < len(group.members):
            # a record can leave for a part with nothing charged: its single still counts
            # (above its double below a sample of fixed size, see _group_pair)
            pairs.append((ZERO, ZERO))
        return self._group_pair(pairs, group)

    def _rows_pair(self, node: _Node, key: Any) -> Pair:
        """The summed contributions of a scope's many groups, recomputing stale rows only.

        Without the rows every charge under a DP-SGD run's root would add up
        all its earlier batches again (quadratic in the number of steps).
        """
        rows = node.group_rows.get(key)
        if rows is None:
            rows = node.group_rows[key] = _RowCosts()
        rows.grow(len(node.groups))
        for row in rows.stale:
            contribution = self._contribution(self._groups[node.groups[row]], key)
            if contribution is None:
                rows.single[row] = rows.double[row] = ZERO
            else:
                rows.single[row], rows.double[row] = contribution
        single, double = rows.sums(rows.stale)
        rows.stale.clear()
        return Cost.from_values(single.tolist()), Cost.from_values(double.tolist())

    def _counts(self, node_id: int, key: Any) -> bool:
        """Whether a subtree can have a non-zero cost under ``key``."""
        node = self._nodes[node_id]
        return key in node.buckets if isinstance(key, int) else node.active

    def _wide_pair(self, group: _Group, key: Any) -> Pair:
        """:func:`group_pair` of a wide partition, recomputing only its stale parts.

        Many parts (a forest's trees) would make every charge cost a pass over
        all of them; the rows of the parts that did not change are kept.
        """
        wide = group.wide.get(key)
        if wide is None:
            wide = _WideCosts.empty(len(group.members), len(ZERO.values()))
            group.wide[key] = wide
        for row in wide.stale:
            member = group.members[row]
            if self._counts(member, key):
                s, d = self._pair(member, key)
                wide.single[row], wide.double[row] = s.values(), d.values()
            else:
                wide.single[row] = wide.double[row] = 0.0
        wide.stale.clear()
        return group_pair_arrays(wide.single, wide.double, self.relation, stable=group.stable)

    def _group_pair(self, pairs: list[Pair], group: _Group) -> Pair:
        if group.kind == "partition":
            return group_pair(pairs, self.relation, stable=group.stable)
        single, double = pairs[0]
        if group.method == "without_replacement":
            # m of n is a fixed size: a record that leaves or enters the parent (a replaced
            # record moving between the parts of a partition above) swaps places in the
            # sample with another record of the parent, anywhere below (in another part of
            # a stable partition too): two records, each at most a single chain
            return self._amplified(single + single, group), self._amplified(double, group)
        amp_single = self._amplified(single, group)
        amp_double = amp_single if double is single else self._amplified(double, group)
        return amp_single, amp_double

    def _pair_filtered(self, node_id: int, keep: Callable[[ChargeRecord], bool]) -> Pair:
        node = self._nodes[node_id]
        own = sequential(
            Cost.of(self._charges[c].entry) for c in node.charges if keep(self._charges[c])
        )
        single, double = own, own
        for gid in node.groups:
            group = self._groups[gid]
            pairs = [self._pair_filtered(m, keep) for m in group.members]
            if group.kind != "partition" and pairs[0][1].is_zero:
                continue
            s, d = self._group_pair(pairs, group)
            single, double = single + s, double + d
        return single, double

    def _amplified(self, child: Cost, group: _Group) -> Cost:
        return amplify_cost(child, group.rate, group.method, self.relation, self.budget.delta)

    def _open_reservations(self) -> list[ReservationState]:
        return [r for r in self._reservations.values() if r.status == "open"]

    def _bound_all(self, need: Guarantee | None = None) -> Bound:
        """Bound of every committed charge, whether or not its reservation is open."""
        return self._best(ALL, need=need)

    def _best(
        self,
        key: Any,
        *,
        delta: float | None = None,
        need: Guarantee | None = None,
        smallest: bool = False,
    ) -> Bound:
        """The smallest bound of the subtree at the root under ``key`` that the views of
        :func:`best_guarantee` or the PLD accountant prove at ``delta`` (the budget's).

        The PLD is formed only when the other views do not already show the cost to
        fit in ``need`` (a check), so a check far from the budget stays cheap. With
        ``smallest``, the smallest epsilon wins even where it spends more delta.
        """
        delta = self.budget.delta if delta is None else delta
        bound = best_guarantee(self._cost(self._root_id, key), delta)
        if need is not None and bound.guarantee.fits_in(need):
            return bound
        if need is not None and delta >= MIN_DELTA:
            quick = self._pld_headroom(self._root_id, key, delta, need)
            if quick is not None:
                return quick
        build = lambda: self._pld_node(self._root_id, key)  # noqa: E731
        return self._with_pld(bound, build, delta, check=need is not None or smallest)

    def _pld_headroom(self, node_id: int, key: Any, delta: float, need: Guarantee) -> Bound | None:
        """A check by the PLD accountant without recomposing the whole tree, where it can.

        The last check that composed the tree T keeps T's PLD pair and its root's items
        (:meth:`_pld_check`). A check of T plus releases A added at the root (a DP-SGD
        run's next Poisson batches, a boosting run's next trees) composes T's pair with
        A's: one convolution, where recomposing T would redo all of them. Anything else
        (a change below the root, a release gone) composes the tree again. The pair so
        kept is rounded differently from the tree composed in its canonical order, so it
        serves checks only; reported figures always compose the tree.
        """
        cached = self._pld_last_check.get((node_id, key))
        if cached is None or cached[0] != delta:
            return self._pld_check(node_id, key, delta, need)
        _, counts, last, ahead = cached
        try:
            items = self._pld_items(node_id, key)
        except PLDTooLargeError:
            return None
        now = {d: c for d, (_, c) in items.items()}
        if any(now.get(d, 0) < c for d, c in counts.items()):
            return self._pld_check(node_id, key, delta, need)
        added = {d: (items[d][0], now[d] - counts.get(d, 0)) for d in now}
        added = {d: v for d, v in added.items() if v[1] > 0}
        if ahead is not None and len(added) == 1:
            # a run of identical releases already checked ahead (see below)
            (d, (_, j)), (d_ahead, j_ahead, eps_ahead) = next(iter(added.items())), ahead
            if d == d_ahead and j <= j_ahead and eps_ahead <= need.epsilon:
                return Bound(Guarantee(eps_ahead, delta), "pld")
        composer = self.pld_composer
        try:
            _, more = composer.sequence(added)
            pair = composer.then(last, more)
        except PLDTooLargeError:
            return None
        eps = composer.epsilon(pair, delta)
        if eps > need.epsilon or delta > need.delta:
            return None
        ahead = None
        if len(added) == 1:
            # One release more of a kind, as a DP-SGD run charges them: check 2, 4, 8, ...
            # more at once while they fit, so that the next checks of the run pass without
            # a convolution (a composition of fewer is dominated by one of more).
            (d, (p, j)) = next(iter(added.items()))
            reach = j
            while reach < 4096:
                try:
                    _, step = composer.sequence({d: (p, 2 * reach)})
                    e2 = composer.epsilon(composer.then(last, step), delta)
                except PLDTooLargeError:
                    break
                if e2 > need.epsilon:
                    break
                reach, ahead = 2 * reach, (d, 2 * reach, e2)
        self._pld_last_check[(node_id, key)] = (delta, counts, last, ahead)
        if ahead is None:
            self._pld_last_check[(node_id, key)] = (delta, now, pair, None)
        return Bound(Guarantee(eps, delta), "pld")

    def _pld_check(self, node_id: int, key: Any, delta: float, need: Guarantee) -> Bound | None:
        """Compose the whole subtree for a check; keep its pair and items for the next."""
        try:
            items = self._pld_items(node_id, key)
            _, pair = self.pld_composer.sequence(items)
        except PLDTooLargeError:
            return None
        eps = self.pld_composer.epsilon(pair, delta)
        if eps <= need.epsilon and delta <= need.delta:
            counts = {d: c for d, (_, c) in items.items()}
            self._pld_last_check[(node_id, key)] = (delta, counts, pair, None)
            return Bound(Guarantee(eps, delta), "pld")
        return None

    def _with_pld(
        self,
        bound: Bound,
        build: Callable[[], tuple[bytes, PLDPair]],
        delta: float,
        *,
        check: bool = False,
        cap: float | None = None,
    ) -> Bound:
        """``bound``, or the PLD accountant's figure at ``delta`` where it is smaller.

        A report keeps a bound that spends less delta (pure DP, say) unless the PLD's
        epsilon is smaller by more than :data:`PREFER_LESS_DELTA`, or unless that bound
        is over ``cap`` (default: the budget's epsilon; a reservation's amount for what
        it used) where the PLD's figure is not: the checks admit on the PLD's figure, so
        a report that kept the pure one would say an admitted charge overspent (a
        fuzzer's example: Exponential(epsilon=2.00001) on a budget of (2, 1e-6),
        admitted at the PLD's 1.99816, reported as (2.00001, 0)). A check (``check``)
        takes the smaller epsilon.
        """
        if delta < MIN_DELTA:
            return bound
        eps = self._pld_epsilon(build, delta)
        if eps >= bound.guarantee.epsilon * (1 - 1e-12):
            return bound
        less_delta = bound.guarantee.delta < delta
        cap = self.budget.epsilon if cap is None else cap
        fits = bound.guarantee.epsilon <= cap or eps > cap
        prefer = less_delta and fits and eps > bound.guarantee.epsilon * (1 - PREFER_LESS_DELTA)
        if prefer and not check:
            return bound
        return Bound(Guarantee(eps, delta), "pld")

    def _pld_epsilon(self, build: Callable[[], tuple[bytes, PLDPair]], delta: float) -> float:
        """The PLD accountant's epsilon at ``delta``; inf where it forms no PLD."""
        if delta < MIN_DELTA:
            return math.inf
        try:
            _, pair = build()
        except PLDTooLargeError:
            return math.inf
        return self.pld_composer.epsilon(pair, delta)

    def _used(self, rid: int, need: Guarantee | None = None) -> Bound:
        """The bound of the charges made inside reservation ``rid`` (open or closed), at
        its own delta, measured at its scope."""
        state = self._reservations[rid]
        delta = state.amount.delta
        if self._is_open(rid):
            bound = best_guarantee(self._cost(state.scope_id, rid), delta)
            build = lambda: self._pld_node(state.scope_id, rid)  # noqa: E731
        else:
            bound = best_guarantee(self._cost(state.scope_id, only=rid), delta)
            keep = lambda rec: rec.reservation == rid  # noqa: E731
            build = lambda: self._pld_node(state.scope_id, None, keep)  # noqa: E731
        if need is not None and bound.guarantee.fits_in(need):
            return bound
        if need is not None and self._is_open(rid) and delta >= MIN_DELTA:
            quick = self._pld_headroom(state.scope_id, rid, delta, need)
            if quick is not None:
                return quick
        return self._with_pld(bound, build, delta, check=need is not None, cap=state.amount.epsilon)

    # ------------------------------------------------------------------ PLD view
    @property
    def pld_composer(self) -> PLDComposer:
        composer = getattr(self, "_pld", None)
        if composer is None or composer.relation is not self.relation:
            composer = self._pld = PLDComposer(self.relation)
            self._pld_last_check = {}
        return composer

    @property
    def _pld_last_check(self) -> dict[Any, tuple]:
        """Per (scope, check key): (delta, the scope's item counts, its PLD pair, and what
        was checked ahead of them or None) of the last check that fitted
        (:meth:`_pld_headroom`)."""
        cache = getattr(self, "_pld_checks", None)
        if cache is None:
            cache = self._pld_checks = {}
        return cache

    @_pld_last_check.setter
    def _pld_last_check(self, value: dict) -> None:
        self._pld_checks = value

    def _pld_node(
        self, node_id: int, key: Any, keep: Callable[[ChargeRecord], bool] | None = None
    ) -> tuple[bytes, PLDPair]:
        """(digest, PLD pair) of a subtree under ``key`` (as :meth:`_pair`), or of the
        charges ``keep`` accepts (no caching of the walk then)."""
        composer = self.pld_composer
        node = self._nodes[node_id]
        leaf = not node.groups and len(node.charges) <= 8  # cheap again: not kept
        node_cache = self._cache.setdefault(node_id, {}) if keep is None and not leaf else {}
        digest = node_cache.get(("pld", key))
        if digest is not None:
            pair = ZERO_PAIR if digest == EMPTY else composer.get(digest)
            if pair is not None:
                return digest, pair
        digest, pair = composer.sequence(self._pld_items(node_id, key, keep))
        if keep is None:
            node_cache[("pld", key)] = digest
        return digest, pair

    def _pld_items(
        self, node_id: int, key: Any, keep: Callable[[ChargeRecord], bool] | None = None
    ) -> dict[bytes, tuple[PLDPair, int]]:
        """What a scope composes in sequence: its releases and its groups, by digest."""
        composer = self.pld_composer
        node = self._nodes[node_id]
        items: dict[bytes, tuple[PLDPair, int]] = {}

        def add(d: bytes, p: PLDPair, count: int = 1) -> None:
            if d != EMPTY and count:
                old = items.get(d)
                items[d] = (p, count + (old[1] if old else 0))

        if keep is None and not isinstance(key, int):
            counts: Counter[Entry] = Counter(self._charges[c].entry for c in node.charges)
            for entry, count in counts.items():
                add(*composer.entry(entry), count)
            for entry, _ in node.pending:
                add(*composer.entry(entry))
        else:
            for entry in self._pld_entries(node, key, keep):
                add(*composer.entry(entry))
        if keep is None and isinstance(key, tuple):
            for rid in node.reserved:
                if rid != key[1]:
                    add(*self._pld_rest(rid))
        if keep is None and len(node.groups) >= WIDE:
            rows = node.pld_rows.setdefault(key, _PLDRows())
            for row in range(len(rows.digests), len(node.groups)):
                rows.digests.append(EMPTY)
                rows.stale.add(row)
            for row in rows.stale:
                d, p = self._pld_group(self._groups[node.groups[row]], key, None)
                old = rows.digests[row]
                if old != EMPTY:
                    rows.counts[old] -= 1
                    if not rows.counts[old]:
                        del rows.counts[old], rows.pairs[old]
                rows.digests[row] = d
                if d != EMPTY:
                    rows.counts[d] += 1
                    rows.pairs[d] = p
            rows.stale.clear()
            for d, count in rows.counts.items():
                add(d, rows.pairs[d], count)
            return items
        for gid in node.groups:
            add(*self._pld_group(self._groups[gid], key, keep))
        return items

    def _pld_group(
        self, group: _Group, key: Any, keep: Callable[[ChargeRecord], bool] | None
    ) -> tuple[bytes, PLDPair]:
        """(digest, pair) a group adds to its parent's sequence; EMPTY for nothing."""
        composer = self.pld_composer
        members = (
            group.members
            if keep is not None
            else [m for m in group.members if self._counts(m, key)]
        )
        if not members:
            return EMPTY, ZERO_PAIR
        if group.kind == "partition":
            digests: Counter[bytes] = Counter()
            pairs: dict[bytes, PLDPair] = {}
            for m in members:
                d, p = self._pld_node(m, key, keep)
                digests[d] += 1
                pairs[d] = p
            return composer.partition(digests, pairs, len(group.members), group.stable)
        d, p = self._pld_node(members[0], key, keep)
        return composer.subsample(d, p, group.rate, group.method)

    def _pld_entries(
        self, node: _Node, key: Any, keep: Callable[[ChargeRecord], bool] | None
    ) -> Iterator[Entry]:
        """The entries a subtree's PLD composes at ``node`` under ``key``."""
        if keep is not None:
            yield from (self._charges[c].entry for c in node.charges if keep(self._charges[c]))
            return
        if isinstance(key, int):
            for c in node.charges:
                rec = self._charges[c]
                if rec.reservation == key and self._is_open(key):
                    yield rec.entry
            yield from (e for e, rid in node.pending if rid == key)
            return
        yield from (self._charges[c].entry for c in node.charges)
        yield from (e for e, _ in node.pending)

    def _pld_rest(self, rid: int) -> tuple[bytes, PLDPair]:
        """What an open reservation stands for in the PLD check: its plan's PLD while it
        has charged nothing (in the process that reserved), else its amount less what
        it has used, as an (epsilon, delta) release. Only a stand-in for its future
        charges: every charge is checked against the merged tree of committed ones."""
        state = self._reservations[rid]
        started = rid in self._nodes[state.scope_id].buckets
        if state.pld is not None and not started:
            return state.pld
        rest = self._reservation_rest(rid)
        g = best_guarantee(rest, state.amount.delta).guarantee
        if g.epsilon == 0.0 and g.delta == 0.0:
            return EMPTY, ZERO_PAIR
        return self.pld_composer.approx(g.epsilon, min(g.delta, 1 - 1e-16))

    def _subtree_cost(self, node_id: int) -> Cost:
        return self._cost(node_id, ALL)

    def _reservation_rest(self, rid: int) -> Cost:
        """What an open reservation may still charge: its plan's cost less the cost of its
        charges, statistic by statistic, or (held as an amount) its amount less what it used.

        Only a stand-in for future charges (keeping room for them); safety does
        not rest on it, because every charge is checked against the merged tree
        of all committed charges.
        """
        state = self._reservations[rid]
        if state.cost is not None:  # the plan's cost less its charges so far, statistic-wise
            return state.cost.less(self._cost(state.scope_id, rid))
        used = best_guarantee(self._cost(state.scope_id, rid), state.amount.delta).guarantee
        rest = Guarantee(
            max(0.0, state.amount.epsilon - used.epsilon),
            max(0.0, state.amount.delta - used.delta),
        )
        return reservation_cost(rest)

    def _global_bound(self, exclude: int | None = None, need: Guarantee | None = None) -> Bound:
        """Every committed charge (one merged tree) plus, at their scopes, what the
        open reservations other than ``exclude`` may still charge: what the
        budget must cover."""
        # With no reservation held but ``exclude``'s, the check is every committed
        # charge: the costs already kept under ALL, not a whole new composition.
        settled = self._best(ALL, need=need)
        others = self._placed - (exclude is not None and self._is_placed(exclude))
        if not others:
            return settled
        # Never below the committed charges' own bound: under a subsample, a held cost
        # with no basic epsilon (a Gaussian plan's) switches the amplification to the
        # best bound of everything below, which can be smaller than what the committed
        # charges alone are proven to cost.
        check = self._best(("check", exclude), need=need)
        c, s = check.guarantee, settled.guarantee
        if c.epsilon >= s.epsilon and c.delta >= s.delta:
            return check
        if s.epsilon >= c.epsilon and s.delta >= c.delta:
            return settled
        worst = Guarantee(max(c.epsilon, s.epsilon), max(c.delta, s.delta))
        methods = dict.fromkeys([check.method, settled.method])
        return Bound(worst, " and ".join(methods))

    def _is_placed(self, rid: int) -> bool:
        state = self._reservations.get(rid)
        node = self._nodes.get(state.scope_id) if state is not None else None
        return node is not None and rid in node.reserved

    @contextlib.contextmanager
    def _tentative(
        self, node_id: int, cost: Cost, rid: int | None, entry: Entry | None = None
    ) -> Iterator[None]:
        """Add a charge's cost (and its entry, for the PLD view) for the duration of a
        check, then restore the model exactly."""
        node = self._nodes[node_id]
        old_all, old_rid = node.own_all, node.own.get(rid) if rid is not None else None
        if entry is not None:
            node.pending.append((entry, rid))
        path = []
        cur: int | None = node_id
        while cur is not None:
            n = self._nodes[cur]
            path.append((n, n.active, rid in n.buckets))
            cur = n.parent
        self._add_cost(node_id, cost, rid)
        try:
            yield
        finally:
            if entry is not None:
                node.pending.pop()
            node.own_all = old_all
            if rid is not None:
                if old_rid is None:
                    node.own.pop(rid, None)
                else:
                    node.own[rid] = old_rid
            for n, active, had_rid in path:
                n.active = active
                if rid is not None and not had_rid:
                    n.buckets.discard(rid)
                self._invalidate(n)

    def _place_reservation(self, node_id: int, rid: int, amount: Guarantee) -> None:
        reserved = self._nodes[node_id].reserved
        self._placed += rid not in reserved
        reserved[rid] = reservation_cost(amount)
        self._touch(node_id, None)

    def _unplace_reservation(self, node_id: int, rid: int) -> None:
        self._placed -= self._nodes[node_id].reserved.pop(rid, None) is not None
        self._touch(node_id, None)

    def _mark_closed(self, rid: int) -> None:
        """Close a reservation: its amount leaves the check; its charges stay in ALL."""
        state = self._reservations[rid]
        if state.status == "closed":
            return
        state.status = "closed"
        if state.scope_id in self._nodes:
            self._unplace_reservation(state.scope_id, rid)
        # Unplacing touched the path from its scope to the root, where the checks held
        # its rest. Elsewhere only what was kept under its own keys goes: the costs of
        # committed charges (ALL) and the other reservations' checks stay valid, so the
        # next check does not recompose the whole tree.
        gone = (rid, ("check", rid), ("pld", rid), ("pld", ("check", rid)))
        for k in [k for k in self._pld_last_check if k[1] in gone]:
            del self._pld_last_check[k]
        for node in self._nodes.values():
            node.own.pop(rid, None)
            node.buckets.discard(rid)
            for key in gone:
                node.group_rows.pop(key, None)
                node.pld_rows.pop(key, None)
        for cache in self._cache.values():
            for key in gone:
                cache.pop(key, None)
        for group in self._groups.values():
            for key in gone:
                group.wide.pop(key, None)
