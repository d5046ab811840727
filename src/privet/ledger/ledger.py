"""The privacy ledger: scopes, charges, reservations and the budget check.

Every private data access is charged to a :class:`Scope`. Scopes form a tree
that mirrors how the data is split (see :mod:`privet.ledger.composition` for the
rules); the ledger composes the tree and refuses any charge or reservation that
would take the total over the budget *before* the caller touches data.

Reservations. ``with ledger.reserve(plan):`` sets aside the planned cost. While
the reservation is open, charges made inside it are checked against the
reservation, and everyone else sees the full reserved amount as spent. When the
block exits (normally or by an exception) the reservation closes: the charges
made in it stay (charged means released), the unused rest returns to the budget.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import numbers
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from privet.errors import BudgetExceededError, InvalidParameterError, PrivetError
from privet.ledger.composition import (
    ZERO,
    Bound,
    Cost,
    Pair,
    amplify_cost,
    best_guarantee,
    check_sampling,
    group_pair,
    sequential,
)
from privet.ledger.entries import Claim, Entry, NonPrivate, as_entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.plan import PlanNode
from privet.ledger.relation import NeighbouringRelation, check_relation

# Keys of the composed costs the ledger caches per scope (see Ledger._pair):
ALL = "all"  # every committed charge: what has been spent
# ("check", rid): every committed charge plus the open reservations other than rid
# at their scopes: what the budget must cover when rid (or, for None, nobody) charges.


@dataclass(frozen=True, slots=True)
class ChargeRecord:
    """One committed charge, as stored.

    ``relation`` is the neighbouring relation the mechanism's analysis assumed,
    ``sensitivity`` the sensitivity it was calibrated for, ``caller``/``step``
    the learner and the step of its algorithm that charged it.
    """

    id: int
    scope_id: int
    path: str
    entry: Entry
    mechanism: str
    sensitivity: float | None
    relation: str
    caller: str
    step: str
    claim: Claim | None
    timestamp: float
    reservation: int | None

    @property
    def guarantee(self) -> Guarantee:
        return self.entry.guarantee()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope_id": self.scope_id,
            "path": self.path,
            "entry": self.entry.to_dict(),
            "mechanism": self.mechanism,
            "sensitivity": self.sensitivity,
            "relation": self.relation,
            "caller": self.caller,
            "step": self.step,
            "claim": None if self.claim is None else self.claim.to_dict(),
            "timestamp": self.timestamp,
            "reservation": self.reservation,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ChargeRecord:
        return ChargeRecord(
            id=d["id"],
            scope_id=d["scope_id"],
            path=d["path"],
            entry=Entry.from_dict(d["entry"]),
            mechanism=d["mechanism"],
            sensitivity=d["sensitivity"],
            relation=d["relation"],
            caller=d["caller"],
            step=d["step"],
            claim=None if d["claim"] is None else Claim.from_dict(d["claim"]),
            timestamp=d["timestamp"],
            reservation=d["reservation"],
        )


@dataclass
class _Group:
    id: int
    parent: int
    kind: str  # "partition" | "subsample"
    stable: bool = False
    rate: float = 1.0
    method: str = ""
    members: list[int] = field(default_factory=list)


@dataclass
class _Node:
    id: int
    parent: int | None
    group: int | None
    label: str
    path: str
    own_all: Cost = ZERO  # every committed charge here, summed in charge order
    own: dict[int, Cost] = field(default_factory=dict)  # charges of open reservations
    groups: list[int] = field(default_factory=list)
    buckets: set[int] = field(default_factory=set)  # open reservations charged below
    active: bool = False  # anything charged or reserved here or below
    charges: list[int] = field(default_factory=list)
    reserved: dict[int, Cost] = field(default_factory=dict)  # open reservations here


@dataclass
class _ReservationState:
    id: int
    amount: Guarantee
    status: str  # "open" | "closed"
    caller: str
    pid: int
    host: str
    created: float
    scope_id: int = 0


class Scope:
    """A node of the ledger's scope tree: one set of records.

    Charges in a scope compose sequentially. :meth:`partition` splits the
    records into disjoint parts (parallel composition); :meth:`subsample` draws
    a random subset (amplification).
    """

    __slots__ = ("_id", "_ledger")

    def __init__(self, ledger: Ledger, node_id: int) -> None:
        self._ledger = ledger
        self._id = node_id

    @property
    def id(self) -> int:
        return self._id

    @property
    def path(self) -> str:
        return self._ledger._nodes[self._id].path

    @property
    def label(self) -> str:
        return self._ledger._nodes[self._id].label

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def __repr__(self) -> str:
        return f"Scope({self.path!r})"

    def partition(self, labels: int | Sequence[str], *, stable: bool = False) -> tuple[Scope, ...]:
        """Split this scope's records into disjoint parts.

        Parameters
        ----------
        labels : int or sequence of str
            The number of parts, or one label per part.
        stable : bool, default=False
            True when the part a record goes to is fixed by who holds it and
            not by its values (horizontal partitioning over data owners). Under
            replace-one neighbours a non-stable partition costs its two
            costliest parts, since a replaced record can change part.
        """
        if isinstance(labels, bool) or not isinstance(labels, numbers.Integral | Iterable):
            raise InvalidParameterError(
                f"A partition takes a number of parts or a sequence of labels, got {labels!r}."
            )
        if isinstance(labels, numbers.Integral):  # int, numpy.int64, ...
            labels = int(labels)
            if labels < 1:
                raise InvalidParameterError(f"A partition needs at least one part, got {labels}.")
            names = [str(i) for i in range(labels)]
        else:
            names = [str(x) for x in labels]
            if not names:
                raise InvalidParameterError("A partition needs at least one part label.")
            if len(set(names)) != len(names):
                raise InvalidParameterError(f"Partition labels must be distinct, got {names!r}.")
        return self._ledger._add_group(self._id, "partition", names, stable=stable)

    def subsample(self, rate: float, method: str = "poisson") -> Scope:
        """A random subset of this scope's records, drawn with ``method`` at ``rate``.

        ``"poisson"``: each record independently with probability ``rate``
        (add/remove ledgers). ``"without_replacement"``: m of the n records,
        ``rate = m / n`` (replace-one ledgers).
        """
        check_sampling(rate, method, self._ledger.relation)
        (child,) = self._ledger._add_group(
            self._id, "subsample", [f"{method}@{float(rate):g}"], rate=float(rate), method=method
        )
        return child

    def charge(
        self,
        entry: Entry | Guarantee | float,
        *,
        mechanism: str,
        sensitivity: float | None = None,
        relation: NeighbouringRelation | str | None = None,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> ChargeRecord:
        """Check the budget and commit one charge; raise before committing if it does not fit.

        Call this *before* releasing the value the charge pays for.
        """
        entry = as_entry(entry)
        check_relation(self._ledger.relation, relation, f"Mechanism {mechanism!r}")
        return self._ledger._charge(
            self._id, entry, mechanism, sensitivity, caller, step, claim, commit=True
        )

    def can_charge(self, entry: Entry | Guarantee | float) -> bool:
        """Dry run of :meth:`charge`: whether it would fit now. Charges nothing."""
        try:
            self._ledger._charge(
                self._id, as_entry(entry), "dry-run", None, "", "", None, commit=False
            )
        except BudgetExceededError:
            return False
        return True

    def spent(self) -> Guarantee:
        """Composed cost of everything charged in this scope and below."""
        return self._ledger._subtree_bound(self._id).guarantee

    def run(
        self,
        measurement: Any,
        data: Any,
        d_in: Any,
        *,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> Any:
        """Charge an OpenDP measurement's privacy map at ``d_in``, then invoke it.

        Pure DP (MaxDivergence), zCDP (ZeroConcentratedDivergence) and
        approximate DP (Approximate(MaxDivergence)) measurements are accepted.
        """
        from privet.ledger.opendp_bridge import entry_for_measurement

        entry, mechanism = entry_for_measurement(measurement, d_in, self._ledger.relation)
        self.charge(entry, mechanism=mechanism, caller=caller, step=step, claim=claim)
        return measurement(data)


class Reservation:
    """A planned cost set aside; a context manager (see module docstring)."""

    def __init__(self, ledger: Ledger, state: _ReservationState) -> None:
        self._ledger = ledger
        self._state = state
        self._token: contextvars.Token[Any] | None = None

    @property
    def id(self) -> int:
        return self._state.id

    @property
    def amount(self) -> Guarantee:
        return self._state.amount

    @property
    def is_open(self) -> bool:
        return self._state.status == "open"

    def used(self) -> Guarantee:
        """Composed cost of the charges made inside this reservation so far."""
        led = self._ledger
        if self.is_open:
            cost = led._cost(self._state.scope_id, self._state.id)
        else:
            cost = led._cost(self._state.scope_id, only=self._state.id)
        return best_guarantee(cost, self.amount.delta).guarantee

    def __enter__(self) -> Reservation:
        self._token = self._ledger._active.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            self._ledger._active.reset(self._token)
            self._token = None
        self.close()

    def close(self) -> None:
        """Return the unused rest of the reservation to the budget."""
        if self.is_open:
            self._ledger._close_reservation(self._state.id)

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"Reservation(#{self.id}, {self.amount}, {state})"


class Ledger:
    """A privacy budget for one dataset, and everything charged against it.

    Parameters
    ----------
    budget : Guarantee or float
        The total (epsilon, delta) the dataset may ever spend through this ledger.
    relation : {"add_remove", "replace_one"}, default="add_remove"
        The neighbouring relation every charge is analysed under.
    dataset : str, default="dataset"
        Name of the dataset, the label of the root scope.

    Examples
    --------
    >>> from privet.ledger import Ledger, Guarantee
    >>> led = Ledger(budget=Guarantee(1.0))
    >>> left, right = led.root.partition(2)
    >>> _ = left.charge(Guarantee(0.3), mechanism="laplace")
    >>> _ = right.charge(Guarantee(0.5), mechanism="laplace")
    >>> led.spent()
    Guarantee(epsilon=0.5, delta=0.0)
    """

    def __init__(
        self,
        budget: Guarantee | float,
        *,
        relation: NeighbouringRelation | str = NeighbouringRelation.ADD_REMOVE,
        dataset: str = "dataset",
    ) -> None:
        self._setup(budget, relation, dataset, root_id=1)

    def _setup(
        self,
        budget: Guarantee | float,
        relation: NeighbouringRelation | str,
        dataset: str,
        *,
        root_id: int,
    ) -> None:
        if not isinstance(budget, Guarantee):
            budget = Guarantee(budget)
        if not str(dataset):
            raise InvalidParameterError("A ledger needs a non-empty dataset name.")
        self.budget = budget
        self.relation = NeighbouringRelation.parse(relation)
        self.dataset = str(dataset)
        self._lock = threading.RLock()
        self._active: contextvars.ContextVar[Reservation | None] = contextvars.ContextVar(
            f"privet-reservation-{id(self)}", default=None
        )
        self._nodes: dict[int, _Node] = {}
        self._groups: dict[int, _Group] = {}
        self._charges: dict[int, ChargeRecord] = {}
        self._reservations: dict[int, _ReservationState] = {}
        self._cache: dict[int, dict[Any, Pair]] = {}
        self._paths: set[str] = set()
        self._next_id = {"scope": 1, "group": 1, "charge": 1, "reservation": 1}
        self._root_id = self._new_node_local(root_id, None, None, self.dataset, self.dataset)
        self._next_id["scope"] = root_id + 1

    # ------------------------------------------------------------------ public
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        dataset: str,
        budget: Guarantee | float | None = None,
        *,
        relation: NeighbouringRelation | str | None = None,
        timeout: float = 60.0,
    ) -> Ledger:
        """A durable ledger in a SQLite file, shared by every process that opens it.

        The first open of ``dataset`` in the file needs ``budget`` (and fixes
        ``relation``, default add/remove); later opens may omit them, and must
        agree with the stored values if they give them.
        """
        from privet.ledger.sqlite_store import SQLiteLedger

        return SQLiteLedger._open(path, dataset, budget, relation, timeout)

    @property
    def root(self) -> Scope:
        """The dataset's scope: the root of the scope tree."""
        return Scope(self, self._root_id)

    def spent(self) -> Guarantee:
        """Composed cost of every charge committed so far (reservations not included)."""
        with self._lock:
            self._refresh()
            return self._bound_all().guarantee

    def spent_bound(self) -> Bound:
        """Like :meth:`spent`, with the accountant that proved it."""
        with self._lock:
            self._refresh()
            return self._bound_all()

    def reserved(self) -> Guarantee:
        """Sum of the open reservations' amounts (basic composition)."""
        with self._lock:
            self._refresh()
            eps = math.fsum(r.amount.epsilon for r in self._open_reservations())
            delta = math.fsum(r.amount.delta for r in self._open_reservations())
            return Guarantee(eps, min(delta, 1 - 1e-16))

    def remaining(self) -> Guarantee:
        """What can still be charged: the budget less committed charges and open reservations."""
        with self._lock:
            self._refresh()
            used = self._global_bound().guarantee
            return Guarantee(
                max(0.0, self.budget.epsilon - used.epsilon)
                if math.isfinite(self.budget.epsilon)
                else math.inf,
                max(0.0, self.budget.delta - used.delta),
            )

    def plan_cost(self, plan: PlanNode | Guarantee | Entry | float) -> Guarantee:
        """The guarantee the ledger proves for a plan, without charging it."""
        if isinstance(plan, PlanNode):
            cost = plan.cost(self.relation, delta=self.budget.delta)
            return best_guarantee(cost, self.budget.delta).guarantee
        return as_entry(plan).guarantee()

    def reserve(
        self,
        plan: PlanNode | Guarantee | Entry | float,
        *,
        scope: Scope | None = None,
        caller: str = "",
    ) -> Reservation:
        """Set aside a plan's cost; raise :class:`BudgetExceededError` if it does not fit.

        Use as a context manager around the code that reads the private data.
        The reservation sits in ``scope`` (default: the root), so reservations in
        disjoint parts of a partition compose in parallel like the charges they
        stand for.
        """
        amount = self.plan_cost(plan)
        if not caller and hasattr(plan, "caller"):
            caller = str(plan.caller)
        if scope is not None and scope.ledger is not self:
            raise InvalidParameterError(
                f"The scope {scope.path!r} belongs to another ledger; reserve on its own ledger."
            )
        node_id = self._root_id if scope is None else scope.id
        with self._lock:
            state = self._reserve(amount, caller, node_id)
        return Reservation(self, state)

    @property
    def charges(self) -> list[ChargeRecord]:
        """Every committed charge, oldest first."""
        with self._lock:
            self._refresh()
            return [self._charges[k] for k in sorted(self._charges)]

    def claims(self) -> list[ChargeRecord]:
        """The charges that carry a paper's claim, for claimed-vs-proven tables."""
        return [c for c in self.charges if c.claim is not None]

    def report(self, *, max_parts: int = 3, max_depth: int | None = None) -> Any:
        """A rich renderable of the scope tree with costs, charges and claims.

        ``max_parts`` costliest parts of each partition are shown; ``max_depth``
        (number of nested scopes) cuts deep trees.
        """
        from privet.ledger.report import render_tree

        with self._lock:
            self._refresh()
            return render_tree(self, max_parts=max_parts, max_depth=max_depth)

    def print_report(self, **kwargs: Any) -> None:
        from rich.console import Console

        Console().print(self.report(**kwargs))

    def to_json(self) -> str:
        """Everything in the ledger as JSON; :meth:`from_json` restores it exactly."""
        with self._lock:
            self._refresh()
            data = {
                "format": "privet-ledger",
                "version": 1,
                "dataset": self.dataset,
                "budget": _guarantee_dict(self.budget),
                "relation": self.relation.value,
                "root": self._root_id,
                "groups": [
                    {
                        "id": g.id,
                        "parent": g.parent,
                        "kind": g.kind,
                        "stable": g.stable,
                        "rate": g.rate,
                        "method": g.method,
                        "members": [{"id": m, "label": self._nodes[m].label} for m in g.members],
                    }
                    for g in (self._groups[k] for k in sorted(self._groups))
                ],
                "charges": [self._charges[k].to_dict() for k in sorted(self._charges)],
                "reservations": [
                    {
                        "id": r.id,
                        "amount": _guarantee_dict(r.amount),
                        "status": r.status,
                        "caller": r.caller,
                        "pid": r.pid,
                        "host": r.host,
                        "created": r.created,
                        "scope_id": r.scope_id,
                    }
                    for r in (self._reservations[k] for k in sorted(self._reservations))
                ],
            }
            return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """An in-memory ledger with exactly the content of :meth:`to_json`'s output."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"Not a privet ledger JSON document: {exc}.") from None
        if not isinstance(data, dict) or data.get("format") != "privet-ledger":
            raise InvalidParameterError(
                "Not a privet ledger JSON document (missing format 'privet-ledger')."
            )
        # The root scope's id is not 1 for the second dataset of a SQLite file.
        led = Ledger.__new__(Ledger)
        led._setup(
            _guarantee_from(data["budget"]),
            data["relation"],
            data["dataset"],
            root_id=int(data.get("root", 1)),
        )
        for g in data["groups"]:
            led._apply_group(
                g["id"],
                g["parent"],
                g["kind"],
                [(m["id"], m["label"]) for m in g["members"]],
                stable=g["stable"],
                rate=g["rate"],
                method=g["method"],
            )
        for r in data["reservations"]:
            led._reservations[r["id"]] = _ReservationState(
                r["id"],
                _guarantee_from(r["amount"]),
                r["status"],
                r["caller"],
                r["pid"],
                r["host"],
                r["created"],
                r["scope_id"],
            )
            if r["status"] == "open":
                led._place_reservation(r["scope_id"], r["id"], _guarantee_from(r["amount"]))
            led._next_id["reservation"] = max(led._next_id["reservation"], r["id"] + 1)
        for c in data["charges"]:
            led._apply_charge(ChargeRecord.from_dict(c))
        return led

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle (e.g. a fitted learner's ledger_) through the exact JSON form.
        return (Ledger.from_json, (self.to_json(),))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(dataset={self.dataset!r}, budget={self.budget}, "
            f"relation={self.relation.value!r}, spent={self.spent()})"
        )

    # ---------------------------------------------------------------- model
    def _refresh(self) -> None:
        """Bring the in-memory model up to date with the store (no-op in memory)."""

    def _new_node_local(
        self, node_id: int, parent: int | None, group: int | None, label: str, path: str
    ) -> int:
        self._nodes[node_id] = _Node(node_id, parent, group, label, path)
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
        group = _Group(group_id, parent, kind, stable, rate, method)
        self._groups[group_id] = group
        parent_node.groups.append(group_id)
        for node_id, label in members:
            path = (
                f"{parent_node.path}/{label}"
                if kind == "partition"
                else (f"{parent_node.path}/[{label}]")
            )
            path = f"{path}#{group_id}" if path in self._paths else path
            self._new_node_local(node_id, parent, group_id, label, path)
            group.members.append(node_id)
            self._next_id["scope"] = max(self._next_id["scope"], node_id + 1)
        self._next_id["group"] = max(self._next_id["group"], group_id + 1)
        return group.members

    def _add_group(
        self,
        parent: int,
        kind: str,
        labels: list[str],
        *,
        stable: bool = False,
        rate: float = 1.0,
        method: str = "",
    ) -> tuple[Scope, ...]:
        with self._lock:
            gid = self._next_id["group"]
            first = self._next_id["scope"]
            members = [(first + i, lab) for i, lab in enumerate(labels)]
            ids = self._apply_group(
                gid, parent, kind, members, stable=stable, rate=rate, method=method
            )
            return tuple(Scope(self, i) for i in ids)

    def _is_open(self, reservation: int | None) -> bool:
        state = self._reservations.get(reservation) if reservation is not None else None
        return state is not None and state.status == "open"

    def _apply_charge(self, record: ChargeRecord) -> None:
        """Add a committed charge to the in-memory model (in charge-id order)."""
        self._charges[record.id] = record
        self._next_id["charge"] = max(self._next_id["charge"], record.id + 1)
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
            self._cache.pop(cur, None)
            cur = n.parent

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
        node_cache = self._cache.setdefault(node_id, {})
        cached = node_cache.get(key)
        if cached is not None:
            return cached
        node = self._nodes[node_id]
        if isinstance(key, tuple):  # ("check", excluded reservation)
            rests = [self._reservation_rest(r) for r in node.reserved if r != key[1]]
            own = sequential([node.own_all, *rests])
        elif key == ALL:
            own = node.own_all
        else:
            own = node.own.get(key, ZERO)
        single, double = own, own
        for gid in node.groups:
            group = self._groups[gid]
            if isinstance(key, int):
                members = [m for m in group.members if key in self._nodes[m].buckets]
            else:
                members = [m for m in group.members if self._nodes[m].active]
            if not members:
                continue
            pairs = [self._pair(m, key) for m in members]
            s, d = self._group_pair(pairs, group)
            single, double = single + s, double + d
        pair = (single, double)
        node_cache[key] = pair
        return pair

    def _group_pair(self, pairs: list[Pair], group: _Group) -> Pair:
        if group.kind == "partition":
            return group_pair(pairs, self.relation, stable=group.stable)
        single, double = pairs[0]
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

    def _open_reservations(self) -> list[_ReservationState]:
        return [r for r in self._reservations.values() if r.status == "open"]

    def _bound_all(self) -> Bound:
        """Bound of every committed charge, whether or not its reservation is open."""
        return best_guarantee(self._cost(self._root_id, ALL), self.budget.delta)

    def _subtree_cost(self, node_id: int) -> Cost:
        return self._cost(node_id, ALL)

    def _subtree_bound(self, node_id: int) -> Bound:
        with self._lock:
            self._refresh()
            return best_guarantee(self._subtree_cost(node_id), self.budget.delta)

    def _reservation_rest(self, rid: int) -> Cost:
        """What an open reservation may still charge: its amount less what it used.

        Only a stand-in for future charges (keeping room for them); safety does
        not rest on it, because every charge is checked against the merged tree
        of all committed charges.
        """
        state = self._reservations[rid]
        used = best_guarantee(self._cost(state.scope_id, rid), state.amount.delta).guarantee
        rest = Guarantee(
            max(0.0, state.amount.epsilon - used.epsilon),
            max(0.0, state.amount.delta - used.delta),
        )
        return _reservation_cost(rest)

    def _global_bound(self, exclude: int | None = None) -> Bound:
        """Every committed charge (one merged tree) plus, at their scopes, what the
        open reservations other than ``exclude`` may still charge: what the
        budget must cover."""
        return best_guarantee(self._cost(self._root_id, ("check", exclude)), self.budget.delta)

    # ---------------------------------------------------------------- checks
    @contextlib.contextmanager
    def _tentative(self, node_id: int, cost: Cost, rid: int | None) -> Iterator[None]:
        """Add a charge's cost for the duration of a check, then restore the model exactly."""
        node = self._nodes[node_id]
        old_all, old_rid = node.own_all, node.own.get(rid) if rid is not None else None
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
                self._cache.pop(n.id, None)

    def _check_charge(self, node_id: int, entry: Entry, reservation: Reservation | None) -> None:
        """Raise BudgetExceededError if the charge does not fit; change nothing."""
        if isinstance(entry, NonPrivate) and math.isfinite(self.budget.epsilon):
            raise BudgetExceededError(
                f"A non-private release ({entry.reason}) has no DP guarantee (epsilon = "
                f"infinity) and cannot be charged to the finite budget {self.budget} of "
                f"dataset {self.dataset!r}; use the learner's sound variant, or a ledger "
                "with budget=Guarantee.unbounded() if you accept the leak knowingly."
            )
        path = self._nodes[node_id].path
        # The cost of a tree is not additive: add tentatively, measure, restore.
        if reservation is None:
            with self._tentative(node_id, Cost.of(entry), None):
                bound = self._global_bound()
            if not bound.guarantee.fits_in(self.budget):
                left = _left(self.budget, self._global_bound().guarantee)
                raise BudgetExceededError(
                    f"Charging {entry.guarantee()} in scope {path!r} would bring dataset "
                    f"{self.dataset!r} to {bound.guarantee} ({bound.method} composition), "
                    f"over its budget {self.budget}; {left} is left. Lower epsilon, or use "
                    "a new dataset budget."
                )
            return
        # The reservation stands in the global check at its scope, so what is charged
        # in it must lie in that scope's subtree and is measured at that scope (above
        # it, e.g. under a subsample, the global check amplifies the reserved amount).
        scope_id = reservation._state.scope_id
        cur: int | None = node_id
        while cur is not None and cur != scope_id:
            cur = self._nodes[cur].parent
        if cur is None:
            raise BudgetExceededError(
                f"Charging {entry.guarantee()} in scope {path!r} inside reservation "
                f"#{reservation.id}, which sits in scope {self._nodes[scope_id].path!r} and "
                "covers only charges in that scope and below; charge inside it, or reserve "
                "at a scope holding both. Nothing was charged."
            )
        with self._tentative(node_id, Cost.of(entry), reservation.id):
            cost = self._cost(scope_id, reservation.id)
            bound = self._global_bound(exclude=reservation.id)
        used = best_guarantee(cost, reservation.amount.delta)
        if not used.guarantee.fits_in(reservation.amount):
            raise BudgetExceededError(
                f"Charging {entry.guarantee()} in scope {path!r} would use {used.guarantee} "
                f"of reservation #{reservation.id}, which set aside {reservation.amount}; "
                "the privacy plan under-estimated this call. Nothing was charged."
            )
        # Within its amount, a reservation's charges can still push the merged tree
        # over the budget where composition is not additive (a subsample shared
        # with settled charges): check the merged tree too.
        if not bound.guarantee.fits_in(self.budget):
            raise BudgetExceededError(
                f"Charging {entry.guarantee()} in scope {path!r} inside reservation "
                f"#{reservation.id} would bring dataset {self.dataset!r} to "
                f"{bound.guarantee} ({bound.method} composition) with the other charges it "
                f"composes with, over its budget {self.budget}. Nothing was charged."
            )

    def _charge(
        self,
        node_id: int,
        entry: Entry,
        mechanism: str,
        sensitivity: float | None,
        caller: str,
        step: str,
        claim: Claim | None,
        *,
        commit: bool,
    ) -> ChargeRecord:
        reservation = self._active.get()
        if reservation is not None and (reservation._ledger is not self or not reservation.is_open):
            reservation = None
        if not mechanism:
            raise InvalidParameterError("A charge needs the name of its mechanism.")
        with self._lock:
            return self._commit_charge(
                node_id, entry, mechanism, sensitivity, caller, step, claim, reservation, commit
            )

    def _commit_charge(
        self,
        node_id: int,
        entry: Entry,
        mechanism: str,
        sensitivity: float | None,
        caller: str,
        step: str,
        claim: Claim | None,
        reservation: Reservation | None,
        commit: bool,
    ) -> ChargeRecord:
        self._check_charge(node_id, entry, reservation)
        record = self._make_record(
            node_id, entry, mechanism, sensitivity, caller, step, claim, reservation
        )
        if commit:
            self._apply_charge(record)
        return record

    def _make_record(
        self,
        node_id: int,
        entry: Entry,
        mechanism: str,
        sensitivity: float | None,
        caller: str,
        step: str,
        claim: Claim | None,
        reservation: Reservation | None,
    ) -> ChargeRecord:
        return ChargeRecord(
            id=self._next_id["charge"],
            scope_id=node_id,
            path=self._nodes[node_id].path,
            entry=entry,
            mechanism=mechanism,
            sensitivity=None if sensitivity is None else float(sensitivity),
            relation=self.relation.value,
            caller=caller,
            step=step,
            claim=claim,
            timestamp=time.time(),
            reservation=None if reservation is None else reservation.id,
        )

    def _reserve(self, amount: Guarantee, caller: str, node_id: int) -> _ReservationState:
        rid = self._next_id["reservation"]
        state = _ReservationState(
            rid,
            amount,
            "open",
            caller,
            os.getpid(),
            socket.gethostname(),
            time.time(),
            node_id,
        )
        self._reservations[rid] = state
        self._place_reservation(node_id, rid, amount)
        bound = self._global_bound()
        if not bound.guarantee.fits_in(self.budget):
            self._unplace_reservation(node_id, rid)
            del self._reservations[rid]
            left = self._global_bound().guarantee
            raise BudgetExceededError(
                f"Reserving {amount} for {caller or 'this call'} in scope "
                f"{self._nodes[node_id].path!r} would bring dataset {self.dataset!r} to "
                f"{bound.guarantee}, over its budget {self.budget}: "
                f"{_left(self.budget, left)} is left. Lower epsilon or use a new dataset budget."
            )
        self._next_id["reservation"] += 1
        return state

    def _place_reservation(self, node_id: int, rid: int, amount: Guarantee) -> None:
        self._nodes[node_id].reserved[rid] = _reservation_cost(amount)
        self._touch(node_id, None)

    def _unplace_reservation(self, node_id: int, rid: int) -> None:
        self._nodes[node_id].reserved.pop(rid, None)
        self._touch(node_id, None)

    def _close_reservation(self, rid: int) -> None:
        with self._lock:
            self._mark_closed(rid)

    def _mark_closed(self, rid: int) -> None:
        """Close a reservation: its amount leaves the check; its charges stay in ALL."""
        state = self._reservations[rid]
        if state.status == "closed":
            return
        state.status = "closed"
        if state.scope_id in self._nodes:
            self._unplace_reservation(state.scope_id, rid)
        for node in self._nodes.values():
            node.own.pop(rid, None)
            node.buckets.discard(rid)
        self._cache.clear()

    def iter_scopes(self) -> Iterator[Scope]:
        for k in sorted(self._nodes):
            yield Scope(self, k)


def _reservation_cost(amount: Guarantee) -> Cost:
    # An (eps, delta) reservation composes as an approximate-DP release; only a
    # pure one also has the zCDP view.
    return Cost.of_guarantee(amount)


def _guarantee_dict(g: Guarantee) -> dict[str, Any]:
    return {"epsilon": "inf" if math.isinf(g.epsilon) else g.epsilon, "delta": g.delta}


def _guarantee_from(d: dict[str, Any]) -> Guarantee:
    eps = math.inf if d["epsilon"] == "inf" else d["epsilon"]
    return Guarantee(eps, d["delta"])


def _left(budget: Guarantee, used: Guarantee) -> Guarantee:
    if math.isinf(budget.epsilon):
        return budget
    return Guarantee(max(0.0, budget.epsilon - used.epsilon), max(0.0, budget.delta - used.delta))


__all__ = ["ChargeRecord", "Ledger", "PrivetError", "Reservation", "Scope"]
