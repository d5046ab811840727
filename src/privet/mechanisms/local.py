"""Local randomisers (seed 004, Wang & Chang): each data owner perturbs its own record.

Piecewise mechanism (Wang et al. 2019, "Collecting and analyzing
multidimensional data with local differential privacy", ICDE; Alg. 3 and 4 of
seed 004), Duchi et al.'s mechanism (Duchi, Jordan & Wainwright 2013, 2018) for
one and d dimensions, the Laplace mechanism used locally, and generalised
randomised response (Warner 1965; Kairouz, Oh & Viswanath 2014; Wang et al.
2017, "Locally differentially private protocols for frequency estimation").

Every randomiser is epsilon-LDP and unbiased (its output's expectation is the
input, in the input's units), and states its variance in closed form.

Accounting. One call perturbs many records, one per data owner, and makes one
charge: a :class:`~privet.ledger.LocalRandomiser` entry of epsilon. epsilon-LDP
per record gives central epsilon-DP for the collection of reports under
*replace-one* neighbours. Under add/remove neighbours the presence of a report
reveals the presence of its owner, which no local randomiser hides, so these
mechanisms declare ``relation = replace_one`` and an add/remove ledger refuses
them (:class:`~privet.errors.RelationMismatchError`).

Floating point. Every randomiser releases an element of a finite public set
that every input reaches with positive probability (grid cells for the
piecewise mechanisms, signs for Duchi's, categories for randomised response),
mapped to a float by one public function, and draws each input-dependent
choice with an exact integer coin (:mod:`privet.mechanisms._exact`). So no
output is possible on one input and impossible on another (the attack of
Mironov 2012 on floats computed from the input), and the probability ratios
are bounded by e^eps exactly, not only in the ideal real-number model. The
piecewise mechanism is therefore the discretised Alg. 3 described in
:class:`PiecewiseMechanism`; the estimators debias with the realised
probabilities and stay unbiased. The local Laplace is drawn by OpenDP's
hardened sampler.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from privet.errors import InvalidParameterError
from privet.ledger import REPLACE_ONE, Entry, Guarantee, LocalRandomiser
from privet.mechanisms import _exact, _opendp
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms._random import local_rng
from privet.mechanisms.base import Mechanism

__all__ = [
    "MAX_CATEGORIES",
    "PIECEWISE_GRID",
    "DuchiMechanism",
    "DuchiMultiMechanism",
    "LocalLaplace",
    "PiecewiseMechanism",
    "PiecewiseMultiMechanism",
    "RandomisedResponse",
    "duchi_multi_bound",
    "piecewise_sample_count",
]


class LocalMechanism(Mechanism):
    """Base of the local randomisers: epsilon-LDP per record, replace-one relation."""

    relation = REPLACE_ONE
    randomiser: ClassVar[str] = "local"

    def __init__(
        self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0, dimension: int = 1
    ) -> None:
        owner = type(self).__name__
        self._epsilon = v.positive(epsilon, "epsilon", owner)
        lo, hi = v.finite_array([lower, upper], "lower/upper", owner).tolist()
        if not lo < hi:
            raise InvalidParameterError(
                f"The 'lower' and 'upper' parameters of {owner} must satisfy lower < upper; "
                f"got lower={lower!r}, upper={upper!r}."
            )
        self.lower, self.upper = float(lo), float(hi)
        self.dimension = v.integer(dimension, "dimension", owner)
        self.sensitivity = v.finite_width(self.lower, self.upper, self.dimension, owner)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def mechanism(self) -> str:  # type: ignore[override]
        return f"local:{self.randomiser}"

    def entry(self) -> Entry:
        return LocalRandomiser(epsilon=self._epsilon, randomiser=self.randomiser)

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        """epsilon for any two records in the declared range (0 for identical ones)."""
        if d_in is not None and self._d_in(d_in) == 0:
            return Guarantee(0.0)
        return Guarantee(self._epsilon)

    def _repr_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"range": (self.lower, self.upper)}
        if self.dimension > 1:
            extra["dimension"] = self.dimension
        return extra

    # unit interval helpers -------------------------------------------------
    @property
    def _half(self) -> float:
        return (self.upper - self.lower) / 2

    @property
    def _mid(self) -> float:
        return (self.upper + self.lower) / 2

    def _to_unit(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip((x - self._mid) / self._half, -1.0, 1.0)

    def _from_unit(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._mid + self._half * y

    def _check_output_range(self, bound: float) -> None:
        """Refuse a randomiser whose outputs (up to ``bound`` on the unit scale) are not
        finite doubles: a tiny epsilon over a huge range overflows to inf."""
        if not math.isfinite(abs(self._mid) + self._half * bound):
            raise InvalidParameterError(
                f"{type(self).__name__} at epsilon={self._epsilon!r} on [{self.lower!r}, "
                f"{self.upper!r}] would release values up to {bound:.3g} times the half-range, "
                "beyond the largest double; use a larger epsilon or a narrower range."
            )

    def _records(self, values: Any) -> NDArray[np.float64]:
        owner = type(self).__name__
        arr = v.finite_array(values, "values", owner)
        v.in_range(arr, self.lower, self.upper, "values", owner)
        if self.dimension > 1 and (arr.ndim == 0 or arr.shape[-1] != self.dimension):
            raise InvalidParameterError(
                f"The 'values' argument of {owner} must have last axis of length "
                f"dimension={self.dimension}; got shape {arr.shape}."
            )
        return arr

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError  # pragma: no cover

    def _validate_input(self, values: Any) -> NDArray[Any]:
        """Each element (``dimension == 1``) or each row along the last axis
        (``dimension > 1``) is one data owner's record; one charge of the
        per-record epsilon covers them all."""
        return self._records(values)

    def _sample(self, arr: NDArray[Any]) -> NDArray[Any]:
        return self._perturb(arr)


# ----------------------------------------------------------------- piecewise
PIECEWISE_GRID = 2**20
"""Input grid size m of the discretised piecewise mechanism (2/m apart on [-1, 1])."""


def _pm_c(epsilon: float) -> float:
    """C = (e^{eps/2} + 1) / (e^{eps/2} - 1) (1 once e^{eps/2} overflows)."""
    return 1.0 + 2.0 / math.expm1(epsilon / 2) if epsilon < 1400 else 1.0


@dataclass(frozen=True)
class _PiecewiseGrid:
    """Alg. 3 of seed 004 on a public grid, sampled exactly (see :class:`PiecewiseMechanism`)."""

    m: int  # input grid: j = 0..m stands for u = 2 j / m - 1
    window: int  # K: cells of the high-probability window
    cells: int  # N = m + K output cells
    threshold: int  # exact coin for "inside the window"

    @property
    def p_in(self) -> float:
        return _exact.probability(self.threshold)

    @property
    def p_out(self) -> float:
        return (_exact.DENOMINATOR - self.threshold) / _exact.DENOMINATOR

    @property
    def cell_ratio(self) -> float:
        """Probability of a window cell over that of another cell: in [1, e^eps]."""
        return self.p_in * (self.cells - self.window) / (self.p_out * self.window)

    @functools.cached_property
    def slope(self) -> float:
        """a in E[Z | J] = a J + b."""
        return self.p_in - self.p_out * self.window / (self.cells - self.window)

    @functools.cached_property
    def intercept(self) -> float:
        k, n = self.window, self.cells
        total = n * (n - 1) / 2 - k * (k - 1) / 2
        return self.p_in * (k - 1) / 2 + self.p_out * total / (n - k)

    def to_unit(self, z: NDArray[np.int64]) -> NDArray[np.float64]:
        """The public map from a cell to the unbiased estimate on [-1, 1]'s scale."""
        return (np.asarray(z, dtype=float) - self.intercept) * (2.0 / (self.slope * self.m)) - 1.0

    @property
    def bound(self) -> float:
        return float(np.abs(self.to_unit(np.array([0, self.cells - 1]))).max())

    def sample(self, u: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """Round u to the input grid (unbiased), then draw a cell exactly."""
        t = (u + 1.0) * (self.m / 2)
        j = np.floor(t)
        up = rng.random(u.shape) < t - j
        big_j = np.minimum(j.astype(np.int64) + up, self.m)
        inside = _exact.coin(rng, self.threshold, u.shape)
        pos_in = rng.integers(0, self.window, size=u.shape)
        pos_out = rng.integers(0, self.cells - self.window, size=u.shape)
        outside = np.where(pos_out < big_j, pos_out, pos_out + self.window)
        return self.to_unit(np.where(inside, big_j + pos_in, outside))

    def variance(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Var of the estimate on the unit scale: E_J Var(Z | J) / a^2 + Var(J), times (2/m)^2."""
        k, n = self.window, self.cells
        t = (np.asarray(u, dtype=float) + 1.0) * (self.m / 2)
        j = np.floor(t)
        f = t - j
        sq_all = (n - 1) * n * (2 * n - 1) / 6

        def cond_var(jj: NDArray[np.float64]) -> NDArray[np.float64]:
            sq_win = k * jj**2 + jj * k * (k - 1) + (k - 1) * k * (2 * k - 1) / 6
            ez2 = self.p_in * sq_win / k + self.p_out * (sq_all - sq_win) / (n - k)
            return ez2 - (self.slope * jj + self.intercept) ** 2

        within = (1 - f) * cond_var(j) + f * cond_var(np.minimum(j + 1, self.m))
        return (within / self.slope**2 + f * (1 - f)) * (2.0 / self.m) ** 2


@functools.lru_cache(maxsize=256)
def _pm_grid(epsilon: float, owner: str) -> _PiecewiseGrid:
    _exact.check_resolution(epsilon, owner)
    c = _pm_c(epsilon)
    m = PIECEWISE_GRID
    k = max(1, round(m * (c - 1) / (c + 1)))
    threshold = _exact.odds_threshold(epsilon, math.log(k) - math.log(m), owner)
    return _PiecewiseGrid(m=m, window=k, cells=m + k, threshold=threshold)


def _pm_unit_variance(x: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
    """Var = x^2 / (e^{eps/2} - 1) + (e^{eps/2} + 3) / (3 (e^{eps/2} - 1)^2) (Wang et al. 2019, Lemma 1).

    The variance of the ideal continuous mechanism; the discretised one's
    (:meth:`PiecewiseMechanism.variance`) converges to it as the grid grows.
    """
    em1 = math.expm1(epsilon / 2)
    return x**2 / em1 + (em1 + 4) / (3 * em1**2)


class PiecewiseMechanism(LocalMechanism):
    """Piecewise mechanism for one value in [lower, upper] (seed 004, Alg. 3), on a grid.

    Alg. 3 (Wang et al. 2019): with C = (e^{eps/2}+1)/(e^{eps/2}-1) and, on
    the unit scale, l(x) = (C+1)/2 x - (C-1)/2 and r(x) = l(x) + C - 1, output
    uniform on [l, r] with probability e^{eps/2}/(e^{eps/2}+1), else uniform
    on [-C, l) u (r, C]. Computed in floats, its outputs near l(x) are floats
    that other inputs cannot produce, so privet samples its discretisation:

    * the input u in [-1, 1] is rounded to the grid j/m (m = PIECEWISE_GRID,
      u = 2 j / m - 1) up or down at random, so that E[J] = (u + 1) m / 2;
    * the output is one of N = m + K cells, K = round(m (C - 1)/(C + 1)) (the
      window's share of [-C, C]); on grid input J the window is cells
      J..J+K-1, each with probability p_in / K, every other cell with
      (1 - p_in) / (N - K). p_in is an exact coin whose odds make the ratio
      of the two cell probabilities lie in [1, e^eps] (:mod:`._exact`), so the
      mechanism is epsilon-LDP exactly (at most the epsilon charged);
    * cell z is released as (z - b) 2 / (a m) - 1 (scaled back to [lower,
      upper]), with E[Z | J] = a J + b for the realised p_in: unbiased.

    As m grows this is Alg. 3; with m = 2^20 its variance (:meth:`variance`,
    exact for the discretisation) is within about 1e-5 of Lemma 1's.
    """

    randomiser = "piecewise"

    def __init__(self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper)
        self._grid = _pm_grid(self._epsilon, type(self).__name__)
        self._check_output_range(self.output_bound)

    @property
    def output_bound(self) -> float:
        """Largest |output| on the unit scale (C for the continuous Alg. 3)."""
        return self._grid.bound

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * self._grid.variance(x)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._from_unit(self._grid.sample(self._to_unit(arr), local_rng()))


def piecewise_sample_count(epsilon: float, dimension: int) -> int:
    """k = max(1, min(d, floor(eps / 2.5))) attributes sampled per record (seed 004, Alg. 4)."""
    return max(1, min(dimension, math.floor(epsilon / 2.5)))


class PiecewiseMultiMechanism(LocalMechanism):
    """Piecewise mechanism for d attributes (seed 004, Alg. 4).

    Each record reports k = max(1, min(d, floor(eps/2.5))) attributes sampled
    without replacement, each perturbed by Alg. 3 at eps/k and scaled by d/k;
    the others are reported as 0. epsilon-LDP by composition over the k
    attributes (each drawn on the grid of :class:`PiecewiseMechanism` at eps/k). Unbiased: E[x'_j] = (k/d)(d/k) x_j. Variance
    (d/k) (Var_PM(x_j; eps/k) + x_j^2) - x_j^2 on the unit scale.
    """

    randomiser = "piecewise_md"

    def __init__(
        self, *, epsilon: float, dimension: int, lower: float = -1.0, upper: float = 1.0
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)
        self.k = piecewise_sample_count(self._epsilon, self.dimension)
        self._grid = _pm_grid(self._epsilon / self.k, type(self).__name__)
        self._check_output_range(self.dimension / self.k * self._grid.bound)

    def _repr_extra(self) -> dict[str, Any]:
        return {**super()._repr_extra(), "k": self.k}

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        d, k = self.dimension, self.k
        unit = (d / k) * (self._grid.variance(x) + x**2) - x**2
        return self._half**2 * unit

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        rng = local_rng()
        x = self._to_unit(arr).reshape(-1, self.dimension)
        n, d, k = x.shape[0], self.dimension, self.k
        if k == d:
            chosen = np.ones((n, d), dtype=bool)
        else:
            picks = np.argpartition(rng.random((n, d)), k - 1, axis=1)[:, :k]
            chosen = np.zeros((n, d), dtype=bool)
            np.put_along_axis(chosen, picks, True, axis=1)
        y = np.zeros_like(x)
        y[chosen] = (d / k) * self._grid.sample(x[chosen], rng)
        # unchosen attributes report 0 on the unit scale, i.e. the range's midpoint
        return self._from_unit(y).reshape(arr.shape)


# ---------------------------------------------------------------------- Duchi
def _realised_sign_ratio(epsilon: float, owner: str) -> tuple[int, float]:
    """Exact coin for "keep" with odds in [1, e^eps], and its 2p - 1 (the unbiasing factor)."""
    threshold = _exact.odds_threshold(epsilon, 0.0, owner)
    return threshold, (2 * threshold - _exact.DENOMINATOR) / _exact.DENOMINATOR


class DuchiMechanism(LocalMechanism):
    """Duchi et al.'s mechanism for one value (Duchi, Jordan & Wainwright 2013).

    On the unit scale, outputs +B or -B with B = (e^eps+1)/(e^eps-1) and
    P(+B) = 1/2 + x/(2B) = 1/2 + x (e^eps-1)/(2(e^eps+1)); epsilon-LDP, unbiased,
    variance B^2 - x^2 (Wang et al. 2019, Sec. III-A). Sampled as randomised
    response on the sign of x rounded to +-1 (P(+1) = (1+x)/2), with an exact
    coin p whose odds are at most e^eps; B = 1/(2p - 1) for the realised p.
    """

    randomiser = "duchi"

    def __init__(self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper)
        self._keep, self._gap = _realised_sign_ratio(self._epsilon, type(self).__name__)
        self._check_output_range(self.output_bound)

    @property
    def output_bound(self) -> float:
        return 1.0 / self._gap

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * (self.output_bound**2 - x**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        rng = local_rng()
        x = self._to_unit(arr)
        sign = rng.random(x.shape) < (1 + x) / 2  # input rounding: any coin keeps LDP
        keep = _exact.coin(rng, self._keep, x.shape)
        b = self.output_bound
        return self._from_unit(np.where(sign == keep, b, -b))


def _duchi_factor(dimension: int) -> float:
    """2^{d-1} / binom(d-1, floor((d-1)/2))."""
    m = dimension - 1
    return math.exp(
        m * math.log(2.0)
        - (special.gammaln(m + 1) - special.gammaln(m // 2 + 1) - special.gammaln(m - m // 2 + 1))
    )


def duchi_multi_bound(epsilon: float, dimension: int) -> float:
    """B = (e^eps+1)/(e^eps-1) * 2^{d-1} / binom(d-1, floor((d-1)/2)).

    For odd d this is Duchi et al.'s constant as given by Wang et al. (2019,
    Alg. 3). For even d privet breaks ties (t . v = 0) differently (see
    :class:`DuchiMultiMechanism`), and this B is what makes that variant unbiased.
    """
    ratio = 1.0 + 2.0 / math.expm1(epsilon) if epsilon < 700 else 1.0
    return ratio * _duchi_factor(dimension)


class DuchiMultiMechanism(LocalMechanism):
    """Duchi et al.'s mechanism for d attributes (Duchi, Jordan & Wainwright 2018).

    On the unit scale: draw v in {-1, 1}^d with P(v_j = 1) = (1 + x_j)/2; draw t
    uniformly from {-1, 1}^d; with u ~ Bernoulli(e^eps/(e^eps+1)), keep t if
    (t.v > 0) == u and flip it to -t otherwise; ties t.v = 0 (even d only) are
    kept as drawn. Output B t with B = :func:`duchi_multi_bound`.

    Given v, the output has probability 2p/2^d on {t.v > 0}, 2(1-p)/2^d on
    {t.v < 0} and 1/2^d on ties, so every output's probability ratio between two
    inputs is at most p/(1-p) = e^eps. E[t_j | v] = (2p-1) binom(d-1,
    floor((d-1)/2)) / 2^{d-1} v_j, whence the unbiasing constant B; variance
    B^2 - x_j^2 per attribute.

    For odd d there are no ties and this is the mechanism as listed by Wang et
    al. (2019, Alg. 3). For even d their listing puts ties in T- and samples
    uniformly from T+ or T-, which makes the probability ratio e^eps |T-|/|T+| >
    e^eps (3 e^eps for d = 2): not epsilon-LDP. privet's tie rule restores it.

    u is an exact coin (:mod:`._exact`) whose odds p/(1-p) are at most e^eps,
    and B uses the realised p: B = 2^{d-1} / (binom(d-1, floor((d-1)/2)) (2p - 1)).
    """

    randomiser = "duchi_md"

    def __init__(
        self, *, epsilon: float, dimension: int, lower: float = -1.0, upper: float = 1.0
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)
        self._keep, self._gap = _realised_sign_ratio(self._epsilon, type(self).__name__)
        self._check_output_range(self.output_bound)

    @property
    def output_bound(self) -> float:
        return _duchi_factor(self.dimension) / self._gap

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * (self.output_bound**2 - x**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        rng = local_rng()
        x = self._to_unit(arr).reshape(-1, self.dimension)
        n, d = x.shape
        vsign = np.where(rng.random((n, d)) < (1 + x) / 2, 1, -1).astype(np.int8)
        t = (2 * rng.integers(0, 2, size=(n, d)) - 1).astype(np.int8)
        s = np.einsum("ij,ij->i", t.astype(np.int64), vsign.astype(np.int64))
        u = _exact.coin(rng, self._keep, (n,))
        flip = ((s > 0) & ~u) | ((s < 0) & u)
        t[flip] *= -1
        y = self.output_bound * t.astype(float)
        return self._from_unit(y).reshape(arr.shape)


# -------------------------------------------------------------------- Laplace
class LocalLaplace(LocalMechanism):
    """The Laplace mechanism run by each data owner on its own record.

    A record of ``dimension`` d values in [lower, upper] has L1 diameter
    d (upper - lower), so Laplace noise of scale d (upper - lower)(1 + 2^-30)/eps
    per value is epsilon-LDP (seed 004: Lap(2/eps) for one value in [-1, 1], eps/d
    per attribute for d). Unbiased, variance 2 scale^2. Drawn on OpenDP's grid
    with the exact vectorised sampler (:func:`privet.mechanisms._opendp.
    laplace_float_vectorised`: the law of OpenDP's hardened sampler, 10-30x
    faster; the slack pays for the rounding to the grid).
    """

    randomiser = "laplace"

    def __init__(
        self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0, dimension: int = 1
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)
        owner = type(self).__name__
        self.sensitivity = self.dimension * (self.upper - self.lower)
        self.scale = v.finite_result(
            self.sensitivity * (1 + ROUNDING_SLACK) / self._epsilon, "the noise scale", owner
        )

    def variance(self, values: Any) -> NDArray[np.float64]:
        return np.full(np.shape(values), 2 * self.scale**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        # each record (its ``dimension`` values) is one owner's release: its own grid
        return _opendp.laplace_float_vectorised(
            arr, self.scale, self.sensitivity, block=self.dimension
        )


# -------------------------------------------------------- randomised response
MAX_CATEGORIES = 2**20
"""Largest category set of :class:`RandomisedResponse` (its estimates are n x k arrays)."""


def _check_categories(k: int, owner: str) -> None:
    if k > MAX_CATEGORIES:
        raise InvalidParameterError(
            f"The 'categories' parameter of {owner} must be at most {MAX_CATEGORIES}; got {k}. "
            "Group the categories into fewer public bins (or hash them into at most "
            f"{MAX_CATEGORIES} buckets) before randomising."
        )


def _category_list(categories: Any, owner: str) -> NDArray[Any]:
    """The public category list, refused when it is not a finite, small sequence."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__"):
        raise InvalidParameterError(
            f"The 'categories' parameter of {owner} must be an int >= 2 or a list of at least "
            f"two distinct categories; got {type(categories).__name__}."
        )
    _check_categories(len(categories), owner)
    try:
        return np.asarray(list(categories))
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The 'categories' parameter of {owner} must be a flat list of categories ({exc})."
        ) from None


class RandomisedResponse(LocalMechanism):
    """Generalised (k-ary) randomised response over a public category set.

    Reports the true category with probability p = e^eps/(e^eps + k - 1) and
    each other category with q = 1/(e^eps + k - 1); epsilon-LDP since p/q = e^eps
    (Warner 1965; Kairouz, Oh & Viswanath 2014; Wang et al. 2017, "direct
    encoding"). The debiased indicator (1[y = c] - q)/(p - q) is unbiased for
    1[x = c] with variance pi (1 - pi)/(p - q)^2, pi = p if x = c else q.

    The keep probability is an exact coin (:mod:`._exact`) whose ratio p/q is
    in [1, e^eps]; ``p`` and ``q`` are the realised probabilities.

    Parameters
    ----------
    epsilon : float
    categories : int or sequence
        k, for categories 0..k-1, or the public list of categories; at most
        :data:`MAX_CATEGORIES` (the estimators hold an n x k array).
    """

    randomiser = "randomised_response"

    def __init__(self, *, epsilon: float, categories: int | Sequence[Any]) -> None:
        owner = type(self).__name__
        self._epsilon = v.positive(epsilon, "epsilon", owner)
        if isinstance(categories, numbers.Integral) and not isinstance(categories, bool):
            k = v.integer(categories, "categories", owner, minimum=2)
            _check_categories(k, owner)
            self.categories: NDArray[Any] = np.arange(k)
        else:
            cats = _category_list(categories, owner)
            if cats.ndim != 1 or cats.size < 2 or np.unique(cats).size != cats.size:
                raise InvalidParameterError(
                    f"The 'categories' parameter of {owner} must be an int >= 2 or a list of at "
                    f"least two distinct categories; got {categories!r:.200}."
                )
            self.categories = cats
        self.k = int(self.categories.size)
        self._index = {
            c.item() if hasattr(c, "item") else c: i for i, c in enumerate(self.categories)
        }
        self.lower, self.upper, self.dimension = 0.0, float(self.k - 1), 1
        self.sensitivity = 1.0
        # exact coin for "keep": p / q = p (k - 1) / (1 - p) in [1, e^eps]
        self._keep = _exact.odds_threshold(self._epsilon, -math.log(self.k - 1), owner)
        self.p = _exact.probability(self._keep)
        self.q = (_exact.DENOMINATOR - self._keep) / _exact.DENOMINATOR / (self.k - 1)

    def _repr_extra(self) -> dict[str, Any]:
        return {"k": self.k}

    def _records(self, values: Any) -> NDArray[np.int64]:  # type: ignore[override]
        owner = "RandomisedResponse"
        if isinstance(values, Mapping | Set):
            raise InvalidParameterError(
                f"The 'values' argument of {owner} is one category per record (a list or an "
                f"array), got a {type(values).__name__}, which has no order for its records."
            )
        try:
            arr = np.asarray(values)
        except (ValueError, TypeError):
            raise InvalidParameterError(
                f"The 'values' argument of {owner} must be a rectangular array of category "
                f"values (one per record); got a ragged {type(values).__name__} (rows of "
                "different lengths). Pass one category per record."
            ) from None

        def index_of(key: Any) -> int:
            try:
                return self._index[key]
            except (KeyError, TypeError):  # TypeError: an unhashable value
                raise InvalidParameterError(
                    f"The 'values' argument of {owner} must take values in the declared "
                    f"categories {self.categories.tolist()!r}; found {key!r}."
                ) from None

        if arr.dtype.kind == "O":  # Python objects, maybe of mixed types: one by one
            flat = arr.ravel()
            return np.fromiter(
                (index_of(v) for v in flat), dtype=np.int64, count=flat.size
            ).reshape(arr.shape)
        uniq, inverse = np.unique(arr.ravel(), return_inverse=True)
        idx = [index_of(u.item() if hasattr(u, "item") else u) for u in uniq]
        return np.asarray(idx, dtype=np.int64)[inverse].reshape(arr.shape)

    def _perturb(self, arr: NDArray[np.int64]) -> NDArray[Any]:  # type: ignore[override]
        rng = local_rng()
        keep = _exact.coin(rng, self._keep, arr.shape)
        shift = rng.integers(1, self.k, size=arr.shape)
        out = np.where(keep, arr, (arr + shift) % self.k)
        return self.categories[out]

    def debias(self, reports: Any) -> NDArray[np.float64]:
        """Unbiased one-hot estimates, shape (n, k): (1[y = c] - q) / (p - q)."""
        idx = self._records(reports).ravel()
        onehot = np.zeros((idx.size, self.k))
        onehot[np.arange(idx.size), idx] = 1.0
        return (onehot - self.q) / (self.p - self.q)

    def estimate_frequencies(self, reports: Any) -> NDArray[np.float64]:
        """Unbiased estimate of each category's frequency from the reports."""
        return self.debias(reports).mean(axis=0)

    def variance(self, values: Any) -> NDArray[np.float64]:
        """Per record and category variance of :meth:`debias`, shape (n, k)."""
        idx = self._records(values).ravel()
        pi = np.full((idx.size, self.k), self.q)
        pi[np.arange(idx.size), idx] = self.p
        return pi * (1 - pi) / (self.p - self.q) ** 2
