"""Copy a ledger between stores (a SQLite file and a PostgreSQL database), verified.

``copy_ledger("budget.sqlite", "postgresql://privet@db/ledgers")`` moves every
dataset of the file to the database (or one, with ``dataset=``). The rows are
copied with their ids, so the copy has the same hash chain as the original; the
copy is then opened as a ledger (which verifies its chain and its rows) and its
chain compared, event by event, with the original's. Nothing is merged: a
destination that already holds a dataset of the same name refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from privet.errors import LedgerCorruptError
from privet.ledger.ledger import Ledger
from privet.ledger.locations import list_datasets, open_store
from privet.ledger.postgres_store import redact_url
from privet.ledger.sql_store import SQLStore

__all__ = ["CopiedDataset", "copy_ledger"]


@dataclass(frozen=True)
class CopiedDataset:
    """One dataset copied: its name, how many events, the head of its hash chain."""

    dataset: str
    events: int
    head: str


def copy_ledger(
    source: Any, destination: Any, *, dataset: str | None = None, timeout: float = 60.0
) -> list[CopiedDataset]:
    """Copy the datasets of ``source`` into ``destination`` and verify the copy.

    ``source`` and ``destination`` are ledger file paths or ``postgresql://`` URLs.
    Raises :class:`~privet.errors.InvalidParameterError` if the destination
    already holds a dataset (or ids) being copied, and
    :class:`~privet.errors.LedgerCorruptError` if the source fails its checks or
    the copy differs from it.
    """
    names = [d["name"] for d in list_datasets(source)] if dataset is None else [dataset]
    copied = []
    for name in names:
        Ledger.open(source, name, timeout=timeout).verify()  # never copy a damaged ledger
        src = open_store(source, name, timeout)
        dst = open_store(destination, name, timeout)
        try:
            assert isinstance(src, SQLStore) and isinstance(dst, SQLStore)
            with src.snapshot():
                rows = src.dump()
                events = src.events_after(-1)
            with dst.transaction():
                dst.load(rows)
        finally:
            src.close()
            dst.close()
        copy = Ledger.open(destination, name, timeout=timeout)
        try:
            copy.verify()
            with copy._store.snapshot():
                mirrored = copy._store.events_after(-1)
        finally:
            copy.close()
        if [e.hash for e in mirrored] != [e.hash for e in events]:
            raise LedgerCorruptError(
                f"The copy of dataset {name!r} in {redact_url(str(destination))!r} differs from the original "
                "(its hash chain does not match); do not use it."
            )
        copied.append(CopiedDataset(name, len(events), events[-1].hash if events else ""))
    return copied
