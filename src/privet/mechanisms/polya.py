"""Integer shares of the discrete Laplace: the gamma DLPA on integer-valued queries.

The discrete Laplace (two-sided geometric) law with P(Z = z) proportional to
alpha^|z|, alpha = e^{-1/b}, is the difference X - Y of two independent
geometric variables on {0, 1, ...} with P(X = x) = (1 - alpha) alpha^x, and a
geometric variable is the sum of K independent negative binomial NB(1/K,
1 - alpha) variables (Polya shares; the discrete twin of the Gamma(1/K) split of
seed 003, as in Goryczka & Xiong 2017). Each of K parties adds N_k - N'_k,
N_k, N'_k ~ NB(1/K, 1 - alpha), to its integer share of a sum: the released sum
carries discrete Laplace(b) noise, (Delta/b)-DP for anyone who knows no share
(Delta the integer L1 sensitivity; Ghosh, Roughgarden & Sundararajan 2012).

Every output is an integer, whatever the input, so no output is possible on one
input and impossible on another (unlike float Gamma shares, see
:mod:`privet.mechanisms.distributed`). The shares are drawn with numpy's
negative binomial sampler (a Gamma-Poisson mixture): integer-valued, with
probabilities as exact as that sampler.

Collusion. t colluders who subtract their shares leave R = X - Y with X, Y ~
NB(a, 1 - alpha), a = (K - t)/K. For a <= 1 the NB(a) pmf f is log-convex and
decreasing (f(x+1)/f(x) = alpha (x + a)/(x + 1) increases in x and is < 1), so
p(z) = sum_x f(x) f(x + |z|) is even, decreasing in |z| and log-convex on
z >= 0 (a positive sum of log-convex sequences). With g = -log p concave and
increasing on z >= 0, the privacy loss log p(z) - log p(z - s) is at most
g(s) - g(0) for every integer z and shift 0 < s <= S = floor(Delta):

    epsilon_t = log p(0) - log p(S),

finite for every t < K (p(0) = sum f^2 is finite on the integers), computed
here by summing the log pmf (scipy) up to where the remaining mass is below
e^-60 of the total, plus 1e-9 for the truncation.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from privet.errors import InvalidParameterError

__all__ = ["MAX_TERMS", "discrete_residual_epsilon", "polya_shares"]

MAX_TERMS = 20_000_000
"""Largest pmf support summed for the colluders' epsilon (about 60 b + Delta terms)."""

_SLACK = 1e-9


def polya_shares(
    rng: np.random.Generator, parties: int, scale: float, shape: tuple[int, ...]
) -> NDArray[np.int64]:
    """One integer share per party, shape (parties, *shape): N_k - N'_k, N ~ NB(1/K, 1 - alpha)."""
    p = -math.expm1(-1.0 / scale)  # 1 - alpha, accurate for large scales
    n = rng.negative_binomial(1.0 / parties, p, size=(2, parties, *shape))
    return (n[0] - n[1]).astype(np.int64)


@functools.lru_cache(maxsize=512)
def discrete_residual_epsilon(
    parties: int, colluders: int, sensitivity: float, scale: float
) -> float:
    """epsilon_t = log p(0) - log p(S) of the residual against t colluders (module docstring)."""
    shift = math.floor(sensitivity + 1e-12)
    if shift == 0:
        return 0.0
    if colluders == 0:
        return shift / scale
    a = (parties - colluders) / parties
    terms = shift + math.ceil(60 * scale) + 200  # NB tail beyond 60 b: below e^-60
    if terms > MAX_TERMS:
        raise InvalidParameterError(
            f"The colluders' guarantee of the discrete gamma DLPA sums {terms:,} pmf terms "
            f"(scale={scale:g}, sensitivity={sensitivity:g}), above {MAX_TERMS:,}; use a "
            "smaller scale or the continuous shares (discrete=False)."
        )
    x = np.arange(terms + shift)
    logf = stats.nbinom.logpmf(x, a, -math.expm1(-1.0 / scale))
    head = logf[:terms]
    log_p0 = special.logsumexp(2 * head)
    log_ps = special.logsumexp(head + logf[shift : terms + shift])
    return float(log_p0 - log_ps) + _SLACK
