"""A ledger persisted in a SQLite file, shared safely by concurrent processes.

Every check-and-charge is one ``BEGIN IMMEDIATE`` transaction: the process
takes SQLite's write lock, reads what other processes committed since it last
looked, composes, and inserts the charge only if it fits, then commits. Two
processes can therefore never both see room for the same last unit of budget.
The database runs in WAL mode with ``synchronous=FULL``, so a committed charge
survives a killed process (and a power cut).

A reservation left open by a process that died is closed by the next writer on
the same host (its pid no longer exists); the charges made in it stay.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from privet.errors import InvalidParameterError, PrivetError
from privet.ledger.entries import Claim, Entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.ledger import (
    ChargeRecord,
    Ledger,
    Reservation,
    Scope,
    _ReservationState,
)
from privet.ledger.relation import NeighbouringRelation

_SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    name TEXT PRIMARY KEY,
    budget_epsilon TEXT NOT NULL,
    budget_delta REAL NOT NULL,
    relation TEXT NOT NULL,
    root_scope INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    parent INTEGER NOT NULL,
    kind TEXT NOT NULL,
    stable INTEGER NOT NULL,
    rate REAL NOT NULL,
    method TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    group_id INTEGER,
    label TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reservations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    epsilon TEXT NOT NULL,
    delta REAL NOT NULL,
    status TEXT NOT NULL,
    caller TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    created REAL NOT NULL,
    closed REAL,
    scope_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS charges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    scope_id INTEGER NOT NULL,
    reservation INTEGER,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset, id);
CREATE INDEX IF NOT EXISTS groups_by_dataset ON groups (dataset, id);
CREATE INDEX IF NOT EXISTS scopes_by_dataset ON scopes (dataset, id);
CREATE INDEX IF NOT EXISTS reservations_by_dataset ON reservations (dataset, status);
"""


def _eps_text(eps: float) -> str:
    return "inf" if math.isinf(eps) else repr(float(eps))


class SQLiteLedger(Ledger):
    """A :class:`Ledger` whose state lives in a SQLite file (see module docstring).

    Open one with :meth:`Ledger.open`.
    """

    path: str

    @classmethod
    def _open(
        cls,
        path: str | os.PathLike[str],
        dataset: str,
        budget: Guarantee | float | None,
        relation: NeighbouringRelation | str | None,
        timeout: float,
    ) -> SQLiteLedger:
        if not str(dataset):
            raise InvalidParameterError("Ledger.open needs a non-empty dataset name.")
        if budget is not None and not isinstance(budget, Guarantee):
            budget = Guarantee(budget)
        rel = None if relation is None else NeighbouringRelation.parse(relation)
        path = os.fspath(path)
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise InvalidParameterError(
                f"Cannot create the ledger file {path!r}: folder {parent!r} does not exist."
            )
        try:
            conn = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise PrivetError(f"{path!r} is not a usable privet ledger file: {exc}.") from None

        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT budget_epsilon, budget_delta, relation, root_scope FROM datasets "
                "WHERE name = ?",
                (dataset,),
            ).fetchone()
            if row is None:
                if budget is None:
                    raise InvalidParameterError(
                        f"Dataset {dataset!r} has no budget in {path!r} yet; pass "
                        "budget=Guarantee(epsilon, delta) the first time you open it."
                    )
                rel = rel or NeighbouringRelation.ADD_REMOVE
                cur = conn.execute(
                    "INSERT INTO scopes (dataset, group_id, label) VALUES (?, NULL, ?)",
                    (dataset, dataset),
                )
                root = int(cur.lastrowid or 0)
                conn.execute(
                    "INSERT INTO datasets VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        dataset,
                        _eps_text(budget.epsilon),
                        budget.delta,
                        rel.value,
                        root,
                        time.time(),
                    ),
                )
            else:
                stored = Guarantee(math.inf if row[0] == "inf" else float(row[0]), float(row[1]))
                stored_rel = NeighbouringRelation(row[2])
                root = int(row[3])
                if budget is not None and budget != stored:
                    raise InvalidParameterError(
                        f"Dataset {dataset!r} in {path!r} has budget {stored}, not {budget}; "
                        "a lifetime budget cannot be changed. Omit budget= to use the stored "
                        "one, or use a new dataset name."
                    )
                if rel is not None and rel is not stored_rel:
                    raise InvalidParameterError(
                        f"Dataset {dataset!r} in {path!r} uses {stored_rel.label} neighbours, "
                        f"not {rel.label}; omit relation= or use a new dataset name."
                    )
                budget, rel = stored, stored_rel
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise

        led = cls.__new__(cls)
        led._setup(budget, rel, dataset, root_id=root)
        led.path = path
        led._conn = conn
        led._seen = {"group": 0, "scope": root, "charge": 0, "reservation": 0}
        led._refresh()  # one read transaction: a consistent snapshot of all tables
        return led

    def __reduce__(self) -> tuple[Any, ...]:
        # A file ledger unpickles by reopening the same file and dataset.
        return (Ledger.open, (self.path, self.dataset))

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLiteLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- syncing
    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, with the model synced to the database first."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        self._stale_closed: list[int] = []
        try:
            self._sync(writing=True)
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            # The model already treats the dead processes' reservations as closed: make
            # the file agree even though this write was rejected (closing is idempotent).
            for rid in self._stale_closed:
                with contextlib.suppress(sqlite3.Error):  # best effort: any writer closes it
                    conn.execute(
                        "UPDATE reservations SET status = 'closed', closed = ? "
                        "WHERE id = ? AND status = 'open'",
                        (time.time(), rid),
                    )
            raise

    def _refresh(self) -> None:
        if self._conn.in_transaction:
            return
        self._conn.execute("BEGIN")
        try:
            self._sync()
        finally:
            self._conn.execute("COMMIT")

    def _sync(self, *, writing: bool = False) -> None:
        """Apply what other processes committed since we last looked."""
        conn, ds, seen = self._conn, self.dataset, self._seen
        groups = conn.execute(
            "SELECT id, parent, kind, stable, rate, method FROM groups "
            "WHERE dataset = ? AND id > ? ORDER BY id",
            (ds, seen["group"]),
        ).fetchall()
        if groups:
            members: dict[int, list[tuple[int, str]]] = {}
            for sid, gid, label in conn.execute(
                "SELECT id, group_id, label FROM scopes WHERE dataset = ? AND id > ? ORDER BY id",
                (ds, seen["scope"]),
            ):
                members.setdefault(gid, []).append((sid, label))
                seen["scope"] = max(seen["scope"], sid)
            for gid, parent, kind, stable, rate, method in groups:
                self._apply_group(
                    gid,
                    parent,
                    kind,
                    members.get(gid, []),
                    stable=bool(stable),
                    rate=rate,
                    method=method,
                )
                seen["group"] = gid
        # Reservations: new ones, and status changes of those we hold as open.
        open_ids = [r.id for r in self._open_reservations()]
        marks = ",".join("?" * len(open_ids))
        query = (
            "SELECT id, epsilon, delta, status, caller, pid, host, created, scope_id "
            "FROM reservations "
            f"WHERE dataset = ? AND (id > ? {'OR id IN (' + marks + ')' if open_ids else ''}) "
            "ORDER BY id"
        )
        for rid, eps, delta, status, caller, pid, host, created, scope_id in conn.execute(
            query, (ds, seen["reservation"], *open_ids)
        ):
            state = self._reservations.get(rid)
            if state is None:
                amount = Guarantee(math.inf if eps == "inf" else float(eps), float(delta))
                self._reservations[rid] = _ReservationState(
                    rid, amount, "open", caller, pid, host, created, scope_id
                )
                self._place_reservation(scope_id, rid, amount)
                self._next_id["reservation"] = max(self._next_id["reservation"], rid + 1)
            if status == "closed":
                self._mark_closed(rid)
            seen["reservation"] = max(seen["reservation"], rid)
        for cid, record in conn.execute(
            "SELECT id, record FROM charges WHERE dataset = ? AND id > ? ORDER BY id",
            (ds, seen["charge"]),
        ):
            data = json.loads(record)
            data["id"] = cid
            self._apply_charge(ChargeRecord.from_dict(data))
            seen["charge"] = cid
        if writing:
            self._close_stale_reservations()

    def _close_stale_reservations(self) -> None:
        host = socket.gethostname()
        for r in self._open_reservations():
            if r.host == host and r.pid != os.getpid() and not _pid_alive(r.pid):
                self._conn.execute(
                    "UPDATE reservations SET status = 'closed', closed = ? WHERE id = ?",
                    (time.time(), r.id),
                )
                self._mark_closed(r.id)
                self._stale_closed.append(r.id)

    # --------------------------------------------------------------- writes
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
        with self._lock, self._write() as conn:
            gid = int(
                conn.execute(
                    "INSERT INTO groups (dataset, parent, kind, stable, rate, method) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (self.dataset, parent, kind, int(stable), rate, method),
                ).lastrowid
                or 0
            )
            members = []
            for label in labels:
                sid = conn.execute(
                    "INSERT INTO scopes (dataset, group_id, label) VALUES (?, ?, ?)",
                    (self.dataset, gid, label),
                ).lastrowid
                members.append((int(sid or 0), label))
            ids = self._apply_group(
                gid, parent, kind, members, stable=stable, rate=rate, method=method
            )
            self._seen["group"] = gid
            self._seen["scope"] = max(self._seen["scope"], *ids)
            return tuple(Scope(self, i) for i in ids)

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
        if not commit:
            self._refresh()
            return super()._commit_charge(
                node_id, entry, mechanism, sensitivity, caller, step, claim, reservation, False
            )
        with self._write() as conn:
            self._check_charge(node_id, entry, reservation)
            record = self._make_record(
                node_id, entry, mechanism, sensitivity, caller, step, claim, reservation
            )
            data = record.to_dict()
            cid = conn.execute(
                "INSERT INTO charges (dataset, scope_id, reservation, record) VALUES (?, ?, ?, ?)",
                (self.dataset, node_id, data["reservation"], json.dumps(data)),
            ).lastrowid
        record = ChargeRecord.from_dict({**data, "id": int(cid or 0)})
        self._apply_charge(record)
        self._seen["charge"] = max(self._seen["charge"], record.id)
        return record

    def _reserve(self, amount: Guarantee, caller: str, node_id: int) -> _ReservationState:
        with self._write() as conn:
            state = super()._reserve(amount, caller, node_id)  # the check, with a local id
            self._reservations.pop(state.id)
            self._unplace_reservation(node_id, state.id)
            rid = int(
                conn.execute(
                    "INSERT INTO reservations (dataset, epsilon, delta, status, caller, pid, "
                    "host, created, scope_id) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?)",
                    (
                        self.dataset,
                        _eps_text(amount.epsilon),
                        amount.delta,
                        caller,
                        state.pid,
                        state.host,
                        state.created,
                        node_id,
                    ),
                ).lastrowid
                or 0
            )
        state.id = rid
        self._reservations[rid] = state
        self._place_reservation(node_id, rid, amount)
        self._next_id["reservation"] = max(self._next_id["reservation"], rid + 1)
        self._seen["reservation"] = max(self._seen["reservation"], rid)
        return state

    def _close_reservation(self, rid: int) -> None:
        with self._lock, self._write() as conn:
            conn.execute(
                "UPDATE reservations SET status = 'closed', closed = ? WHERE id = ?",
                (time.time(), rid),
            )
            self._mark_closed(rid)

    def __repr__(self) -> str:
        return f"SQLiteLedger({self.path!r}, dataset={self.dataset!r}, budget={self.budget})"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_datasets(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The datasets a ledger file holds, with their budgets (for ``privet ledger show``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        from privet.errors import DataNotFoundError

        raise DataNotFoundError(f"No ledger file at {path!r}; check the path.")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT name, budget_epsilon, budget_delta, relation FROM datasets ORDER BY name"
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise PrivetError(f"{path!r} is not a privet ledger file: {exc}.") from None
    finally:
        conn.close()
    return [{"name": r[0], "epsilon": r[1], "delta": r[2], "relation": r[3]} for r in rows]
