"""A small empirical DP check for test suites: one event, two neighbouring inputs.

If a mechanism M is (epsilon, delta)-DP then for neighbouring inputs a, b and
every event S, P[M(a) in S] <= e^epsilon P[M(b) in S] + delta, so

    epsilon >= ln((p_a - delta) / p_b).

With p_a replaced by its lower and p_b by its upper Clopper–Pearson bound, each
one-sided at level 1 - alpha/2 (Bonferroni over the two bounds), the result is a
lower bound on the mechanism's epsilon that holds with probability >= 1 - alpha.
The event (a threshold or equality event on a scalar statistic of the output)
and the direction (a/b or b/a) are chosen on one half of the samples and
evaluated on the other (Ding et al. 2018; Bichsel et al. 2021).

The Clopper–Pearson arithmetic is :mod:`privet.audits.bounds`' (the one place
privet computes it); this module only picks the event. The fuller audits
(learners, event families, reports) are in :mod:`privet.audits`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from privet.audits.bounds import clopper_pearson, epsilon_lower_from_counts
from privet.errors import InvalidParameterError

__all__ = ["DPCheck", "check_dp"]


def _bounds(
    k_num: NDArray[np.int64],
    n_num: int,
    k_den: NDArray[np.int64],
    n_den: int,
    delta: float,
    level: float,
) -> NDArray[np.float64]:
    """ln((lower(p_num) - delta) / upper(p_den)) for many events at once (-inf when void)."""
    lo = np.asarray(clopper_pearson(k_num, n_num, confidence=level, alternative="lower").lower)
    hi = np.asarray(clopper_pearson(k_den, n_den, confidence=level, alternative="upper").upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log((lo - delta) / hi)
    return np.where((lo > delta) & (hi > 0), out, -np.inf)


@dataclass(frozen=True)
class DPCheck:
    """Outcome of :func:`check_dp`: ``epsilon_lower`` holds with probability >= ``confidence``."""

    epsilon_lower: float
    confidence: float
    event: str
    n: int

    def consistent_with(self, epsilon: float) -> bool:
        """False when the samples prove the mechanism is not epsilon-DP (at the confidence)."""
        return self.epsilon_lower <= epsilon * (1 + 1e-9)


def _events(x: NDArray[np.float64], discrete: bool) -> list[tuple[str, float]]:
    cands = np.unique(x) if discrete else np.unique(np.quantile(x, np.linspace(0.005, 0.995, 199)))
    kinds = ("==", ">=", "<=") if discrete else (">", "<")
    return [(kind, float(c)) for c in cands for kind in kinds]


def _hits(x: NDArray[np.float64], kind: str, c: float) -> int:
    if kind == "==":
        return int(np.sum(x == c))
    if kind in (">=", ">"):
        return int(np.sum(x >= c)) if kind == ">=" else int(np.sum(x > c))
    return int(np.sum(x <= c)) if kind == "<=" else int(np.sum(x < c))


def check_dp(
    sample_a: Callable[[int], NDArray[np.float64]],
    sample_b: Callable[[int], NDArray[np.float64]],
    *,
    n: int,
    confidence: float = 0.9999,
    delta: float = 0.0,
    discrete: bool | None = None,
) -> DPCheck:
    """Lower-bound epsilon from ``n`` outputs on each of two neighbouring inputs.

    ``sample_a(m)`` returns m independent outputs (a scalar statistic each) of
    the mechanism on input a; likewise ``sample_b``. The returned
    ``epsilon_lower`` is a valid lower bound with probability >= ``confidence``.
    """
    if n < 20:
        raise InvalidParameterError(f"check_dp needs n >= 20 samples per input; got {n}.")
    xa = np.asarray(sample_a(n), dtype=float).ravel()
    xb = np.asarray(sample_b(n), dtype=float).ravel()
    if discrete is None:
        discrete = bool(np.all(xa == np.round(xa)) and np.all(xb == np.round(xb)))
    half = n // 2
    sel_a, ev_a, sel_b, ev_b = xa[:half], xa[half:], xb[:half], xb[half:]
    level = 1 - (1 - confidence) / 2  # two bounds, one selected direction
    events = _events(np.concatenate([sel_a, sel_b]), discrete)
    ka = np.array([_hits(sel_a, kind, c) for kind, c in events])
    kb = np.array([_hits(sel_b, kind, c) for kind, c in events])
    # Choose the event and direction whose bound, computed on the selection half
    # at the evaluation's own level, is largest: a rare tail event whose ratio
    # won by chance then loses to a central one with the same true ratio.
    fwd = _bounds(ka, sel_a.size, kb, sel_b.size, delta, level)
    bwd = _bounds(kb, sel_b.size, ka, sel_a.size, delta, level)
    scores = np.concatenate([fwd, bwd])
    i = int(np.argmax(scores))
    kind, c = events[i % len(events)]
    forward = i < len(events)
    ka, kb = _hits(ev_a, kind, c), _hits(ev_b, kind, c)
    m_a, m_b = ev_a.size, ev_b.size
    counts = (ka, m_a, kb, m_b) if forward else (kb, m_b, ka, m_a)
    eps, _, _ = epsilon_lower_from_counts(*counts, delta=delta, confidence=confidence)
    side = "a/b" if forward else "b/a"
    return DPCheck(eps, confidence, f"x {kind} {c:.6g} ({side})", n)
