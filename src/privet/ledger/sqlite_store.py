"""A ledger's events in a SQLite file, shared safely by concurrent processes.

Every write is one ``BEGIN IMMEDIATE`` transaction: the process takes SQLite's
write lock, reads what other processes committed since it last looked,
composes, and writes only if the charge fits, then commits. Two processes can
therefore never both see room for the same last unit of budget. The database
runs in WAL mode with ``synchronous=FULL``, so a committed charge survives a
killed process (and a power cut).

The wait for the write lock happens in Python, in short steps, so that Ctrl-C
(``KeyboardInterrupt``) interrupts it at once and never leaves a transaction
open; after ``timeout`` seconds the wait ends in :class:`~privet.errors.LedgerBusyError`.
Any exception inside a transaction, ``KeyboardInterrupt`` included, rolls it back.

On open the file is checked (``PRAGMA quick_check``, privet's format and version,
the tables' columns) and every event of the dataset is read back and verified
against its hash chain (:mod:`privet.ledger.chain`): a damaged or edited file
raises :class:`~privet.errors.LedgerCorruptError` and is not used. Files written
by privet before the chain existed (format version 1) are upgraded on first open:
their chain is computed from their rows as they are then.

A reservation left open by a process that died is closed by the next writer on
the same host (its pid no longer exists); the charges made in it stay.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from privet.errors import (
    InvalidParameterError,
    LedgerBusyError,
    LedgerCorruptError,
    PrivetError,
)
from privet.ledger.chain import Event, canonical, seal
from privet.ledger.sqlite_file import (
    FORMAT,
    SCHEMA_V1,
    TABLES,
    UPGRADE_V2,
    VERSION,
    check_path,
    check_timeout,
    list_datasets,
    statements,
)
from privet.ledger.store import Store

__all__ = ["SQLiteStore", "list_datasets"]

T = TypeVar("T")


# SQLite's own wait for a lock, per attempt; the retry loop in Python does the rest
# (a wait in C cannot be interrupted by Ctrl-C).
_BUSY_MS = 20


class SQLiteStore(Store):
    """One dataset's events in a SQLite ledger file (see module docstring)."""

    shared = True

    def __init__(self, conn: sqlite3.Connection, path: str, dataset: str, timeout: float):
        self._conn = conn
        self.path = path
        self.dataset = dataset
        self.timeout = timeout

    # ------------------------------------------------------------ opening
    @classmethod
    def connect(cls, path: Any, dataset: str, timeout: Any) -> SQLiteStore:
        """Open (or create) the file, check its integrity and format, upgrade format 1."""
        path = check_path(path)
        timeout = check_timeout(timeout)
        try:
            conn = sqlite3.connect(
                path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise LedgerCorruptError(f"Cannot open the ledger file {path!r}: {exc}.") from None
        store = cls(conn, path, dataset, timeout)
        try:
            store._prepare()
        except BaseException:
            conn.close()
            raise
        return store

    def _prepare(self) -> None:
        conn = self._conn
        with self._errors():
            self._retry(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            check = conn.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                raise LedgerCorruptError(
                    f"The ledger file {self.path!r} is damaged (SQLite integrity check: "
                    f"{'; '.join(str(r[0]) for r in check[:3])}). Do not use it; restore it "
                    "from a backup."
                )
            if self._tables() != set(TABLES):
                with self.transaction():
                    tables = self._tables()
                    if not tables:
                        for stmt in statements(SCHEMA_V1) + statements(UPGRADE_V2):
                            conn.execute(stmt)
                    elif tables == set(TABLES) - {"meta", "chain"}:
                        self._upgrade_v1()
            self._check_format()

    def _tables(self) -> set[str]:
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {r[0] for r in rows} - {"sqlite_sequence"}

    def _check_format(self) -> None:
        conn = self._conn
        if self._tables() != set(TABLES):
            raise LedgerCorruptError(
                f"{self.path!r} is not a privet ledger file (its tables are "
                f"{sorted(self._tables())}); check the path."
            )
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != FORMAT:
            raise LedgerCorruptError(f"{self.path!r} is not a privet ledger file.")
        if meta.get("version") != str(VERSION):
            raise LedgerCorruptError(
                f"{self.path!r} is a privet ledger of format version {meta.get('version')!r}; "
                f"this privet reads version {VERSION}. Upgrade privet, or restore the file."
            )
        for table, columns in TABLES.items():
            found = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
            if found != columns:
                raise LedgerCorruptError(
                    f"{self.path!r}: table {table!r} has columns {found}, expected {columns}; "
                    "the file is damaged or was edited. Restore it from a backup."
                )

    def _upgrade_v1(self) -> None:
        """Format 1 -> 2: add the chain, computed from the rows as they are now."""
        conn = self._conn
        for stmt in statements(UPGRADE_V2):
            conn.execute(stmt)
        names = [r[0] for r in conn.execute("SELECT name FROM datasets ORDER BY name")]
        for name in names:
            view = SQLiteStore(conn, self.path, name, self.timeout)
            refs: list[tuple[str, int | None]] = [("dataset", None)]
            q = "SELECT id FROM {} WHERE dataset = ? ORDER BY id"
            refs += [("group", r[0]) for r in conn.execute(q.format("groups"), (name,))]
            refs += [("reserve", r[0]) for r in conn.execute(q.format("reservations"), (name,))]
            refs += [("charge", r[0]) for r in conn.execute(q.format("charges"), (name,))]
            closed = conn.execute(
                "SELECT id FROM reservations WHERE dataset = ? AND status = 'closed' ORDER BY id",
                (name,),
            )
            refs += [("close", r[0]) for r in closed]
            prev = ""
            for seq, (kind, ref) in enumerate(refs):
                payload = view._payload(kind, ref)
                event = Event(seq, kind, payload, seal(prev, seq, kind, payload))
                view._write_event(event, ref)
                prev = event.hash

    # ------------------------------------------------------- transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        conn = self._conn
        try:
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None
        except BaseException:
            self._rollback()
            raise

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        conn = self._conn
        if conn.in_transaction:  # inside a write: already consistent
            yield
            return
        try:
            with self._errors():
                conn.execute("BEGIN")
                yield
                conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        # Never leave a transaction open, whatever interrupted it.
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _retry(self, step: Callable[[], T]) -> T:
        """Run ``step`` until SQLite stops answering busy, or raise LedgerBusyError at timeout."""
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                return step()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise _translate(exc, self.path) from None
                self._rollback()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LedgerBusyError(
                        f"The ledger file {self.path!r} stayed locked by another process for "
                        f"{self.timeout:g} s (timeout); nothing was charged. Retry, or open it "
                        "with a longer timeout=."
                    ) from None
                time.sleep(min(delay, left))  # Ctrl-C lands here, outside any transaction
                delay = min(2 * delay, 0.05)
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn SQLite's and the decoders' exceptions into privet errors."""
        try:
            yield
        except PrivetError:
            raise
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
            raise LedgerCorruptError(
                f"The ledger file {self.path!r} holds a malformed value ({type(exc).__name__}: "
                f"{exc}); it is damaged or was edited. Restore it from a backup."
            ) from None

    # ------------------------------------------------------------- reading
    def events_after(self, seq: int) -> list[Event]:
        with self._errors():
            rows = self._conn.execute(
                "SELECT seq, kind, ref, hash FROM chain WHERE dataset = ? AND seq > ? ORDER BY seq",
                (self.dataset, seq),
            ).fetchall()
            events = []
            for n, (s, kind, ref, h) in enumerate(rows):
                if s != seq + 1 + n or not isinstance(h, str):
                    raise LedgerCorruptError(
                        f"The ledger file {self.path!r}: the events of {self.dataset!r} are not "
                        "numbered in sequence (an event was deleted or the file is damaged). "
                        "Restore it from a backup."
                    )
                events.append(Event(s, kind, self._payload(kind, ref), h))
            return events

    def head(self) -> str:
        with self._errors():
            row = self._conn.execute(
                "SELECT head FROM datasets WHERE name = ?", (self.dataset,)
            ).fetchone()
        return "" if row is None else str(row[0])

    def _payload(self, kind: str, ref: Any) -> dict[str, Any]:
        """An event's payload, read from the rows it wrote as they are now."""
        conn, ds = self._conn, self.dataset

        def one(sql: str, key: Any) -> tuple[Any, ...]:
            row = conn.execute(sql, (key,)).fetchone()
            if row is None or row[1] != ds:
                raise LedgerCorruptError(
                    f"The ledger file {self.path!r}: a {kind} event of {ds!r} refers to a row "
                    "that is missing (deleted outside privet, or the file is damaged). "
                    "Restore it from a backup."
                )
            return row

        if kind == "dataset":
            row = one(
                "SELECT root_scope, name, budget_epsilon, budget_delta, relation FROM datasets "
                "WHERE name = ?",
                ds,
            )
            return canonical(
                {
                    "name": row[1],
                    "budget_epsilon": row[2],
                    "budget_delta": row[3],
                    "relation": row[4],
                    "root": row[0],
                }
            )
        if kind == "group":
            row = one(
                "SELECT id, dataset, parent, kind, stable, rate, method FROM groups WHERE id = ?",
                ref,
            )
            members = conn.execute(
                "SELECT id, label FROM scopes WHERE group_id = ? AND dataset = ? ORDER BY id",
                (ref, ds),
            ).fetchall()
            return canonical(
                {
                    "id": row[0],
                    "parent": row[2],
                    "kind": row[3],
                    "stable": bool(row[4]),
                    "rate": row[5],
                    "method": row[6],
                    "members": [[m[0], m[1]] for m in members],
                }
            )
        if kind == "reserve":
            row = one(
                "SELECT id, dataset, epsilon, delta, caller, pid, host, created, scope_id "
                "FROM reservations WHERE id = ?",
                ref,
            )
            keys = ("epsilon", "delta", "caller", "pid", "host", "created", "scope_id")
            return canonical({"id": row[0], **dict(zip(keys, row[2:], strict=True))})
        if kind == "close":
            return {"id": ref}
        if kind == "charge":
            row = one("SELECT id, dataset, record FROM charges WHERE id = ?", ref)
            record = json.loads(row[2])
            if not isinstance(record, dict):
                raise LedgerCorruptError(f"The ledger file {self.path!r}: charge {ref} is damaged.")
            record["id"] = row[0]
            return canonical({"id": row[0], "record": record})
        if kind == "schema":
            row = one("SELECT schema, name FROM datasets WHERE name = ?", ds)
            return {"fingerprint": row[0]}
        raise LedgerCorruptError(
            f"The ledger file {self.path!r}: unknown event kind {kind!r} (damaged, or written "
            "by a newer privet)."
        )

    def check_rows(self, events: list[Event]) -> None:
        """Every row of the dataset must belong to an event; statuses must match the events."""
        conn, ds = self._conn, self.dataset
        count: dict[str, int] = {}
        for ev in events:
            count[ev.kind] = count.get(ev.kind, 0) + 1
        closes = {ev.payload["id"] for ev in events if ev.kind == "close"}
        members = sum(len(ev.payload["members"]) for ev in events if ev.kind == "group")
        with self._errors():
            found = {
                "group": conn.execute("SELECT count(*) FROM groups WHERE dataset = ?", (ds,)),
                "reserve": conn.execute(
                    "SELECT count(*) FROM reservations WHERE dataset = ?", (ds,)
                ),
                "charge": conn.execute("SELECT count(*) FROM charges WHERE dataset = ?", (ds,)),
            }
            for kind, cur in found.items():
                if cur.fetchone()[0] != count.get(kind, 0):
                    raise LedgerCorruptError(
                        f"The ledger file {self.path!r} holds {kind} rows of {ds!r} that its "
                        "hash chain does not account for (edited outside privet, or damaged). "
                        "Restore it from a backup."
                    )
            (n_scopes,) = conn.execute("SELECT count(*) FROM scopes WHERE dataset = ?", (ds,))
            closed = {
                r[0]
                for r in conn.execute(
                    "SELECT id FROM reservations WHERE dataset = ? AND status != 'open'", (ds,)
                )
            }
            if (events and n_scopes[0] != members + 1) or closed != closes:
                raise LedgerCorruptError(
                    f"The ledger file {self.path!r}: the scopes or reservation statuses of "
                    f"{ds!r} differ from its hash chain (edited outside privet, or damaged). "
                    "Restore it from a backup."
                )

    # ------------------------------------------------------------- writing
    def new_root(self) -> int:
        """Insert a new dataset's root scope (inside a transaction); return its id."""
        clash = self._conn.execute(
            "SELECT name FROM datasets WHERE lower(name) = lower(?) AND name != ?",
            (self.dataset, self.dataset),
        ).fetchone()
        if clash is not None:
            raise InvalidParameterError(
                f"Dataset {self.dataset!r} differs only by case from dataset {clash[0]!r} in "
                f"{self.path!r}; names that differ only by case would split one budget in two. "
                f"Open {clash[0]!r}, or choose a clearly different name."
            )
        cur = self._conn.execute(
            "INSERT INTO scopes (dataset, group_id, label) VALUES (?, NULL, ?)",
            (self.dataset, self.dataset),
        )
        return int(cur.lastrowid or 0)

    def _write_rows(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        conn, ds = self._conn, self.dataset
        p = dict(payload)
        if kind == "dataset":
            conn.execute(
                "INSERT INTO datasets (name, budget_epsilon, budget_delta, relation, root_scope, "
                "created, head, schema) VALUES (?, ?, ?, ?, ?, ?, '', NULL)",
                (
                    ds,
                    p["budget_epsilon"],
                    p["budget_delta"],
                    p["relation"],
                    p["root"],
                    time.time(),
                ),
            )
        elif kind == "group":
            cur = conn.execute(
                "INSERT INTO groups (dataset, parent, kind, stable, rate, method) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ds, p["parent"], p["kind"], int(p["stable"]), p["rate"], p["method"]),
            )
            p["id"] = gid = int(cur.lastrowid or 0)
            members = []
            for _, label in p["members"]:
                cur = conn.execute(
                    "INSERT INTO scopes (dataset, group_id, label) VALUES (?, ?, ?)",
                    (ds, gid, label),
                )
                members.append([int(cur.lastrowid or 0), label])
            p["members"] = members
        elif kind == "reserve":
            cur = conn.execute(
                "INSERT INTO reservations (dataset, epsilon, delta, status, caller, pid, host, "
                "created, scope_id) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?)",
                (
                    ds,
                    p["epsilon"],
                    p["delta"],
                    p["caller"],
                    p["pid"],
                    p["host"],
                    p["created"],
                    p["scope_id"],
                ),
            )
            p["id"] = int(cur.lastrowid or 0)
        elif kind == "close":
            conn.execute(
                "UPDATE reservations SET status = 'closed', closed = ? WHERE id = ?",
                (time.time(), p["id"]),
            )
        elif kind == "charge":
            record = p["record"]
            cur = conn.execute(
                "INSERT INTO charges (dataset, scope_id, reservation, record) VALUES (?, ?, ?, ?)",
                (ds, record["scope_id"], record["reservation"], json.dumps(record)),
            )
            p["id"] = int(cur.lastrowid or 0)
            p["record"] = {**record, "id": p["id"]}
        elif kind == "schema":
            conn.execute("UPDATE datasets SET schema = ? WHERE name = ?", (p["fingerprint"], ds))
        return p

    def _write_event(self, event: Event, ref: Any = None) -> None:
        if ref is None and event.kind not in ("dataset", "schema"):
            ref = event.payload["id"]
        self._conn.execute(
            "INSERT INTO chain (dataset, seq, kind, ref, hash) VALUES (?, ?, ?, ?, ?)",
            (self.dataset, event.seq, event.kind, ref, event.hash),
        )
        self._conn.execute(
            "UPDATE datasets SET head = ? WHERE name = ?", (event.hash, self.dataset)
        )

    # --------------------------------------------------------------- misc
    def reopen_args(self) -> tuple[Any, ...]:
        return (self.path, self.dataset, self.timeout)

    def describe(self) -> str:
        return repr(self.path)

    def close(self) -> None:
        self._rollback()
        self._conn.close()


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _translate(exc: sqlite3.Error, path: str) -> PrivetError:
    if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
        return LedgerBusyError(
            f"The ledger file {path!r} is locked by another process ({exc}); nothing was "
            "charged. Retry, or open it with a longer timeout=."
        )
    return LedgerCorruptError(
        f"{path!r} is not a usable privet ledger file ({type(exc).__name__}: {exc}); it is "
        "damaged or not a ledger. Restore it from a backup, or check the path."
    )
