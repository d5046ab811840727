"""Additive noise for numeric queries: Laplace, discrete Laplace and Gaussian (OpenDP samplers).

Part of :mod:`privet.mechanisms.central`; see there for the sampling notes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import (
    ADD_REMOVE,
    DiscreteGaussian,
    Entry,
    Gaussian,
    Guarantee,
    Laplace,
    NeighbouringRelation,
    zcdp_to_epsilon,
)
from privet.mechanisms import _opendp
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms.base import Mechanism
from privet.mechanisms.laws import AdditiveLaw, Law

__all__ = [
    "DiscreteLaplaceMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "make_discrete_laplace",
    "make_gaussian",
    "make_laplace",
]


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

    def law(self) -> Law:
        return AdditiveLaw("laplace", self.scale)

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

    def law(self) -> Law:
        return AdditiveLaw("laplace", self.scale, discrete=True)

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
        v.bounded_loss(self.sensitivity, self.sigma, owner, squared=True)
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
        # the discrete Gaussian has the zCDP view but not the continuous one's exact GDP
        cls = DiscreteGaussian if self.discrete else Gaussian
        return cls(
            sigma=self.sigma,
            sensitivity=self._charged(self.sensitivity),
            epsilon=g.epsilon,
            delta=g.delta,
        )

    def _repr_extra(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "rho": self.zcdp_map()}

    def law(self) -> Law:
        return AdditiveLaw("gaussian", self.sigma, discrete=self.discrete)

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
