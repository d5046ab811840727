"""Seed 001 (Emekci et al.): the prime field Z_p of the secure summation (Alg. 1-2).

The values of Alg. 1-2 and their shares are elements of Z_p. This module holds
the choice and check of the modulus p, exact arithmetic in Z_p (the linear
combinations of Alg. 2's final computation and of the Sec. 4.3 verification,
Lagrange weights), the derivation of the 2n agreed evaluation points X
(Lemma 2), and :class:`FieldSampler`, the cryptographic source of Alg. 1's
random coefficients.

Field arithmetic is exact integer arithmetic modulo a prime p: numpy int64
(with the weights split into 16-bit limbs when 2^16 <= p < 2^31, so that no
product or sum can overflow), Python integers (numpy object arrays) beyond.
Never floats. Shares travel as 2-byte words for p < 2^16 (the exact
protocol's default whenever the counts fit) and 4-byte words below 2^32.

Part of the party side: like :mod:`.protocol`, it imports only numpy, hashlib,
``cryptography`` and :mod:`privet.errors` (see there why).
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
from collections.abc import Sequence

import numpy as np

from privet.errors import InvalidParameterError

DEFAULT_PRIME = 2**31 - 1
"""The Mersenne prime 2^31 - 1: counts up to about 10^9, int64 arithmetic."""


def is_prime(p: int) -> bool:
    """Deterministic Miller-Rabin for p < 3.3e24, probabilistic (40 rounds) beyond."""
    if p < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for q in small:
        if p % q == 0:
            return p == q
    d, s = p - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    bases = (
        small
        if p < 3_317_044_064_679_887_385_961_981
        else small + tuple(secrets.randbelow(p - 3) + 2 for _ in range(40))
    )
    for a in bases:
        x = pow(a, d, p)
        if x in (1, p - 1):
            continue
        for _ in range(s - 1):
            x = x * x % p
            if x == p - 1:
                break
        else:
            return False
    return True


def check_prime(prime: int, n_parties: int, bound: int) -> None:
    """Refuse a modulus that is not a prime, too small for 2n points, or for the sums.

    ``bound`` is the largest absolute value a sum can take (the number of rows,
    plus the noise margin in the DP variant); sums are decoded from the
    centred residues (-p/2, p/2], so p must exceed 2 * bound.
    """
    if isinstance(prime, bool) or not isinstance(prime, int | np.integer):
        raise InvalidParameterError(f"prime must be an int, got {prime!r}.")
    prime = int(prime)
    if not is_prime(prime):
        raise InvalidParameterError(f"prime={prime} is not a prime; the field must be Z_p.")
    if prime <= 2 * n_parties + 1:
        raise InvalidParameterError(
            f"prime={prime} is too small for {n_parties} parties: Sec. 4.3 needs 2n = "
            f"{2 * n_parties} distinct non-zero evaluation points; use a prime above {2 * n_parties + 1}."
        )
    if prime <= 2 * bound:
        raise InvalidParameterError(
            f"prime={prime} is too small for the counts: a sum can reach {bound} in absolute "
            f"value, and the field must hold every sum (p > {2 * bound}); use a larger prime, "
            f"e.g. the default {DEFAULT_PRIME}."
        )


def wire_dtype(p: int) -> np.dtype | None:
    """The smallest unsigned dtype that holds Z_p (None: Python integers)."""
    if p < 2**16:
        return np.dtype("<u2")
    if p < 2**32:
        return np.dtype("<u4")
    return None


SMALL_PRIME = 65521
"""The largest prime below 2^16: 2-byte shares for the exact protocol on up to 32,760 rows."""


LARGE_PRIME = 2**61 - 1
"""The Mersenne prime 2^61 - 1: the default when 2^31 - 1 is too small (Python integers)."""


def choose_prime(prime: int | None, n_parties: int, bound: int) -> int:
    """The field of a run: the user's ``prime``, else the smallest default that fits.

    ``bound`` is the largest absolute value a sum can take. The exact protocol
    passes its row count, which it opens to every party anyway (the root's class
    totals). The DP variant's row count is private, so it passes a public bound
    (``max_rows`` plus the noise margin) and its field never depends on the data.
    """
    if prime is not None:
        return prime  # validated by check_prime
    for p in (SMALL_PRIME, DEFAULT_PRIME):
        if p > max(2 * bound, 2 * n_parties + 1):
            return p
    return LARGE_PRIME


def storage_dtype(p: int) -> np.dtype:
    """:func:`wire_dtype`, or the object dtype (Python integers) for large p."""
    dtype = wire_dtype(p)
    return np.dtype(object) if dtype is None else dtype


def _as_field(values: np.ndarray, p: int) -> np.ndarray:
    if p < 2**31:
        return np.mod(np.asarray(values, dtype=np.int64), p)
    return np.mod(np.asarray(values).astype(object), p)


def field_combine(weights: Sequence[Sequence[int]], values: np.ndarray, p: int) -> np.ndarray:
    """``weights @ values mod p`` exactly: weights (M, K) ints, values (K, L) in [0, p).

    For p < 2^16 the products (< 2^32) and their sums over K <= 2^16 terms fit
    in int64 as they are; for p < 2^31 the weights are split into 16-bit limbs
    (products < 2^48, sums < 2^63). Beyond, Python integers. ``einsum``
    promotes the 2- or 4-byte field words to int64 in small buffers (it is
    also about 5x faster than numpy's integer ``matmul``, which has no BLAS).
    """
    if p < 2**31:
        w = np.asarray(weights, dtype=np.int64) % p
        values = np.asarray(values)
        if p < 2**16:
            return np.einsum("mk,kl->ml", w, values) % p
        lo, hi = w & 0xFFFF, w >> 16
        high = np.einsum("mk,kl->ml", hi, values) % p
        return (high * 65536 + np.einsum("mk,kl->ml", lo, values) % p) % p
    w = np.asarray([[int(x) % p for x in row] for row in weights], dtype=object)
    return np.mod(w @ np.asarray(values, dtype=object), p)


def lagrange_weights(points: Sequence[int], targets: Sequence[int], p: int) -> list[list[int]]:
    """Matrix (K, M): value at ``targets[m]`` = sum_k weight[k][m] * value at ``points[k]``."""
    pts = [int(x) % p for x in points]
    out = [[0] * len(targets) for _ in pts]
    for m, t in enumerate(targets):
        for k, xk in enumerate(pts):
            num, den = 1, 1
            for j, xj in enumerate(pts):
                if j != k:
                    num = num * (t - xj) % p
                    den = den * (xk - xj) % p
            out[k][m] = num * pow(den, -1, p) % p
    return out


def derive_points(seed: bytes, count: int, p: int) -> list[int]:
    """``count`` distinct non-zero field elements from a joint random seed (Lemma 2's X)."""
    out: list[int] = []
    seen: set[int] = set()
    counter = 0
    while len(out) < count:
        digest = hashlib.sha256(seed + counter.to_bytes(8, "little")).digest()
        counter += 1
        x = int.from_bytes(digest, "little") % p
        if x and x not in seen:
            seen.add(x)
            out.append(x)
    return out


def decode_centred(values: np.ndarray, p: int) -> np.ndarray:
    """Residues mod p to integers in (-p/2, p/2] (noisy DP sums may be negative)."""
    v = np.asarray(values).astype(object) if p >= 2**31 else np.asarray(values, dtype=np.int64)
    out = np.where(v > p // 2, v - p, v)
    return np.asarray(out, dtype=np.int64)


class FieldSampler:
    """Uniform elements of Z_p from a ChaCha20 key stream (a cryptographic PRG).

    The random coefficients of Alg. 1 must be unpredictable to the other
    parties, who together see up to 2n - 2 of them per value: a statistical
    generator such as PCG would let a coalition that sees enough outputs
    recover its state and every share. The key comes from ``os.urandom``
    (or ``key`` in tests); each draw uses a fresh nonce. Values are the low
    bits of the stream, redrawn where they are >= p, so they are exactly
    uniform (for the default primes, a redraw has probability below 3e-4).
    """

    def __init__(self, p: int, key: bytes | None = None) -> None:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

        self.p = int(p)
        self.dtype = wire_dtype(self.p)
        self._key = os.urandom(32) if key is None else bytes(key)
        self._cipher = lambda nonce: Cipher(algorithms.ChaCha20(self._key, nonce), mode=None)
        self._draws = 0

    def _stream(self, n_bytes: int) -> bytes:
        # cryptography's 16-byte nonce: a 4-byte block counter (from 0), then 12 bytes
        nonce = bytes(4) + self._draws.to_bytes(12, "little")
        self._draws += 1
        return self._cipher(nonce).encryptor().update(bytes(n_bytes))

    def uniform(self, shape: tuple[int, ...], out: np.ndarray | None = None) -> np.ndarray:
        """An array of ``shape`` uniform elements of Z_p (wire dtype, or Python ints).

        ``out``: a C-contiguous array of that shape and the wire dtype to fill.
        """
        count = math.prod(shape)
        if self.dtype is None:  # large p: rejection on whole integers of the stream
            width = (self.p.bit_length() + 7) // 8 + 8  # 64 extra bits: bias below 2^-64
            raw = self._stream(count * width)
            out = [
                int.from_bytes(raw[i * width : (i + 1) * width], "little") % self.p
                for i in range(count)
            ]
            return np.array(out, dtype=object).reshape(shape)
        mask = self.dtype.type((1 << self.p.bit_length()) - 1)
        raw = np.frombuffer(self._stream(count * self.dtype.itemsize), dtype=self.dtype)
        flat = np.empty(count, dtype=self.dtype) if out is None else out.reshape(-1)
        np.bitwise_and(raw, mask, out=flat)
        bad = np.flatnonzero(flat >= self.p)
        while bad.size:
            fresh = np.frombuffer(self._stream(bad.size * self.dtype.itemsize), dtype=self.dtype)
            flat[bad] = fresh & mask
            bad = bad[flat[bad] >= self.p]
        return flat.reshape(shape)
