"""Central mechanisms: Laplace, discrete Laplace, Gaussian, exponential, noisy max, histograms.

All noise is drawn by OpenDP's samplers (see :mod:`privet.mechanisms._opendp`);
never by ``numpy.random.laplace``, whose floating-point output leaks the input
(Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012).

Every mechanism is vectorised: one call perturbs a whole array and makes one
charge, which is right when the array is one query of the declared L1 (or L2)
sensitivity, e.g. a histogram whose cells partition the records.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, special

from privet.errors import InvalidParameterError
from privet.ledger import (
    ADD_REMOVE,
    Claim,
    Entry,
    Exponential,
    Gaussian,
    Guarantee,
    Laplace,
    NeighbouringRelation,
    zcdp_to_epsilon,
)
from privet.mechanisms import _opendp
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms._random import local_rng
from privet.mechanisms.base import Mechanism
from privet.mechanisms.entries import NoisyMax

__all__ = [
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "NoisyHistogram",
    "ReportNoisyMax",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "discrete_noisy_max_probabilities",
    "exponential_mechanism_probabilities",
    "make_discrete_laplace",
    "make_exponential",
    "make_gaussian",
    "make_laplace",
    "make_noisy_histogram",
    "make_report_noisy_max",
    "permute_and_flip_probabilities",
]


def _relation_factor(relation: NeighbouringRelation) -> int:
    return 1 if relation is ADD_REMOVE else 2


# --------------------------------------------------------------------- Laplace
def calibrate_laplace_scale(epsilon: float, sensitivity: float, *, discrete: bool = False) -> float:
    """Laplace scale for epsilon-DP at L1 sensitivity ``sensitivity``.

    b = sensitivity / epsilon (Dwork, McSherry, Nissim & Smith 2006); for the
    real-valued sampler the sensitivity carries OpenDP's rounding slack
    (1 + 2^-30), see :mod:`privet.mechanisms._opendp`. The discrete Laplace
    (two-sided geometric, Ghosh, Roughgarden & Sundararajan 2012) on integer
    queries needs no slack.
    """
    eps = v.positive(epsilon, "epsilon", "calibrate_laplace_scale")
    sens = v.positive(sensitivity, "sensitivity", "calibrate_laplace_scale")
    scale = sens / eps if discrete else sens * (1 + ROUNDING_SLACK) / eps
    return v.finite_result(
        scale, "the Laplace scale sensitivity / epsilon", "calibrate_laplace_scale"
    )


class _ScaledNoise(Mechanism):
    """Base of the two Laplace mechanisms: a noise ``scale``, a sensitivity, a relation."""

    def __init__(
        self,
        *,
        scale: float,
        sensitivity: float = 1.0,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self.scale = v.positive(scale, "scale", owner)
        self.sensitivity = v.positive(sensitivity, "sensitivity", owner)
        self.relation = v.relation(relation, owner)
        v.bounded_loss(self.sensitivity, self.scale, owner)

    def _repr_extra(self) -> dict[str, Any]:
        return {"scale": self.scale}


class LaplaceMechanism(_ScaledNoise):
    """Adds Laplace(scale) noise to every coordinate of a real-valued query.

    epsilon = sensitivity (1 + 2^-30) / scale for a query of L1 sensitivity
    ``sensitivity`` (Dwork et al. 2006; the slack pays for OpenDP's rounding of
    the input to its float grid). Noise per coordinate has variance 2 scale^2.
    Calling it charges ``scope``, then returns ``values`` + noise (same shape).

    Parameters
    ----------
    scale : float
        Noise scale b > 0.
    sensitivity : float, default=1.0
        L1 sensitivity of the query under ``relation``.
    relation : {"add_remove", "replace_one"}, default="add_remove"
        The neighbouring relation ``sensitivity`` is stated for.
    """

    mechanism = "laplace"

    @property
    def _charged_sensitivity(self) -> float:
        return self.sensitivity * (1 + ROUNDING_SLACK)

    @property
    def variance(self) -> float:
        return 2 * self.scale**2

    def entry(self) -> Entry:
        return Laplace(scale=self.scale, sensitivity=self._charged_sensitivity)

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return Guarantee(self._d_in(d_in) * (1 + ROUNDING_SLACK) / self.scale)

    def _sample(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        return _opendp.laplace_float(arr, self.scale, self.sensitivity)


class DiscreteLaplaceMechanism(_ScaledNoise):
    """Adds discrete Laplace (two-sided geometric) noise to integer queries.

    P(Z = z) proportional to exp(-|z| / scale) on the integers; epsilon =
    sensitivity / scale for a query of L1 sensitivity ``sensitivity`` (Ghosh,
    Roughgarden & Sundararajan 2012; Canonne, Kamath & Steinke 2020, Sec. 5.2).
    Variance 2 e^{-1/b} / (1 - e^{-1/b})^2 with b = scale. Calling it charges
    ``scope``, then returns the integer ``values`` + noise.
    """

    mechanism = "discrete_laplace"

    @property
    def variance(self) -> float:
        r = math.exp(-1.0 / self.scale)
        return 2 * r / (1 - r) ** 2

    def entry(self) -> Entry:
        return Laplace(scale=self.scale, sensitivity=self.sensitivity)

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return Guarantee(self._d_in(d_in) / self.scale)

    def _validate_input(self, values: Any) -> NDArray[np.int64]:
        return v.integer_array(values, "values", type(self).__name__)

    def _sample(self, arr: NDArray[np.int64]) -> NDArray[np.int64]:
        return _opendp.laplace_int(arr, self.scale)


def _laplace_scale(
    owner: str, epsilon: float | None, scale: float | None, sensitivity: float, discrete: bool
) -> float:
    """The scale given, or the one calibrated from ``epsilon`` (exactly one of them)."""
    which = v.one_of({"epsilon": epsilon, "scale": scale}, owner)
    if which == "scale":
        return scale  # type: ignore[return-value]  # validated by the mechanism
    eps = v.positive(epsilon, "epsilon", owner)
    return calibrate_laplace_scale(
        eps, v.positive(sensitivity, "sensitivity", owner), discrete=discrete
    )


def make_laplace(
    epsilon: float | None = None,
    *,
    sensitivity: float = 1.0,
    scale: float | None = None,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> LaplaceMechanism:
    """A real-valued Laplace mechanism from ``epsilon`` or from ``scale`` (one of them).

    >>> make_laplace(1.0, sensitivity=2.0).scale  # doctest: +ELLIPSIS
    2.00000000...
    """
    b = _laplace_scale("make_laplace", epsilon, scale, sensitivity, discrete=False)
    return LaplaceMechanism(scale=b, sensitivity=sensitivity, relation=relation)


def make_discrete_laplace(
    epsilon: float | None = None,
    *,
    sensitivity: float = 1.0,
    scale: float | None = None,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> DiscreteLaplaceMechanism:
    """A discrete Laplace mechanism for integer queries, from ``epsilon`` or ``scale``."""
    b = _laplace_scale("make_discrete_laplace", epsilon, scale, sensitivity, discrete=True)
    return DiscreteLaplaceMechanism(scale=b, sensitivity=sensitivity, relation=relation)


# -------------------------------------------------------------------- Gaussian
def calibrate_gaussian_sigma(
    sensitivity: float,
    *,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    discrete: bool = False,
) -> float:
    """Gaussian sigma for rho-zCDP, or for (epsilon, delta)-DP, at L2 sensitivity.

    rho-zCDP: sigma = sensitivity / sqrt(2 rho) (Bun & Steinke 2016, Prop. 1.6;
    the discrete Gaussian satisfies the same, Canonne, Kamath & Steinke 2020,
    Thm. 4). (epsilon, delta): the largest rho whose conversion (the ledger's
    :func:`~privet.ledger.zcdp_to_epsilon`, Canonne et al. 2020, Cor. 13) is at
    most epsilon, found by bisection. The real-valued sampler adds OpenDP's
    rounding slack to the sensitivity.
    """
    owner = "calibrate_gaussian_sigma"
    sens = v.positive(sensitivity, "sensitivity", owner)
    if not discrete:
        sens *= 1 + ROUNDING_SLACK
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise InvalidParameterError(f"{owner} takes rho, or epsilon and delta, not both.")
        return _sigma(sens, v.positive(rho, "rho", owner), owner)
    if epsilon is None or delta is None:
        raise InvalidParameterError(f"{owner} needs rho, or both epsilon and delta.")
    r = _rho_for(v.positive(epsilon, "epsilon", owner), v.probability(delta, "delta", owner))
    return _sigma(sens, r, owner)


def _sigma(sensitivity: float, rho: float, owner: str) -> float:
    if rho <= 0:
        raise InvalidParameterError(
            f"{owner}: epsilon and delta are too small to give a positive rho; raise them."
        )
    return v.finite_result(sensitivity / math.sqrt(2 * rho), "sigma", owner)


def _rho_for(epsilon: float, delta: float) -> float:
    """Largest rho with zcdp_to_epsilon(rho, delta) <= epsilon (bisection)."""
    lo, hi = 0.0, max(epsilon, 1.0)
    while zcdp_to_epsilon(hi, delta) <= epsilon:
        hi *= 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if zcdp_to_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


class GaussianMechanism(Mechanism):
    """Adds N(0, sigma^2) noise per coordinate (a discrete Gaussian on OpenDP's grid).

    rho = sensitivity^2 / (2 sigma^2)-zCDP for a query of L2 sensitivity
    ``sensitivity`` (Bun & Steinke 2016, Prop. 1.6; Canonne, Kamath & Steinke
    2020, Thm. 4 for the discrete Gaussian). With ``delta`` set, the entry also
    states (epsilon, delta)-DP through the zCDP conversion of Canonne et al.
    (2020, Cor. 13). ``discrete=True`` takes integer inputs and returns integers.
    """

    mechanism = "gaussian"

    def __init__(
        self,
        *,
        sigma: float,
        sensitivity: float = 1.0,
        delta: float | None = None,
        discrete: bool = False,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self.sigma = v.positive(sigma, "sigma", owner)
        self.sensitivity = v.positive(sensitivity, "sensitivity", owner)
        v.bounded_loss(self.sensitivity, self.sigma, owner)
        self.delta = None if delta is None else v.probability(delta, "delta", owner)
        self.discrete = bool(discrete)
        self.relation = v.relation(relation, owner)

    @property
    def scale(self) -> float:
        return self.sigma

    @property
    def variance(self) -> float:
        """sigma^2 (the discrete Gaussian's variance is at most sigma^2, CKS20 Prop. 19)."""
        return self.sigma**2

    def _charged(self, d_in: float) -> float:
        return d_in if self.discrete else d_in * (1 + ROUNDING_SLACK)

    def zcdp_map(self, d_in: float | None = None) -> float:
        """rho for inputs at L2 distance ``d_in``."""
        return self._charged(self._d_in(d_in)) ** 2 / (2 * self.sigma**2)

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        """(epsilon, delta) at the mechanism's delta; epsilon = inf without one."""
        if self.delta is None:
            return Guarantee(math.inf)
        return Guarantee(zcdp_to_epsilon(self.zcdp_map(d_in), self.delta), self.delta)

    def entry(self) -> Entry:
        g = self.privacy_map()
        return Gaussian(
            sigma=self.sigma,
            sensitivity=self._charged(self.sensitivity),
            epsilon=g.epsilon,
            delta=g.delta,
        )

    def _repr_extra(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "rho": self.zcdp_map()}

    def _validate_input(self, values: Any) -> NDArray[Any]:
        owner = type(self).__name__
        if self.discrete:
            return v.integer_array(values, "values", owner)
        return v.finite_array(values, "values", owner)

    def _sample(self, arr: NDArray[Any]) -> NDArray[Any]:
        if self.discrete:
            return _opendp.gaussian_int(arr, self.sigma)
        return _opendp.gaussian_float(arr, self.sigma, self.sensitivity)


def make_gaussian(
    *,
    sensitivity: float = 1.0,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: float | None = None,
    discrete: bool = False,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> GaussianMechanism:
    """A Gaussian mechanism from ``rho`` (zCDP), from ``epsilon`` and ``delta``, or from ``sigma``.

    >>> make_gaussian(rho=0.5).sigma  # doctest: +ELLIPSIS
    1.00000000...
    """
    owner = "make_gaussian"
    if sigma is not None:
        if rho is not None or epsilon is not None:
            raise InvalidParameterError(f"{owner} takes sigma, rho, or epsilon and delta: one.")
    elif rho is not None:
        sigma = calibrate_gaussian_sigma(sensitivity, rho=rho, discrete=discrete)
    elif epsilon is not None and delta is not None:
        sigma = calibrate_gaussian_sigma(
            sensitivity, epsilon=epsilon, delta=delta, discrete=discrete
        )
    else:
        raise InvalidParameterError(
            f"{owner} needs sigma, rho, or both epsilon and delta; got none of them."
        )
    return GaussianMechanism(
        sigma=sigma, sensitivity=sensitivity, delta=delta, discrete=discrete, relation=relation
    )


# ------------------------------------------------------------------- selection
def exponential_mechanism_probabilities(utilities: Any, scale: float) -> NDArray[np.float64]:
    """Exact selection probabilities exp(u_i / scale) / sum_j exp(u_j / scale).

    With scale = 2 Delta / epsilon this is the exponential mechanism of McSherry
    & Talwar (2007); with Delta / epsilon its monotone variant.
    """
    u = np.asarray(utilities, dtype=float) / scale
    return special.softmax(u, axis=-1)


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


class _Selection(Mechanism):
    """Report-noisy-max over a finite candidate set (base of the two selections)."""

    noise: Literal["gumbel", "exponential"]

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float = 1.0,
        monotone: bool = False,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self._epsilon = v.positive(epsilon, "epsilon", owner)
        self.sensitivity = v.positive(sensitivity, "sensitivity", owner)
        self.monotone = bool(monotone)
        self.relation = v.relation(relation, owner)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def scale(self) -> float:
        """Noise scale 2 Delta / epsilon, or Delta / epsilon for a monotone utility."""
        return (1 if self.monotone else 2) * self.sensitivity / self._epsilon

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return Guarantee(self._epsilon * self._d_in(d_in) / self.sensitivity)

    def _repr_extra(self) -> dict[str, Any]:
        return {"monotone": self.monotone, "noise": self.noise}

    def probabilities(self, utilities: Any) -> NDArray[np.float64]:
        raise NotImplementedError  # pragma: no cover

    def __call__(
        self,
        utilities: Any,
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
        disjoint_rows: bool = False,
    ) -> Any:
        """Charge ``scope``, then return the index of the selected candidate.

        ``utilities`` is 1-D (one selection) or 2-D with ``disjoint_rows=True``:
        one selection per row, each row computed on a disjoint part of the data
        (one row per leaf of a tree), which costs one charge under add/remove
        neighbours (parallel composition).
        """
        return self._release(
            utilities,
            scope=scope,
            caller=caller,
            step=step,
            claim=claim,
            validate=functools.partial(self._utilities, disjoint_rows=disjoint_rows),
        )

    def _utilities(self, utilities: Any, *, disjoint_rows: bool) -> NDArray[np.float64]:
        owner = type(self).__name__
        arr = v.finite_array(utilities, "utilities", owner)
        if arr.ndim == 0 or arr.shape[-1] == 0:
            raise InvalidParameterError(
                f"The 'utilities' argument of {owner} needs at least one candidate; "
                f"got shape {arr.shape}."
            )
        if arr.ndim > 1:
            if not disjoint_rows:
                raise InvalidParameterError(
                    f"{owner} got utilities of shape {arr.shape}: pass disjoint_rows=True if "
                    "each row is computed on a disjoint part of the data, or call once per "
                    "selection (each call is charged)."
                )
            if self.relation is not ADD_REMOVE:
                raise InvalidParameterError(
                    f"{owner}: rows over disjoint parts are one charge only under add/remove "
                    "neighbours; under replace-one a record can move between rows. Charge "
                    "each row in its own scope (scope.partition) instead."
                )
        return arr

    def _sample(self, arr: NDArray[np.float64]) -> NDArray[np.int64]:
        return _opendp.noisy_max(arr, self.scale, gumbel=self.noise == "gumbel")


class ExponentialMechanism(_Selection):
    """Exponential mechanism over a finite candidate set (McSherry & Talwar 2007).

    Selects i with probability proportional to exp(epsilon u_i / (2 Delta)), or
    exp(epsilon u_i / Delta) when the utility is ``monotone`` (every score moves
    in the same direction between neighbours); epsilon-DP. Sampled exactly as
    report-noisy-max with Gumbel(scale) noise (the Gumbel-max trick), through
    OpenDP's ``make_noisy_max``.
    """

    mechanism = "exponential"
    noise = "gumbel"

    def entry(self) -> Entry:
        return Exponential(
            epsilon=self._epsilon, sensitivity=self.sensitivity, monotone=self.monotone
        )

    def probabilities(self, utilities: Any) -> NDArray[np.float64]:
        return exponential_mechanism_probabilities(utilities, self.scale)


class ReportNoisyMax(_Selection):
    """Report-noisy-max with Gumbel, exponential or discrete Laplace noise.

    Gumbel noise of scale 2 Delta / epsilon gives exactly the exponential
    mechanism's distribution. Exponential noise gives the permute-and-flip
    distribution (Ding et al. 2021), which is *not* the exponential
    mechanism's (it puts more mass on the best candidate); both are
    epsilon-DP (McKenna & Sheldon 2020, Thm. 1).

    ``noise="discrete_laplace"`` adds integer discrete Laplace noise of scale
    ceil(2 Delta) / epsilon (OpenDP's sampler) and returns the *first* maximum:
    epsilon-DP by Dwork & Roth's Claim 3.9 with integer thresholds (see
    :mod:`privet.mpc.discrete`). It is the plaintext reference of the sound MPC
    selection :class:`privet.mpc.SecureReportNoisyMax`, which samples the same
    noise exactly on secret shares. Not offered for monotone utilities.
    """

    mechanism = "report_noisy_max"

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float = 1.0,
        noise: Literal["gumbel", "exponential", "discrete_laplace"] = "exponential",
        monotone: bool = False,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        super().__init__(
            epsilon=epsilon, sensitivity=sensitivity, monotone=monotone, relation=relation
        )
        if noise not in ("gumbel", "exponential", "discrete_laplace"):
            raise InvalidParameterError(
                "The 'noise' parameter of ReportNoisyMax must be 'gumbel', 'exponential' or "
                f"'discrete_laplace'; got {noise!r}."
            )
        if noise == "discrete_laplace" and monotone:
            raise InvalidParameterError(
                "ReportNoisyMax(noise='discrete_laplace') has no monotone variant; drop "
                "monotone=True."
            )
        self.noise = noise

    @property
    def scale(self) -> float:
        if self.noise == "discrete_laplace":
            return math.ceil(2 * self.sensitivity) / self._epsilon
        return super().scale

    def entry(self) -> Entry:
        if self.noise == "gumbel":
            return Exponential(
                epsilon=self._epsilon, sensitivity=self.sensitivity, monotone=self.monotone
            )
        return NoisyMax(
            epsilon=self._epsilon,
            sensitivity=self.sensitivity,
            noise=self.noise,
            monotone=self.monotone,
        )

    def _sample(self, arr: NDArray[np.float64]) -> NDArray[np.int64]:
        if self.noise != "discrete_laplace":
            return super()._sample(arr)
        noise = _opendp.laplace_int(np.zeros(arr.shape, dtype=np.int64), self.scale)
        return np.argmax(arr + noise, axis=-1)  # first maximum: the fixed tie rule

    def probabilities(self, utilities: Any) -> NDArray[np.float64]:
        if self.noise == "gumbel":
            return exponential_mechanism_probabilities(utilities, self.scale)
        if self.noise == "discrete_laplace":
            return discrete_noisy_max_probabilities(utilities, self.scale)
        return permute_and_flip_probabilities(utilities, self.scale)


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


def make_exponential(
    epsilon: float,
    *,
    sensitivity: float = 1.0,
    monotone: bool = False,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> ExponentialMechanism:
    """An exponential mechanism with utility of sensitivity ``sensitivity``."""
    return ExponentialMechanism(
        epsilon=epsilon, sensitivity=sensitivity, monotone=monotone, relation=relation
    )


def make_report_noisy_max(
    epsilon: float,
    *,
    sensitivity: float = 1.0,
    noise: Literal["gumbel", "exponential", "discrete_laplace"] = "exponential",
    monotone: bool = False,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> ReportNoisyMax:
    """Report-noisy-max with Gumbel, exponential or discrete Laplace noise."""
    return ReportNoisyMax(
        epsilon=epsilon, sensitivity=sensitivity, noise=noise, monotone=monotone, relation=relation
    )


# ------------------------------------------------------------------ histograms
class NoisyHistogram(Mechanism):
    """Noisy histogram / class counts, with the argmax used to label leaves.

    The counts array may have any shape (bins, or leaves x classes); every
    record adds 1 to at most ``contributions`` cells, so the array's L1
    sensitivity is ``contributions`` under add/remove and twice that under
    replace-one. One charge covers all cells (the parallel composition over bins
    is this L1 argument). Noise is discrete Laplace on integer counts
    (``discrete=True``) or the real-valued Laplace.

    :meth:`argmax` releases only the noisy majority class of each row (the leaf
    labelling step of seeds 000 and 003); it is post-processing of the same
    release and costs the same single charge.
    """

    mechanism = "noisy_histogram"

    def __init__(
        self,
        *,
        scale: float,
        contributions: int = 1,
        discrete: bool = True,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self.scale = v.positive(scale, "scale", owner)
        self.contributions = v.integer(contributions, "contributions", owner)
        self.discrete = bool(discrete)
        self.relation = v.relation(relation, owner)
        self.sensitivity = float(self.contributions * _relation_factor(self.relation))
        self._inner: DiscreteLaplaceMechanism | LaplaceMechanism = (
            DiscreteLaplaceMechanism(
                scale=self.scale, sensitivity=self.sensitivity, relation=self.relation
            )
            if self.discrete
            else LaplaceMechanism(
                scale=self.scale, sensitivity=self.sensitivity, relation=self.relation
            )
        )

    def entry(self) -> Entry:
        return self._inner.entry()

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return self._inner.privacy_map(d_in)

    def _repr_extra(self) -> dict[str, Any]:
        return {"scale": self.scale, "discrete": self.discrete}

    def _validate_input(self, counts: Any) -> NDArray[Any]:
        owner = type(self).__name__
        arr = (
            v.integer_array(counts, "counts", owner)
            if self.discrete
            else v.finite_array(counts, "counts", owner)
        )
        if arr.ndim == 0:
            raise InvalidParameterError(f"The 'counts' argument of {owner} must be an array.")
        return arr

    def _sample(self, arr: NDArray[Any]) -> NDArray[Any]:
        if self.discrete:
            return _opendp.laplace_int(arr, self.scale)
        return _opendp.laplace_float(arr, self.scale, self.sensitivity)

    def _classes(self, counts: Any) -> NDArray[Any]:
        arr = self._validate_input(counts)
        if arr.shape[-1] == 0:
            raise InvalidParameterError("NoisyHistogram.argmax needs at least one class.")
        return arr

    def _noisy_argmax(self, arr: NDArray[Any]) -> NDArray[np.int64]:
        noisy = self._sample(arr).astype(float)
        jitter = local_rng().random(noisy.shape) * 0.5  # only reorders exact ties
        return np.argmax(noisy + (jitter if self.discrete else 0.0), axis=-1)

    def argmax(
        self,
        counts: Any,
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> NDArray[np.int64]:
        """Charge ``scope`` once, then return the noisy argmax of each row (last axis).

        Ties between noisy counts are broken uniformly at random.
        """
        return self._release(
            counts,
            scope=scope,
            caller=caller,
            step=step,
            claim=claim,
            validate=self._classes,
            sample=self._noisy_argmax,
            mechanism=f"{self.mechanism}[argmax]",
        )


def make_noisy_histogram(
    epsilon: float | None = None,
    *,
    scale: float | None = None,
    contributions: int = 1,
    discrete: bool = True,
    relation: NeighbouringRelation | str = ADD_REMOVE,
) -> NoisyHistogram:
    """A noisy histogram at ``epsilon`` (or ``scale``): Laplace(sensitivity / epsilon) per cell.

    >>> make_noisy_histogram(0.5, relation="replace_one").scale
    4.0
    """
    owner = "make_noisy_histogram"
    which = v.one_of({"epsilon": epsilon, "scale": scale}, owner)
    rel = v.relation(relation, owner)
    c = v.integer(contributions, "contributions", owner)
    if which == "epsilon":
        sens = c * (1 if rel is ADD_REMOVE else 2)
        scale = calibrate_laplace_scale(
            v.positive(epsilon, "epsilon", owner), sens, discrete=discrete
        )
    return NoisyHistogram(scale=scale, contributions=c, discrete=discrete, relation=rel)  # type: ignore[arg-type]
