"""The vector engine: Shamir secret sharing over GF(2**61 - 1) on numpy words, for big tables.

MPyC keeps every share as a Python integer in a numpy object array; at Adult's
size the seed-000 trees spend their time in that arithmetic (about 100 ns per
multiply-add, ``benchmarks/results/seed000_mpc_scale.md``). This engine keeps
shares as ``uint64`` words (:mod:`privet.mpc.field61`, 10-20 ns per operation)
and runs beside MPyC, in the same party processes and over MPyC's channels
(:meth:`mpyc.runtime.Runtime.transfer`), for the linear algebra, products and
shuffles of the sorted-table protocols (:mod:`privet.learners._protocols.grouped`).
Comparisons stay in MPyC: :meth:`Engine.to_mpyc` and :meth:`Engine.from_mpyc`
move values between the two.

Security model: MPyC's. m parties, threshold t with 2t + 1 <= m (MPyC's default
t = (m - 1) // 2), semi-honest, channels assumed private and authentic. A
sharing is f(i) at the points i = 1..m of a polynomial of degree t with
uniform coefficients (:func:`privet.mpc.field61.share`).

Operations (all parties call them in the same order with the same public
shapes; each is one message per pair of parties, sent concurrently):

* :meth:`Engine.input` / :meth:`Engine.input_all`: one party's, or every party's, array shared.
* local: ``field61.add``/``sub``/``mul`` by public constants, ``cumsum``: linear maps of shares.
* :meth:`Engine.mul`, :meth:`Engine.reshare`: a product (or any sum of products computed
  locally) is a degree-2t sharing; every party re-shares its value with degree t and
  recombines with the Lagrange weights of all m points (Gennaro, Rabin & Rabin 1998).
* :meth:`Engine.open`: every party sends its share to the receivers. Each opening
  passes through :func:`privet.mpc.sharing.notify_reveal` (hooks, RevealLog) first.
* :meth:`Engine.shuffle`: the rows of a shared table in a secret uniformly random
  order. For every set A of m - t parties (each set misses t parties, so every
  coalition of t misses one set), A's first member draws a uniform permutation
  and sends it to A; each member multiplies its share by its Lagrange weight
  for A (an additive share of the secret), permutes its rows and re-shares the
  result with all parties, who add what they received. No coalition of t knows
  the permutation of the set it misses, hence not the composition (Laur,
  Willemson & Zhang 2011, "Round-efficient oblivious database manipulation").
  :meth:`Engine.unshuffle` applies the inverses in the reverse order.
* :meth:`Engine.to_mpyc`: a shared value x with public bounds lo <= x <= hi
  becomes an MPyC secure array: every party inputs a random r_i < 2**(b + kappa)
  (b the bit length of hi - lo) to both engines, ``x - lo + sum r_i`` is opened
  here and ``sum r_i`` subtracted in MPyC. The opened value is within
  statistical distance 2**-kappa of a value independent of x for any coalition
  of t < m parties (an unknown r_j is uniform over 2**(b + kappa) values), as
  MPyC's own comparisons mask with k = 30 bits; kappa = :data:`KAPPA` = 40.
  :meth:`Engine.from_mpyc` is the same the other way round.

Openings that reveal nothing about the data (a shuffled column whose multiset
is public, a masked conversion) are labelled with :data:`DATA_INDEPENDENT` so
that a reveal log tells them from the releases a ledger pays for.
"""

from __future__ import annotations

import itertools
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.mpc import field61 as F
from privet.mpc._runtime import get_runtime
from privet.mpc.sharing import notify_reveal, reveal

mpc = get_runtime()

KAPPA = 40
"""Statistical security (bits) of the masked conversions between the engines."""

NOISE_CHUNK_BITS = 1 << 22
"""Secret random bits drawn at once by :func:`discrete_laplace` (larger draws go in chunks)."""

DATA_INDEPENDENT = "[data-independent]"
"""Ends the label of an opening whose value is independent of the data (see module docstring)."""


def random_permutation(n: int) -> np.ndarray:
    """An exactly uniform permutation of range(n) from ``secrets`` (128-bit keys, ties redrawn)."""
    while True:
        keys = np.frombuffer(secrets.token_bytes(16 * n), dtype="<u8").reshape(2, n)
        order = np.lexsort((keys[1], keys[0]))
        k0, k1 = keys[0][order], keys[1][order]
        if n < 2 or not np.any((k0[1:] == k0[:-1]) & (k1[1:] == k1[:-1])):
            return order.astype(np.int64)


def random_below_power(bits: int, shape: tuple[int, ...]) -> np.ndarray:
    """Integers exactly uniform on [0, 2**bits) (bits <= 62), from ``secrets``, as int64."""
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    words = np.frombuffer(secrets.token_bytes(8 * size), dtype="<u8")
    return (words >> np.uint64(64 - bits)).astype(np.int64).reshape(shape)


@dataclass(frozen=True)
class ShuffleKey:
    """What this party knows of a shuffle: per set of parties, its permutation (None if not a member)."""

    steps: tuple[tuple[tuple[int, ...], np.ndarray | None], ...]


class Engine:
    """This party's side of the vector engine (see module docstring)."""

    def __init__(self) -> None:
        self.pid = int(mpc.pid)
        self.m = len(mpc.parties)
        self.t = int(mpc.threshold) if self.m > 1 else 0
        if 2 * self.t + 1 > self.m:
            raise InvalidParameterError(
                f"the vector engine needs 2t + 1 <= m parties for products; got t={self.t}, "
                f"m={self.m}."
            )
        self.weights = F.lagrange_at_zero(range(1, self.m + 1))

    # -- messages ------------------------------------------------------------------
    async def exchange(self, outgoing: Mapping[int, Any]) -> dict[int, Any]:
        """Send ``outgoing[j]`` to each party j (None if absent); return what each party sent here."""
        if self.m == 1:
            return {}
        futures = []
        for k in range(1, self.m):
            dst = (self.pid + k) % self.m
            graph = {i: [(i + k) % self.m] for i in range(self.m)}
            futures.append(mpc.transfer(outgoing.get(dst), sender_receivers=graph))
        received = {}
        for k, fut in zip(range(1, self.m), futures, strict=True):
            got = await fut
            received[(self.pid - k) % self.m] = got[0]
        return received

    # -- input, products, opening -----------------------------------------------------
    async def input(
        self, value: np.ndarray | None, sender: int, shape: Sequence[int]
    ) -> np.ndarray:
        """Party ``sender``'s field array (None elsewhere) of public ``shape``, shared."""
        shape = tuple(int(s) for s in shape)
        outgoing: dict[int, Any] = {}
        mine = None
        if self.pid == sender:
            value = np.asarray(value, dtype=np.uint64)
            if value.shape != shape:
                raise InvalidParameterError(f"input of shape {value.shape}, announced {shape}.")
            shares = F.share(value, self.m, self.t)
            outgoing = {j: shares[j] for j in range(self.m) if j != self.pid}
            mine = shares[self.pid]
        got = await self.exchange(outgoing)
        share = mine if self.pid == sender else got[sender]
        return np.asarray(share, dtype=np.uint64).reshape(shape)

    async def input_all(self, value: np.ndarray) -> list[np.ndarray]:
        """Every party's field array (same public shape), shared: one sharing per party, in pid order."""
        value = np.asarray(value, dtype=np.uint64)
        shares = F.share(value, self.m, self.t)
        got = await self.exchange({j: shares[j] for j in range(self.m) if j != self.pid})
        out = []
        for i in range(self.m):
            part = shares[self.pid] if i == self.pid else np.asarray(got[i], dtype=np.uint64)
            if part.shape != value.shape:
                raise InvalidParameterError(
                    f"party {i} input shape {part.shape}, this party {value.shape}."
                )
            out.append(part)
        return out

    async def sum_of_inputs(self, value: np.ndarray) -> np.ndarray:
        """Shares of the sum over the parties of each one's ``value`` (a field array)."""
        parts = await self.input_all(value)
        total = parts[0]
        for part in parts[1:]:
            total = F.add(total, part)
        return total

    async def reshare(self, local: np.ndarray) -> np.ndarray:
        """Degree-t shares of the secret whose degree-2t shares are ``local`` (after products)."""
        if self.m == 1:
            return np.asarray(local, dtype=np.uint64)
        return F.combine(await self.input_all(local), self.weights)

    async def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise product of two shared arrays (broadcasting)."""
        return await self.reshare(F.mul(a, b))

    async def open(
        self,
        x: np.ndarray,
        *,
        label: str,
        entry: object | None = None,
        receivers: Sequence[int] | None = None,
    ) -> np.ndarray | None:
        """Open shared ``x`` (signed int64, |x| < p/2) to ``receivers`` (default all); None elsewhere."""
        x = np.asarray(x, dtype=np.uint64)
        notify_reveal(label, entry, tuple(x.shape))
        rec = list(range(self.m)) if receivers is None else [int(r) for r in receivers]
        got = await self.exchange({j: x for j in rec if j != self.pid})
        if self.pid not in rec:
            return None
        parts = [x if i == self.pid else np.asarray(got[i], dtype=np.uint64) for i in range(self.m)]
        return F.decode(F.combine(parts, self.weights))

    # -- shuffles --------------------------------------------------------------------
    def _sets(self) -> list[tuple[int, ...]]:
        return list(itertools.combinations(range(self.m), self.m - self.t))

    async def _permute(
        self, members: tuple[int, ...], table: np.ndarray, perm: np.ndarray | None
    ) -> np.ndarray:
        """Shares of ``table[perm]`` from the members' additive shares, re-shared to all."""
        outgoing: dict[int, Any] = {}
        mine = None
        if self.pid in members:
            weight = F.lagrange_at_zero([a + 1 for a in members])[members.index(self.pid)]
            assert perm is not None
            local = F.mul(table, F.const(weight))[perm]
            shares = F.share(local, self.m, self.t)
            outgoing = {j: shares[j] for j in range(self.m) if j != self.pid}
            mine = shares[self.pid]
        got = await self.exchange(outgoing)
        total = None
        for i in members:
            part = mine if i == self.pid else np.asarray(got[i], dtype=np.uint64)
            total = part if total is None else F.add(total, part)
        assert total is not None
        return total

    async def shuffle(self, table: np.ndarray) -> tuple[np.ndarray, ShuffleKey]:
        """The rows (axis 0) of shared ``table`` in a secret, uniformly random order."""
        table = np.asarray(table, dtype=np.uint64)
        n = table.shape[0]
        steps = []
        for members in self._sets():
            leader = members[0]
            perm = random_permutation(n) if self.pid == leader else None
            outgoing = {j: perm for j in members if j != self.pid} if self.pid == leader else {}
            got = await self.exchange(outgoing)
            if self.pid in members and self.pid != leader:
                perm = np.asarray(got[leader], dtype=np.int64)
                if perm.shape != (n,):
                    raise InvalidParameterError("a shuffle permutation of the wrong length.")
            table = await self._permute(members, table, perm)
            steps.append((members, perm))
        return table, ShuffleKey(tuple(steps))

    async def unshuffle(self, key: ShuffleKey, table: np.ndarray) -> np.ndarray:
        """Undo :meth:`shuffle` with ``key`` on a table of the same number of rows."""
        table = np.asarray(table, dtype=np.uint64)
        for members, perm in reversed(key.steps):
            inverse = None if perm is None else np.argsort(perm).astype(np.int64)
            table = await self._permute(members, table, inverse)
        return table

    # -- conversions with MPyC -------------------------------------------------------
    @staticmethod
    def _mask_bits(lower: int, upper: int, m: int) -> int:
        bits = max(1, int(upper - lower).bit_length())
        total = bits + KAPPA
        if total + math.ceil(math.log2(max(m, 2))) + 1 > 60:
            raise InvalidParameterError(
                f"values in [{lower}, {upper}] are too wide to convert with {KAPPA} bits of "
                "statistical masking in GF(2**61 - 1)."
            )
        return total

    async def to_mpyc(
        self, x: np.ndarray, sectype: type, *, lower: int, upper: int, label: str
    ) -> Any:
        """Shared integers ``lower <= x <= upper`` as an MPyC secure (fixed-point) array, integral."""
        x = np.asarray(x, dtype=np.uint64)
        bits = self._mask_bits(lower, upper, self.m)
        r = random_below_power(bits, x.shape)
        masks = await self.sum_of_inputs(F.encode(r))
        parts = mpc.input(sectype.array(r.astype(object)), senders=list(range(self.m)))
        parts = parts if isinstance(parts, list) else [parts]
        z = await self.open(
            F.add(F.sub(x, F.const(lower)), masks),
            label=f"{label}: masked for MPyC {DATA_INDEPENDENT}",
        )
        assert z is not None
        out = sectype.array((z + int(lower)).astype(object))
        for part in parts:
            out = out - part
        out.integral = True
        return out

    async def from_mpyc(self, xm: Any, *, lower: int, upper: int, label: str) -> np.ndarray:
        """An MPyC secure array of integers in [lower, upper] as shares of this engine."""
        sectype = type(xm).sectype
        bits = self._mask_bits(lower, upper, self.m)
        r = random_below_power(bits, tuple(xm.shape))
        masks = await self.sum_of_inputs(F.encode(r))
        parts = mpc.input(sectype.array(r.astype(object)), senders=list(range(self.m)))
        parts = parts if isinstance(parts, list) else [parts]
        masked = xm - int(lower)
        for part in parts:
            masked = masked + part
        raw = await reveal(
            masked, label=f"{label}: masked for the vector engine {DATA_INDEPENDENT}", raw=True
        )
        f = int(getattr(sectype, "frac_length", 0))
        values = np.asarray([int(v) >> f for v in np.asarray(raw.value).ravel()], dtype=np.int64)
        z = values.reshape(tuple(xm.shape)) + int(lower)
        return F.sub(F.encode(z), masks)


# ------------------------------------------------------------------ secret random bits and noise


async def random_bits(eng: Engine, shape: tuple[int, ...]) -> np.ndarray:
    """Shares of independent uniform secret bits: the XOR of parties 0..t's own uniform bits.

    b = b_0 xor ... xor b_t, with x xor y = x + y - 2xy (t products). A coalition of t
    parties misses one b_i, which is uniform and independent of the rest, so b is
    uniform and independent of the coalition's view.
    """
    shape = tuple(int(s) for s in shape)
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    parts = []
    for sender in range(eng.t + 1):  # t + 1 parties suffice; the others input nothing
        mine = None
        if eng.pid == sender:
            raw = np.frombuffer(secrets.token_bytes((size + 7) // 8), dtype=np.uint8)
            mine = np.unpackbits(raw)[:size].astype(np.uint64).reshape(shape)
        parts.append(await eng.input(mine, sender, shape))
    bits = parts[0]
    for part in parts[1:]:
        both = await eng.mul(bits, part)
        bits = F.sub(F.add(bits, part), F.mul(both, F.const(2)))
    return bits


async def less_than_public(eng: Engine, bits: np.ndarray, thresholds: Any) -> np.ndarray:
    """Shares of [R < c] for R = sum_i bits[..., i] 2**i and public integers c (broadcast).

    The chain of :func:`privet.mpc.discrete._less_than`, least significant bit
    first: lt_i = c_i (1 - r_i) + [r_i = c_i] lt_{i-1}, one product per bit.
    A threshold of 2**B or more (B the number of bits) gives 1.
    """
    c = np.asarray(thresholds, dtype=object)
    small = c.size == 0 or max(int(v) for v in c.ravel()) < 2**62
    c64 = c.astype(np.int64) if small else None
    lt = None
    for i in range(bits.shape[-1]):
        if c64 is not None:
            ci = ((c64 >> i) & 1).astype(np.uint64)
        else:
            ci = np.vectorize(lambda v, i=i: (int(v) >> i) & 1, otypes=[np.int64])(c)
            ci = ci.astype(np.uint64)
        ri = bits[..., i]
        equal = F.add(F.mul(ri, F.encode(2 * ci.astype(np.int64) - 1)), F.sub(1, ci))
        first = F.mul(F.sub(1, ri), ci)
        lt = first if lt is None else F.add(first, await eng.mul(equal, lt))
    assert lt is not None
    over = c >= 2 ** bits.shape[-1]  # a threshold beyond every B-bit value: always true
    if np.any(over):
        lt = np.where(np.broadcast_to(over, lt.shape), np.uint64(1), lt)
    return lt


async def discrete_laplace(eng: Engine, shape: tuple[int, ...], coins: Any) -> np.ndarray:
    """Shares of G1 - G2, the bitwise discrete Laplace of :mod:`privet.mpc.discrete`, drawn here.

    The same distribution as :meth:`privet.mpc.discrete.SecureDiscreteLaplace.noise` for
    the same :class:`~privet.mechanisms.bitwise_geometric.GeometricCoins` (each digit
    j of each geometric is the coin [R < c_j] of B fresh uniform bits), hence the same
    proof and delta; only the arithmetic is this engine's.
    """
    shape = tuple(int(s) for s in shape)
    J, B = coins.support_bits, coins.coin_bits
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    chunk = max(1, NOISE_CHUNK_BITS // (2 * J * B))  # bounds the memory of the bit arrays
    weights = (np.uint64(1) << np.arange(J, dtype=np.uint64)).astype(np.uint64)
    thresholds = np.array(coins.thresholds, dtype=object)
    parts = []
    for start in range(0, size, chunk):
        count = min(chunk, size - start)
        r = await random_bits(eng, (2, count, J, B))
        digits = await less_than_public(eng, r, thresholds)
        g = F.sum(F.mul(digits, weights), axis=-1)  # (2, count)
        parts.append(F.sub(g[0], g[1]))
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    return out.reshape(shape)


# ------------------------------------------------------------------ comparisons


def comparison_kappa(bits: int, parties: int = 3) -> int:
    """Statistical security of :func:`non_negative` for values of ``bits`` bits: 40, less for wide values.

    The opened value c = x + 2**bits + r + 2**bits R (r < 2**bits, R a sum of
    ``parties`` kappa-bit values) must stay below p / 2 (about 2**60) so that it is
    read as the non-negative integer it is: c < 2**(bits + kappa) (parties + 1), so
    kappa <= 60 - bits - ceil(log2(parties + 1)); and at most 56 - bits whatever the
    parties (the bound of the first release). MPyC's own comparisons use kappa = 30.
    """
    room = 60 - int(bits) - math.ceil(math.log2(int(parties) + 1))
    kappa = min(KAPPA, 61 - bits - 5, room)
    if kappa < 30:
        raise InvalidParameterError(
            f"comparisons of {bits}-bit values among {parties} parties leave {kappa} < 30 bits "
            "of statistical masking in GF(2**61 - 1); use smaller values or fewer parties."
        )
    return kappa


async def non_negative(eng: Engine, x: np.ndarray, bits: int, *, label: str) -> np.ndarray:
    """Shares of [x >= 0] for shared signed integers with |x| < 2**bits.

    y = x + 2**bits lies in [0, 2**(bits+1)); with secret random bits r (bits of them)
    and a secret R = sum of every party's own uniform kappa-bit value, the mask
    r + 2**bits R is uniform on a contiguous range of at least 2**(bits + kappa)
    values against any t parties (one honest party's share of R is uniform and
    unknown to them), so c = y + r + 2**bits R is within statistical distance
    2**(1 - kappa) of independent of y when opened (:func:`comparison_kappa`). Then
    y mod 2**bits = c_lo - r + 2**bits [c_lo < r] (c_lo = c mod 2**bits; the
    comparison of public c_lo with the secret bits of r is :func:`less_than_public`)
    and [x >= 0] = (y - y mod 2**bits) / 2**bits (Catrina & de Hoogh 2010, the
    method of MPyC's secure comparisons, whose ``sgn`` shifts R by the number of
    random bits in the same way).

    The mask must not skip a bit: an earlier release shifted R by 2**(bits + 1),
    which left bit ``bits`` of the mask 0, so bit ``bits`` of c was 0 with
    probability |x| / 2**bits and every server learnt about |x| (found by an
    independent review; ``tests/mpc/test_mpc_vector.py`` now tests every bit of c).
    """
    x = np.asarray(x, dtype=np.uint64)
    kappa = comparison_kappa(bits, eng.m)
    r = await random_bits(eng, (*x.shape, bits))
    weights = (np.uint64(1) << np.arange(bits, dtype=np.uint64)).astype(np.uint64)
    r_value = F.sum(F.mul(r, weights), axis=-1)
    big = await eng.sum_of_inputs(F.encode(random_below_power(kappa, x.shape)))
    y = F.add(x, F.const(1 << bits))
    masked = F.add(F.add(y, r_value), F.mul(big, F.const(1 << bits)))
    c = await eng.open(masked, label=f"{label}: masked comparison {DATA_INDEPENDENT}")
    assert c is not None
    c_lo = np.asarray(c, dtype=np.int64) & np.int64((1 << bits) - 1)
    r_greater = F.sub(1, await less_than_public(eng, r, (c_lo + 1).astype(object)))  # [c_lo < r]
    y_lo = F.add(F.sub(F.encode(c_lo), r_value), F.mul(r_greater, F.const(1 << bits)))
    return F.mul(F.sub(y, y_lo), F.const(pow(1 << bits, -1, F.P)))


async def maximum(eng: Engine, x: np.ndarray, bits: int, *, label: str) -> np.ndarray:
    """Shares of the maximum over the last axis (values with |x| < 2**(bits - 1)), by a tournament."""
    x = np.asarray(x, dtype=np.uint64)
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        a, b = x[..., 0 : 2 * half : 2], x[..., 1 : 2 * half : 2]
        diff = F.sub(a, b)
        c = await non_negative(eng, diff, bits, label=label)
        best = F.add(b, await eng.mul(c, diff))
        x = np.concatenate([best, x[..., 2 * half :]], axis=-1) if x.shape[-1] % 2 else best
    return x[..., 0]


async def argmax_onehot(eng: Engine, keys: np.ndarray, bits: int, *, label: str) -> np.ndarray:
    """Shares of the one-hot of the maximum over the last axis of *distinct* non-negative keys < 2**(bits-1).

    A tournament: each round compares pairs ([a >= b]) and keeps the winner's key
    and one-hot (c a + (1 - c) b), so ties must have been broken in the keys
    (as :func:`privet.mpc.discrete.argmax_first` does with ranks).
    """
    keys = np.asarray(keys, dtype=np.uint64)
    d = keys.shape[-1]
    onehot = np.broadcast_to(np.eye(d, dtype=np.uint64), (*keys.shape, d)).copy()
    while keys.shape[-1] > 1:
        half = keys.shape[-1] // 2
        a, b = keys[..., 0 : 2 * half : 2], keys[..., 1 : 2 * half : 2]
        oa, ob = onehot[..., 0 : 2 * half : 2, :], onehot[..., 1 : 2 * half : 2, :]
        diff = F.sub(a, b)
        c = await non_negative(eng, diff, bits, label=label)
        both = await eng.mul(c[..., None], np.concatenate([diff[..., None], F.sub(oa, ob)], -1))
        best = F.add(b, both[..., 0])
        best_onehot = F.add(ob, both[..., 1:])
        if keys.shape[-1] % 2:
            keys = np.concatenate([best, keys[..., 2 * half :]], axis=-1)
            onehot = np.concatenate([best_onehot, onehot[..., 2 * half :, :]], axis=-2)
        else:
            keys, onehot = best, best_onehot
    return onehot[..., 0, :]


__all__ = [
    "DATA_INDEPENDENT",
    "KAPPA",
    "Engine",
    "ShuffleKey",
    "argmax_onehot",
    "comparison_kappa",
    "discrete_laplace",
    "less_than_public",
    "maximum",
    "non_negative",
    "random_bits",
    "random_permutation",
]
