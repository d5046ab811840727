"""Exact discrete Laplace noise, vectorised with numpy (Canonne, Kamath & Steinke 2020).

OpenDP's exact sampler draws about 1.4e5 values a second here, one at a time in
rational arithmetic. That is fine for a model's releases and too slow for the
papers' simulations (seed 003's Sec. 4 draws about a million values per tree)
and for a local randomiser on every record of a census (seed 004). This module
draws the same distribution, exactly, a whole array at a time.

The distribution. For a scale ``sigma > 0``, the discrete Laplace on the
integers has ``P[Z = z]`` proportional to ``exp(-|z| / sigma)``. A float scale is
a dyadic rational, ``sigma = t / s`` exactly (:class:`fractions.Fraction`), and
the sampler is Algorithm 2 of Canonne, Kamath & Steinke, "The Discrete Gaussian
for Differential Privacy" (NeurIPS 2020), with Algorithm 1 for its
``Bernoulli(exp(-gamma))`` coins, run on every element still undecided:

1. ``U`` uniform on ``{0, ..., t - 1}``; keep it with probability ``exp(-U / t)``;
2. ``V`` counts the successes of ``Bernoulli(exp(-1))`` before the first failure;
3. ``Y = floor((U + t V) / s)``, a geometric variable with ``P[Y = y]`` proportional
   to ``exp(-y s / t)``;
4. a fair sign ``B``; ``(B = 1, Y = 0)`` is rejected so that 0 is not counted twice.

Every coin is a comparison of exactly uniform integers: ``Bernoulli(U / t)`` is
``integers(0, t) < U`` and Algorithm 1's ``Bernoulli(gamma / K)`` with
``gamma = U / t`` is the conjunction of ``Bernoulli(U / t)`` and ``Bernoulli(1 / K)``
(independent draws: the product of the probabilities). :meth:`numpy.random.
Generator.integers` is exactly uniform (Lemire's rejection method). No float is
computed from the noise, so the floating-point attack on textbook Laplace
samplers (Mironov 2012) does not apply, and the output law is the discrete
Laplace of scale exactly ``sigma``, not an approximation of it.

Randomness. The integers come from :func:`privet.mechanisms._random.local_rng`:
a fresh PCG64DXSM generator seeded with 256 bits of OS entropy per call (its
threat model is stated there; it is the one privet's local randomisers and the
distributed Laplace's gamma shares already use). OpenDP's sampler reads the
OS CSPRNG for every coin, which is why it stays the sampler of the central
mechanisms; this one is used where the volume needs it (see
:mod:`privet.mechanisms._opendp`).

Range. Scales of ``2^53`` or more, and scales whose ``t`` or ``s`` reach ``2^62``
(``sigma`` below about ``2^-9`` relative to its last mantissa bit) are not
handled here: :func:`supports` says so and the caller uses OpenDP. Below
``2^53`` a draw beyond 64 bits has probability below ``exp(-2^63 / 2^53) =
e^-1024``; the intermediate ``U + t V`` is computed in Python integers for the
elements where it would not fit in 64 bits, so the output is exact, and a
value that does not fit is an error, never a wrapped value.

Timing. The number of rounds depends on the random draws (as in OpenDP's
sampler and in every exact sampler of these laws), not on the private values;
a caller that times one call learns something about the largest noise of that
call, so the vectorised sampler is used where one call draws the noise of many
releases (a local randomiser over all owners, a simulation).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from privet.errors import PrivetError

_LIMIT = 2**62
"""Largest numerator or denominator of the scale handled in 64-bit integers."""

MAX_SCALE = 2.0**53
"""Largest scale (exclusive) handled here: an output beyond 2^63 then has probability
below e^-1024 per draw."""


def supports(scale: float) -> bool:
    """Whether :func:`sample` handles ``scale``: ``0 < scale < 2^53`` with t, s < 2^62."""
    if not 0.0 < scale < MAX_SCALE:
        return False
    frac = Fraction(scale)
    return frac.numerator < _LIMIT and frac.denominator < _LIMIT


_CHAIN = 20
_BELOW = math.factorial(_CHAIN)  # 20! < 2^63
_THRESHOLDS = np.array([_BELOW // math.factorial(k) for k in range(_CHAIN, 0, -1)], dtype=np.int64)
"""``20! / k!`` for k = 20, 19, ..., 1 (ascending)."""


def _inverse_chain_stop(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``n`` draws of K, the first ``j >= 2`` at which a ``Bernoulli(1/j)`` coin fails.

    The coins j = 1, 2, ... are independent and ``Bernoulli(1/1)`` never fails, so
    ``P[K > k] = 1/k!``. With ``R`` uniform on ``{0, ..., 20! - 1}``, the events
    ``R < 20!/k!`` (k = 1..20) are nested with exactly these probabilities, so
    ``K = 1 + #{k <= 20 : R < 20!/k!}`` has the law of K up to 20 (one draw and one
    binary search per K). ``R = 0`` (probability 1/20!) means the coins up to 20 all
    succeeded; those rows go on with fresh coins from j = 21.
    """
    r = rng.integers(0, _BELOW, size=n, dtype=np.int64)
    k = 1 + _CHAIN - np.searchsorted(_THRESHOLDS, r, side="right").astype(np.int64)
    for i in np.flatnonzero(k > _CHAIN):
        j = _CHAIN + 1
        while rng.integers(0, j) == 0:
            j += 1
        k[i] = j
    return k


def _algorithm1_stop(u: NDArray[np.int64], t: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """The final K of Algorithm 1 (CKS 2020) at ``gamma = u / t``, for each ``0 <= u < t``.

    Algorithm 1 counts K up while ``Bernoulli(u / (t K))`` succeeds, so
    ``P[K > k] = (u/t)^k / k!``. Its coin at step K is drawn as ``Bernoulli(u / t)``
    AND ``Bernoulli(1 / K)``, independent, so the final K is the first failure of
    either sequence: the minimum of the first failure of the ``Bernoulli(1/j)``
    chain (:func:`_inverse_chain_stop`) and of the ``Bernoulli(u/t)`` coins, which
    are drawn only while both sequences are still running.
    """
    chain = _inverse_chain_stop(u.size, rng)
    stop = chain.copy()
    live = np.arange(u.size)  # the chain has not failed at step k, nor any u/t coin before k
    k = 1
    while live.size:
        ok = rng.integers(0, t, size=live.size) < u[live]
        stop[live[~ok]] = k
        live = live[ok]
        k += 1
        live = live[chain[live] > k]  # at k == chain the step fails whatever the u/t coin
    return stop


def _bernoulli_exp_minus_ratio(
    u: NDArray[np.int64], t: int, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-u / t))`` for each ``0 <= u < t``: Algorithm 1's K is odd with
    probability ``sum_j (-1)^j (u/t)^j / j! = exp(-u / t)``."""
    return _algorithm1_stop(u, t, rng) % 2 == 1


_WIDTH = 4
"""``Bernoulli(exp(-1))`` coins drawn per row and round in :func:`_count_exp_minus_one`."""


def _count_exp_minus_one(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Successes of ``Bernoulli(exp(-1))`` before the first failure, for ``n`` draws.

    Each coin is Algorithm 1 at ``gamma = 1``: 1 when the chain's stop
    (:func:`_inverse_chain_stop`) is odd. Coins come ``_WIDTH`` to a row; a row
    whose coins all succeed (probability e^-4) goes on to the next round.
    """
    v = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)  # still counting
    while idx.size:
        coins = (_inverse_chain_stop(idx.size * _WIDTH, rng) % 2 == 1).reshape(-1, _WIDTH)
        run = coins.all(axis=1)
        v[idx] += np.where(run, _WIDTH, coins.argmin(axis=1))
        idx = idx[run]
    return v


def _candidates(m: int, t: int, s: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """One round of Algorithm 2 for ``m`` candidates: the accepted ones, in draw order."""
    u = rng.integers(0, t, size=m, dtype=np.int64)
    u = u[_bernoulli_exp_minus_ratio(u, t, rng)]
    v = _count_exp_minus_one(u.size, rng)
    wide = v > (np.iinfo(np.int64).max - t) // t
    y = (u + t * np.where(wide, 0, v)) // s
    for j in np.flatnonzero(wide):  # U + t V beyond 64 bits: exact in Python integers
        exact = (int(u[j]) + t * int(v[j])) // s
        if exact > np.iinfo(np.int64).max:  # probability below e^-1024 per draw
            raise PrivetError(
                f"A discrete Laplace draw of scale {Fraction(t, s)} does not fit in 64 bits."
            )
        y[j] = exact
    negative = rng.integers(0, 2, size=u.size) == 1
    accept = ~(negative & (y == 0))
    return np.where(negative, -y, y)[accept]


def sample(n: int, scale: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """``n`` independent draws of the discrete Laplace of scale ``scale`` (exact).

    ``scale`` must satisfy :func:`supports`; callers check it first. Each round
    draws about twice as many candidates as are still missing (at least 31% of
    the candidates are accepted: 1 - 1/e kept by the exp(-U/t) coin, then at
    least half by the sign) and keeps the first accepted ones: the
    accepted candidates are independent draws of the target law, and which of
    them are kept depends only on their count, not on their values.
    """
    frac = Fraction(scale)
    t, s = frac.numerator, frac.denominator
    parts: list[NDArray[np.int64]] = []
    have = 0
    while have < n:
        got = _candidates(2 * (n - have) + 16, t, s, rng)[: n - have]
        parts.append(got)
        have += got.size
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
