"""Seed 001 (Emekci et al.): a summation whose wrong results are detected and attributed.

``verify="malicious"``: the Sec. 4.3 check of :mod:`.sharing` misses a party
that shifts both of its intermediate results along the error polynomial
(:meth:`.sharing.SharingPlan.undetectable_shift`). This module replaces it by a
check that binds every intermediate result to the shares dealt, and names the
party that broke it.

**Why the shift passes Sec. 4.3, and what binds it here.** With polynomials of
degree 2n - 2 and two points per party, the 2n - 2 points of the other parties
leave one degree of freedom, so a party can move its own two values along a
polynomial that vanishes at everyone else's points. Here the sharing
polynomials have degree d = 2n - 3 (:class:`VerifiedPlan`): the 2n - 2 points
held by the other n - 1 parties determine every polynomial, so a lone party's
values are fixed by what the others hold. Privacy is unchanged where it
matters: a coalition of up to n - 2 parties holds at most 2n - 4 points and
learns nothing about another party's values beyond the released sums; n - 1
parties learn the last party's values from the released sum itself (the
paper's footnote 2), with either degree.

**The check: a random linear combination after the results are fixed** (an
information-theoretic MAC whose key is drawn after the values it
authenticates). Every party deals, next to its L values, kappa uniformly
random mask values (:func:`kappa`). After all intermediate results y_k are
sent, the challenge gamma (kappa x L field elements) is derived from the hash
of all of them (Fiat-Shamir), and each dealer i publishes the masked
combinations Q_i = mask_i + gamma . q_i of its sharing polynomials, as their
values at d + 1 points (degree <= d by construction); the mask makes Q_i
uniform, so it reveals nothing. The sum P = sum_i Q_i must agree with
gamma . y_k at both points of every party k. A party whose results are not
the sum of the shares dealt to it fails this at its points with probability
1 - p^-kappa per challenge it can try (kappa is chosen so that p^kappa >= 2^80).
A dealer whose Q_i does not match what it dealt shows up at an honest
receiver's points; that receiver publishes the dealer's block with the
dealer's signed hash as evidence.

**Attribution.** Each party signs (Ed25519, ``cryptography``) the message with
its results and the salted hashes of the blocks it dealt, and the message with
its Q_i; each party forwards the signed digests it received, so two different
messages signed by one party for one round prove that it equivocated. A party
is named when (a) it signed two different messages for one step, (b) its
results fail the check at its points and it filed no valid complaint, (c) it
is a dealer whose signed block does not combine to its signed Q_i, (d) it
files a complaint that its own evidence refutes, or (e) it sent this party a
message that is not validly signed or does not match what it signed (this one
the receiver cannot prove to the others). Rounds per summation: deal,
results, combinations, complaints (the paper's protocol: deal, commit, reveal).

Part of the party side: imports only numpy, hashlib, ``cryptography`` and
its siblings (see :mod:`.protocol` why).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .field import (
    FieldSampler,
    _as_field,
    decode_centred,
    derive_points,
    field_combine,
    lagrange_weights,
    storage_dtype,
)
from .sharing import SummationIntegrityError, consistent_shift

SECURITY_BITS = 80
"""A cheater passes one challenge with probability p^-kappa <= 2^-80."""

ACCUSES = "verify='malicious' accuses"
"""The phrase that starts every attribution (the estimator reads the party list after it)."""


def kappa(p: int) -> int:
    """Number of masked combinations per summation: the least k with p^k >= 2^80."""
    return max(1, math.ceil(SECURITY_BITS / math.log2(p)))


def _h(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _num(x: int) -> bytes:
    return int(x).to_bytes(8, "little")


def _combine(weights: np.ndarray, values: np.ndarray, p: int) -> np.ndarray:
    """``weights @ values mod p`` exactly; weights (M, K) and values (K, N) in [0, p).

    For p < 2^16 and K (p - 1)^2 < 2^53 every product and every partial sum is
    an integer below 2^53, so float64 BLAS is exact (about 4x faster than an
    integer einsum here); otherwise int64 einsum or :func:`field_combine`.
    """
    if p < 2**16 and weights.shape[1] * (p - 1) ** 2 < 2**53:
        out = np.asarray(weights, dtype=np.float64) @ np.asarray(values, dtype=np.float64)
        return np.mod(out, p).astype(np.int64)
    if p < 2**16 and weights.shape[1] < 2**31:  # products < 2^32, sums of < 2^31 terms
        return np.einsum("mk,kn->mn", weights.astype(np.int64), values.astype(np.int64)) % p
    return field_combine(weights.tolist() if weights.dtype == object else weights, values, p)


@dataclass
class VerifiedPlan:
    """Agreed constants of one run with ``verify="malicious"``.

    Shares are laid out point-major, (2n, L + kappa): rows 2j and 2j + 1 are
    party j's points; the last kappa columns are the masks.

    Parameters
    ----------
    n : int
        Number of parties (at least 3).
    points : list of int
        The 2n agreed non-zero evaluation points.
    p : int
        The prime modulus.
    """

    n: int
    points: list[int]
    p: int
    degree: int = field(init=False)
    kappa: int = field(init=False)
    complete: np.ndarray = field(init=False)
    extend: np.ndarray = field(init=False)
    at_zero: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        m, p = 2 * self.n, self.p
        self.degree = d = m - 3
        self.kappa = kappa(p)
        base = [0, *self.points[:d]]  # q is uniform iff its values at x_0..x_{d-1} are
        self.complete = np.asarray(
            _transpose(lagrange_weights(base, self.points[d:], p)), dtype=np.int64
        )  # (m - d, d + 1): the last 3 points from (v, first d shares)
        first = self.points[: d + 1]
        self.extend = np.asarray(
            _transpose(lagrange_weights(first, self.points[d + 1 :], p)), dtype=np.int64
        )  # (m - d - 1, d + 1): the last 2 points from the first d + 1
        self.at_zero = np.asarray(_transpose(lagrange_weights(first, [0], p)), dtype=np.int64)

    def share(self, values: np.ndarray, sampler: FieldSampler) -> np.ndarray:
        """Alg. 1 at degree 2n - 3 for the values and kappa masks: (L,) -> (2n, L + kappa)."""
        m, d, p = 2 * self.n, self.degree, self.p
        v = np.concatenate([_as_field(values, p), _as_field(sampler.uniform((self.kappa,)), p)])
        out = np.empty((m, v.shape[0]), dtype=storage_dtype(p))
        out[:d] = sampler.uniform((d, v.shape[0]))
        stacked = np.concatenate([v[None, :].astype(out.dtype), out[:d]], axis=0)
        out[d:] = _combine(self.complete, stacked, p)
        return out

    def combinations(self, shares: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        """Q = mask + gamma . q at the first d + 1 points, (kappa, d + 1), from (2n, L + kappa)."""
        p, k, d = self.p, self.kappa, self.degree
        rows = shares[: d + 1]
        q = _combine(gamma, rows[:, :-k].T, p) if gamma.shape[1] else np.zeros((k, d + 1), int)
        return (q + rows[:, -k:].T.astype(np.int64)) % p

    def all_points(self, q: np.ndarray) -> np.ndarray:
        """A combination given at the first d + 1 points, at all 2n points: (kappa, 2n)."""
        rest = _combine(self.extend, q.T, self.p).T
        return np.concatenate([q, rest], axis=1)

    def results_combined(self, results: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        """gamma . y + mask column for every row of ``results`` (R, L + kappa): (kappa, R)."""
        p, k = self.p, self.kappa
        q = _combine(gamma, results[:, :-k].T, p) if gamma.shape[1] else 0
        return (q + results[:, -k:].T.astype(np.int64)) % p

    def total(self, results: np.ndarray) -> np.ndarray:
        """S(0) from the first d + 1 of the 2n results (2n, L + kappa) -> (L,) centred."""
        rows = results[: self.degree + 1, : -self.kappa]
        return decode_centred(_combine(self.at_zero, rows, self.p)[0], self.p)

    def challenge(self, seed: bytes, length: int) -> np.ndarray:
        """The kappa x ``length`` challenge from the hash of the round's results."""
        if length == 0:
            return np.zeros((self.kappa, 0), dtype=np.int64)
        out = FieldSampler(self.p, key=seed).uniform((self.kappa, length))
        return np.asarray(out, dtype=np.int64 if self.p < 2**31 else object)


def _transpose(matrix: list[list[int]]) -> list[list[int]]:
    return [list(col) for col in zip(*matrix, strict=True)]


@dataclass
class Keys:
    """This party's Ed25519 signing key and every party's public key (agreed at setup)."""

    me: int
    signer: Any
    public: list[Any]
    run: bytes
    summations: int = 0

    def next_tag(self) -> bytes:
        """A fresh tag for the next summation of the run (part of every signed digest)."""
        self.summations += 1
        return _h(self.run, _num(self.summations))

    def sign(self, digest: bytes) -> bytes:
        return self.signer.sign(digest)

    def valid(self, party: int, signature: bytes, digest: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self.public[party].verify(signature, digest)
        except (InvalidSignature, ValueError, TypeError):
            return False
        return True


async def setup(mpc: Any, n: int, p: int) -> tuple[VerifiedPlan, Keys]:
    """Agree on the 2n points and exchange Ed25519 public keys, with an echo check.

    Every party contributes 256 random bits to the points (no party chooses X
    alone) and its public key; then every party sends the hash of what it
    received, so a party that sent different keys to different parties stops
    the run here, before any data is shared.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    signer = Ed25519PrivateKey.generate()
    raw = signer.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    got = await mpc.transfer((secrets.token_bytes(32), raw))
    view = _h(*[seed + key for seed, key in got])
    echoes = await mpc.transfer(view)
    differ = [j for j, e in enumerate(echoes) if e != view]
    if differ:
        raise SummationIntegrityError(
            f"party {mpc.pid}: parties {differ} received other points or public keys than "
            "this party at setup: a party sent different values to different parties. "
            "Nothing was shared; the run stops."
        )
    points = derive_points(b"".join(seed for seed, _ in got), 2 * n, p)
    public = [Ed25519PublicKey.from_public_bytes(key) for _, key in got]
    return VerifiedPlan(n, points, p), Keys(mpc.pid, signer, public, view)


@dataclass
class _Accusation:
    party: int
    reason: str
    provable: bool = True


async def _to_each(mpc: Any, n: int, me: int, make: Any) -> list[Any]:
    """Send ``make(j)`` to every other party j; returns what each party sent to this one."""
    sends = []
    for s in range(1, n):
        to = (me + s) % n
        sends.append(mpc.transfer(make(to), sender_receivers={i: [(i + s) % n] for i in range(n)}))
    got = await asyncio.gather(*sends)
    out: list[Any] = [None] * n
    for s, item in zip(range(1, n), got, strict=True):
        out[(me - s) % n] = item[0]
    return out


async def verified_sum(
    mpc: Any,
    plan: VerifiedPlan,
    keys: Keys,
    values: np.ndarray,
    sampler: FieldSampler,
    *,
    tamper: str | None = None,
) -> np.ndarray:
    """One summation with ``verify="malicious"``: the sum, or an error naming the cheater.

    1. Deal: share the values and kappa masks at degree 2n - 3; send party j
       its two rows and a fresh 16-byte salt.
    2. Results: add the shares received; send to all the results y, the salted
       hashes of the n blocks dealt, and a signature on both.
    3. Combinations: gamma from the hash of all signed result messages; send
       to all Q_i, the digests and signatures of the result messages received
       (an echo), and a signature.
    4. Complaints: if this party's own points fail the check, the dealer whose
       block does not combine to its Q_i, with the block and salt as evidence;
       and the echo of the combination messages.
    Then every party judges the same public data (:func:`_judge`).

    ``tamper`` is the testing hook of a malicious party: ``"result"`` adds 1 to
    its first result, ``"shift"`` moves both results along the error
    polynomial that passes Sec. 4.3, ``"equivocate"`` sends party 0 other
    results than the rest, ``"block"`` deals party 0 a share off by 1 while
    publishing the Q_i of its true polynomials, ``"combination"`` publishes a
    wrong Q_i, ``"complain"`` files a false complaint against party 0 (with the
    true block as its evidence).
    """
    n, me, p, k = plan.n, mpc.pid, plan.p, plan.kappa
    tag = keys.next_tag()
    shares = plan.share(values, sampler)
    L = shares.shape[1] - k
    salts = [secrets.token_bytes(16) for _ in range(n)]
    if tamper == "block" and me != 0 and L:
        blocks_out = shares.copy()
        blocks_out[0, 0] = (int(blocks_out[0, 0]) + 1) % p
    else:
        blocks_out = shares
    dealt = [blocks_out[2 * j : 2 * j + 2] for j in range(n)]
    hashes = b"".join(_h(salts[j], _payload(dealt[j])) for j in range(n))

    # 1. deal
    got = await _to_each(mpc, n, me, lambda j: (dealt[j], salts[j]))
    got[me] = (dealt[me], salts[me])
    width = (2, L + k)
    await _halt(me, _malformed(got, lambda m: _array(m[0], width) and _bytes(m[1], 16)))
    blocks = [np.asarray(b) for b, _ in got]
    inter = np.zeros((2, L + k), dtype=np.int64 if p < 2**32 else object)
    for b in blocks:
        inter += b
    results = np.mod(inter, p).astype(storage_dtype(p))
    if tamper == "result" and L:
        results[0, 0] = (int(results[0, 0]) + 1) % p
    if tamper == "shift" and L:
        for row, e in enumerate(consistent_shift(plan.points, me, 1, p)):
            results[row, 0] = (int(results[row, 0]) + e) % p

    # 2. results
    def r2(res: np.ndarray) -> tuple[np.ndarray, bytes, bytes]:
        digest = _h(tag, b"results", _num(me), _payload(res), hashes)
        return res, hashes, keys.sign(digest)

    mine2 = r2(results)
    if tamper == "equivocate" and L:
        other = results.copy()
        other[0, 0] = (int(other[0, 0]) + 1) % p
        alt = r2(other)
        got2 = await _to_each(mpc, n, me, lambda j: alt if j == 0 else mine2)
    else:
        got2 = await _to_each(mpc, n, me, lambda j: mine2)
    got2[me] = mine2
    accusations: list[_Accusation] = []
    await _halt(
        me,
        _malformed(
            got2,
            lambda m: (
                _array(m[0], width, storage_dtype(p)) and _bytes(m[1], 32 * n) and _bytes(m[2])
            ),
        ),
    )
    digests2 = []
    for j, (res, hs, sig) in enumerate(got2):
        digest = _h(tag, b"results", _num(j), _payload(res), hs)
        digests2.append(digest)
        if not keys.valid(j, sig, digest):
            accusations.append(_Accusation(j, "its results message is not validly signed", False))
        elif _h(got[j][1], _payload(blocks[j])) != hs[32 * me : 32 * me + 32]:
            accusations.append(
                _Accusation(j, "the share block it sent this party is not the one it signed", False)
            )
    await _halt(me, accusations)
    gamma = plan.challenge(_h(tag, b"gamma", *digests2), L)

    # 3. combinations
    comb = plan.combinations(shares, gamma)
    if tamper == "combination":
        comb = comb.copy()
        comb[0, 0] = (comb[0, 0] + 1) % p
    comb = np.ascontiguousarray(comb).astype(storage_dtype(p))
    echo2 = (b"".join(digests2), b"".join(got2[j][2] for j in range(n)))
    d3 = _h(tag, b"combination", _num(me), _payload(comb))
    mine3 = (comb, echo2, keys.sign(d3))
    got3 = await _to_each(mpc, n, me, lambda j: mine3)
    got3[me] = mine3
    await _halt(
        me,
        _malformed(
            got3,
            lambda m: (
                _array(m[0], (k, plan.degree + 1), storage_dtype(p))
                and _echo(m[1], n)
                and _bytes(m[2])
            ),
        ),
    )
    digests3 = []
    for j, (c, _, sig) in enumerate(got3):
        digest = _h(tag, b"combination", _num(j), _payload(c))
        digests3.append(digest)
        if not keys.valid(j, sig, digest):
            accusations.append(
                _Accusation(j, "its combination message is not validly signed", False)
            )
    accusations += _echoes(keys, [e for _, e, _ in got3], digests2, "results")
    await _halt(me, accusations)
    combs = [_as_field(c, p) for c, _, _ in got3]
    public = plan.all_points(np.sum(combs, axis=0) % p)  # P at all 2n points, (kappa, 2n)
    stacked = np.concatenate([np.asarray(r) for r, _, _ in got2], axis=0)  # (2n, L + kappa)
    checked = plan.results_combined(stacked, gamma)  # (kappa, 2n)

    # 4. complaints
    complaints = []
    own = slice(2 * me, 2 * me + 2)
    if not np.array_equal(checked[:, own], public[:, own]):
        for i in range(n):
            if not np.array_equal(
                plan.results_combined(blocks[i], gamma), plan.all_points(combs[i])[:, own]
            ):
                complaints.append((i, blocks[i], got[i][1]))
    if tamper == "complain" and me != 0:  # a false complaint against party 0
        complaints.append((0, blocks[0], got[0][1]))
    echo3 = (b"".join(digests3), b"".join(got3[j][2] for j in range(n)))
    got4 = await _to_each(mpc, n, me, lambda j: (complaints, echo3))
    got4[me] = (complaints, echo3)

    def complaint_list(m: Any) -> bool:
        return isinstance(m[0], list) and all(
            isinstance(c, tuple)
            and len(c) == 3
            and isinstance(c[0], int)
            and 0 <= c[0] < n
            and _array(c[1], width)
            and _bytes(c[2], 16)
            for c in m[0]
        )

    await _halt(me, _malformed(got4, lambda m: complaint_list(m) and _echo(m[1], n)))
    accusations += _echoes(keys, [e for _, e in got4], digests3, "combination")
    await _halt(me, accusations)
    explained = set()
    for j, (filed, _) in enumerate(got4):
        for dealer, block, salt in filed:
            block = np.asarray(block)
            signed = got2[dealer][1][32 * j : 32 * j + 32]
            if _h(salt, _payload(block)) == signed and not np.array_equal(
                plan.results_combined(block, gamma),
                plan.all_points(combs[dealer])[:, 2 * j : 2 * j + 2],
            ):
                accusations.append(
                    _Accusation(
                        dealer,
                        f"the share block it signed for party {j} does not combine to the "
                        "combination Q it signed (it dealt shares off its polynomials, or "
                        "published a wrong Q)",
                    )
                )
                explained.add(j)
            else:
                accusations.append(_Accusation(j, f"it filed a false complaint against {dealer}"))
    for j in range(n):
        if j not in explained and not np.array_equal(
            checked[:, 2 * j : 2 * j + 2], public[:, 2 * j : 2 * j + 2]
        ):
            accusations.append(
                _Accusation(
                    j,
                    "its signed intermediate results are not the sum of the shares dealt to "
                    "it (they fail the masked linear check against the dealers' signed "
                    "combinations, and it filed no complaint)",
                )
            )
    await _halt(me, accusations)
    return plan.total(stacked)


def _echoes(
    keys: Keys, echoes: list[tuple[bytes, bytes]], mine: list[bytes], what: str
) -> list[_Accusation]:
    """Compare every party's echo (digests, signatures) of a step's messages with this party's."""
    out = []
    own = b"".join(mine)
    for k, (digests, sigs) in enumerate(echoes):
        if digests == own:
            continue
        for j in range(len(mine)):
            digest, sig = digests[32 * j : 32 * j + 32], sigs[64 * j : 64 * j + 64]
            if digest == mine[j]:
                continue
            if keys.valid(j, sig, digest):
                out.append(
                    _Accusation(
                        j,
                        f"it signed two different {what} messages for one step (another "
                        "party holds the other one): it sent different values to different "
                        "parties",
                    )
                )
            else:
                out.append(
                    _Accusation(
                        k, f"it forwarded a {what} message of party {j} with a bad signature", False
                    )
                )
    return out


def _array(x: Any, shape: tuple[int, ...], dtype: Any = None) -> bool:
    return (
        isinstance(x, np.ndarray)
        and x.shape == shape
        and (dtype is None or x.dtype == dtype)
        and x.dtype.kind in "uiO"
    )


def _bytes(x: Any, length: int | None = None) -> bool:
    return isinstance(x, bytes) and (length is None or len(x) == length)


def _echo(x: Any, n: int) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and _bytes(x[0], 32 * n) and _bytes(x[1], 64 * n)


def _payload(a: np.ndarray) -> bytes:
    """The bytes a digest covers: the array's words, or its integers for a large field."""
    a = np.ascontiguousarray(a)
    return a.tobytes() if a.dtype != object else repr(a.tolist()).encode()


def _malformed(messages: list[Any], check: Any) -> list[_Accusation]:
    """Parties whose message of this step does not have the agreed form (seen by this party)."""
    out = []
    for j, m in enumerate(messages):
        try:
            ok = isinstance(m, tuple) and bool(check(m))
        except Exception:  # any malformed content
            ok = False
        if not ok:
            out.append(_Accusation(j, "it sent this party a malformed message", False))
    return out


HALT_GRACE = 3.0
"""Seconds a party waits before it stops, so that what it already sent reaches the others."""


async def _halt(me: int, accusations: list[_Accusation]) -> None:
    """:func:`_stop`, after a grace period: a party that exits at once may cut off the
    messages still in its send buffers, and the others would then see a lost connection
    instead of the data they need to reach (and report) the same verdict."""
    if accusations:
        await asyncio.sleep(HALT_GRACE)
    _stop(me, accusations)


def _stop(me: int, accusations: list[_Accusation]) -> None:
    if not accusations:
        return
    named = sorted({a.party for a in accusations})
    lines = [
        f"party {a.party}: {a.reason}" + ("" if a.provable else " (seen by this party only)")
        for a in accusations
    ]
    reasons = "; ".join(dict.fromkeys(lines))
    raise SummationIntegrityError(
        f"{ACCUSES} {named}: party {me} found that {reasons}. The run stops; no sum of this "
        "round was used."
    )
