"""Which dataset a table of rows was charged to: a salted fingerprint of the whole table.

Rows of one dataset must not be charged to another dataset's budget. The schema
fingerprint (:meth:`~privet.ledger.Ledger.check_schema`) catches data with other
columns or domains; this catches the *same rows* registered under a second dataset
name of one ledger file or database, the way round a lifetime budget that a user
finds first (``--dataset again --budget 1`` on the same CSV).

What is stored. Each row's values are read canonically (numbers as floats, so
``3``, ``3.0`` and ``"3"`` are one value, ``-0.0`` is ``0.0``; anything else as its
``str``) and hashed to 64 bits (vectorised: SplitMix64 for numbers, BLAKE2b once per
distinct text value, chained over the row's columns); the row hashes are sorted, so
the order of the rows does not matter, and the table's fingerprint is
``HMAC-SHA256(salt, row count, sorted row hashes)``. Only that one value per table is
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


def new_salt() -> str:
    """32 random bytes from the OS, as hex: a ledger store's salt."""
    return secrets.token_hex(32)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MISSING_TEXT = np.uint64(0x5A17E5A17E5A17E5)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise (uint64 arithmetic wraps around)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _number_hashes(nums: np.ndarray) -> np.ndarray:
    """Hashes of floats: ``-0.0`` is ``0.0`` and every NaN is one value."""
    nums = np.where(np.isnan(nums), np.nan, nums + 0.0)
    return _mix(nums.view(np.uint64) ^ np.uint64(1))


def _cell_hashes(col: pd.Series) -> np.ndarray:
    """One 64-bit hash per cell of its canonical value: numbers as floats (text that
    reads as a number included), anything else as its ``str``. Decided and hashed once
    per distinct value."""
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return _number_hashes(pd.to_numeric(col, errors="coerce").to_numpy(dtype=float))
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    values = pd.Series(np.asarray(uniques, dtype=object))
    nums = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if not values.map(lambda v: isinstance(v, bool | np.bool_)).any() and not np.isnan(nums).any():
        table = _number_hashes(np.append(nums, np.nan))  # every value a number; missing: NaN
    else:
        table = np.array(
            [
                int.from_bytes(hashlib.blake2b(str(v).encode(), digest_size=8).digest(), "big")
                for v in values
            ]
            + [int(_MISSING_TEXT)],
            dtype=np.uint64,
        )
    return table[codes]  # code -1 (missing) picks the last entry


def _frame(X: Any, y: Any = None) -> pd.DataFrame:
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    frame = frame.reset_index(drop=True)
    frame.columns = range(frame.shape[1])
    if y is not None:
        target = pd.Series(np.asarray(y, dtype=object).ravel()).reset_index(drop=True)
        frame = pd.concat([frame, target.rename(frame.shape[1])], axis=1)
    return frame


def row_digests(X: Any, y: Any = None) -> np.ndarray:
    """One 64-bit hash per row of ``X`` (with its label ``y`` appended), sorted.

    ``X`` is a DataFrame or a 2-D array, in a fixed column order (the schema's). Each
    cell's canonical value is hashed (numbers through SplitMix64, text through
    BLAKE2b once per distinct value) and a row's cells are chained in column order.
    The hashes stay in memory: only :func:`table_fingerprint` of them is stored.
    """
    frame = _frame(X, y)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(frame.shape[0], _GOLDEN, dtype=np.uint64)
        for j in frame.columns:
            cells = _cell_hashes(frame[j]) + np.uint64(j + 1) * _GOLDEN
            h = _mix(h ^ _mix(cells))
    return np.sort(h)


def table_fingerprint(digests: np.ndarray, salt: str) -> str:
    """``HMAC-SHA256(salt, row count, sorted row hashes)`` in hex: the table, any row order."""
    mac = hmac.new(bytes.fromhex(salt), digestmod=hashlib.sha256)
    mac.update(len(digests).to_bytes(8, "big"))
    mac.update(np.asarray(digests, dtype=">u8").tobytes())
    return mac.hexdigest()


def clash_message(owner: str, dataset: str, where: str, rows: int) -> str:
    """Why rows recorded for dataset ``owner`` are refused for ``dataset``, and what to do."""
    return (
        f"These {rows} rows (the same rows, in any order) were already charged to dataset "
        f"{owner!r} in {where}; charging them to {dataset!r} would give the same people a "
        f"second budget. Charge them to dataset {owner!r}: its lifetime budget is theirs. "
        "Nothing was charged."
    )
