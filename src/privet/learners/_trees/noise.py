"""The two noisy steps of the ID3 family, drawn from :mod:`privet.mechanisms`.

Each helper builds the mechanism for the scope's neighbouring relation; the
mechanism charges the scope before it draws (OpenDP samplers).
"""

from __future__ import annotations

import functools

import numpy as np

from privet.ledger import NeighbouringRelation, Scope
from privet.mechanisms import make_exponential, make_noisy_histogram


@functools.lru_cache(maxsize=512)
def _exponential(epsilon: float, sensitivity: float, relation: NeighbouringRelation):  # type: ignore[no-untyped-def]
    return make_exponential(epsilon, sensitivity=sensitivity, relation=relation)


@functools.lru_cache(maxsize=512)
def _histogram(epsilon: float, relation: NeighbouringRelation):  # type: ignore[no-untyped-def]
    return make_noisy_histogram(epsilon, relation=relation)


def exponential_select(
    scope: Scope,
    utilities: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float = 1.0,
    caller: str = "",
    step: str = "",
) -> int:
    """Charge then run the exponential mechanism: P(i) ∝ exp(eps u_i / (2 Δ)).

    Sampled as report-noisy-max with Gumbel noise (the same distribution).
    """
    mech = _exponential(float(epsilon), float(sensitivity), scope.ledger.relation)
    return int(mech(np.asarray(utilities, dtype=float), scope=scope, caller=caller, step=step))


def noisy_counts(
    scope: Scope,
    counts: np.ndarray,
    *,
    epsilon: float,
    caller: str = "",
    step: str = "",
) -> np.ndarray:
    """Charge then add discrete Laplace noise to a histogram of class counts.

    L1 sensitivity 1 under add/remove and 2 under replace-one (one count goes
    down, another up); the histogram mechanism picks it from the relation.
    """
    mech = _histogram(float(epsilon), scope.ledger.relation)
    return np.asarray(
        mech(np.asarray(counts, dtype=np.int64), scope=scope, caller=caller, step=step),
        dtype=float,
    )


__all__ = ["exponential_select", "noisy_counts"]
