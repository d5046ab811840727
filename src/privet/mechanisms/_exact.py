"""Exact sampling for the local randomisers: integer coins and a public output grid.

A local randomiser whose output is a float computed from the input (``left(x) +
w (C - 1)`` in the piecewise mechanism) can release outputs that are possible
on one input and impossible on another: the float grid near ``left(x)`` depends
on ``x`` (Mironov 2012). privet's local randomisers therefore

* release an element of a finite public set that every input can reach (grid
  cells, or the signs of Duchi's mechanism), mapped to a float by one public
  function, the same for every input; and
* draw every input-dependent choice with an *exact* coin: ``T`` out of
  ``D = 2^62`` equally likely integers (``Generator.integers`` is exactly
  uniform: Lemire's rejection method), with ``T`` chosen so that the realised
  odds ``T / (D - T)`` lie in ``[w, w e^eps]`` for the required weight ``w``.

The realised probabilities, not the ideal ones, are what the estimators
debias with, so they stay unbiased; the realised epsilon is at most the epsilon
charged. Input rounding to the grid (a coin with probability equal to the
fractional part) may use a float coin: any randomisation applied to the input
before an epsilon-LDP mechanism on grid inputs keeps epsilon-LDP, since
P[M(R(x)) = y] = sum_j P[R(x) = j] P[M(j) = y] lies between the minimum and
the maximum over grid inputs j of P[M(j) = y].
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError

DENOMINATOR = 2**62
"""Resolution of the exact coins: a coin is T out of D equally likely integers."""

_MARGIN = Fraction(1) - Fraction(1, 2**48)  # covers math.exp's error (< 1 ulp)


MIN_EPSILON = 1e-12
"""Smallest epsilon the exact coins resolve (their odds step is about 2^-60)."""


def check_resolution(epsilon: float, owner: str) -> None:
    if epsilon < MIN_EPSILON:
        raise InvalidParameterError(
            f"The 'epsilon' parameter of {owner} is too small for its exact sampler "
            f"(got {epsilon!r}); use epsilon >= {MIN_EPSILON:g}."
        )


def odds_threshold(epsilon: float, log_weight: float, owner: str) -> int:
    """T with w <= T / (D - T) <= w e^epsilon, w = exp(log_weight), 0 < T < D.

    A coin that is 1 on T of the D integers then makes a choice between a set
    of weight w (the "high" outcomes) and one of weight 1 whose probabilities
    per outcome differ by a factor in [1, e^epsilon]. Raises
    :class:`~privet.errors.InvalidParameterError` when epsilon is below the
    resolution of D (about 1e-13), where no integer T fits.
    """
    check_resolution(epsilon, owner)
    d = DENOMINATOR
    top_log = log_weight + epsilon
    if top_log > 43.0:  # e^43 > D: the largest T fits
        t = d - 1
    else:
        t = min(d - 1, int(d * (1.0 / (1.0 + math.exp(-top_log)))))
        bound = Fraction(math.exp(top_log)) * _MARGIN
        while t > 0 and Fraction(t, d - t) > bound:
            t -= max(1, t >> 50)
    low = Fraction(math.exp(log_weight)) / _MARGIN if log_weight < 43.0 else None
    if t <= 0 or low is None or Fraction(t, d - t) < low:
        raise InvalidParameterError(
            f"The 'epsilon' parameter of {owner} is too small for its exact sampler "
            f"(got {epsilon!r}); use epsilon >= 1e-12."
        )
    return t


def coin(rng: np.random.Generator, threshold: int, shape: tuple[int, ...]) -> NDArray[np.bool_]:
    """Independent exact coins, each True with probability threshold / D."""
    return rng.integers(0, DENOMINATOR, size=shape, dtype=np.int64) < threshold


def probability(threshold: int) -> float:
    """The realised probability threshold / D (as a float, for the estimators)."""
    return threshold / DENOMINATOR
