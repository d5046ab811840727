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
A shared store also says which open reservations were abandoned by a process
that died (:meth:`~Store.abandoned`): SQLite by process ids on the same host,
PostgreSQL by a lock the owner's connection holds (:meth:`~Store.hold_reservation`),
which the server releases when that connection dies, whatever host it was on.
:class:`MemoryStore` keeps them in a list (one process);
:class:`~privet.ledger.sqlite_store.SQLiteStore` in a SQLite file shared by
processes of one host; :class:`~privet.ledger.postgres_store.PostgresStore` in a
PostgreSQL database shared by many hosts. The two SQL stores share their tables,
payloads and checks (:mod:`privet.ledger.sql_store`). :mod:`privet.ledger.locations`
picks the store from what the user gave: a ``postgresql://`` URL or a file path.
"""

from __future__ import annotations

import contextlib
import json
import sys
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

from privet.errors import LedgerClosedError, LedgerCorruptError
from privet.ledger.chain import Event, canonical, seal

if TYPE_CHECKING:
    from privet.ledger.tree import ReservationState


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

    def abandoned(self, open_reservations: list[ReservationState]) -> list[int]:
        """The ids of those open reservations whose process died (inside a transaction).

        The ledger closes them (and charges the rest of one marked charged in full).
        A store that only one process uses has none.
        """
        return []

    def hold_reservation(self, rid: int) -> None:
        """Tie reservation ``rid``, just written in this transaction, to this process's life."""
        return None

    def release_reservation(self, rid: int) -> None:
        """Undo :meth:`hold_reservation` once the reservation's close is committed."""
        return None

    def check_rows(self, events: list[Event]) -> None:
        """Raise LedgerCorruptError if the store holds rows that no event accounts for."""
        return None

    def reopen_args(self) -> tuple[Any, ...] | None:
        """Arguments of ``Ledger.open`` that reopen this store in another process."""
        return None

    def describe(self) -> str:
        return "memory"

    closed: bool = False

    def close(self) -> None:
        """Release the store's resources (a file connection); later use is refused."""
        self.closed = True

    def check_open(self) -> None:
        """Raise LedgerClosedError if :meth:`close` was called."""
        if self.closed:
            raise LedgerClosedError(
                f"The ledger of dataset {self.dataset!r} in {self.describe()} was closed; "
                "nothing was read or charged. Open it again with Ledger.open(path, dataset)."
            )

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
    """Events in a list: the store of ``Ledger(budget=...)``, private to one process.

    It keeps each event as its canonical JSON text (a decoded payload takes ten times
    the memory), and every committed run of :data:`CHUNK` events compressed: a private
    store reads its events back only to copy or export them, and a DP-SGD run's
    100,000 near-identical events compress about tenfold. Hashes are recomputed from
    the texts when the events are read (the chain seals them)."""

    shared = False
    CHUNK = 1024

    def __init__(self, dataset: str) -> None:
        self.dataset = dataset
        self._chunks: list[bytes] = []  # zlib of CHUNK events' texts, one per line
        self._tail: list[tuple[str, str]] = []  # (kind, canonical JSON), not yet packed
        self._count = 0
        self._head = ""
        self._next = {"group": 1, "scope": 1, "charge": 1, "reservation": 1}
        self._salt: str | None = None
        self._tables: dict[str, str] = {}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        size, count, head, ids = len(self._tail), self._count, self._head, dict(self._next)
        salt, tables = self._salt, dict(self._tables)
        try:
            yield
        except BaseException:
            del self._tail[size:]
            self._count, self._head, self._next = count, head, ids
            self._salt, self._tables = salt, tables
            raise
        while len(self._tail) >= self.CHUNK:  # committed: pack whole chunks
            lines = "\n".join(f"{k}\t{t}" for k, t in self._tail[: self.CHUNK])
            self._chunks.append(zlib.compress(lines.encode("utf-8"), 6))
            del self._tail[: self.CHUNK]

    def snapshot(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def events_after(self, seq: int) -> list[Event]:
        texts: list[tuple[str, str]] = []
        for chunk in self._chunks:
            for line in zlib.decompress(chunk).decode("utf-8").split("\n"):
                kind, _, text = line.partition("\t")
                texts.append((kind, text))
        texts += self._tail
        out, prev = [], ""
        for i, (kind, text) in enumerate(texts):
            payload = json.loads(text)
            h = seal(prev, i, kind, payload)
            if i > seq:
                out.append(Event(i, kind, payload, h))
            prev = h
        return out

    def head(self) -> str:
        return self._head

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
        if event.seq != self._count:  # pragma: no cover - the history appends in order
            raise LedgerCorruptError(f"event {event.seq} appended after {self._count} events")
        text = json.dumps(event.payload, sort_keys=True, separators=(",", ":"))
        self._tail.append((sys.intern(event.kind), text))
        self._count += 1
        self._head = event.hash

    def table_salt(self, *, create: bool) -> str | None:
        if self._salt is None and create:
            from privet.ledger.fingerprint import new_salt

            self._salt = new_salt()
        return self._salt

    def table_owner(self, fingerprint: str) -> str | None:
        return self._tables.get(fingerprint)

    def record_table(self, fingerprint: str) -> str:
        return self._tables.setdefault(fingerprint, self.dataset)
