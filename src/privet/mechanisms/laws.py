"""The output laws of privet's mechanisms: the likelihood of a release given its input.

A *law* is what an auditor needs to know about a mechanism to compute the
likelihood ratio of what it released on two neighbouring inputs: the noise
family and its parameters. Every mechanism of :mod:`privet.mechanisms` states
its law (:meth:`~privet.mechanisms.Mechanism.law`), and the release recorder
(:mod:`privet.mechanisms.recorder`) stores it with each release.

Each law gives

* ``log_likelihood(output, value)``: ``log P(output | value)`` up to a constant
  that does not depend on ``value`` (it cancels in a likelihood ratio);
* ``max_loss(value0, value1)``: ``sup_o log P(o | value1) - log P(o | value0)``,
  the largest privacy loss this one release can show between the two inputs
  (``inf`` for the Gaussian);
* ``output_shape(input_shape)``: what a replay checks before it forces a
  recorded output on another input.

The laws are the ideal distributions the mechanisms' privacy maps are proven
for (OpenDP's float Laplace and Gaussian round the input to a grid of at most
``2^-30`` of the sensitivity; the law ignores that rounding). An audit uses the
likelihood ratio only as its test statistic: the epsilon lower bound it reports
comes from event frequencies (Clopper-Pearson) and holds whatever the law, so a
sampler that does not follow its law can only be caught, never excused.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, special, stats

__all__ = [
    "AdditiveLaw",
    "Law",
    "NegativeBinomialDifferenceLaw",
    "SelectionLaw",
    "discrete_noisy_max_probabilities",
    "permute_and_flip_probabilities",
]


class Law:
    """Base of the output laws (see the module docstring)."""

    family: str = "law"
    pure: bool = True
    """Whether the privacy loss of one release is bounded (pure DP); False for the Gaussian."""

    def log_likelihood(self, output: Any, value: Any) -> float:  # pragma: no cover
        raise NotImplementedError

    def max_loss(self, value0: Any, value1: Any) -> float:  # pragma: no cover
        raise NotImplementedError

    def output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(input_shape)

    def describe(self) -> str:
        return self.family


def _as_float(x: Any) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class AdditiveLaw(Law):
    """``output = value + Z`` per coordinate, Z i.i.d. Laplace(scale) or N(0, scale^2).

    ``discrete`` marks integer noise (discrete Laplace, discrete Gaussian): its
    pmf has the same shape, so the log-likelihood is the same up to a constant.
    ``parties > 0``: the input has a first axis of ``parties`` party values
    that the mechanism sums (the distributed Laplace of seed 003, whose shares
    add up to one Laplace(scale) for an outsider).
    """

    noise: Literal["laplace", "gaussian"]
    scale: float
    discrete: bool = False
    parties: int = 0

    @property
    def family(self) -> str:  # type: ignore[override]
        d = "discrete " if self.discrete else ""
        return f"{d}{self.noise}"

    @property
    def pure(self) -> bool:  # type: ignore[override]
        return self.noise == "laplace"

    def _value(self, value: Any) -> NDArray[np.float64]:
        v = _as_float(value)
        return v.sum(axis=0) if self.parties else v

    def output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(input_shape[1:]) if self.parties else tuple(input_shape)

    def log_likelihood(self, output: Any, value: Any) -> float:
        z = _as_float(output) - self._value(value)
        if self.noise == "laplace":
            return float(-np.abs(z).sum() / self.scale)
        return float(-(z**2).sum() / (2.0 * self.scale**2))

    def max_loss(self, value0: Any, value1: Any) -> float:
        d = self._value(value1) - self._value(value0)
        if self.noise == "laplace":
            return float(np.abs(d).sum() / self.scale)
        return 0.0 if not np.any(d) else math.inf

    def shift(self, value0: Any, value1: Any) -> float:
        """The L2 (Gaussian) or L1 (Laplace) distance of the two inputs, in units of scale."""
        d = self._value(value1) - self._value(value0)
        norm = np.sqrt((d**2).sum()) if self.noise == "gaussian" else np.abs(d).sum()
        return float(norm / self.scale)

    def describe(self) -> str:
        what = "sigma" if self.noise == "gaussian" else "scale"
        sums = f", summed over {self.parties} parties" if self.parties else ""
        return f"{self.family} ({what} {self.scale:.4g}{sums})"


def _rows(u: Any) -> NDArray[np.float64]:
    arr = _as_float(u)
    return arr.reshape(-1, arr.shape[-1]) if arr.ndim > 1 else arr[None, :]


@dataclass(frozen=True, slots=True)
class SelectionLaw(Law):
    """The index of the noisy maximum of each row of utilities.

    ``noise``: ``"gumbel"`` (the exponential mechanism, ``P(i) ∝ exp(u_i / scale)``),
    ``"exponential"`` (permute-and-flip) or ``"discrete_laplace"`` (first
    maximum of ``u + Z``, Z discrete Laplace). The input is 1-D (one selection)
    or 2-D (one selection per row, disjoint rows of data); a list of 1-D
    utilities of different lengths is one selection per item.
    """

    noise: Literal["gumbel", "exponential", "discrete_laplace"]
    scale: float

    @property
    def family(self) -> str:  # type: ignore[override]
        return {
            "gumbel": "exponential mechanism",
            "exponential": "permute-and-flip",
            "discrete_laplace": "discrete Laplace noisy max",
        }[self.noise]

    def output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(input_shape[:-1])

    def log_probabilities(self, utilities: Any) -> NDArray[np.float64]:
        """``log P(i)`` for each candidate of one 1-D utility vector."""
        u = _as_float(utilities).ravel()
        if self.noise == "gumbel":
            return u / self.scale - special.logsumexp(u / self.scale)
        # the exact probabilities of the two other samplers (cached: utilities repeat)
        return _log_probs_cached(self.noise, self.scale, tuple(u.tolist()))

    def log_likelihood(self, output: Any, value: Any) -> float:
        rows = _rows(value)
        picks = np.asarray(output, dtype=np.int64).ravel()
        return float(
            sum(self.log_probabilities(r)[int(i)] for r, i in zip(rows, picks, strict=True))
        )

    def max_loss(self, value0: Any, value1: Any) -> float:
        total = 0.0
        for r0, r1 in zip(_rows(value0), _rows(value1), strict=True):
            if r0.shape != r1.shape:
                return math.inf
            total += float(np.max(self.log_probabilities(r1) - self.log_probabilities(r0)))
        return total

    def describe(self) -> str:
        return f"{self.family} (scale {self.scale:.4g})"


def permute_and_flip_probabilities(utilities: Any, scale: float) -> NDArray[np.float64]:
    """Exact selection probabilities of report-noisy-max with Exponential(scale) noise.

    P(i) = int_{u*}^inf (1/s) e^{-(x-u_i)/s} prod_{j != i} (1 - e^{-(x-u_j)/s}) dx
    with u* = max_j u_j, which is the permute-and-flip mechanism (McKenna &
    Sheldon 2020; Ding et al. 2021). Evaluated by quadrature, for tests and audits.
    """
    u = np.asarray(utilities, dtype=float).ravel()
    top = u.max()
    gaps = (top - u) / scale  # >= 0

    def density(y: float, i: int) -> float:
        others = np.delete(gaps, i)
        return math.exp(-(y + gaps[i])) * float(np.prod(-np.expm1(-(y + others))))

    probs = np.array([integrate.quad(density, 0, np.inf, args=(i,))[0] for i in range(u.size)])
    return probs / probs.sum()


def discrete_noisy_max_probabilities(utilities: Any, scale: float) -> NDArray[np.float64]:
    """Exact P(first argmax of u + Z = i) for i.i.d. discrete Laplace(scale) noise Z.

    Sums over the winner's noise z (the support is cut where the pmf is below
    1e-18): candidate j < i must stay strictly below u_i + z, j > i at or below.
    """
    u = np.asarray(utilities, dtype=float).ravel()
    q = math.exp(-1.0 / scale)
    reach = math.ceil(scale * 42 + (u.max() - u.min())) + 2
    z = np.arange(-reach, reach + 1)
    pmf = (1 - q) / (1 + q) * q ** np.abs(z)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:  # P(Z <= x), x real
        k = np.floor(x)
        neg = q ** (-k) / (1 + q)  # k < 0
        pos = 1 - q ** (k + 1) / (1 + q)  # k >= 0
        return np.where(k < 0, neg, pos)

    probs = np.empty(u.size)
    for i in range(u.size):
        level = u[i] + z  # the winner's noisy value
        p = pmf.copy()
        for j in range(u.size):
            if j == i:
                continue
            gap = level - u[j]
            # j < i: Z_j < gap (strict), i.e. Z_j <= ceil(gap) - 1; j > i: Z_j <= gap
            p = p * (cdf(np.ceil(gap) - 1) if j < i else cdf(gap))
        probs[i] = p.sum()
    return probs / probs.sum()


@functools.lru_cache(maxsize=4096)
def _log_probs_cached(noise: str, scale: float, u: tuple[float, ...]) -> NDArray[np.float64]:
    arr = np.asarray(u, dtype=float)
    if noise == "discrete_laplace":
        p = discrete_noisy_max_probabilities(arr, scale)
    else:
        p = permute_and_flip_probabilities(arr, scale)
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(p, dtype=float))


@functools.lru_cache(maxsize=64)
def _nb_difference_log_pmf(r: float, q: float) -> tuple[int, NDArray[np.float64]]:
    """``log P(X - Y = z)`` for X, Y i.i.d. NB(r, q), on ``z = -reach..reach``."""
    reach = int(stats.nbinom.isf(1e-18, r, q)) + 1
    # tabulate twice as far as kept: the convolution's terms cut at 2 reach are
    # below 1e-18 times the kept values' own terms
    k = np.arange(2 * reach + 1)
    pmf = stats.nbinom.pmf(k, r, q)
    diff = np.convolve(pmf, pmf[::-1])  # index 2 reach + z holds P(X - Y = z)
    kept = diff[reach : 3 * reach + 1]  # z = -reach..reach
    with np.errstate(divide="ignore"):
        return reach, np.log(np.maximum(kept, 0.0))


@dataclass(frozen=True, slots=True)
class NegativeBinomialDifferenceLaw(Law):
    """``output = value + X - Y``, X, Y i.i.d. negative binomial NB(r, q), per coordinate.

    The pooled noise of n parties that each add the difference of two
    NB(1/(n - 1), q) shares (so that any n - 1 of them make a full discrete
    Laplace): r = n / (n - 1), q = 1 - e^(-1/scale) (seed 001's DP variant).
    Outputs farther than the tabulated support (probability below 1e-18 per
    tail) get the log-pmf of its edge.
    """

    r: float
    q: float

    family = "negative binomial difference"

    @classmethod
    def pooled(cls, n_parties: int, scale: float) -> NegativeBinomialDifferenceLaw:
        """The sum of ``n_parties`` parties' shares, any ``n_parties - 1`` of which make a
        discrete Laplace(``scale``)."""
        r = n_parties / max(n_parties - 1, 1)
        return cls(r, -math.expm1(-1.0 / scale))

    @classmethod
    def share(cls, n_parties: int, scale: float) -> NegativeBinomialDifferenceLaw:
        """One party's share: ``n_parties - 1`` of them make a discrete Laplace(``scale``)."""
        return cls(1.0 / max(n_parties - 1, 1), -math.expm1(-1.0 / scale))

    def _log_pmf(self, z: NDArray[np.int64]) -> NDArray[np.float64]:
        reach, table = _nb_difference_log_pmf(float(self.r), float(self.q))
        return table[np.clip(z, -reach, reach) + reach]

    def log_likelihood(self, output: Any, value: Any) -> float:
        z = np.rint(_as_float(output) - _as_float(value)).astype(np.int64)
        return float(self._log_pmf(z).sum())

    def max_loss(self, value0: Any, value1: Any) -> float:
        d = np.rint(_as_float(value1) - _as_float(value0)).astype(np.int64).ravel()
        reach, _ = _nb_difference_log_pmf(float(self.r), float(self.q))
        total = 0.0
        for s in d[d != 0]:
            # loss(z) = log p(z - s) - log p(z), z = output - value0, inside the table
            z = np.arange(-reach + abs(int(s)), reach - abs(int(s)) + 1)
            total += float(np.max(self._log_pmf(z - s) - self._log_pmf(z)))
        return total

    def describe(self) -> str:
        return f"{self.family} (r {self.r:.4g}, q {self.q:.4g})"
