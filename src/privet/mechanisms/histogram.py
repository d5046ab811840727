"""Noisy histograms and the noisy majority class of each row (seeds 000 and 003).

Part of :mod:`privet.mechanisms.central`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import ADD_REMOVE, Claim, Entry, Guarantee, NeighbouringRelation
from privet.mechanisms import _opendp, recorder
from privet.mechanisms import _validate as v
from privet.mechanisms.additive import (
    DiscreteLaplaceMechanism,
    LaplaceMechanism,
    calibrate_laplace_scale,
)
from privet.mechanisms.base import Mechanism
from privet.mechanisms.laws import AdditiveLaw, Law

__all__ = ["NoisyHistogram", "make_noisy_histogram"]


def _relation_factor(relation: NeighbouringRelation) -> int:
    return 1 if relation is ADD_REMOVE else 2


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

    def law(self) -> Law:
        return AdditiveLaw("laplace", self.scale, discrete=self.discrete)

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

    def _sample_many(self, arrs: list[NDArray[Any]]) -> list[Any]:
        # The noise is independent per cell: one draw over all cells is the same
        # distribution as one draw per array, at a fraction of the calls.
        flat = np.concatenate([a.ravel() for a in arrs])
        noisy = self._sample(flat)
        cuts = np.cumsum([a.size for a in arrs])[:-1]
        return [part.reshape(a.shape) for part, a in zip(np.split(noisy, cuts), arrs, strict=True)]

    def _classes(self, counts: Any) -> NDArray[Any]:
        arr = self._validate_input(counts)
        if arr.shape[-1] == 0:
            raise InvalidParameterError("NoisyHistogram.argmax needs at least one class.")
        return arr

    def _noisy_argmax(self, arr: NDArray[Any]) -> NDArray[np.int64]:
        # the recorder sees the noisy counts (the ledger's entry is the histogram's)
        noisy = recorder.release(
            self.law(), arr, lambda: self._sample(arr), label=f"{self.mechanism}[argmax]"
        )
        noisy = np.asarray(noisy).astype(float)
        jitter = recorder.privacy_rng().random(noisy.shape) * 0.5  # only reorders exact ties
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
            recorded=False,
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
