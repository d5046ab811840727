"""Where a ledger lives: a SQLite file path or a ``postgresql://`` URL, and its store.

:func:`open_store` and :func:`list_datasets` take what the user gave
(``Ledger.open(where, ...)``, ``--ledger WHERE`` on the command line) and pick
the store: :class:`~privet.ledger.postgres_store.PostgresStore` for a URL,
:class:`~privet.ledger.sqlite_store.SQLiteStore` otherwise.
"""

from __future__ import annotations

from typing import Any

from privet.ledger.postgres_store import PostgresStore, is_postgres_url, list_postgres_datasets
from privet.ledger.sqlite_file import list_datasets as list_file_datasets
from privet.ledger.sqlite_store import SQLiteStore
from privet.ledger.store import Store

__all__ = ["list_datasets", "open_store"]


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
