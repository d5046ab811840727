"""Which dataset a table of rows was charged to: a salted fingerprint of the whole table.

Rows of one dataset must not be charged to another dataset's budget. The schema
fingerprint (:meth:`~privet.ledger.Ledger.check_schema`) catches data with other
columns or domains; this catches the *same rows* registered under a second dataset
name of one ledger file or database, the way round a lifetime budget that a user
finds first (``--dataset again --budget 1`` on the same CSV).

What is stored. Each row's values are written as canonical text (numbers as
floats, ``-0.0`` as ``0.0``, missing values as ``nan``, everything else as
``str``) and hashed (BLAKE2b, 16 bytes); the row hashes are sorted, so the order
of the rows does not matter, and the table's fingerprint is
``HMAC-SHA256(salt, sorted row hashes)``. Only that one value per table is
stored, never anything computed from a single record: the row hashes live in
memory for the length of the call. The salt is 32 random bytes made once per
ledger store (the SQLite file, the PostgreSQL schema) and kept in its ``meta``
table, so the fingerprints of one table in two ledgers differ and cannot be
compared. A fingerprint is stored as the ``meta`` row ``("table:<hex>",
dataset)``: one owner per table, which also serialises two processes that
register the same rows under two names at once.

What it does not do. The fingerprint is a deterministic function of the whole
private table: whoever can read the ledger file (and its salt) can test a guess of
the *entire* table, and so, knowing every row but one, test each candidate for the
last one. It is not covered by any DP guarantee. ``privet ledger history``,
``export`` and ``copy`` and :meth:`Ledger.to_json` leave the fingerprints out;
the ledger file itself is then no longer a document to publish. It catches only
the same multiset of rows: a subset or a superset (one row more or less), a
re-encoded copy (other labels, rounding, units, another column order in an
array) and data split into parts all have other fingerprints. See docs/ledger.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "SALT_KEY",
    "TABLE_PREFIX",
    "clash_message",
    "new_salt",
    "row_digests",
    "table_fingerprint",
]

#: The ``meta`` key of a store's salt, and the prefix of its fingerprint rows.
SALT_KEY = "table-salt"
TABLE_PREFIX = "table:"

_SEP = "\x1f"  # the ASCII unit separator between a row's cells


def new_salt() -> str:
    """32 random bytes from the OS, as hex: a ledger store's salt."""
    return secrets.token_hex(32)


def _canonical_column(col: pd.Series) -> pd.Series:
    """A column as text that does not depend on how it was read: numbers as floats."""
    present = col.notna()
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        nums = pd.to_numeric(col, errors="coerce").astype(float)
    else:
        nums = pd.to_numeric(col.where(present), errors="coerce")
        if not nums[present].notna().all() or col[present].map(lambda v: isinstance(v, bool)).any():
            return col.map(lambda v: "nan" if v is None or v != v else str(v))
        nums = nums.astype(float)
    nums = nums + 0.0  # -0.0 and 0.0 are one value
    return nums.map(repr)


def _frame(X: Any, y: Any = None) -> pd.DataFrame:
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    frame = frame.reset_index(drop=True)
    frame.columns = range(frame.shape[1])
    if y is not None:
        target = pd.Series(np.asarray(y, dtype=object).ravel()).reset_index(drop=True)
        frame = pd.concat([frame, target.rename(frame.shape[1])], axis=1)
    return frame


def row_digests(X: Any, y: Any = None) -> list[bytes]:
    """One 16-byte hash per row of ``X`` (with its label ``y`` appended), sorted.

    ``X`` is a DataFrame or a 2-D array, in a fixed column order (the schema's).
    The hashes stay in memory: only :func:`table_fingerprint` of them is stored.
    """
    frame = _frame(X, y)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        return []
    text = _canonical_column(frame[0])
    for c in frame.columns[1:]:
        text = text + _SEP + _canonical_column(frame[c])
    return sorted(
        hashlib.blake2b(row.encode("utf-8"), digest_size=16).digest() for row in text.tolist()
    )


def table_fingerprint(digests: list[bytes], salt: str) -> str:
    """``HMAC-SHA256(salt, sorted row hashes)`` in hex: the table, in any row order."""
    mac = hmac.new(bytes.fromhex(salt), digestmod=hashlib.sha256)
    mac.update(len(digests).to_bytes(8, "big"))
    for d in digests:
        mac.update(d)
    return mac.hexdigest()


def clash_message(owner: str, dataset: str, where: str, rows: int) -> str:
    """Why rows recorded for dataset ``owner`` are refused for ``dataset``, and what to do."""
    return (
        f"These {rows} rows (the same rows, in any order) were already charged to dataset "
        f"{owner!r} in {where}; charging them to {dataset!r} would give the same people a "
        f"second budget. Charge them to dataset {owner!r}: its lifetime budget is theirs. "
        "Nothing was charged."
    )
