"""A ledger's history: the events in its store, replayed into the scope tree.

:class:`History` reads a store's events, verifies their hash chain
(:mod:`privet.ledger.chain`) and applies them to the in-memory model
(:class:`~privet.ledger.tree.ScopeTree`); it writes new events inside one store
transaction after reading what others committed. Every store shares this code:
a store only keeps rows (:mod:`privet.ledger.store`).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

from privet.errors import (
    InvalidParameterError,
    LedgerCorruptError,
    LedgerNotShareableError,
    PrivetError,
)
from privet.ledger import chain
from privet.ledger.composition import Cost, best_guarantee, check_sampling
from privet.ledger.entries import ApproxDP, PureDP
from privet.ledger.guarantee import Guarantee
from privet.ledger.records import ChargeRecord, eps_from_text, eps_text, guarantee_from
from privet.ledger.relation import NeighbouringRelation
from privet.ledger.store import Store
from privet.ledger.tree import ABANDON_MARK, ReservationState, ScopeTree


class History(ScopeTree):
    """Events in, model out: the storage-independent half of a ledger."""

    _store: Store

    def _attach(self, store: Store) -> None:
        """Bind an empty model to ``store`` (events are applied by _load or _append)."""
        self._store = store
        self._lock = threading.RLock()
        self._active: contextvars.ContextVar[Any] = contextvars.ContextVar(
            f"privet-reservation-{id(self)}", default=None
        )
        self._seq = -1
        self._head = ""
        self._schema: str | None = None
        self._frozen: str | None = None
        self._dirty = False

    def _load(self) -> None:
        """Read, verify and apply every stored event (on open)."""
        with self._lock, self._store.snapshot():
            events = self._store.events_after(-1)
            self._verify(events, "", final=True)
            self._store.check_rows(events)
            for ev in events:
                self._apply_event(ev)

    def _reload(self) -> None:
        """Rebuild the model from the store (after a write was rolled back)."""
        self._seq, self._head, self._schema = -1, "", None
        self._load()

    def _verify(self, events: list[chain.Event], prev: str, *, final: bool) -> None:
        where = f"Ledger of {self._store.dataset!r} in {self._store.describe()}"
        last = chain.verify(events, prev, where)
        if final and last != self._store.head():
            raise LedgerCorruptError(
                f"{where}: the stored head of the hash chain does not match its events "
                "(events were deleted or edited outside privet, or the file is damaged). "
                "Do not use it; restore it from a backup."
            )

    def _refresh(self) -> None:
        """Bring the in-memory model up to date with what others committed."""
        if not self._store.shared:
            return
        with self._lock, self._store.snapshot():
            self._sync()

    def _sync(self) -> None:
        events = self._store.events_after(self._seq)
        self._verify(events, self._head, final=True)
        for ev in events:
            self._apply_event(ev)

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One exclusive write transaction, with the model synced to the store first.

        Reservations abandoned by dead processes (:meth:`Store.abandoned`) are closed
        first, in a transaction of their own, committed whatever the write then does
        (a refused charge must not keep a dead reservation open). On any exception
        (KeyboardInterrupt included) the store rolls back and, if events were
        already applied, the model is rebuilt from the store.
        """
        if self._frozen is not None:
            raise LedgerNotShareableError(self._frozen)
        with self._lock:
            self._dirty = False
            try:
                for closing in (True, False):
                    with self._store.transaction():
                        if self._store.shared:
                            self._sync()
                            if closing and self._seq >= 0 and self._close_abandoned():
                                continue  # commit the closes; write in a fresh transaction
                        yield
                        break
            except BaseException:
                if self._dirty:
                    self._dirty = False
                    try:
                        self._reload()
                    except PrivetError:
                        # the store is unreachable (a database server down): forget the
                        # model, so that the next read rebuilds it from the store
                        self._seq, self._head, self._schema = -1, "", None
                raise

    def _append(self, kind: str, payload: dict[str, Any]) -> chain.Event:
        event = self._store.append(self._seq + 1, self._head, kind, payload)
        self._dirty = True
        self._apply_event(event)
        return event

    def _apply_event(self, ev: chain.Event) -> None:
        try:
            self._apply(ev.kind, ev.payload, ev.seq)
        except PrivetError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise LedgerCorruptError(
                f"Ledger of {self._store.dataset!r} in {self._store.describe()}: event "
                f"{ev.seq} ({ev.kind}) is malformed ({type(exc).__name__}: {exc}); the "
                "ledger is damaged. Restore it from a backup."
            ) from None
        self._seq, self._head = ev.seq, ev.hash

    def _apply(self, kind: str, p: dict[str, Any], seq: int) -> None:
        def bad(why: str) -> LedgerCorruptError:
            return LedgerCorruptError(
                f"Ledger of {self._store.dataset!r} in {self._store.describe()}: event {seq} "
                f"({kind}) {why}; the ledger is damaged. Restore it from a backup."
            )

        if kind == "dataset":
            if seq != 0 or self._seq != -1 or p["name"] != self._store.dataset:
                raise bad("does not start the dataset's history")
            eps, delta = eps_from_text(p["budget_epsilon"]), float(p["budget_delta"])
            self.budget = (
                Guarantee.unbounded() if math.isinf(eps) and delta == 0 else (Guarantee(eps, delta))
            )
            self.relation = NeighbouringRelation(p["relation"])
            self.dataset = p["name"]
            self._init_tree(as_int(p["root"]))
            return
        if self._seq < 0:
            raise bad("comes before the dataset's creation")
        if kind == "group":
            parent = as_int(p["parent"])
            if parent not in self._nodes or p["kind"] not in ("partition", "subsample"):
                raise bad("refers to an unknown scope or kind")
            if p["kind"] == "subsample":
                check_sampling(p["rate"], p["method"], self.relation)
            elif p["rate"] != 1.0 or p["method"] != "":
                raise bad("gives a partition a sampling rate")
            members = [(as_int(m[0]), str(m[1])) for m in p["members"]]
            if any(m in self._nodes for m, _ in members) or not members:
                raise bad("reuses a scope id")
            if as_int(p["id"]) in self._groups:
                raise bad("reuses a group id")
            self._apply_group(
                as_int(p["id"]),
                parent,
                p["kind"],
                members,
                stable=bool(p["stable"]),
                rate=float(p["rate"]),
                method=str(p["method"]),
            )
        elif kind == "reserve":
            rid, scope_id = as_int(p["id"]), as_int(p["scope_id"])
            if rid in self._reservations or scope_id not in self._nodes:
                raise bad("reuses a reservation id or names an unknown scope")
            amount = guarantee_from({"epsilon": p["epsilon"], "delta": p["delta"]})
            state = ReservationState(
                rid,
                amount,
                "open",
                str(p["caller"]),
                int(p["pid"]),
                str(p["host"]),
                float(p["created"]),
                scope_id,
                # charged as its amount if abandoned, so held as its amount (a file
                # written at de085a2 may store a cost for it too)
                None
                if "cost" not in p or str(p["caller"]).endswith(ABANDON_MARK)
                else Cost.from_payload(p["cost"]),
            )
            self._reservations[rid] = state
            self._place_reservation(scope_id, rid, amount)
        elif kind == "close":
            rid = as_int(p["id"])
            if rid not in self._reservations:
                raise bad("closes an unknown reservation")
            self._mark_closed(rid)
        elif kind == "charge":
            record = ChargeRecord.from_dict(p["record"])
            if record.scope_id not in self._nodes or record.id in self._charges:
                raise bad("names an unknown scope or reuses a charge id")
            self._apply_charge(record)
        elif kind == "schema":
            if self._schema is not None:
                raise bad("records a second schema")
            self._schema = str(p["fingerprint"])
        else:
            raise bad("has an unknown kind")

    def _charge_abandoned(self, state: Any) -> None:
        """Charge the unused rest of a dead process's reservation (on_abandon="charge").

        The process reserved a run whose values it may have opened (an MPC run whose
        parties kept going) and died before it charged them: what it did not charge
        is charged now, in the reservation's scope, so that the reservation as a
        whole counts as spent. The rest is the reservation's amount less what the
        charges made inside it are proven to cost at its delta. It is charged without
        a check: every charge made in such a reservation was checked with this rest
        standing at the reservation's scope, so charging it lands where that check did.
        """
        used = self._cost(state.scope_id, only=state.id)
        used_g = best_guarantee(used, state.amount.delta).guarantee
        eps = max(0.0, state.amount.epsilon - used_g.epsilon)
        delta = max(0.0, state.amount.delta - used_g.delta)
        if eps == 0.0 and delta == 0.0:
            return
        entry = PureDP(epsilon=eps) if delta == 0.0 else ApproxDP(epsilon=eps, delta=delta)
        record = ChargeRecord(
            id=0,
            scope_id=state.scope_id,
            path=self._nodes[state.scope_id].path,
            entry=entry,
            mechanism="abandoned reservation (charged in full)",
            sensitivity=None,
            relation=self.relation.value,
            caller=state.caller,
            step=(
                f"reservation #{state.id} of process {state.pid} on {state.host}, which died "
                "during a run whose values may be open: its unused rest"
            ),
            claim=None,
            timestamp=time.time(),
            reservation=None,
        )
        self._append("charge", {"id": None, "record": record.to_dict()})

    def _close_abandoned(self) -> bool:
        """Close the open reservations of dead processes (their charges stay), inside a
        write transaction; whether there were any."""
        stale = self._store.abandoned(list(self._open_reservations()))
        for rid in stale:
            state = self._reservations[rid]
            if state.status != "open":
                continue
            if state.caller.endswith(ABANDON_MARK):
                self._charge_abandoned(state)
            self._append("close", {"id": rid})
        return bool(stale)


def genesis(
    name: str, budget: Guarantee, relation: NeighbouringRelation, *, root: int
) -> dict[str, Any]:
    """The payload of a dataset's first event."""
    return {
        "name": name,
        "budget_epsilon": eps_text(budget.epsilon),
        "budget_delta": budget.delta,
        "relation": relation.value,
        "root": root,
    }


def as_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer id, got {v!r}")
    return v


def dataset_name(dataset: Any) -> str:
    """A dataset name without surrounding whitespace; refuse empty or non-text names."""
    if not isinstance(dataset, str):
        raise InvalidParameterError(
            f"A dataset name is a string, got {dataset!r} of type {type(dataset).__name__}."
        )
    name = dataset.strip()
    if not name:
        raise InvalidParameterError("A ledger needs a non-empty dataset name.")
    if any(not ch.isprintable() for ch in name) or len(name) > 200:
        raise InvalidParameterError(
            f"A dataset name must be printable text of at most 200 characters, got {dataset!r}."
        )
    return name
