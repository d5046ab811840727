"""Where a ledger lives: a SQLite file path or a ``postgresql://`` URL, and its store.

:func:`open_store` and :func:`list_datasets` take what the user gave
(``Ledger.open(where, ...)``, ``--ledger WHERE`` on the command line) and pick
the store: :class:`~privet.ledger.postgres_store.PostgresStore` for a URL,
:class:`~privet.ledger.sqlite_store.SQLiteStore` otherwise.
"""

from __future__ import annotations

import os
from typing import Any

from privet.ledger.postgres_store import PostgresStore, is_postgres_url, list_postgres_datasets
from privet.ledger.sqlite_file import list_datasets as list_file_datasets
from privet.ledger.sqlite_store import SQLiteStore
from privet.ledger.store import Store

__all__ = ["list_datasets", "open_store", "table_owner"]


def open_store(where: Any, dataset: str, timeout: Any) -> Store:
    """The shared store at ``where``: a ``postgresql://`` URL or a SQLite file path."""
    if is_postgres_url(where):
        return PostgresStore.connect(where, dataset, timeout)
    return SQLiteStore.connect(where, dataset, timeout)


def list_datasets(where: Any) -> list[dict[str, Any]]:
    """The datasets a ledger file or database holds, with their budgets."""
    if is_postgres_url(where):
        return list_postgres_datasets(where)
    return list_file_datasets(where)


def table_owner(where: Any, X: Any, y: Any = None) -> str | None:
    """The dataset of the ledger at ``where`` that this table was charged to, or None.

    ``X`` (columns in the schema's order) with labels ``y``, looked up by its salted
    fingerprint (:meth:`privet.ledger.Ledger.check_table`) without opening any
    dataset and without writing: a ledger file that does not exist yet holds none.
    """
    from privet.ledger.fingerprint import row_digests, table_fingerprint

    if not is_postgres_url(where) and not os.path.isfile(os.fspath(where)):
        return None
    store = open_store(where, "", 10.0)
    try:
        with store.snapshot():
            salt = store.table_salt(create=False)
            if salt is None:
                return None
            return store.table_owner(table_fingerprint(row_digests(X, y), salt))
    finally:
        store.close()
