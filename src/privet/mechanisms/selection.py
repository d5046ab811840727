"""Selection: the exponential mechanism and report-noisy-max (OpenDP samplers).

Part of :mod:`privet.mechanisms.central`; exact selection probabilities for
tests and audits live next to each mechanism.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from privet.errors import InvalidParameterError
from privet.ledger import ADD_REMOVE, Claim, Entry, Exponential, Guarantee, NeighbouringRelation
from privet.mechanisms import _opendp, recorder
from privet.mechanisms import _validate as v
from privet.mechanisms.base import Mechanism
from privet.mechanisms.bitwise_geometric import noisy_max_scale
from privet.mechanisms.entries import NoisyMax
from privet.mechanisms.laws import (
    Law,
    SelectionLaw,
    discrete_noisy_max_probabilities,
    permute_and_flip_probabilities,
)

__all__ = [
    "ExponentialMechanism",
    "ReportNoisyMax",
    "discrete_noisy_max_probabilities",
    "exponential_mechanism_probabilities",
    "make_exponential",
    "make_report_noisy_max",
    "permute_and_flip_probabilities",
]


def exponential_mechanism_probabilities(utilities: Any, scale: float) -> NDArray[np.float64]:
    """Exact selection probabilities exp(u_i / scale) / sum_j exp(u_j / scale).

    With scale = 2 Delta / epsilon this is the exponential mechanism of McSherry
    & Talwar (2007); with Delta / epsilon its monotone variant.
    """
    u = np.asarray(utilities, dtype=float) / scale
    return special.softmax(u, axis=-1)


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
        if self.monotone and self.relation != ADD_REMOVE:
            # replacing a record can lower one candidate's utility and raise another's,
            # so the monotone form's factor 2 saving does not hold there
            raise InvalidParameterError(
                f"{owner}: monotone=True holds only under add/remove neighbours (a "
                f"replaced record can move the utilities in opposite directions); got "
                f"relation={self.relation.value!r}. Use monotone=False."
            )

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

    def law(self) -> Law:
        return SelectionLaw(self.noise, self.scale)  # type: ignore[arg-type]

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

    def release_disjoint(
        self,
        utilities: Sequence[Any],
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> list[int]:
        """One selection per utility vector, each computed on a disjoint part of the
        records of ``scope``: one charge (parallel composition, add/remove only).

        The vectors may differ in length (the nodes of one tree level with different
        attributes left). Under add/remove neighbours one record changes the
        utilities of one part only, so the selections together are as private as
        one; under replace-one a record can leave one part and enter another, so
        this is refused (charge each part in its own scope, :meth:`release_many`).
        """
        owner = type(self).__name__
        if self.relation is not ADD_REMOVE:
            raise InvalidParameterError(
                f"{owner}.release_disjoint: selections over disjoint parts are one charge only "
                "under add/remove neighbours; under replace-one a record can move between "
                "parts. Charge each part in its own scope (release_many) instead."
            )
        arrs = [self._utilities(u, disjoint_rows=False) for u in utilities]
        target = v.scope_of(scope, owner)
        if not arrs:
            return []
        self._charge(target, caller, step, claim)
        picks = recorder.release_many(
            self.law(), arrs, lambda: self._sample_many(arrs), label=self._label(caller, step)
        )
        return [int(np.asarray(pick)) for pick in picks]

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
    :mod:`privet.mpc.discrete`). With ``monotone=True`` the scale is
    ceil(Delta) / epsilon: for utilities that move one way between neighbours
    (D' = D + x: u_j(D) <= u_j(D') <= u_j(D) + Delta for every j, e.g. counts and
    max-operator scores under add/remove) it is epsilon-DP all the same; the
    proof, with the discrete Laplace tail ratio, is in :mod:`privet.mpc.discrete`
    ("Proof of the guarantee"). The caller vouches for the monotonicity. It is
    the plaintext reference of the sound MPC selection
    :class:`privet.mpc.SecureReportNoisyMax`, which samples the same noise
    exactly on secret shares.
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
        self.noise = noise

    @property
    def scale(self) -> float:
        """2 Delta / epsilon, or Delta / epsilon when ``monotone``; for discrete Laplace noise
        ceil(2 Delta) / epsilon, or ceil(Delta) / epsilon when ``monotone``."""
        if self.noise == "discrete_laplace":
            return noisy_max_scale(self._epsilon, self.sensitivity, self.monotone)
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

    def _sample_many(self, arrs: list[NDArray[np.float64]]) -> list[Any]:
        if self.noise != "discrete_laplace":
            return super()._sample_many(arrs)
        # independent noise per candidate: one draw for every selection of the batch
        sizes = [a.size for a in arrs]
        noise = _opendp.laplace_int(np.zeros(sum(sizes), dtype=np.int64), self.scale)
        parts = np.split(noise, np.cumsum(sizes)[:-1])
        return [
            np.argmax(a + z.reshape(a.shape), axis=-1) for a, z in zip(arrs, parts, strict=True)
        ]

    def probabilities(self, utilities: Any) -> NDArray[np.float64]:
        if self.noise == "gumbel":
            return exponential_mechanism_probabilities(utilities, self.scale)
        if self.noise == "discrete_laplace":
            return discrete_noisy_max_probabilities(utilities, self.scale)
        return permute_and_flip_probabilities(utilities, self.scale)


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
