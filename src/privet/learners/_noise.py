"""The two noisy steps of the ID3 family, charged before they release.

Thin wrappers the learners call; the noise comes from OpenDP's samplers.
"""

from __future__ import annotations

import functools

import numpy as np

from privet.ledger import Exponential, Laplace, NeighbouringRelation, Scope


@functools.lru_cache(maxsize=256)
def _opendp_noisy_max(scale: float):  # type: ignore[no-untyped-def]
    import opendp.prelude as dp

    dp.enable_features("contrib")
    # Gumbel noise (zCDP measure in OpenDP): argmax(u + Gumbel(scale)) is exactly
    # the exponential mechanism with probabilities proportional to exp(u / scale).
    return dp.m.make_noisy_max(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.linf_distance(T=float),
        dp.zero_concentrated_divergence(),
        scale=scale,
    )


@functools.lru_cache(maxsize=256)
def _opendp_discrete_laplace(scale: float):  # type: ignore[no-untyped-def]
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=scale
    )


def exponential_select(
    scope: Scope,
    utilities: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float = 1.0,
    caller: str = "",
    step: str = "",
) -> int:
    """Charge then run the exponential mechanism: P(i) ∝ exp(eps u_i / (2 Δ))."""
    scope.charge(
        Exponential(epsilon=epsilon, sensitivity=sensitivity),
        mechanism="exponential",
        sensitivity=sensitivity,
        caller=caller,
        step=step,
    )
    m = _opendp_noisy_max(2.0 * sensitivity / epsilon)
    return int(m([float(u) for u in utilities]))


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
    down, another up).
    """
    relation = scope.ledger.relation
    sens = 1.0 if relation is NeighbouringRelation.ADD_REMOVE else 2.0
    scale = sens / epsilon
    scope.charge(
        Laplace(scale=scale, sensitivity=sens),
        mechanism="discrete laplace",
        sensitivity=sens,
        caller=caller,
        step=step,
    )
    m = _opendp_discrete_laplace(scale)
    return np.asarray(m([int(c) for c in counts]), dtype=float)
