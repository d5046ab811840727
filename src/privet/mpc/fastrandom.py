"""Vectorised uniform randomness for MPyC's Shamir sharing (the same distribution, faster).

MPyC 0.11 draws the random coefficients of every Shamir sharing it makes of a
secure array (an input, and the degree reduction after every secure product,
``Runtime._reshare``) in :func:`mpyc.thresha.np_random_split`, one
``secrets.randbelow(p)`` per coefficient: one ``os.urandom`` system call and a
Python-level rejection loop per field element. Profiles of the seed-000 tree
protocols (``benchmarks/results/seed000_mpc_scale.md``) put a quarter to a
third of a party's CPU time there.

:func:`np_random_split` below is MPyC's function with the coefficients drawn in
bulk: one ``secrets.token_bytes`` call per batch, cut into words with numpy,
masked to the bit length of p and *rejected* when >= p (redrawn), so every
coefficient is exactly uniform on [0, p), as with ``secrets.randbelow`` (which
is the same rejection method, one value at a time), from the same
cryptographic source (``os.urandom``). The shares are then computed as MPyC
computes them. Nothing else changes: the same secrets, the same share
distribution, the same messages and rounds.

:func:`install` replaces ``mpyc.thresha.np_random_split`` (MPyC's runtime
looks it up on the module at every call); :func:`privet.mpc._runtime.get_runtime`
installs it once when it loads MPyC. Fields that are not prime fields
(MPyC's extension fields) keep MPyC's own function.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

_ORIGINAL: Any = None


def uniform_below(bound: int, count: int) -> np.ndarray:
    """``count`` independent integers, each exactly uniform on [0, bound), as an object array.

    Rejection sampling on ``bound.bit_length()``-bit strings from
    ``secrets.token_bytes`` (acceptance probability above 1/2 per draw).
    """
    bound = int(bound)
    if bound < 1:
        raise ValueError(f"bound must be >= 1, got {bound}.")
    out = np.empty(count, dtype=object)
    if count == 0:
        return out
    if bound == 1:
        out[:] = 0
        return out
    bits = (bound - 1).bit_length()
    words = (bits + 63) // 64
    top_mask = np.uint64((1 << (bits - 64 * (words - 1))) - 1)
    accept = bound / 2.0**bits  # acceptance probability, in (1/2, 1]
    filled = 0
    while filled < count:
        need = count - filled
        draw = int(need / accept * 1.05) + 32  # usually one pass
        raw = np.frombuffer(secrets.token_bytes(8 * words * draw), dtype="<u8").reshape(draw, words)
        top = raw[:, words - 1] & top_mask
        if words == 1:
            value = top.astype(object)
        else:
            value = top.astype(object)
            for w in range(words - 2, -1, -1):
                value = (value << 64) | raw[:, w].astype(object)
        accepted = value[value < bound]
        take = min(need, accepted.size)
        out[filled : filled + take] = accepted[:take]
        filled += take
    return out


def np_random_split(field: Any, s: Any, t: int, m: int) -> Any:
    """MPyC's ``thresha.np_random_split`` with the coefficients drawn by :func:`uniform_below`.

    Split each secret in ``s`` into ``m`` Shamir shares of random polynomials
    of degree ``t``; return the (m, n) matrix of shares, one row per party.
    """
    p = field.modulus
    if not isinstance(p, int) or field.order != p:  # extension fields: MPyC's own
        return _ORIGINAL(field, s, t, m)
    if isinstance(s, field.array):
        s = s.value
    n = len(s)
    C = uniform_below(p, t * n).reshape(t, n)
    V = np.vander(np.array([int(i) for i in range(1, m + 1)], dtype="O"), N=t + 1, increasing=True)
    return (V @ np.concatenate((s.reshape(1, n), C))) % p


def install() -> None:
    """Make MPyC's runtime share arrays with :func:`np_random_split` (idempotent)."""
    global _ORIGINAL
    from mpyc import thresha

    if thresha.np_random_split is np_random_split:
        return
    _ORIGINAL = thresha.np_random_split
    thresha.np_random_split = np_random_split
