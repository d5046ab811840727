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

Randomness. The piecewise, Duchi and randomised-response samplers are numpy
(see :mod:`privet.mechanisms._random`) and are not hardened against
floating-point attacks in the manner of Mironov (2012): the piecewise
mechanism's output is a float computed from the input, whose low-order bits may
carry information about it beyond what the ideal continuous distribution
allows. Duchi's and randomised response's outputs are drawn from a finite set,
so only the generator's quality matters for them. The local Laplace is drawn by
OpenDP's hardened sampler.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from privet.errors import InvalidParameterError
from privet.ledger import REPLACE_ONE, Entry, Guarantee, LocalRandomiser
from privet.mechanisms import _opendp
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms._random import local_rng
from privet.mechanisms.base import Mechanism

__all__ = [
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
        self.sensitivity = self.upper - self.lower

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
def _pm_constants(epsilon: float) -> tuple[float, float]:
    """C = (e^{eps/2} + 1) / (e^{eps/2} - 1) and P(inside) = e^{eps/2} / (e^{eps/2} + 1)."""
    return 1.0 + 2.0 / math.expm1(epsilon / 2), float(special.expit(epsilon / 2))


def _pm_unit(x: NDArray[np.float64], epsilon: float, rng: np.random.Generator) -> NDArray:
    """Alg. 3 of seed 004 on values in [-1, 1]; output in [-C, C]."""
    c, p_in = _pm_constants(epsilon)
    left = (c + 1) / 2 * x - (c - 1) / 2
    right = left + c - 1
    inside = rng.random(x.shape) < p_in
    w = rng.random(x.shape)
    y_in = left + w * (c - 1)
    t = w * (c + 1)  # position in [-C, l) u (r, C], total length C + 1
    y_out = np.where(t < left + c, t - c, right + (t - (left + c)))
    return np.where(inside, y_in, y_out)


def _pm_unit_variance(x: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
    """Var = x^2 / (e^{eps/2} - 1) + (e^{eps/2} + 3) / (3 (e^{eps/2} - 1)^2) (Wang et al. 2019, Lemma 1)."""
    em1 = math.expm1(epsilon / 2)
    return x**2 / em1 + (em1 + 4) / (3 * em1**2)


class PiecewiseMechanism(LocalMechanism):
    """Piecewise mechanism for one value in [lower, upper] (seed 004, Alg. 3).

    With C = (e^{eps/2}+1)/(e^{eps/2}-1), l(x) = (C+1)/2 x - (C-1)/2 and
    r(x) = l(x) + C - 1 on the unit scale, the output is uniform on [l, r] with
    probability e^{eps/2}/(e^{eps/2}+1), else uniform on [-C, l) u (r, C];
    densities differ by e^eps at most. Values in [lower, upper] are mapped to
    [-1, 1] and back (seed 004: "x* = x / t ... releases x*' t").
    """

    randomiser = "piecewise"

    def __init__(self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper)

    @property
    def output_bound(self) -> float:
        return _pm_constants(self._epsilon)[0]

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * _pm_unit_variance(x, self._epsilon)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._from_unit(_pm_unit(self._to_unit(arr), self._epsilon, local_rng()))


def piecewise_sample_count(epsilon: float, dimension: int) -> int:
    """k = max(1, min(d, floor(eps / 2.5))) attributes sampled per record (seed 004, Alg. 4)."""
    return max(1, min(dimension, math.floor(epsilon / 2.5)))


class PiecewiseMultiMechanism(LocalMechanism):
    """Piecewise mechanism for d attributes (seed 004, Alg. 4).

    Each record reports k = max(1, min(d, floor(eps/2.5))) attributes sampled
    without replacement, each perturbed by Alg. 3 at eps/k and scaled by d/k;
    the others are reported as 0. epsilon-LDP by composition over the k
    attributes. Unbiased: E[x'_j] = (k/d)(d/k) x_j. Variance
    (d/k) (Var_PM(x_j; eps/k) + x_j^2) - x_j^2 on the unit scale.
    """

    randomiser = "piecewise_md"

    def __init__(
        self, *, epsilon: float, dimension: int, lower: float = -1.0, upper: float = 1.0
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)
        self.k = piecewise_sample_count(self._epsilon, self.dimension)

    def _repr_extra(self) -> dict[str, Any]:
        return {**super()._repr_extra(), "k": self.k}

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        d, k = self.dimension, self.k
        unit = (d / k) * (_pm_unit_variance(x, self._epsilon / k) + x**2) - x**2
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
        y[chosen] = (d / k) * _pm_unit(x[chosen], self._epsilon / k, rng)
        # unchosen attributes report 0 on the unit scale, i.e. the range's midpoint
        return self._from_unit(y).reshape(arr.shape)


# ---------------------------------------------------------------------- Duchi
class DuchiMechanism(LocalMechanism):
    """Duchi et al.'s mechanism for one value (Duchi, Jordan & Wainwright 2013).

    On the unit scale, outputs +B or -B with B = (e^eps+1)/(e^eps-1) and
    P(+B) = 1/2 + x/(2B) = 1/2 + x (e^eps-1)/(2(e^eps+1)); epsilon-LDP, unbiased,
    variance B^2 - x^2 (Wang et al. 2019, Sec. III-A).
    """

    randomiser = "duchi"

    def __init__(self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper)

    @property
    def output_bound(self) -> float:
        return 1.0 + 2.0 / math.expm1(self._epsilon)

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * (self.output_bound**2 - x**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        b = self.output_bound
        x = self._to_unit(arr)
        plus = local_rng().random(x.shape) < 0.5 + x / (2 * b)
        return self._from_unit(np.where(plus, b, -b))


def duchi_multi_bound(epsilon: float, dimension: int) -> float:
    """B = (e^eps+1)/(e^eps-1) * 2^{d-1} / binom(d-1, floor((d-1)/2)).

    For odd d this is Duchi et al.'s constant as given by Wang et al. (2019,
    Alg. 3). For even d privet breaks ties (t . v = 0) differently (see
    :class:`DuchiMultiMechanism`), and this B is what makes that variant unbiased.
    """
    d = dimension
    m = d - 1
    log_ratio = m * math.log(2.0) - (
        special.gammaln(m + 1) - special.gammaln(m // 2 + 1) - special.gammaln(m - m // 2 + 1)
    )
    return (1.0 + 2.0 / math.expm1(epsilon)) * math.exp(log_ratio)


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
    """

    randomiser = "duchi_md"

    def __init__(
        self, *, epsilon: float, dimension: int, lower: float = -1.0, upper: float = 1.0
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)

    @property
    def output_bound(self) -> float:
        return duchi_multi_bound(self._epsilon, self.dimension)

    def variance(self, values: Any) -> NDArray[np.float64]:
        x = self._to_unit(np.asarray(values, dtype=float))
        return self._half**2 * (self.output_bound**2 - x**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        rng = local_rng()
        x = self._to_unit(arr).reshape(-1, self.dimension)
        n, d = x.shape
        vsign = np.where(rng.random((n, d)) < (1 + x) / 2, 1, -1).astype(np.int8)
        t = np.where(rng.random((n, d)) < 0.5, 1, -1).astype(np.int8)
        s = np.einsum("ij,ij->i", t.astype(np.int64), vsign.astype(np.int64))
        u = rng.random(n) < special.expit(self._epsilon)
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
    per attribute for d). Unbiased, variance 2 scale^2. Drawn by OpenDP's
    hardened sampler (the slack pays for its rounding).
    """

    randomiser = "laplace"

    def __init__(
        self, *, epsilon: float, lower: float = -1.0, upper: float = 1.0, dimension: int = 1
    ) -> None:
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, dimension=dimension)
        self.sensitivity = self.dimension * (self.upper - self.lower)
        self.scale = self.sensitivity * (1 + ROUNDING_SLACK) / self._epsilon

    def variance(self, values: Any) -> NDArray[np.float64]:
        return np.full(np.shape(values), 2 * self.scale**2)

    def _perturb(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        return _opendp.laplace_float(arr, self.scale, self.sensitivity)


# -------------------------------------------------------- randomised response
class RandomisedResponse(LocalMechanism):
    """Generalised (k-ary) randomised response over a public category set.

    Reports the true category with probability p = e^eps/(e^eps + k - 1) and
    each other category with q = 1/(e^eps + k - 1); epsilon-LDP since p/q = e^eps
    (Warner 1965; Kairouz, Oh & Viswanath 2014; Wang et al. 2017, "direct
    encoding"). The debiased indicator (1[y = c] - q)/(p - q) is unbiased for
    1[x = c] with variance pi (1 - pi)/(p - q)^2, pi = p if x = c else q.

    Parameters
    ----------
    epsilon : float
    categories : int or sequence
        k, for categories 0..k-1, or the public list of categories.
    """

    randomiser = "randomised_response"

    def __init__(self, *, epsilon: float, categories: int | Sequence[Any]) -> None:
        owner = type(self).__name__
        self._epsilon = v.positive(epsilon, "epsilon", owner)
        if isinstance(categories, int) and not isinstance(categories, bool):
            k = v.integer(categories, "categories", owner, minimum=2)
            self.categories: NDArray[Any] = np.arange(k)
        else:
            cats = np.asarray(list(categories))
            if cats.ndim != 1 or cats.size < 2 or np.unique(cats).size != cats.size:
                raise InvalidParameterError(
                    f"The 'categories' parameter of {owner} must be an int >= 2 or a list of at "
                    f"least two distinct categories; got {categories!r}."
                )
            self.categories = cats
        self.k = int(self.categories.size)
        self._index = {
            c.item() if hasattr(c, "item") else c: i for i, c in enumerate(self.categories)
        }
        self.lower, self.upper, self.dimension = 0.0, float(self.k - 1), 1
        self.sensitivity = 1.0
        denom = math.exp(self._epsilon) + self.k - 1 if self._epsilon < 700 else math.inf
        self.p = 1.0 / (1.0 + (self.k - 1) * math.exp(-self._epsilon))
        self.q = 0.0 if math.isinf(denom) else 1.0 / denom

    def _repr_extra(self) -> dict[str, Any]:
        return {"k": self.k}

    def _records(self, values: Any) -> NDArray[np.int64]:  # type: ignore[override]
        arr = np.asarray(values)
        uniq, inverse = np.unique(arr.ravel(), return_inverse=True)
        idx = []
        for u in uniq:
            key = u.item() if hasattr(u, "item") else u
            if key not in self._index:
                raise InvalidParameterError(
                    f"The 'values' argument of RandomisedResponse must take values in the "
                    f"declared categories {self.categories.tolist()!r}; found {key!r}."
                )
            idx.append(self._index[key])
        return np.asarray(idx, dtype=np.int64)[inverse].reshape(arr.shape)

    def _perturb(self, arr: NDArray[np.int64]) -> NDArray[Any]:  # type: ignore[override]
        rng = local_rng()
        keep = rng.random(arr.shape) < self.p
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
