"""Seed 001 (Emekci et al.): the parties' side of privacy-preserving ID3 by secure summation.

This module is self-contained (numpy, hashlib, ``cryptography``'s ChaCha20,
:mod:`privet.errors` and, in a party process, MPyC's runtime) so that each of up to 128 party processes loads
it by file path without importing the rest of :mod:`privet.learners`
(scikit-learn, pandas): a party then needs about 45 MB instead of 175 MB.

What it holds
-------------
* **Alg. 3 (ID3 over many parties), level by level** -- :class:`LevelGrower`.
  The tree is public to every party. One *summation round* carries every count
  that the open nodes of one tree level need (per node: the class totals
  |T(c_j)| and, for every candidate attribute A in R, all |T(a_i, c_j)| and,
  in the exact protocol, all |T(a_i)|), so a tree of depth h costs h + 1
  rounds (split into chunks of bounded size for memory), not one per count.
  Conditional entropy E(T|A) (Eq. 1) is computed from the summed counts; the
  attribute with the largest gain (smallest E(T|A)) is chosen, ties to the
  lowest index; leaves by the single-class and no-attribute rules of Alg. 3.
* **Alg. 1-2 (Shamir summation)** with the **verification of Sec. 4.3**:
  polynomials of degree 2n - 2, 2n evaluation points (two per party), and
  commit-then-reveal of the intermediate results -- :func:`shamir_sum`.
* The fast path on MPyC's own Shamir secret sharing -- :func:`mpyc_sum`.
* The party program :func:`program` for :func:`privet.mpc.launch`.

Field arithmetic is exact integer arithmetic modulo a prime p: numpy int64
(with the weights split into 16-bit limbs when 2^16 <= p < 2^31, so that no
product or sum can overflow), Python integers (numpy object arrays) beyond.
Never floats. Shares travel as 2-byte words for p < 2^16 (the exact
protocol's default whenever the counts fit) and 4-byte words below 2^32.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError, MPCError

DEFAULT_PRIME = 2**31 - 1
"""The Mersenne prime 2^31 - 1: counts up to about 10^9, int64 arithmetic."""

CHUNK_ELEMENTS = 2_000_000
"""Field elements per party and summation chunk (counts x 2n): bounds memory."""


class SummationIntegrityError(MPCError):
    """A party's intermediate results are inconsistent (Sec. 4.3): the protocol stops."""


# ----------------------------------------------------------------- the field


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


def choose_prime(prime: int | None, n_parties: int, n_rows: int, *, exact: bool) -> int:
    """The field of a run: the user's ``prime``, else the smallest default that fits.

    Only the exact protocol picks the small field from the row count: it opens
    the root's class totals (so the row count) to every party anyway. The DP
    variant's row count is private, so its default does not depend on it.
    """
    if prime is not None:
        return prime  # validated by check_prime
    if exact and SMALL_PRIME > max(2 * n_rows, 2 * n_parties + 1):
        return SMALL_PRIME
    return DEFAULT_PRIME


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


# ------------------------------------------------------- Alg. 1-2, Sec. 4.3


@dataclass
class SharingPlan:
    """The public and agreed constants of one run of Alg. 1-2 with verification.

    Shares and intermediate results are laid out point-major, (2n, L): row
    2j and 2j + 1 are party j's two points, so what a party sends to party j
    is one contiguous block.

    Parameters
    ----------
    n : int
        Number of parties.
    points : list of int
        The 2n agreed evaluation points X; party i holds ``points[2i]`` and
        ``points[2i + 1]`` (Sec. 4.3).
    p : int
        The prime modulus.
    """

    n: int
    points: list[int]
    p: int
    complete: list[list[int]] = field(init=False)
    subsets: list[tuple[str, list[int], list[list[int]]]] = field(init=False)
    _all: list[tuple[str, list[int], list[list[int]]]] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        m = 2 * self.n
        # Alg. 1 with a degree-(2n-2) polynomial q, q(0) = v: q is uniform among such
        # polynomials iff its values at 2n - 2 fixed non-zero points are uniform, and
        # then its values at the last two points are fixed linear combinations of
        # (v, those values). So the shares are drawn at points 0..2n-3 and completed.
        base = [0, *self.points[: m - 2]]
        self.complete = _transpose(lagrange_weights(base, self.points[m - 2 :], self.p))
        self.subsets = [self._subset(drop) for drop in (m - 1, 0)]

    def _subset(self, drop: int) -> tuple[str, list[int], list[list[int]]]:
        keep = [k for k in range(2 * self.n) if k != drop]
        weights = lagrange_weights([self.points[k] for k in keep], [0], self.p)
        return f"all points but x_{drop + 1} (of party {drop // 2})", keep, _transpose(weights)

    def leave_one_out(self) -> list[tuple[str, list[int], list[list[int]]]]:
        """All 2n subsets of 2n - 1 points (verification "on request", Sec. 4.3); cached."""
        if self._all is None:
            self._all = [self._subset(drop) for drop in range(2 * self.n)]
        return self._all

    def undetectable_shift(self, party: int, delta: int) -> tuple[int, int]:
        """What ``party`` adds to its two intermediate results to move the sum by ``delta``.

        The gap in Sec. 4.3's verification: E(x) = c * prod_{k not party's} (x - x_k)
        has degree 2n - 2 and is zero at every other party's points, so the
        published values stay on one polynomial of degree 2n - 2 (S + E) and
        every subset of 2n - 1 of them interpolates the same wrong sum
        S(0) + E(0); c makes E(0) = ``delta``. It needs only the agreed points,
        not the others' results, so commit-then-reveal does not stop it.
        Used by the testing hook ``tamper="shift"`` and documented in
        ``docs/secure_sum_id3.md``.
        """
        p = self.p
        own = (2 * party, 2 * party + 1)
        others = [x for k, x in enumerate(self.points) if k not in own]
        at_zero = math.prod((-x) % p for x in others) % p
        c = int(delta) * pow(at_zero, -1, p) % p
        e0, e1 = (c * math.prod((self.points[k] - x) % p for x in others) % p for k in own)
        return e0, e1

    def share(self, values: np.ndarray, sampler: FieldSampler) -> np.ndarray:
        """Alg. 1 (distribution phase) for every value at once: (L,) -> shares (2n, L)."""
        m, p = 2 * self.n, self.p
        v = _as_field(values, p)
        out = np.empty((m, v.shape[0]), dtype=storage_dtype(p))
        if out.dtype.kind == "O":
            out[: m - 2] = sampler.uniform((m - 2, v.shape[0]))
        else:
            sampler.uniform((m - 2, v.shape[0]), out=out[: m - 2])
        w = np.asarray(self.complete, dtype=object)  # (2, 2n - 1): weights of (v, free)
        from_free = field_combine(w[:, 1:].tolist(), out[: m - 2], p)
        out[m - 2 :] = (from_free + field_combine(w[:, :1].tolist(), v[None, :], p)) % p
        return out

    def interpolate(self, results: np.ndarray, verify: str) -> tuple[np.ndarray, list[str]]:
        """Final computation phase: SUM = S(0) from the 2n intermediate results (2n, L).

        Returns the sums and the list of inconsistencies (empty if the subsets agree).
        """
        subsets = self.subsets if verify == "two" else self.leave_one_out()
        full = [[0] * (2 * self.n) for _ in subsets]  # one row per subset, 0 where dropped
        for row, (_, keep, weights) in zip(full, subsets, strict=True):
            for k, w in zip(keep, weights[0], strict=True):
                row[k] = w
        sums = list(field_combine(full, results, self.p))
        problems = []
        for (name, _, _), other in zip(subsets[1:], sums[1:], strict=True):
            bad = np.flatnonzero(np.asarray(other != sums[0], dtype=bool))
            if bad.size:
                problems.append(
                    f"solving from {subsets[0][0]} and from {name} gives different sums for "
                    f"{bad.size} of {results.shape[1]} counts (first at count {int(bad[0])}: "
                    f"{int(sums[0][bad[0]])} vs {int(other[bad[0]])})"
                )
        return sums[0], problems


def _transpose(matrix: list[list[int]]) -> list[list[int]]:
    return [list(col) for col in zip(*matrix, strict=True)]


async def agree_points(mpc: Any, n: int, p: int) -> list[int]:
    """Agree on the 2n evaluation points from every party's 256-bit contribution.

    No party chooses X alone. Lemma 2 (an eavesdropper learns nothing) needs X
    secret from outsiders, i.e. confidential channels (MPyC's ``--ssl``).
    """
    parts = await mpc.transfer(secrets.token_bytes(32))
    return derive_points(b"".join(parts), 2 * n, p)


def _digest(nonce: bytes, payload: np.ndarray) -> bytes:
    h = hashlib.sha256(nonce)
    h.update(payload.tobytes() if payload.dtype != object else repr(payload.tolist()).encode())
    return h.digest()


async def shamir_sum(
    mpc: Any,
    plan: SharingPlan,
    values: np.ndarray,
    sampler: FieldSampler,
    *,
    verify: str = "two",
    tamper: str | None = None,
) -> np.ndarray:
    """Alg. 2 with the verification of Sec. 4.3, for a whole vector of secrets at once.

    1. Distribution: share every value with a random degree-(2n-2) polynomial
       and send party j its two shares (at x_{2j-1}, x_{2j}) of every value.
    2. Intermediate computation: add the shares received, per point.
    3. Commit-then-reveal (Sec. 4.3, last paragraph): send a SHA-256
       commitment to the intermediate results with a fresh nonce, and only
       after every commitment has arrived, the results and the nonce.
    4. Final computation: interpolate S(0) from two different (2n-1)-subsets
       of the 2n results (or all 2n with ``verify="all"``) and stop with
       :class:`SummationIntegrityError` if they disagree.

    Field elements travel in the smallest dtype that holds Z_p (2 bytes for
    p < 2^16, 4 below 2^32), as contiguous blocks.

    ``tamper`` is a testing hook for a malicious party in the intermediate
    phase: ``"result"`` adds 1 to its first intermediate result (before it
    commits), ``"reveal"`` reveals a result other than the one it committed to
    and then goes on with its true results, as a cheater would (it does not
    report itself; the honest parties must catch it), ``"shift"`` moves the
    first sum by 1 along :meth:`SharingPlan.undetectable_shift`, which no
    check catches.
    """
    n, me, p = plan.n, mpc.pid, plan.p
    shares = plan.share(values, sampler)
    sends = []
    for s in range(1, n):
        to = (me + s) % n
        sends.append(
            mpc.transfer(
                shares[2 * to : 2 * to + 2],
                sender_receivers={i: [(i + s) % n] for i in range(n)},
            )
        )
    received = await asyncio.gather(*sends)
    # Alg. 2 step 9: n < 2^32 terms < 2^32 fit in int64
    inter = shares[2 * me : 2 * me + 2].astype(np.int64 if shares.dtype != object else object)
    del shares
    for got in received:
        inter += got[0]
    del received
    inter = np.mod(inter, p).astype(storage_dtype(p))
    if tamper == "result" and inter.size:
        inter[0, 0] = (int(inter[0, 0]) + 1) % p
    if tamper == "shift" and inter.size:  # moves the first sum by +1, unseen
        for row, e in enumerate(plan.undetectable_shift(me, 1)):
            inter[row, 0] = (int(inter[row, 0]) + e) % p
    nonce = secrets.token_bytes(16)
    commits = await mpc.transfer(_digest(nonce, inter))
    payload = inter
    if tamper == "reveal" and inter.size:
        payload = inter.copy()
        payload[0, 0] = (int(payload[0, 0]) + 1) % p
    opened = await mpc.transfer((nonce, payload))
    if tamper == "reveal":
        opened = [*opened[:me], (nonce, inter), *opened[me + 1 :]]
    for j, (commitment, (their_nonce, their)) in enumerate(zip(commits, opened, strict=True)):
        if _digest(their_nonce, their) != commitment:
            raise SummationIntegrityError(
                f"party {me}: party {j} revealed intermediate results that do not match its "
                "commitment (Sec. 4.3, commit-then-reveal): it changed them after seeing "
                "the others'; the protocol stops."
            )
    results = np.concatenate([their for _, their in opened], axis=0)
    del opened
    sums, problems = plan.interpolate(results, verify)
    if problems:
        raise SummationIntegrityError(
            f"party {me}: the intermediate results are inconsistent (Sec. 4.3): "
            + "; ".join(problems)
            + ". At least one party sent a wrong intermediate result; with 2n points for a "
            "polynomial of degree 2n - 2 one wrong value is detected but cannot be located, "
            "so no party is named. The protocol stops."
        )
    return decode_centred(sums, p)


async def mpyc_sum(mpc: Any, values: np.ndarray, *, bit_length: int) -> np.ndarray:
    """The sum of every party's vector on MPyC's built-in Shamir sharing (secure ints)."""
    from privet.mpc.sharing import reveal

    secint = mpc.SecInt(bit_length)
    local = np.asarray(values, dtype=np.int64)
    shared = mpc.input(secint.array(local), senders=list(range(len(mpc.parties))))
    total = shared[0]
    for x in shared[1:]:
        total = total + x
    opened = await reveal(total, label="seed 001 node counts (exact or DP-noised sums)")
    return np.asarray(opened, dtype=np.int64).reshape(local.shape)


# ------------------------------------------------------------- DP noise shares


def noise_shares(
    shape: int | tuple[int, ...], scale: float, n_parties: int, rng: np.random.Generator
) -> np.ndarray:
    """One party's share of distributed discrete-Laplace noise of scale ``scale``.

    Each party adds NB(r, 1 - a) - NB(r, 1 - a), a = exp(-1/scale), with
    r = 1 / (n - 1): the shares of any n - 1 parties add up to
    NB(1, 1 - a) - NB(1, 1 - a), the difference of two geometric variables,
    which is the discrete Laplace law P(z) ~ a^|z| (infinite divisibility).
    So even a party that subtracts its own share from a released sum still
    faces a full discrete Laplace(scale) on the others' data. One party alone
    (n = 1) adds the whole noise.
    """
    r = 1.0 / max(n_parties - 1, 1)
    q = 1.0 - math.exp(-1.0 / scale)
    return rng.negative_binomial(r, q, size=shape) - rng.negative_binomial(r, q, size=shape)


def pooled_noise(
    shape: int | tuple[int, ...], scale: float, n_parties: int, rng: np.random.Generator
) -> np.ndarray:
    """The sum of all n parties' :func:`noise_shares`, drawn at once (same law)."""
    r = n_parties / max(n_parties - 1, 1)
    q = 1.0 - math.exp(-1.0 / scale)
    return rng.negative_binomial(r, q, size=shape) - rng.negative_binomial(r, q, size=shape)


# ------------------------------------------------------------ Alg. 3 by level


@dataclass
class OpenNode:
    """A tree node whose counts the next summation round computes."""

    node: int
    depth: int
    attrs: tuple[int, ...]
    splittable: bool
    offset: int = 0
    length: int = 0
    totals: np.ndarray | None = None


@dataclass
class Level:
    """The public layout of one summation round: the open nodes and their counts.

    ``phase`` is ``"totals"`` (Alg. 3 step 2: the class totals of every open
    node), ``"tables"`` (step 7: |T(a_i, c_j)| and |T(a_i)| of every candidate
    attribute, only for the nodes that steps 1-6 did not close), or
    ``"both"`` (the DP variant: totals and tables in one noisy round, so that
    the stopping rule costs no extra budget).
    """

    depth: int
    nodes: list[OpenNode]
    length: int
    phase: str = "both"


@dataclass
class TreeArrays:
    """A finished tree as plain arrays (see :mod:`privet.learners._trees.tree`), BFS order."""

    feature: list[int]
    child_start: list[int]
    children: list[int]
    value: list[list[float]]
    depth: list[int]
    parent: list[int]
    rounds: int = 0
    opened: list[int] = field(default_factory=list)


class LevelGrower:
    """Algorithm 3 grown one level at a time (identical tree to the recursion).

    The exact protocol runs two summation rounds per level, as Alg. 3 does per
    node: the class totals of every open node (steps 1-6), then the split
    counts of the nodes still open (step 7). The DP variant (``noisy``) sums
    both in one round.

    Parameters
    ----------
    sizes : sequence of int
        Domain size of every attribute (public schema).
    n_classes : int
    max_depth : int
        Maximum number of splits on a path.
    marginals : bool
        Also sum |T(a_i)| per attribute value (the exact protocol, as in the
        paper); the DP variant derives them from the noisy |T(a_i, c_j)|.
    noisy : bool
        Counts carry DP noise: negative counts are clipped to 0 before use.
    """

    def __init__(
        self,
        sizes: Sequence[int],
        n_classes: int,
        max_depth: int,
        *,
        marginals: bool,
        noisy: bool,
    ) -> None:
        self.sizes = [int(s) for s in sizes]
        self.c = int(n_classes)
        self.max_depth = int(max_depth)
        self.marginals = marginals
        self.noisy = noisy
        self.tree = TreeArrays([], [], [], [], [], [])

    def _add(self, depth: int, parent: int) -> int:
        t = self.tree
        t.feature.append(-1)
        t.child_start.append(-1)
        t.value.append([0.0] * self.c)
        t.depth.append(depth)
        t.parent.append(parent)
        return len(t.feature) - 1

    def table_length(self, attrs: Sequence[int]) -> int:
        """Split counts of one node: per candidate attribute its table (and marginals)."""
        return sum(self.sizes[a] * (self.c + (1 if self.marginals else 0)) for a in attrs)

    def _layout(self, depth: int, nodes: list[OpenNode], phase: str) -> Level:
        off = 0
        for nd in nodes:
            self.tree.opened.append(nd.node)
            nd.offset = off
            if phase == "totals":
                nd.length = self.c
            elif phase == "tables":
                nd.length = self.table_length(nd.attrs)
            else:
                nd.length = self.c + (self.table_length(nd.attrs) if nd.splittable else 0)
            off += nd.length
        return Level(depth, nodes, off, phase)

    def _open(self, depth: int, nodes: list[OpenNode]) -> Level:
        return self._layout(depth, nodes, "both" if self.noisy else "totals")

    def root(self) -> Level:
        root = self._add(0, -1)
        attrs = tuple(range(len(self.sizes)))
        return self._open(0, [OpenNode(root, 0, attrs, self.max_depth > 0 and bool(attrs))])

    def decide(self, level: Level, sums: np.ndarray) -> tuple[Level | None, list[Any]]:
        """Alg. 3 for every node of ``level`` from its summed counts.

        Returns the next round's level (or None) and, per node, its routing:
        None (a leaf), ``("same", slot)`` (still open, same node, next round)
        or ``(attr, child_slot_per_value)`` with -1 for a child that is a leaf.
        """
        c, t = self.c, self.tree
        sums = np.asarray(sums, dtype=np.int64)
        if self.noisy:
            sums = np.clip(sums, 0, None)
        t.rounds += 1
        if level.phase == "totals":
            keep: list[OpenNode] = []
            routes: list[Any] = []
            for nd in level.nodes:
                nd.totals = sums[nd.offset : nd.offset + c]
                if self._closes(nd, nd.totals):
                    routes.append(None)
                else:
                    keep.append(nd)
                    routes.append(("same", len(keep) - 1))
            return (self._layout(level.depth, keep, "tables") if keep else None), routes
        nxt: list[OpenNode] = []
        routes = []
        for nd in level.nodes:
            seg = sums[nd.offset : nd.offset + nd.length]
            if level.phase == "both":
                nd.totals, seg = seg[:c], seg[c:]
                if self._closes(nd, nd.totals):
                    routes.append(None)
                    continue
            totals = nd.totals
            tables, margins = self._tables(nd, seg)
            best_k = int(np.argmax(information_gains(tables, [self.sizes[a] for a in nd.attrs])))
            best = nd.attrs[best_k]
            t.feature[nd.node] = best
            t.child_start[nd.node] = len(t.children)
            rest = tuple(a for a in nd.attrs if a != best)
            slots = []
            for v in range(self.sizes[best]):
                kid = self._add(nd.depth + 1, nd.node)
                t.children.append(kid)
                if margins[best_k][v] <= 0:  # empty branch: the parent's majority
                    t.value[kid] = [float(x) for x in totals]
                    slots.append(-1)
                else:
                    splittable = nd.depth + 1 < self.max_depth and bool(rest)
                    nxt.append(OpenNode(kid, nd.depth + 1, rest, splittable))
                    slots.append(len(nxt) - 1)
            routes.append((best, slots))
        return (self._open(level.depth + 1, nxt) if nxt else None), routes

    def _closes(self, nd: OpenNode, totals: np.ndarray) -> bool:
        """Alg. 3 steps 1-6: no attribute left (or depth reached), or one category only."""
        if not nd.splittable or np.count_nonzero(totals) <= 1:
            self.tree.value[nd.node] = [float(x) for x in totals]
            return True
        return False

    def _tables(self, nd: OpenNode, seg: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        c = self.c
        pos = 0
        tables, margins = [], []
        for a in nd.attrs:
            w = self.sizes[a]
            table = seg[pos : pos + w * c].reshape(w, c)
            pos += w * c
            if self.marginals:
                margins.append(seg[pos : pos + w])
                pos += w
            else:
                margins.append(table.sum(axis=1))
            tables.append(table)
        return tables, margins

    def run(self, summation: Callable[[Level], np.ndarray]) -> TreeArrays:
        """Grow the whole tree with ``summation(level) -> summed counts``."""
        level: Level | None = self.root()
        while level is not None:
            level, _ = self.decide(level, summation(level))
        return self.tree


def information_gains(tables: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """Eq. (1) for every candidate attribute: -|T| E(T|A) (larger is better).

    Computed per attribute width group, with exactly the operations of
    :func:`privet.learners._trees.scores.information_gain`, so the exact protocol
    picks the same attribute as the plaintext ID3 even on ties.
    """
    out = np.empty(len(tables))
    widths = np.asarray(widths)
    for w in np.unique(widths):
        idx = np.flatnonzero(widths == w)
        table = np.stack([tables[i] for i in idx])
        n_j = table.sum(axis=2, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(n_j > 0, table / np.where(n_j > 0, n_j, 1), 0.0)
            h = -np.sum(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0.0), axis=2)
        for row, i in enumerate(idx):
            out[i] = float(-(n_j[row, :, 0] * h[row]).sum())
    return out


def local_counts(
    grower: LevelGrower, level: Level, codes: np.ndarray, y: np.ndarray, slot: np.ndarray
) -> np.ndarray:
    """One party's count vector for ``level`` (its secret values v_i of Alg. 2).

    ``slot[r]`` is the index in ``level.nodes`` of the node that row r reaches,
    or -1 once the row sits in a leaf.
    """
    c = grower.c
    out = np.zeros(level.length, dtype=np.int64)
    live = np.flatnonzero(slot >= 0)
    if live.size == 0:
        return out
    order = live[np.argsort(slot[live], kind="stable")]
    bounds = np.searchsorted(slot[order], np.arange(len(level.nodes) + 1))
    for k, nd in enumerate(level.nodes):
        rows = order[bounds[k] : bounds[k + 1]]
        if rows.size == 0:
            continue
        yk = y[rows]
        idx = []
        pos = nd.offset
        if level.phase != "tables":
            idx.append(pos + yk)
            pos += c
        if level.phase == "tables" or (level.phase == "both" and nd.splittable):
            for a in nd.attrs:
                w = grower.sizes[a]
                col = codes[rows, a]
                idx.append(pos + col * c + yk)
                pos += w * c
                if grower.marginals:
                    idx.append(pos + col)
                    pos += w
        flat = np.concatenate(idx)
        out += np.bincount(flat, minlength=level.length)
    return out


def route(codes: np.ndarray, slot: np.ndarray, routes: list[Any]) -> np.ndarray:
    """Move each party's rows to the next round (Alg. 3 step 8: partition locally)."""
    new = np.full_like(slot, -1)
    for k, r in enumerate(routes):
        if r is None:
            continue
        rows = np.flatnonzero(slot == k)
        if r[0] == "same":
            new[rows] = r[1]
            continue
        attr, slots = r
        new[rows] = np.asarray(slots, dtype=np.int64)[codes[rows, attr]]
    return new


def chunks(length: int, n_parties: int) -> list[tuple[int, int]]:
    """Split a round of ``length`` counts so that a party holds <= CHUNK_ELEMENTS shares."""
    size = max(1, CHUNK_ELEMENTS // (2 * n_parties))
    return [(a, min(a + size, length)) for a in range(0, max(length, 1), size)] or [(0, 0)]


# ---------------------------------------------------------------- the program


def peak_rss_kb() -> int:
    """This process's peak resident memory (VmHWM; 0 where /proc is missing).

    Not ``getrusage``: on Linux its ``ru_maxrss`` survives ``exec`` and so
    reports the launching process's peak for a freshly started party.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0


TREE_FIELDS = ("feature", "child_start", "children", "value", "depth", "parent", "rounds", "opened")


def _tree_digest(tree: TreeArrays) -> str:
    h = hashlib.sha256()
    for part in (tree.feature, tree.child_start, tree.children, tree.value):
        h.update(repr(part).encode())
    return h.hexdigest()


async def program(
    ctx: Any,
    *,
    data: str,
    sizes: list[int],
    n_classes: int,
    max_depth: int,
    backend: str = "shamir",
    prime: int = DEFAULT_PRIME,
    verify: str = "two",
    scales: list[float] | None = None,
    tamper: dict | None = None,
    bit_length: int = 40,
) -> dict[str, Any]:
    """Party program: seed 001's ID3 (Alg. 3) with one summation round per level.

    Each party reads only its own rows (``data``: an ``.npz`` with ``codes``
    and ``y``), computes its local counts, and learns only the sums and the
    public tree. ``scales`` (one per level) turns on the DP variant: the party
    adds its share of discrete-Laplace noise to its counts before summation.
    ``tamper={"party": i, "round": r, "kind": "result" | "reveal" | "shift" | "stall"}`` is
    the testing hook of a malicious party i in round r (see :func:`shamir_sum`;
    ``"stall"`` hangs there).
    """
    import time

    mpc = ctx.runtime
    n, me = ctx.n_parties, ctx.pid
    with np.load(data) as f:
        codes, y = f["codes"].astype(np.int64), f["y"].astype(np.int64)
    rng = np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))  # DP noise shares
    sampler = FieldSampler(prime)  # the sharing polynomials' coefficients
    noisy = scales is not None
    grower = LevelGrower(sizes, n_classes, max_depth, marginals=not noisy, noisy=noisy)
    plan = None
    if backend == "shamir":
        plan = SharingPlan(n, await agree_points(mpc, n, prime), prime)
    slot = np.zeros(y.shape[0], dtype=np.int64)
    level: Level | None = grower.root()
    rounds, counts_summed, t_local = 0, 0, 0.0
    while level is not None:
        t0 = time.perf_counter()
        vec = local_counts(grower, level, codes, y, slot)
        if noisy:
            vec = vec + noise_shares(vec.shape, float(scales[level.depth]), n, rng)
        t_local += time.perf_counter() - t0
        total = np.zeros_like(vec)
        for a, b in chunks(level.length, n):
            bad = None
            if tamper and tamper["party"] == me and tamper.get("round", 0) == rounds:
                bad = tamper.get("kind", "result")
                if bad == "stall":  # a party that hangs (killed by the test)
                    await asyncio.sleep(3600)
            if backend == "shamir":
                total[a:b] = await shamir_sum(
                    mpc, plan, vec[a:b], sampler, verify=verify, tamper=bad
                )
            else:
                total[a:b] = await mpyc_sum(mpc, vec[a:b], bit_length=bit_length)
            rounds += 1
        counts_summed += level.length
        level, routes = grower.decide(level, total)
        slot = route(codes, slot, routes)
    tree = grower.tree
    out: dict[str, Any] = {
        "digest": _tree_digest(tree),
        "rounds": rounds,
        "counts_summed": counts_summed,
        "local_seconds": t_local,
    }
    if me == 0:  # plain types: the launcher unpickles it where this module has another name
        out["tree"] = {k: getattr(tree, k) for k in TREE_FIELDS}
    out["max_rss_kb"] = peak_rss_kb()
    return out
