"""Discrete Laplace noise from independent binary digits: the public arithmetic.

A geometric variate G, P(G = k) ∝ q**k (q = exp(-1/t)), truncated to
[0, 2**J), has independent binary digits: digit j is 1 with probability
p_j = q**(2**j) / (1 + q**(2**j)). Sampling each digit as a coin ``R < c_j``
of B uniform random bits, c_j = round(p_j 2**B), needs nothing but random bits
and comparisons with public constants, which is what makes it cheap and exact
on secret shares (:mod:`privet.mpc.discrete`). Two such variates give
discrete Laplace, Z = G1 - G2.

This module holds what is public and needs no MPC: the choice of J and B,
the thresholds, the bound on the total-variation distance to the untruncated
geometric (which the ledger's delta is computed from), and the exact pmfs
used by the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from privet.errors import InvalidParameterError

DEFAULT_SECURITY_BITS = 40
"""s: the sampled noise is within total variation 2**-s of exact discrete Laplace."""

MAX_SECURITY_BITS = 43
"""The largest s allowed: the coin probabilities are computed in double precision (a
slack of 2**-50 per coin), so the distance stops shrinking near 1e-14. At s = 43 it is
within 0.67 of the promised 2**-(s+1) for scales from 0.05 to 1e8; at 45 a scale of
1000 already misses it. (The delta charged is computed from the real distance either way.)"""


@dataclass(frozen=True)
class GeometricCoins:
    """Public parameters of a truncated geometric variate sampled digit by digit.

    Attributes
    ----------
    scale : float
        t: P(G = k) ∝ exp(-k / t).
    support_bits : int
        J: G < 2**J.
    coin_bits : int
        B: random bits per coin.
    thresholds : tuple of int
        c_j = round(p_j 2**B), coin j is 1 iff a B-bit uniform R < c_j.
    tv : float
        Upper bound on TV(G, untruncated geometric) (rounded up).
    """

    scale: float
    support_bits: int
    coin_bits: int
    thresholds: tuple[int, ...]
    tv: float

    def probabilities(self) -> np.ndarray:
        """The exact pmf of the sampled G on 0 .. 2**J - 1 (for tests; J <= 20)."""
        if self.support_bits > 20:
            raise InvalidParameterError("probabilities() is for J <= 20 (2**J values).")
        k = np.arange(2**self.support_bits)
        pmf = np.ones(k.size)
        for j, c in enumerate(self.thresholds):
            p = c / 2.0**self.coin_bits
            pmf *= np.where((k >> j) & 1, p, 1.0 - p)
        return pmf


def geometric_coins(scale: float, security_bits: int = DEFAULT_SECURITY_BITS) -> GeometricCoins:
    """Choose J, B and the coin thresholds so that TV(G, geometric) <= 2**-(security_bits + 1).

    J is the smallest with q**(2**J) <= 2**-(s + 2), B = s + 3 + ceil(log2 J),
    so that rounding all J coins costs at most J 2**-(B + 1) <= 2**-(s + 2).
    The returned ``tv`` is computed from the actual thresholds (exact rational
    arithmetic for the rounding errors, an upward-rounded float for the tail).
    """
    t = float(scale)
    s = int(security_bits)
    J = max(1, math.ceil(math.log2((s + 2) * math.log(2.0) * t)))
    B = s + 3 + max(1, math.ceil(math.log2(J)))
    thresholds = []
    rounding = Fraction(0)
    for j in range(J):
        a = math.exp(-(2.0**j) / t)  # q**(2**j)
        p = a / (1.0 + a)
        c = round(p * 2**B)
        thresholds.append(int(c))
        # |c/2**B - p|; p carries a float error of a few ulp (< 2**-50 absolute)
        rounding += abs(Fraction(c, 2**B) - Fraction(p)) + Fraction(1, 2**50)
    tail = math.exp(-(2.0**J) / t) * (1 + 1e-12)
    tv = float(rounding) * (1 + 1e-12) + tail
    return GeometricCoins(t, J, B, tuple(thresholds), tv)


def discrete_laplace_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    """Exact discrete Laplace pmf: (1 - q) / (1 + q) q**|z|, q = exp(-1/t)."""
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(np.asarray(support, dtype=float))


def coin_threshold(probability: float, bits: int = 40) -> int:
    """c = floor(p 2**bits): the coin ``R < c`` of ``bits`` uniform bits has P = c / 2**bits <= p.

    Rounding down keeps a Poisson sampling rate at most the public rate, so
    the amplification the ledger computes for ``p`` is an upper bound.
    """
    p = float(probability)
    if not 0.0 < p <= 1.0:
        raise InvalidParameterError(f"a coin probability must be in (0, 1], got {probability!r}.")
    return min(math.floor(p * 2**bits), 2**bits)


def laplace_tv(scale: float, security_bits: int = DEFAULT_SECURITY_BITS) -> float:
    """TV(G1 - G2 as sampled, exact discrete Laplace(scale)) <= 2 tau_G."""
    return 2.0 * geometric_coins(scale, security_bits).tv


def discrete_laplace_delta(
    epsilon: float,
    sensitivity: float,
    n_values: int | None = None,
    security_bits: int = DEFAULT_SECURITY_BITS,
) -> float:
    """delta of the bitwise discrete Laplace on integers of L1 sensitivity Δ at scale Δ/ε.

    (1 + e**ε) min(Δ, n_values) τ: only the at most Δ coordinates that differ
    between neighbours matter (:mod:`privet.mpc.discrete`).
    """
    changed = math.ceil(float(sensitivity))
    if n_values is not None:
        changed = min(changed, int(n_values))
    tv = laplace_tv(float(sensitivity) / float(epsilon), security_bits)
    return min(1.0, (1.0 + _exp(epsilon)) * changed * tv)


def noisy_max_scale(epsilon: float, sensitivity: float, monotone: bool = False) -> float:
    """Scale of report-noisy-max's discrete Laplace noise: ceil(2Δ)/ε, or ceil(Δ)/ε for a
    utility that is monotone between neighbours (:mod:`privet.mpc.discrete`, "Proof")."""
    shift = float(sensitivity) if monotone else 2 * float(sensitivity)
    return math.ceil(shift) / float(epsilon)


def noisy_max_delta(
    epsilon: float,
    sensitivity: float,
    n_candidates: int,
    security_bits: int = DEFAULT_SECURITY_BITS,
    monotone: bool = False,
) -> float:
    """delta of report-noisy-max with bitwise discrete Laplace over d candidates.

    At the scale actually sampled (:func:`noisy_max_scale`): ceil(2Δ)/ε, or
    ceil(Δ)/ε with ``monotone``.
    """
    tv = laplace_tv(noisy_max_scale(epsilon, sensitivity, monotone), security_bits)
    return min(1.0, (1.0 + _exp(epsilon)) * int(n_candidates) * tv)


def _exp(epsilon: float) -> float:
    """e**epsilon, infinite where it overflows (the delta bounds are then 1)."""
    return math.exp(epsilon) if epsilon < 709.0 else math.inf


__all__ = [
    "DEFAULT_SECURITY_BITS",
    "GeometricCoins",
    "coin_threshold",
    "discrete_laplace_delta",
    "discrete_laplace_pmf",
    "geometric_coins",
    "laplace_tv",
    "noisy_max_delta",
    "noisy_max_scale",
]
