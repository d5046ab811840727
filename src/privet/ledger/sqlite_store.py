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

On open the file is checked (``PRAGMA integrity_check``, which, unlike
``quick_check``, also finds an index that no longer matches its table; privet's
format and version, the tables' columns) and every event of the dataset is read back and verified
against its hash chain (:mod:`privet.ledger.chain`): a damaged or edited file
raises :class:`~privet.errors.LedgerCorruptError` and is not used. Files written
by privet before the chain existed (format version 1) are upgraded on first open:
their chain is computed from their rows as they are then. Format 2 files gain the
reservations' ``cost`` column (empty for the reservations already made, which hold
their (epsilon, delta) amounts as before).

A reservation left open by a process that died is closed by the next writer on
the same host (its pid no longer exists); the charges made in it stay. (A SQLite
file is shared by the processes of one host: a process of another host, through a
network file system, is not supported.)

A closed store (``Ledger.close()``) refuses every later read and write with
:class:`~privet.errors.LedgerClosedError`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from privet.errors import (
    LedgerBusyError,
    LedgerCorruptError,
    PrivetError,
)
from privet.ledger.chain import Event, seal
from privet.ledger.sql_store import SQLStore
from privet.ledger.sqlite_file import (
    FORMAT,
    SCHEMA_V1,
    TABLES,
    UPGRADE_V2,
    UPGRADE_V3,
    VERSION,
    check_path,
    check_timeout,
    list_datasets,
    statements,
)

if TYPE_CHECKING:
    from privet.ledger.tree import ReservationState

__all__ = ["SQLiteStore", "list_datasets"]

T = TypeVar("T")


# SQLite's own wait for a lock, per attempt; the retry loop in Python does the rest
# (a wait in C cannot be interrupted by Ctrl-C).
_BUSY_MS = 20


class SQLiteStore(SQLStore):
    """One dataset's events in a SQLite ledger file (see module docstring)."""

    shared = True

    def __init__(self, conn: sqlite3.Connection, path: str, dataset: str, timeout: float):
        self._conn = conn
        self.path = path
        self.where = f"the ledger file {path!r}"
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
            # integrity_check, not quick_check: an index that no longer matches its
            # table (a bit flip in an index page) passes quick_check, opens, and then
            # takes writes that make the damage worse.
            check = conn.execute("PRAGMA integrity_check").fetchall()
            if check != [("ok",)]:
                raise LedgerCorruptError(
                    f"The ledger file {self.path!r} is damaged (SQLite integrity check: "
                    f"{'; '.join(str(r[0]) for r in check[:3])}). Do not write to it. If only "
                    "its indexes are damaged (messages naming an index), copy the file as a "
                    f"backup, rebuild them with: sqlite3 {self.path!r} 'REINDEX' and open it "
                    "again: privet then checks every row against the hash chain. Otherwise "
                    "restore it from a backup."
                )
            if self._tables() != set(TABLES):
                with self.transaction():
                    tables = self._tables()
                    if not tables:
                        for stmt in statements(SCHEMA_V1) + statements(UPGRADE_V2):
                            conn.execute(stmt)
                    elif tables == set(TABLES) - {"meta", "chain"}:
                        self._upgrade_v1()
            if self._version() == "2":
                with self.transaction():
                    if self._version() == "2":  # not upgraded by another process meanwhile
                        for stmt in statements(UPGRADE_V3):
                            conn.execute(stmt)
            self._check_format()

    def _version(self) -> str | None:
        """The format version the file's meta table states (None: no meta table yet)."""
        if "meta" not in self._tables():
            return None
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return None if row is None else str(row[0])

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
        """Format 1 -> 3: add the chain, computed from the rows as they are now, and the
        reservations' cost column."""
        conn = self._conn
        for stmt in statements(UPGRADE_V2) + statements(UPGRADE_V3):
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
        self.check_open()
        self._read_head = None
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
        self.check_open()
        self._read_head = None
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
        if not self.closed and self._conn.in_transaction:
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

    # ------------------------------------------------------------ statements
    def _x(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        self.check_open()
        return self._conn.execute(sql, params)

    def _insert(self, sql: str, params: tuple[Any, ...]) -> int:
        return int(self._conn.execute(sql, params).lastrowid or 0)

    def _driver_error(self, exc: Exception) -> PrivetError | None:
        return _translate(exc, self.path) if isinstance(exc, sqlite3.Error) else None

    # --------------------------------------------------------------- misc
    def reopen_args(self) -> tuple[Any, ...]:
        return (self.path, self.dataset, self.timeout)

    def describe(self) -> str:
        return repr(self.path)

    def close(self) -> None:
        self._rollback()
        self._conn.close()
        self.closed = True

    def abandoned(self, open_reservations: list[ReservationState]) -> list[int]:
        """Reservations of processes of this host that no longer exist."""
        host, me = socket.gethostname(), os.getpid()
        return [
            r.id
            for r in open_reservations
            if r.host == host and r.pid != me and not _pid_alive(r.pid)
        ]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


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
