"""Where a ledger's events live: the storage interface and the in-memory store.

A ledger's state is the ordered list of its events (see :mod:`privet.ledger.chain`).
A :class:`Store` keeps one dataset's events; the :class:`~privet.ledger.Ledger`
does everything else once for every store: the model of the scope tree, the
budget check, the hash chain and its verification, and the rule that a write
happens inside :meth:`Store.transaction` after reading what others committed.

A store implements six things: an exclusive write :meth:`~Store.transaction`
(commit on normal exit; roll back on any exception, ``KeyboardInterrupt``
included), a consistent read :meth:`~Store.snapshot`, :meth:`~Store.events_after`
(the payloads *as stored now*, so that the chain detects edits), :meth:`~Store.head`
(the hash of the last event, stored with the dataset), and writing an event's
rows and its chain entry (:meth:`~Store._write_rows`, :meth:`~Store._write_event`).
:class:`MemoryStore` keeps them in a list (one process);
:class:`~privet.ledger.sqlite_store.SQLiteStore` in a SQLite file shared by
processes of one host; :class:`~privet.ledger.postgres_store.PostgresStore` in a
PostgreSQL database shared by many hosts. The two SQL stores share their tables,
payloads and checks (:mod:`privet.ledger.sql_store`). :mod:`privet.ledger.locations`
picks the store from what the user gave: a ``postgresql://`` URL or a file path.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from privet.ledger.chain import Event, canonical, seal


class Store(ABC):
    """One dataset's events (see module docstring)."""

    #: Whether other processes may write the same events: then the ledger reads
    #: what they committed before every read and inside every write.
    shared: ClassVar[bool] = False

    dataset: str

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """An exclusive write transaction; raise LedgerBusyError if it cannot start."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """A consistent read of the events."""

    @abstractmethod
    def events_after(self, seq: int) -> list[Event]:
        """The dataset's events with a larger ``seq``, in order, payloads read as stored."""

    @abstractmethod
    def head(self) -> str:
        """The stored hash of the dataset's last event ("" before the first)."""

    @abstractmethod
    def _write_rows(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Store the event's rows; return the payload with the ids the store gave."""

    @abstractmethod
    def _write_event(self, event: Event) -> None:
        """Store the event's chain entry and make its hash the dataset's head."""

    def append(self, seq: int, prev: str, kind: str, payload: dict[str, Any]) -> Event:
        """Write one event inside :meth:`transaction`; return it as stored."""
        stored = canonical(self._write_rows(kind, payload))
        event = Event(seq, kind, stored, seal(prev, seq, kind, stored))
        self._write_event(event)
        return event

    def check_rows(self, events: list[Event]) -> None:
        """Raise LedgerCorruptError if the store holds rows that no event accounts for."""
        return None

    def reopen_args(self) -> tuple[Any, ...] | None:
        """Arguments of ``Ledger.open`` that reopen this store in another process."""
        return None

    def describe(self) -> str:
        return "memory"

    def close(self) -> None:
        """Release the store's resources (a file connection)."""
        return None

    # Tables of rows and their owners (:mod:`privet.ledger.fingerprint`): kept out of
    # the hash chain and out of every export; one owner per fingerprint per store.
    def table_salt(self, *, create: bool) -> str | None:
        """The store's salt for table fingerprints (made if ``create``, inside a write)."""
        return None

    def table_owner(self, fingerprint: str) -> str | None:
        """The dataset a table with this fingerprint was recorded for, or None."""
        return None

    def record_table(self, fingerprint: str) -> str:
        """Record the table for this store's dataset unless it has an owner; return the owner."""
        return self.dataset


class MemoryStore(Store):
    """Events in a list: the store of ``Ledger(budget=...)``, private to one process."""

    shared = False

    def __init__(self, dataset: str) -> None:
        self.dataset = dataset
        self._events: list[Event] = []
        self._next = {"group": 1, "scope": 1, "charge": 1, "reservation": 1}
        self._salt: str | None = None
        self._tables: dict[str, str] = {}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        size, ids = len(self._events), dict(self._next)
        try:
            yield
        except BaseException:
            del self._events[size:]
            self._next = ids
            raise

    def snapshot(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def events_after(self, seq: int) -> list[Event]:
        return self._events[max(seq + 1, 0) :]

    def head(self) -> str:
        return self._events[-1].hash if self._events else ""

    def _take(self, what: str, given: Any) -> int:
        value = self._next[what] if given is None else int(given)
        self._next[what] = max(self._next[what], value + 1)
        return value

    def _write_rows(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        p = dict(payload)
        if kind == "dataset":
            self._take("scope", p["root"])
        elif kind == "group":
            p["id"] = self._take("group", p.get("id"))
            p["members"] = [[self._take("scope", sid), label] for sid, label in p["members"]]
        elif kind == "reserve":
            p["id"] = self._take("reservation", p.get("id"))
        elif kind == "charge":
            p["id"] = self._take("charge", p.get("id"))
            p["record"] = {**p["record"], "id": p["id"]}
        return p

    def _write_event(self, event: Event) -> None:
        self._events.append(event)

    def table_salt(self, *, create: bool) -> str | None:
        if self._salt is None and create:
            from privet.ledger.fingerprint import new_salt

            self._salt = new_salt()
        return self._salt

    def table_owner(self, fingerprint: str) -> str | None:
        return self._tables.get(fingerprint)

    def record_table(self, fingerprint: str) -> str:
        return self._tables.setdefault(fingerprint, self.dataset)
