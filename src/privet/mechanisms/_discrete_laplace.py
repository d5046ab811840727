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

Range. Scales whose ``t`` or ``s`` reach ``2^62`` (``sigma`` below about
``2^-9`` relative to its last mantissa bit, or above ``2^62``) are not handled
here: :func:`supports` says so and the caller uses OpenDP. The intermediate
``U + t V`` is computed in Python integers for the (astronomically rare)
elements where it would not fit in 64 bits, so the output is exact for every
draw.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from privet.errors import PrivetError

_LIMIT = 2**62
"""Largest numerator or denominator of the scale handled in 64-bit integers."""


def supports(scale: float) -> bool:
    """Whether :func:`sample` handles ``scale`` (a finite float > 0 with t, s < 2^62)."""
    if not 0.0 < scale < float(_LIMIT):
        return False
    frac = Fraction(scale)
    return frac.numerator < _LIMIT and frac.denominator < _LIMIT


def _bernoulli_exp_minus_ratio(
    u: NDArray[np.int64], t: int, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-u / t))`` for each ``0 <= u < t`` (CKS 2020, Algorithm 1).

    K counts up while ``Bernoulli(u / (t K))`` succeeds; the result is 1 when the
    final K is odd: ``P[K odd] = sum_j (-1)^j (u/t)^j / j! = exp(-u / t)``.
    """
    out = np.empty(u.shape, dtype=bool)
    idx = np.arange(u.size)
    k = 1
    while idx.size:
        cur = u[idx]
        success = (rng.integers(0, t, size=idx.size) < cur) & (
            rng.integers(0, k, size=idx.size) == 0
        )
        done = idx[~success]
        out[done] = k % 2 == 1
        idx = idx[success]
        k += 1
    return out


def _count_exp_minus_one(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Successes of ``Bernoulli(exp(-1))`` before the first failure, for ``n`` draws.

    Each ``Bernoulli(exp(-1))`` is Algorithm 1 at ``gamma = 1``: K counts up while
    ``Bernoulli(1 / K)`` succeeds and the coin is 1 when the final K is odd.
    """
    v = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)  # still counting
    while idx.size:
        coin = np.empty(idx.size, dtype=bool)
        live = np.arange(idx.size)
        k = 1
        while live.size:
            success = rng.integers(0, k, size=live.size) == 0
            coin[live[~success]] = k % 2 == 1
            live = live[success]
            k += 1
        v[idx[coin]] += 1
        idx = idx[coin]
    return v


def sample(n: int, scale: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """``n`` independent draws of the discrete Laplace of scale ``scale`` (exact).

    ``scale`` must satisfy :func:`supports`; callers check it first.
    """
    frac = Fraction(scale)
    t, s = frac.numerator, frac.denominator
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        u = rng.integers(0, t, size=m, dtype=np.int64)
        keep = _bernoulli_exp_minus_ratio(u, t, rng)
        u, idx = u[keep], todo[keep]
        v = _count_exp_minus_one(idx.size, rng)
        wide = v > (np.iinfo(np.int64).max - t) // t
        x = u + t * np.where(wide, 0, v)
        y = x // s
        for j in np.flatnonzero(wide):  # U + t V beyond 64 bits: exact in Python integers
            exact = (int(u[j]) + t * int(v[j])) // s
            if exact > np.iinfo(np.int64).max:  # probability below e^-500 per draw
                raise PrivetError(
                    f"A discrete Laplace draw of scale {scale!r} does not fit in 64 bits."
                )
            y[j] = exact
        negative = rng.integers(0, 2, size=idx.size) == 1
        accept = ~(negative & (y == 0))
        out[idx[accept]] = np.where(negative, -y, y)[accept]
        todo = np.concatenate([todo[~keep], idx[~accept]])
    return out
