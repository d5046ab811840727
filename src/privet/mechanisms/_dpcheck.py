"""A small empirical DP check: Clopper–Pearson bounds on one event, two neighbouring inputs.

If a mechanism M is (epsilon, delta)-DP then for neighbouring inputs a, b and
every event S, P[M(a) in S] <= e^epsilon P[M(b) in S] + delta, so

    epsilon >= ln((p_a - delta) / p_b).

With p_a replaced by its lower and p_b by its upper Clopper–Pearson bound
(Clopper & Pearson 1934), each one-sided at level 1 - alpha/2 (Bonferroni over
the two bounds), the result is a lower bound on the mechanism's epsilon that
holds with probability >= 1 - alpha. The event (a threshold or equality event
on a scalar statistic of the output) and the direction (a/b or b/a) are chosen
on one half of the samples and evaluated on the other, so the selection does
not bias the bound (Ding et al. 2018; Bichsel et al. 2021 for the general method).

This is the mechanisms package's own minimal helper for its tests; the fuller
audit module lives in :mod:`privet.audits`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from privet.errors import InvalidParameterError

__all__ = ["DPCheck", "check_dp", "clopper_pearson", "epsilon_lower_bound"]


def clopper_pearson(k: int, n: int, level: float) -> tuple[float, float]:
    """One-sided exact binomial bounds (lower, upper), each holding with probability ``level``."""
    if not 0 < level < 1 or not 0 <= k <= n or n <= 0:
        raise InvalidParameterError(
            f"clopper_pearson needs 0 <= k <= n, n > 0, 0 < level < 1; got {k}, {n}, {level}."
        )
    a = 1 - level
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def epsilon_lower_bound(
    k_a: int, n_a: int, k_b: int, n_b: int, *, delta: float = 0.0, level: float = 0.999
) -> float:
    """ln((lower(p_a) - delta) / upper(p_b)), or 0 when that is not positive."""
    lo, _ = clopper_pearson(k_a, n_a, level)
    _, hi = clopper_pearson(k_b, n_b, level)
    if lo <= delta or hi <= 0:
        return 0.0
    return max(0.0, math.log((lo - delta) / hi))


def _bounds(
    k_num: NDArray[np.int64],
    n_num: int,
    k_den: NDArray[np.int64],
    n_den: int,
    delta: float,
    level: float,
) -> NDArray[np.float64]:
    """:func:`epsilon_lower_bound` for many events at once (log ratio; -inf when void)."""
    a = 1 - level
    lo = np.where(k_num > 0, stats.beta.ppf(a, np.maximum(k_num, 1), n_num - k_num + 1), 0.0)
    hi = np.where(
        k_den < n_den, stats.beta.ppf(1 - a, k_den + 1, np.maximum(n_den - k_den, 1)), 1.0
    )
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
    eps = (
        epsilon_lower_bound(ka, m_a, kb, m_b, delta=delta, level=level)
        if forward
        else epsilon_lower_bound(kb, m_b, ka, m_a, delta=delta, level=level)
    )
    side = "a/b" if forward else "b/a"
    return DPCheck(eps, confidence, f"x {kind} {c:.6g} ({side})", n)
