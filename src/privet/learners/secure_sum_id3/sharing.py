"""Seed 001 (Emekci et al.): Shamir secure summation (Alg. 1-2) with the Sec. 4.3 verification.

* **Alg. 1-2 (Shamir summation)** with the **verification of Sec. 4.3**:
  polynomials of degree 2n - 2, 2n evaluation points (two per party), and
  commit-then-reveal of the intermediate results -- :class:`SharingPlan`
  (the agreed constants) and :func:`shamir_sum` (one summation round).
* The fast path on MPyC's own Shamir secret sharing -- :func:`mpyc_sum`.
* The DP variant's distributed discrete-Laplace noise: each party's share
  (:func:`noise_shares`) and the sum of all n shares drawn at once for the
  reference path (:func:`pooled_noise`).

Part of the party side: it imports its siblings relatively and nothing of
:mod:`privet.learners` (see :mod:`.protocol` why).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privet.errors import MPCError

from .field import (
    FieldSampler,
    _as_field,
    decode_centred,
    derive_points,
    field_combine,
    lagrange_weights,
    storage_dtype,
)


class SummationIntegrityError(MPCError):
    """A party's intermediate results are inconsistent (Sec. 4.3): the protocol stops.

    With ``verify="malicious"`` the estimator raises it with ``accused`` (the
    parties named as senders of a wrong value) and ``accusations`` (which
    parties each party named, read from its message).
    """

    def __init__(
        self,
        message: str,
        *,
        accused: tuple[int, ...] = (),
        accusations: dict[int, tuple[int, ...]] | None = None,
    ) -> None:
        super().__init__(message)
        self.accused = tuple(accused)
        self.accusations = dict(accusations or {})


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
        return consistent_shift(self.points, party, delta, self.p)

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


def consistent_shift(points: list[int], party: int, delta: int, p: int) -> tuple[int, int]:
    """E(x_{2j}), E(x_{2j+1}) for E(x) = c * prod over the other parties' points (x - x_k).

    E has degree 2n - 2, vanishes at every other party's points and E(0) =
    ``delta``: see :meth:`SharingPlan.undetectable_shift`. Against the
    degree-(2n - 3) sharing of ``verify="malicious"`` (:mod:`.verified`) the
    same shift is caught, because S + E no longer has the sharing's degree.
    """
    own = (2 * party, 2 * party + 1)
    others = [x for k, x in enumerate(points) if k not in own]
    at_zero = math.prod((-x) % p for x in others) % p
    c = int(delta) * pow(at_zero, -1, p) % p
    e0, e1 = (c * math.prod((points[k] - x) % p for x in others) % p for k in own)
    return e0, e1


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
    shape: int | tuple[int, ...],
    scale: float,
    n_parties: int,
    rng: np.random.Generator,
    *,
    of: int | None = None,
) -> np.ndarray:
    """The sum of ``of`` (default: all n) parties' :func:`noise_shares`, drawn at once
    (same law). ``of = n - 1`` is a discrete Laplace(``scale``)."""
    r = (n_parties if of is None else of) / max(n_parties - 1, 1)
    q = 1.0 - math.exp(-1.0 / scale)
    return rng.negative_binomial(r, q, size=shape) - rng.negative_binomial(r, q, size=shape)
