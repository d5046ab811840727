"""The rows and the hash chain of a SQL ledger store, shared by SQLite and PostgreSQL.

Both stores keep the same tables (:mod:`privet.ledger.sqlite_file` has the
columns): ``datasets`` (budget, relation, head of the chain, schema
fingerprint), ``groups`` and ``scopes`` (the scope tree), ``reservations``,
``charges`` and ``chain`` (one row per event: its kind, the row it wrote, its
hash). This module reads an event's payload back from the rows *as they are
now* (so that the chain detects an edit), writes an event's rows, and checks
that no row exists that the chain does not account for. A subclass says how to
run a statement (:meth:`SQLStore._x`), how to insert a row and get its id
(:meth:`SQLStore._insert`), and how to take the write lock.

:meth:`SQLStore.dump` and :meth:`SQLStore.load` copy one dataset's rows between
stores with their ids, so that the copy's hash chain is the original's
(``privet ledger copy``).
"""

from __future__ import annotations

import contextlib
import json
import time
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

from privet.errors import InvalidParameterError, LedgerCorruptError, PrivetError
from privet.ledger.chain import Event, canonical
from privet.ledger.sqlite_file import TABLES
from privet.ledger.store import Store

__all__ = ["SQLStore"]

#: The tables that hold one dataset's rows (``meta`` is the store's own), in the
#: order a copy inserts them.
DATASET_TABLES = ("datasets", "groups", "scopes", "reservations", "charges", "chain")
_NAME_COLUMN = {"datasets": "name"}


class SQLStore(Store):
    """One dataset's events in SQL tables (see module docstring)."""

    shared = True

    #: How the store names itself in messages, mid-sentence ("the ledger file 'x'").
    where: str

    @property
    def where_start(self) -> str:
        """:attr:`where` at the start of a sentence."""
        return self.where[:1].upper() + self.where[1:]

    @abstractmethod
    def _x(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """Run one statement (``?`` placeholders); return a cursor."""

    @abstractmethod
    def _insert(self, sql: str, params: tuple[Any, ...]) -> int:
        """Run one INSERT into a table with an ``id`` column; return the new row's id."""

    @abstractmethod
    def _driver_error(self, exc: Exception) -> PrivetError | None:
        """The privet error for a database driver's exception (None: not the driver's)."""

    @contextlib.contextmanager
    def _driver_errors(self) -> Iterator[None]:
        """Turn the database driver's exceptions (only those) into privet errors."""
        try:
            yield
        except PrivetError:
            raise
        except Exception as exc:
            translated = self._driver_error(exc)
            if translated is None:
                raise
            raise translated from None

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The driver's exceptions, and values the decoders cannot read, as privet errors."""
        try:
            with self._driver_errors():
                yield
        except PrivetError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
            raise LedgerCorruptError(
                f"{self.where_start} holds a malformed value ({type(exc).__name__}: {exc}); it "
                "is damaged or was edited. Restore it from a backup."
            ) from None

    # ------------------------------------------------------------- reading
    #: One statement reads the dataset's head and every event after a given seq, each
    #: with the row it wrote (as it is now): the dataset row, then the chain rows
    #: joined to their groups, reservations and charges.
    _EVENTS = (
        "SELECT d.head, d.root_scope, d.name, d.budget_epsilon, d.budget_delta, d.relation, "
        "d.schema, c.seq, c.kind, c.ref, c.hash, "
        "g.id, g.dataset, g.parent, g.kind, g.stable, g.rate, g.method, "
        "r.id, r.dataset, r.epsilon, r.delta, r.caller, r.pid, r.host, r.created, "
        "r.scope_id, r.cost, ch.id, ch.dataset, ch.record "
        "FROM datasets d LEFT JOIN chain c ON c.dataset = d.name AND c.seq > ? "
        "LEFT JOIN groups g ON c.kind = 'group' AND g.id = c.ref "
        "LEFT JOIN reservations r ON c.kind = 'reserve' AND r.id = c.ref "
        "LEFT JOIN charges ch ON c.kind = 'charge' AND ch.id = c.ref "
        "WHERE d.name = ? ORDER BY c.seq"
    )

    #: The head read with the last :meth:`events_after` (see :meth:`head`).
    _read_head: str | None = None

    def events_after(self, seq: int) -> list[Event]:
        """The events after ``seq`` in one statement (two with new scope groups)."""
        with self._errors():
            rows = self._x(self._EVENTS, (seq, self.dataset)).fetchall()
            if not rows:  # no dataset row: a new dataset, unless its events remain
                self._read_head = None
                return self._events_after_by_row(seq)
            self._read_head = "" if rows[0][0] is None else str(rows[0][0])
            if rows[0][7] is None:  # the dataset row alone: nothing new
                return []
            members = self._group_members([r[9] for r in rows if r[8] == "group"])
            events = []
            for n, row in enumerate(rows):
                s, kind, ref, h = row[7:11]
                if s != seq + 1 + n or not isinstance(h, str):
                    raise self._out_of_sequence()
                events.append(Event(s, kind, self._joined_payload(kind, ref, row, members), h))
            return events

    def _out_of_sequence(self) -> LedgerCorruptError:
        return LedgerCorruptError(
            f"{self.where_start}: the events of {self.dataset!r} are not "
            "numbered in sequence (an event was deleted or the file is damaged). "
            "Restore it from a backup."
        )

    def _events_after_by_row(self, seq: int) -> list[Event]:
        """The events after ``seq``, each payload read by its own statement."""
        rows = self._x(
            "SELECT seq, kind, ref, hash FROM chain WHERE dataset = ? AND seq > ? ORDER BY seq",
            (self.dataset, seq),
        ).fetchall()
        events = []
        for n, (s, kind, ref, h) in enumerate(rows):
            if s != seq + 1 + n or not isinstance(h, str):
                raise self._out_of_sequence()
            events.append(Event(s, kind, self._payload(kind, ref), h))
        return events

    def _group_members(self, ids: list[Any]) -> dict[Any, list[list[Any]]]:
        """The member scopes of the groups ``ids``, in one statement."""
        members: dict[Any, list[list[Any]]] = {g: [] for g in ids}
        if not ids or any(not isinstance(g, int) for g in ids):
            return members
        for gid, sid, label in self._x(
            "SELECT group_id, id, label FROM scopes WHERE dataset = ? AND group_id >= ? "
            "AND group_id <= ? ORDER BY id",
            (self.dataset, min(ids), max(ids)),
        ).fetchall():
            if gid in members:
                members[gid].append([sid, label])
        return members

    def _joined_payload(
        self, kind: str, ref: Any, row: tuple[Any, ...], members: dict[Any, list[list[Any]]]
    ) -> dict[str, Any]:
        """An event's payload from its row of :attr:`_EVENTS` (what :meth:`_payload` reads)."""
        ds = self.dataset

        def written(cols: tuple[Any, ...]) -> tuple[Any, ...]:
            if cols[0] is None or cols[1] != ds:
                raise LedgerCorruptError(
                    f"{self.where_start}: a {kind} event of {ds!r} refers to a row "
                    "that is missing (deleted outside privet, or the file is damaged). "
                    "Restore it from a backup."
                )
            return cols

        if kind == "dataset":
            return canonical(
                {
                    "name": row[2],
                    "budget_epsilon": row[3],
                    "budget_delta": row[4],
                    "relation": row[5],
                    "root": row[1],
                }
            )
        if kind == "schema":
            return {"fingerprint": row[6]}
        if kind == "group":
            g = written(row[11:18])
            return canonical(
                {
                    "id": g[0],
                    "parent": g[2],
                    "kind": g[3],
                    "stable": bool(g[4]),
                    "rate": g[5],
                    "method": g[6],
                    "members": members.get(ref, []),
                }
            )
        if kind == "reserve":
            r = written(row[18:28])
            keys = ("epsilon", "delta", "caller", "pid", "host", "created", "scope_id")
            cost = {} if r[9] is None else {"cost": json.loads(r[9])}
            return canonical({"id": r[0], **dict(zip(keys, r[2:9], strict=True)), **cost})
        if kind == "charge":
            c = written(row[28:31])
            record = json.loads(c[2])
            if not isinstance(record, dict):
                raise LedgerCorruptError(f"{self.where_start}: charge {ref} is damaged.")
            record["id"] = c[0]
            return canonical({"id": c[0], "record": record})
        return self._payload(kind, ref)  # close (no row), or an unknown kind (refused)

    def head(self) -> str:
        """The stored head; the one :meth:`events_after` just read, in the same statement."""
        if self._read_head is not None:
            head, self._read_head = self._read_head, None
            return head
        with self._errors():
            row = self._x("SELECT head FROM datasets WHERE name = ?", (self.dataset,)).fetchone()
        return "" if row is None else str(row[0])

    def _payload(self, kind: str, ref: Any) -> dict[str, Any]:
        """An event's payload, read from the rows it wrote as they are now."""
        ds = self.dataset

        def one(sql: str, key: Any) -> tuple[Any, ...]:
            row = self._x(sql, (key,)).fetchone()
            if row is None or row[1] != ds:
                raise LedgerCorruptError(
                    f"{self.where_start}: a {kind} event of {ds!r} refers to a row "
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
            members = self._x(
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
                "SELECT id, dataset, epsilon, delta, caller, pid, host, created, scope_id, cost "
                "FROM reservations WHERE id = ?",
                ref,
            )
            keys = ("epsilon", "delta", "caller", "pid", "host", "created", "scope_id")
            cost = {} if row[9] is None else {"cost": json.loads(row[9])}
            return canonical({"id": row[0], **dict(zip(keys, row[2:9], strict=True)), **cost})
        if kind == "close":
            return {"id": ref}
        if kind == "charge":
            row = one("SELECT id, dataset, record FROM charges WHERE id = ?", ref)
            record = json.loads(row[2])
            if not isinstance(record, dict):
                raise LedgerCorruptError(f"{self.where_start}: charge {ref} is damaged.")
            record["id"] = row[0]
            return canonical({"id": row[0], "record": record})
        if kind == "schema":
            row = one("SELECT schema, name FROM datasets WHERE name = ?", ds)
            return {"fingerprint": row[0]}
        raise LedgerCorruptError(
            f"{self.where_start}: unknown event kind {kind!r} (damaged, or written "
            "by a newer privet)."
        )

    def check_rows(self, events: list[Event]) -> None:
        """Every row of the dataset must belong to an event; statuses must match the events."""
        ds = self.dataset
        count: dict[str, int] = {}
        for ev in events:
            count[ev.kind] = count.get(ev.kind, 0) + 1
        closes = {ev.payload["id"] for ev in events if ev.kind == "close"}
        members = sum(len(ev.payload["members"]) for ev in events if ev.kind == "group")
        with self._errors():
            found = {
                "group": self._x("SELECT count(*) FROM groups WHERE dataset = ?", (ds,)),
                "reserve": self._x("SELECT count(*) FROM reservations WHERE dataset = ?", (ds,)),
                "charge": self._x("SELECT count(*) FROM charges WHERE dataset = ?", (ds,)),
            }
            for kind, cur in found.items():
                if cur.fetchone()[0] != count.get(kind, 0):
                    raise LedgerCorruptError(
                        f"{self.where_start} holds {kind} rows of {ds!r} that its "
                        "hash chain does not account for (edited outside privet, or damaged). "
                        "Restore it from a backup."
                    )
            (n_scopes,) = self._x("SELECT count(*) FROM scopes WHERE dataset = ?", (ds,))
            closed = {
                r[0]
                for r in self._x(
                    "SELECT id FROM reservations WHERE dataset = ? AND status != 'open'", (ds,)
                )
            }
            if (events and n_scopes[0] != members + 1) or closed != closes:
                raise LedgerCorruptError(
                    f"{self.where_start}: the scopes or reservation statuses of "
                    f"{ds!r} differ from its hash chain (edited outside privet, or damaged). "
                    "Restore it from a backup."
                )

    # ------------------------------------------------------------- writing
    def new_root(self) -> int:
        """Insert a new dataset's root scope (inside a transaction); return its id."""
        clash = self._x(
            "SELECT name FROM datasets WHERE lower(name) = lower(?) AND name != ?",
            (self.dataset, self.dataset),
        ).fetchone()
        if clash is not None:
            raise InvalidParameterError(
                f"Dataset {self.dataset!r} differs only by case from dataset {clash[0]!r} in "
                f"{self.where}; names that differ only by case would split one budget in two. "
                f"Open {clash[0]!r}, or choose a clearly different name."
            )
        return self._insert(
            "INSERT INTO scopes (dataset, group_id, label) VALUES (?, NULL, ?)",
            (self.dataset, self.dataset),
        )

    def _write_rows(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        ds = self.dataset
        p = dict(payload)
        if kind == "dataset":
            self._x(
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
            new_id = self._insert(
                "INSERT INTO groups (dataset, parent, kind, stable, rate, method) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ds, p["parent"], p["kind"], int(p["stable"]), p["rate"], p["method"]),
            )
            p["id"] = gid = new_id
            members = []
            for _, label in p["members"]:
                new_id = self._insert(
                    "INSERT INTO scopes (dataset, group_id, label) VALUES (?, ?, ?)",
                    (ds, gid, label),
                )
                members.append([new_id, label])
            p["members"] = members
        elif kind == "reserve":
            new_id = self._insert(
                "INSERT INTO reservations (dataset, epsilon, delta, status, caller, pid, host, "
                "created, scope_id, cost) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)",
                (
                    ds,
                    p["epsilon"],
                    p["delta"],
                    p["caller"],
                    p["pid"],
                    p["host"],
                    p["created"],
                    p["scope_id"],
                    json.dumps(p["cost"]) if "cost" in p else None,
                ),
            )
            p["id"] = new_id
        elif kind == "close":
            self._x(
                "UPDATE reservations SET status = 'closed', closed = ? WHERE id = ?",
                (time.time(), p["id"]),
            )
        elif kind == "charge":
            record = p["record"]
            new_id = self._insert(
                "INSERT INTO charges (dataset, scope_id, reservation, record) VALUES (?, ?, ?, ?)",
                (ds, record["scope_id"], record["reservation"], json.dumps(record)),
            )
            p["id"] = new_id
            p["record"] = {**record, "id": p["id"]}
        elif kind == "schema":
            self._x("UPDATE datasets SET schema = ? WHERE name = ?", (p["fingerprint"], ds))
        return p

    def _write_event(self, event: Event, ref: Any = None) -> None:
        if ref is None and event.kind not in ("dataset", "schema"):
            ref = event.payload["id"]
        self._x(
            "INSERT INTO chain (dataset, seq, kind, ref, hash) VALUES (?, ?, ?, ?, ?)",
            (self.dataset, event.seq, event.kind, ref, event.hash),
        )
        self._x("UPDATE datasets SET head = ? WHERE name = ?", (event.hash, self.dataset))

    # ------------------------------------------------------ table owners
    def table_salt(self, *, create: bool) -> str | None:
        from privet.ledger.fingerprint import SALT_KEY, new_salt

        with self._errors():
            if create:
                self._x(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                    (SALT_KEY, new_salt()),
                )
            row = self._x("SELECT value FROM meta WHERE key = ?", (SALT_KEY,)).fetchone()
        return None if row is None else str(row[0])

    def table_owner(self, fingerprint: str) -> str | None:
        from privet.ledger.fingerprint import TABLE_PREFIX

        with self._errors():
            row = self._x(
                "SELECT value FROM meta WHERE key = ?", (TABLE_PREFIX + fingerprint,)
            ).fetchone()
        return None if row is None else str(row[0])

    def record_table(self, fingerprint: str) -> str:
        from privet.ledger.fingerprint import TABLE_PREFIX

        with self._errors():
            self._x(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (TABLE_PREFIX + fingerprint, self.dataset),
            )
        owner = self.table_owner(fingerprint)
        return self.dataset if owner is None else owner

    # ---------------------------------------------------------------- copy
    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """This dataset's rows, table by table, with their ids (inside a snapshot)."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self._errors():
            for table in DATASET_TABLES:
                cols = ", ".join(TABLES[table])
                key = _NAME_COLUMN.get(table, "dataset")
                order = "seq" if table == "chain" else ("name" if table == "datasets" else "id")
                out[table] = [
                    tuple(r)
                    for r in self._x(
                        f"SELECT {cols} FROM {table} WHERE {key} = ? ORDER BY {order}",
                        (self.dataset,),
                    ).fetchall()
                ]
        return out

    def load(self, rows: dict[str, list[tuple[Any, ...]]]) -> None:
        """Insert another store's dump of this dataset, ids kept (inside a transaction).

        Raises InvalidParameterError if this store already holds the dataset or any
        of the ids (ids are shared by all datasets of a store).
        """
        with self._errors():
            if self._x("SELECT 1 FROM datasets WHERE name = ?", (self.dataset,)).fetchone():
                raise InvalidParameterError(
                    f"{self.where_start} already holds dataset {self.dataset!r}; copy into a store "
                    "without it (a budget cannot be merged with another)."
                )
            for table in DATASET_TABLES:
                cols = TABLES[table]
                if "id" in cols and rows[table]:
                    ids = [r[cols.index("id")] for r in rows[table]]
                    marks = ", ".join("?" for _ in ids)
                    taken = self._x(f"SELECT id FROM {table} WHERE id IN ({marks})", tuple(ids))
                    if taken.fetchone() is not None:
                        raise InvalidParameterError(
                            f"{self.where_start} already uses some of the {table} ids of "
                            f"{self.dataset!r} (another dataset's); copy into an empty store."
                        )
                marks = ", ".join("?" for _ in cols)
                for row in rows[table]:
                    self._x(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", row)
            self._after_load()

    def _after_load(self) -> None:
        """Advance the id generators past the rows :meth:`load` inserted."""
        return None
