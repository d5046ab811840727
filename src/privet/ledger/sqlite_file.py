"""The SQLite ledger file: its tables, its format versions, and what a path may be.

Format 1 (privet before the hash chain) had the tables ``datasets``, ``groups``,
``scopes``, ``reservations`` and ``charges``; format 2 adds ``meta`` (format and
version), ``chain`` (one row per event: kind, the row it wrote, its hash) and the
``head`` and ``schema`` columns of ``datasets``; format 3 adds the ``cost`` column
of ``reservations`` (the plan's cost a reservation holds, every view of it).
:mod:`privet.ledger.sqlite_store` reads and writes them.
"""

from __future__ import annotations

import math
import numbers
import os
import sqlite3
from typing import Any
from urllib.parse import quote

from privet.errors import DataNotFoundError, InvalidParameterError, LedgerCorruptError

#: privet's SQLite ledger format: 1 had no hash chain; 2 adds it (meta, chain, head, schema);
#: 3 adds the reservations' costs.
FORMAT = "privet-ledger"


VERSION = 3


TABLES = {
    "meta": ("key", "value"),
    "datasets": (
        "name",
        "budget_epsilon",
        "budget_delta",
        "relation",
        "root_scope",
        "created",
        "head",
        "schema",
    ),
    "groups": ("id", "dataset", "parent", "kind", "stable", "rate", "method"),
    "scopes": ("id", "dataset", "group_id", "label"),
    "reservations": (
        "id",
        "dataset",
        "epsilon",
        "delta",
        "status",
        "caller",
        "pid",
        "host",
        "created",
        "closed",
        "scope_id",
        "cost",
    ),
    "charges": ("id", "dataset", "scope_id", "reservation", "record"),
    "chain": ("dataset", "seq", "kind", "ref", "hash"),
}


SCHEMA_V1 = """
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
CREATE INDEX IF NOT EXISTS reservations_by_dataset ON reservations (dataset, status)
"""


UPGRADE_V2 = f"""
ALTER TABLE datasets ADD COLUMN head TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN schema TEXT;
CREATE TABLE chain (
    dataset TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    ref INTEGER,
    hash TEXT NOT NULL,
    PRIMARY KEY (dataset, seq)
) WITHOUT ROWID;
CREATE INDEX scopes_by_group ON scopes (group_id, id);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('format', '{FORMAT}');
INSERT INTO meta VALUES ('version', '2')
"""


UPGRADE_V3 = """
ALTER TABLE reservations ADD COLUMN cost TEXT;
UPDATE meta SET value = '3' WHERE key = 'version'
"""


def statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def check_path(path: Any) -> str:
    if not isinstance(path, str | os.PathLike):
        raise InvalidParameterError(
            f"A ledger file path is a str or os.PathLike, got {path!r} of type "
            f"{type(path).__name__}."
        )
    path = os.fspath(path)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if path.strip() in ("", ":memory:") or path.startswith("file:"):
        raise InvalidParameterError(
            f"Ledger.open needs the path of a ledger file, got {path!r}: an empty path or "
            "':memory:' would make a private, non-persistent ledger that other handles "
            "cannot see (two of them would spend two budgets). For an in-memory ledger use "
            "Ledger(budget=...); to share a budget give a file path such as 'budget.sqlite'."
        )
    if "\x00" in path:
        raise InvalidParameterError(f"A ledger file path cannot contain a NUL byte: {path!r}.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InvalidParameterError(
            f"Cannot create the ledger file {path!r}: folder {parent!r} does not exist."
        )
    if os.path.isdir(path):
        raise InvalidParameterError(f"{path!r} is a folder; give the path of a ledger file.")
    return path


def check_timeout(timeout: Any) -> float:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout < 0
    ):
        raise InvalidParameterError(
            f"timeout is the number of seconds to wait for another process's lock, a finite "
            f"number >= 0; got {timeout!r}."
        )
    return float(timeout)


def list_datasets(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The datasets a ledger file holds, with their budgets (for ``privet ledger show``)."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParameterError(
            f"A ledger file path is a str or os.PathLike, got {path!r} of type "
            f"{type(path).__name__}."
        )
    path = os.fsdecode(os.fspath(path))
    if not os.path.exists(path):
        raise DataNotFoundError(f"No ledger file at {path!r}; check the path.")
    if os.path.isdir(path):
        raise InvalidParameterError(f"{path!r} is a folder; give the path of a ledger file.")
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise LedgerCorruptError(f"Cannot open the ledger file {path!r}: {exc}.") from None
    try:
        rows = conn.execute(
            "SELECT name, budget_epsilon, budget_delta, relation FROM datasets ORDER BY name"
        ).fetchall()
    except sqlite3.Error as exc:
        raise LedgerCorruptError(f"{path!r} is not a privet ledger file: {exc}.") from None
    finally:
        conn.close()
    return [{"name": r[0], "epsilon": r[1], "delta": r[2], "relation": r[3]} for r in rows]
