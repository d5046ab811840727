"""Exact arithmetic in the prime field GF(p), p = 2**61 - 1, on numpy ``uint64`` arrays.

The vector engine (:mod:`privet.mpc.vector`) keeps its Shamir shares here:
one machine word per field element and every operation a handful of numpy
instructions, where MPyC keeps each element as a Python integer in an object
array (a hundred times slower per operation; profiles in
``benchmarks/results/seed000_mpc_scale.md``). Nothing here loads MPyC.

Elements are ``uint64`` in ``[0, p)``. ``p`` is a Mersenne prime, so
``x mod p = (x & p) + (x >> 61)`` (then one conditional subtraction) for any
``x < 2**64``. A product of two elements needs 122 bits; :func:`mul` splits
both factors into 31- and 30-bit halves so that every partial product and
every sum stays below 2**64 (bounds in its body). Sums over long axes split
the elements into 32-bit halves the same way (:func:`cumsum`, :func:`sum`).

Shamir sharing (:func:`share`, :func:`lagrange_at_zero`) evaluates random
polynomials of degree t at the points 1, ..., m, as MPyC does; the random
coefficients are exactly uniform on [0, p) from ``secrets.token_bytes``
(:func:`random`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import numpy as np

P = (1 << 61) - 1
"""The modulus, 2**61 - 1."""

_P = np.uint64(P)
_M30 = np.uint64((1 << 30) - 1)
_M31 = np.uint64((1 << 31) - 1)
_M32 = np.uint64((1 << 32) - 1)
_S30, _S31, _S32, _S61 = np.uint64(30), np.uint64(31), np.uint64(32), np.uint64(61)
_TWO = np.uint64(2)
_TWO32 = (1 << 32) % P

#: Longest axis :func:`cumsum` and :func:`sum` accept (32-bit halves must not overflow).
MAX_SUM_LENGTH = 1 << 31


def reduce(x: np.ndarray) -> np.ndarray:
    """``x mod p`` for ``uint64`` values below 2**64."""
    x = np.asarray(x, dtype=np.uint64)
    y = (x & _P) + (x >> _S61)  # < 2**61 + 8
    if y.ndim == 0:
        return y - _P if y >= _P else y
    # y - p wraps around (to above y) exactly when y < p: the minimum is y mod p
    return np.minimum(y, y - _P)


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b mod p`` (broadcasting)."""
    return reduce(np.asarray(a, dtype=np.uint64) + np.asarray(b, dtype=np.uint64))


def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b mod p``."""
    return reduce(np.asarray(a, dtype=np.uint64) + (_P - np.asarray(b, dtype=np.uint64)))


def neg(a: np.ndarray) -> np.ndarray:
    return reduce(_P - np.asarray(a, dtype=np.uint64))


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b mod p`` (broadcasting), exact.

    With a = a1 2**31 + a0, b = b1 2**31 + b0 (a0, b0 < 2**31; a1, b1 < 2**30):
    ab = a1 b1 2**62 + (a1 b0 + a0 b1) 2**31 + a0 b0, and modulo p 2**62 = 2,
    2**61 = 1. With mid = a1 b0 + a0 b1 < 2**62 = h 2**30 + l (l < 2**30):
    mid 2**31 = h 2**61 + l 2**31 = h + l 2**31. The sum
    2 a1 b1 + h + l 2**31 + a0 b0 < 2**61 + 2**32 + 2**61 + 2**62 < 2**64.
    """
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    a0, a1 = a & _M31, a >> _S31
    b0, b1 = b & _M31, b >> _S31
    mid = a1 * b0 + a0 * b1
    total = _TWO * (a1 * b1) + (mid >> _S30) + ((mid & _M30) << _S31) + a0 * b0
    return reduce(total)


def encode(x: np.ndarray | int) -> np.ndarray:
    """Signed integers with ``|x| < p / 2`` as field elements (negatives as p - |x|)."""
    x = np.asarray(x)
    if x.dtype == object:
        return np.asarray([int(v) % P for v in x.ravel()], dtype=np.uint64).reshape(x.shape)
    x = x.astype(np.int64)
    return np.where(x < 0, (x + np.int64(P)).astype(np.uint64), x.astype(np.uint64))


def decode(a: np.ndarray) -> np.ndarray:
    """Field elements as signed ``int64`` in ``(-p/2, p/2]``."""
    a = np.asarray(a, dtype=np.uint64)
    half = np.uint64(P // 2)
    return np.where(a > half, a.astype(np.int64) - np.int64(P), a.astype(np.int64))


def random(shape: int | tuple[int, ...]) -> np.ndarray:
    """Elements exactly uniform on [0, p): 61 bits of ``secrets.token_bytes``, p itself redrawn."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.frombuffer(secrets.token_bytes(8 * size), dtype="<u8").copy() & _P
    bad = np.flatnonzero(out == _P)  # 2**61 - 1 = p is the one 61-bit word outside [0, p)
    while bad.size:
        out[bad] = np.frombuffer(secrets.token_bytes(8 * bad.size), dtype="<u8") & _P
        bad = bad[out[bad] == _P]
    return out.reshape(shape)


def _halves(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.uint64)
    return a >> _S32, a & _M32


def _join(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    return add(mul(reduce(hi), np.uint64(_TWO32)), reduce(lo))


def cumsum(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """Inclusive prefix sums mod p along ``axis`` (at most :data:`MAX_SUM_LENGTH` terms).

    Each element is split into its high 29 and low 32 bits; the prefix sums of
    each half stay below 2**63 for up to 2**31 terms.
    """
    a = np.asarray(a, dtype=np.uint64)
    if a.shape[axis] > MAX_SUM_LENGTH:
        raise ValueError(f"cumsum over more than {MAX_SUM_LENGTH} terms.")
    hi, lo = _halves(a)
    return _join(
        np.cumsum(hi, axis=axis, dtype=np.uint64), np.cumsum(lo, axis=axis, dtype=np.uint64)
    )


def sum(a: np.ndarray, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Sum mod p over ``axis`` (at most :data:`MAX_SUM_LENGTH` terms)."""
    a = np.asarray(a, dtype=np.uint64)
    hi, lo = _halves(a)
    return _join(np.sum(hi, axis=axis, dtype=np.uint64), np.sum(lo, axis=axis, dtype=np.uint64))


def const(value: int) -> np.uint64:
    """A Python integer (any sign) as a field scalar."""
    return np.uint64(int(value) % P)


def share(secret: np.ndarray, parties: int, threshold: int) -> np.ndarray:
    """Shamir shares ``(parties, *shape)``: f(i) for i = 1..parties, f of degree ``threshold``.

    f(0) = secret; the other ``threshold`` coefficients are uniform (:func:`random`).
    """
    secret = np.asarray(secret, dtype=np.uint64)
    coefficients = [random(secret.shape) for _ in range(threshold)]
    out = np.empty((parties, *secret.shape), dtype=np.uint64)
    if threshold == 1:  # f(i) = secret + i c: additions only
        step = coefficients[0]
        value = secret
        for i in range(parties):
            value = add(value, step)
            out[i] = value
        return out
    for i in range(parties):
        x = np.uint64(i + 1)
        value = np.zeros(secret.shape, dtype=np.uint64)
        for c in reversed(coefficients):  # Horner: ((c_t x + c_{t-1}) x + ...) x + secret
            value = mul(add(value, c), x)
        out[i] = add(value, secret)
    return out


def lagrange_at_zero(points: Sequence[int]) -> list[int]:
    """Weights w_i with f(0) = sum_i w_i f(points[i]) for f of degree < len(points)."""
    points = [int(x) for x in points]
    weights = []
    for i, xi in enumerate(points):
        num, den = 1, 1
        for j, xj in enumerate(points):
            if j != i:
                num = num * xj % P
                den = den * (xj - xi) % P
        weights.append(num * pow(den, -1, P) % P)
    return weights


def combine(values: Sequence[np.ndarray], weights: Sequence[int]) -> np.ndarray:
    """``sum_i weights[i] * values[i] mod p``."""
    total = None
    for v, w in zip(values, weights, strict=True):
        term = mul(v, const(w))
        total = term if total is None else add(total, term)
    assert total is not None
    return total


__all__ = [
    "MAX_SUM_LENGTH",
    "P",
    "add",
    "combine",
    "const",
    "cumsum",
    "decode",
    "encode",
    "lagrange_at_zero",
    "mul",
    "neg",
    "random",
    "reduce",
    "share",
    "sub",
    "sum",
]
