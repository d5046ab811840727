"""The owners' secure sum (seed 004, Sec. 3.3, Alg. 2 lines 11, 12 and 18).

Alg. 2 adds each owner's local weighted error and weight sum with a secure sum
protocol among the owners (the paper sketches a ring of masked partial sums and
names Shamir secret sharing). privet runs it on MPyC's Shamir sharing through
:func:`privet.mpc.launch`: real party processes over TCP on localhost. Owners
are grouped into a bounded number of party processes (``n_parties``): each
process inputs the values of its owners, one secret-shared row per owner, and
the parties add all rows on shares and open only the column sums.

Values are fixed point with ``FRACTION_BITS`` fractional bits, rounded the same
way in :func:`reference_sum` (the plaintext path) and in the parties, so both
paths return the same sums bit for bit.

What is released is charged by the caller (the estimator): the exact sums of
the paper-faithful variant as :class:`~privet.ledger.NonPrivate`, the sums of
already perturbed values of the strict variant at no extra cost.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError

FRACTION_BITS = 16
BIT_LENGTH = 96
_LIMIT = 2.0**62 / 2**FRACTION_BITS  # |value| per owner that keeps int64 inputs exact


def to_fixed(values: np.ndarray) -> np.ndarray:
    """Owners' values (n, c) as int64 fixed point with FRACTION_BITS fractional bits."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or not np.all(np.isfinite(arr)) or np.any(np.abs(arr) >= _LIMIT):
        raise InvalidParameterError(
            f"secure sum inputs must be a finite (owners, columns) array with |value| < "
            f"{_LIMIT:.3g}; got shape {arr.shape}."
        )
    return np.rint(arr * 2**FRACTION_BITS).astype(np.int64)


def reference_sum(values: np.ndarray) -> np.ndarray:
    """The plaintext path: the column sums the protocol opens, same fixed-point rounding."""
    fixed = to_fixed(values)
    total = [int(v) for v in fixed.astype(object).sum(axis=0)]
    return np.asarray([t / 2**FRACTION_BITS for t in total], dtype=float)


async def sum_program(ctx: Any, path: str, columns: int, rows: list[int]) -> dict[str, Any]:
    """Party program: input this process's owners' rows, add on shares, open the sums.

    ``path`` is this party's ``.npy`` file of fixed-point rows (its owners);
    ``rows[i]`` is the public number of owners that party i holds.
    """
    from privet.mpc.sharing import reveal, share_horizontal

    mpc = ctx.runtime
    secint = mpc.SecInt(BIT_LENGTH)
    local = np.load(path)
    shared = await share_horizontal(local, secint, shapes=[(r, columns) for r in rows])
    sums = await reveal(mpc.np_sum(shared, axis=0), label="secure sum of owners' values")
    return {"sums": [int(s) for s in np.asarray(sums).ravel()]}


def mpc_sum(
    values: np.ndarray, *, n_parties: int = 3, timeout: float = 120.0
) -> tuple[np.ndarray, Any]:
    """Column sums of owners' rows (n, c) by the MPC protocol with ``n_parties`` processes.

    Owners are split into ``n_parties`` contiguous blocks, one per party
    process. Returns the sums and the run's :class:`~privet.mpc.RunStats`.
    """
    from privet.mpc import launch

    fixed = to_fixed(values)
    n, c = fixed.shape
    if n < n_parties:
        raise InvalidParameterError(
            f"secure sum over {n} owners needs at least as many owners as party processes "
            f"(n_parties={n_parties})."
        )
    blocks = np.array_split(np.arange(n), n_parties)
    with tempfile.TemporaryDirectory(prefix="privet-ldp-sum-") as tmp:
        party_args = []
        for i, idx in enumerate(blocks):
            p = Path(tmp) / f"owners_{i}.npy"
            np.save(p, fixed[idx])
            party_args.append({"path": str(p)})
        run = launch(
            "privet.learners.ldp_boosting.secure_sum:sum_program",
            {"columns": int(c), "rows": [len(b) for b in blocks]},
            parties=n_parties,
            party_args=party_args,
            timeout=timeout,
        )
    sums = np.asarray(run.results[0]["sums"], dtype=object)
    return np.asarray([int(s) / 2**FRACTION_BITS for s in sums], dtype=float), run.stats


__all__ = ["FRACTION_BITS", "mpc_sum", "reference_sum", "sum_program", "to_fixed"]
