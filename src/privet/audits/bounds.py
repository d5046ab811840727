"""Exact binomial confidence bounds and the epsilon lower bounds built from them.

Every empirical DP test in privet ends in two event frequencies, ``k_hi / n_hi``
on the dataset where the event is likely and ``k_lo / n_lo`` on its neighbour.
If the mechanism is ``(epsilon, delta)``-DP then ``p_hi <= e^epsilon p_lo + delta``
for the true probabilities, hence ``epsilon >= ln((p_hi - delta) / p_lo)``.
Replacing ``p_hi`` by a lower and ``p_lo`` by an upper Clopper–Pearson bound,
each at one-sided level ``1 - alpha / 2`` (Bonferroni), gives a lower bound that
holds with probability at least ``1 - alpha`` over the trials.

References
----------
.. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4), 1934.
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of
   differential privacy", CCS 2018.
.. [3] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-box
   discovery of differential privacy violations using classifiers", IEEE S&P 2021.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from privet.errors import InvalidParameterError

__all__ = [
    "Interval",
    "check_confidence",
    "check_delta",
    "check_real",
    "clopper_pearson",
    "epsilon_lower_from_counts",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu_estimate",
    "log_ratio_estimate",
    "plan_trials",
    "projected_epsilon_lower",
]

Alternative = Literal["two-sided", "lower", "upper"]


class Interval(NamedTuple):
    """A confidence interval ``[lower, upper]`` (floats or arrays of them)."""

    lower: float | NDArray[np.float64]
    upper: float | NDArray[np.float64]


def check_real(
    value: Any,
    name: str,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
    closed: str = "neither",
    example: str = "",
) -> float:
    """Validate a real number in an interval and return it as float.

    ``closed`` is ``"neither"``, ``"left"``, ``"right"`` or ``"both"``. NaN,
    booleans and anything ``float()`` refuses are refused with the interval in
    the message (``example`` is appended to it, e.g. ``", e.g. 0.95"``).
    """
    try:  # text is not a number here, even when float() would parse it ("1")
        v = math.nan if isinstance(value, bool | str | bytes) else float(value)
    except (TypeError, ValueError, OverflowError):
        v = math.nan
    left, right = closed in ("left", "both"), closed in ("right", "both")
    above = v >= lower if left else v > lower
    below = v <= upper if right else v < upper
    if not (above and below):  # also False for NaN
        interval = f"{'[' if left else '('}{lower:g}, {upper:g}{']' if right else ')'}"
        raise InvalidParameterError(
            f"The '{name}' parameter must be a float in {interval}{example}; got {value!r}."
        )
    return v


def check_confidence(confidence: float, name: str = "confidence") -> float:
    """Validate a confidence level in the open interval (0, 1) and return it as float."""
    return check_real(confidence, name, lower=0.0, upper=1.0, example=", e.g. 0.95 for 95%")


def check_delta(delta: float, name: str = "delta") -> float:
    """Validate a delta in [0, 1) and return it as float."""
    return check_real(delta, name, lower=0.0, upper=1.0, closed="left", example=" (0: pure DP)")


def _as_counts(k: ArrayLike, n: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        k_arr = np.asarray(k, dtype=np.float64)
        n_arr = np.asarray(n, dtype=np.float64)
        np.broadcast_shapes(k_arr.shape, n_arr.shape)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"Counts k and n must be numbers (or arrays of one shape); got k={k!r}, n={n!r}."
        ) from None
    if np.any(~np.isfinite(k_arr)) or np.any(~np.isfinite(n_arr)):
        raise InvalidParameterError("Counts k and n must be finite numbers; got NaN or infinity.")
    if np.any(n_arr < 1):
        raise InvalidParameterError(
            f"The number of trials n must be at least 1; got {n!r}. Run the mechanism at least once."
        )
    if np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise InvalidParameterError(f"The count k must satisfy 0 <= k <= n; got k={k!r}, n={n!r}.")
    return k_arr, n_arr


def _lower(k: NDArray[np.float64], n: NDArray[np.float64], level: float) -> NDArray[np.float64]:
    # One-sided lower bound at confidence `level`: the alpha-quantile of Beta(k, n - k + 1).
    safe_k = np.where(k > 0, k, 1.0)
    value = stats.beta.ppf(1.0 - level, safe_k, n - safe_k + 1.0)
    return np.where(k > 0, value, 0.0)


def _upper(k: NDArray[np.float64], n: NDArray[np.float64], level: float) -> NDArray[np.float64]:
    # One-sided upper bound at confidence `level`: the level-quantile of Beta(k + 1, n - k).
    safe_k = np.where(k < n, k, n - 1.0)
    value = stats.beta.ppf(level, safe_k + 1.0, n - safe_k)
    return np.where(k < n, value, 1.0)


def _unwrap(x: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(x) if np.ndim(x) == 0 else x


def clopper_pearson(
    k: ArrayLike,
    n: ArrayLike,
    *,
    confidence: float,
    alternative: Alternative = "two-sided",
) -> Interval:
    """Clopper–Pearson (exact) confidence interval for a binomial proportion.

    Parameters
    ----------
    k : int or array_like
        Number of successes. Fractional values are accepted (they interpolate the
        beta quantiles) for power calculations; confidence statements need integers.
    n : int or array_like
        Number of trials, ``n >= 1``.
    confidence : float
        Confidence level in (0, 1), e.g. 0.95.
    alternative : {"two-sided", "lower", "upper"}, default="two-sided"
        ``"two-sided"`` puts ``(1 - confidence) / 2`` in each tail;
        ``"lower"`` gives ``[lower, 1]`` with ``P(p >= lower) >= confidence``;
        ``"upper"`` gives ``[0, upper]`` with ``P(p <= upper) >= confidence``.

    Returns
    -------
    Interval
        ``(lower, upper)``, floats for scalar input, arrays otherwise.

    Notes
    -----
    The lower limit is the ``alpha`` quantile of ``Beta(k, n - k + 1)`` (0 when
    ``k = 0``) and the upper limit the ``1 - alpha`` quantile of
    ``Beta(k + 1, n - k)`` (1 when ``k = n``) [1]_. Coverage is at least the
    nominal level for every true proportion.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, Biometrika 26(4):404-413, 1934.

    Examples
    --------
    >>> lo, hi = clopper_pearson(5, 10, confidence=0.95)
    >>> round(lo, 4), round(hi, 4)
    (0.1871, 0.8129)
    """
    confidence = check_confidence(confidence)
    k_arr, n_arr = _as_counts(k, n)
    if alternative == "two-sided":
        level = 1.0 - (1.0 - confidence) / 2.0
        lower, upper = _lower(k_arr, n_arr, level), _upper(k_arr, n_arr, level)
    elif alternative == "lower":
        lower, upper = _lower(k_arr, n_arr, confidence), np.ones_like(k_arr)
    elif alternative == "upper":
        lower, upper = np.zeros_like(k_arr), _upper(k_arr, n_arr, confidence)
    else:
        raise InvalidParameterError(
            "The 'alternative' parameter must be 'two-sided', 'lower' or 'upper'; "
            f"got {alternative!r}."
        )
    return Interval(_unwrap(lower), _unwrap(upper))


def _log_ratio(
    p_hi_lower: NDArray[np.float64], p_lo_upper: NDArray[np.float64], delta: float
) -> NDArray[np.float64]:
    numerator = p_hi_lower - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(np.where(numerator > 0, numerator, 1.0)) - np.log(p_lo_upper)
    return np.where(numerator > 0, value, -np.inf)


def _bounds_pair(
    k_hi: ArrayLike, n_hi: ArrayLike, k_lo: ArrayLike, n_lo: ArrayLike, confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    level = 1.0 - (1.0 - confidence) / 2.0  # Bonferroni over the two proportions
    kh, nh = _as_counts(k_hi, n_hi)
    kl, nl = _as_counts(k_lo, n_lo)
    return _lower(kh, nh, level), _upper(kl, nl, level)


def epsilon_lower_from_counts(
    k_hi: int,
    n_hi: int,
    k_lo: int,
    n_lo: int,
    *,
    delta: float = 0.0,
    confidence: float,
) -> tuple[float, float, float]:
    """Epsilon lower bound from the counts of one event on two neighbouring inputs.

    Parameters
    ----------
    k_hi, n_hi : int
        The event occurred ``k_hi`` times in ``n_hi`` runs on the input where it is
        more likely.
    k_lo, n_lo : int
        The event occurred ``k_lo`` times in ``n_lo`` runs on the neighbour.
    delta : float, default=0
        The delta of the hypothesis ``M is (epsilon, delta)-DP``.
    confidence : float
        Overall confidence level; each proportion gets ``1 - (1 - confidence) / 2``.

    Returns
    -------
    epsilon_lower : float
        ``max(0, ln((p_hi_lower - delta) / p_lo_upper))``; with probability at least
        ``confidence`` the mechanism is not ``(e, delta)``-DP for any ``e`` below it.
    p_hi_lower, p_lo_upper : float
        The one-sided Clopper–Pearson bounds used.

    Notes
    -----
    The event must be chosen independently of these counts (on other trials);
    otherwise the confidence statement does not hold.
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    for name, v in (("k_hi", k_hi), ("n_hi", n_hi), ("k_lo", k_lo), ("n_lo", n_lo)):
        if isinstance(v, bool) or np.ndim(v) != 0:
            raise InvalidParameterError(f"'{name}' must be one count (a number); got {v!r}.")
    lo, up = _bounds_pair(k_hi, n_hi, k_lo, n_lo, confidence)
    value = float(_log_ratio(lo, up, delta))
    return max(0.0, value), float(lo), float(up)


def projected_epsilon_lower(
    p_hi: ArrayLike,
    p_lo: ArrayLike,
    n: int,
    *,
    delta: float = 0.0,
    confidence: float,
) -> NDArray[np.float64]:
    """Epsilon lower bound expected from ``n`` fresh trials per input (not clipped at 0).

    The bound of :func:`epsilon_lower_from_counts` evaluated at the counts
    ``p * n`` one would see if the frequencies were exactly ``p_hi`` and ``p_lo``.
    Used to rank candidate events on selection data: it trades the size of the
    log-ratio against the width of the intervals the estimation phase will pay.
    Returns ``-inf`` where ``p_hi`` is too small for ``delta``.
    """
    confidence = check_confidence(confidence)
    p_hi_arr = np.clip(np.asarray(p_hi, dtype=np.float64), 0.0, 1.0)
    p_lo_arr = np.clip(np.asarray(p_lo, dtype=np.float64), 0.0, 1.0)
    lo, up = _bounds_pair(p_hi_arr * n, n, p_lo_arr * n, n, confidence)
    return _log_ratio(lo, up, delta)


def _lower_bound_sd(p_hi: float, p_lo: float, n: float, delta: float) -> float:
    # Delta-method standard deviation of ln(p_hat_hi - delta) - ln(p_hat_lo).
    var_hi = p_hi * (1.0 - p_hi) / (n * (p_hi - delta) ** 2)
    var_lo = (1.0 - p_lo) / (n * p_lo)
    return math.sqrt(var_hi + var_lo)


def plan_trials(
    p_hi: float,
    p_lo: float,
    *,
    target_epsilon: float,
    delta: float = 0.0,
    confidence: float,
    power: float = 0.9,
    max_trials: int | None = None,
) -> int | None:
    """Smallest number of estimation trials per input that reaches a target bound.

    Finds the smallest ``n`` such that, if the event has probabilities ``p_hi``
    and ``p_lo``, the lower bound from ``n`` fresh trials per input exceeds
    ``target_epsilon`` with probability about ``power``. The bound's median is
    :func:`projected_epsilon_lower`; its spread is the delta-method standard
    deviation of ``ln(p_hat_hi - delta) - ln(p_hat_lo)``, so the condition is
    ``projected(n) - z_power * sd(n) >= target_epsilon``.

    Parameters
    ----------
    p_hi, p_lo : float
        Event probabilities on the two inputs (estimated on selection data).
    target_epsilon : float
        The bound the audit should be able to certify.
    delta : float, default=0
        As in :func:`epsilon_lower_from_counts`.
    confidence : float
        Confidence level of the final bound.
    power : float, default=0.9
        Probability, under the normal approximation, of reaching the target.
    max_trials : int, optional
        Give up (return None) if more than this would be needed.

    Returns
    -------
    int or None
        The number of trials, or None if the target is unreachable (the plug-in
        log-ratio ``ln((p_hi - delta) / p_lo)`` does not exceed it) or needs more
        than ``max_trials``.

    Notes
    -----
    The required ``n`` grows like ``c / (epsilon - target)^2``: certifying 97% of
    a true epsilon of 0.1 with an event of probability about 1/2 takes a few
    million trials per input, 1% of it about 100 times more.
    """
    confidence = check_confidence(confidence)
    power = check_confidence(power, "power")
    delta = check_delta(delta)
    if not (0.0 < p_lo < 1.0 and delta < p_hi < 1.0):
        return None
    if math.log((p_hi - delta) / p_lo) <= target_epsilon:
        return None
    z = float(stats.norm.ppf(power))

    def ok(n: int) -> bool:
        proj = float(projected_epsilon_lower(p_hi, p_lo, n, delta=delta, confidence=confidence))
        return proj - z * _lower_bound_sd(p_hi, p_lo, n, delta) >= target_epsilon

    hi = 16
    limit = max_trials if max_trials is not None else 10**15
    while not ok(hi):
        if hi >= limit:
            return None
        hi = min(hi * 2, limit)
    lo = hi // 2 if hi > 16 else 0  # ok(lo) is False (lo = 0 stands for "no trials")
    while hi - lo > max(1, hi // 1000):
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ------------------------------------------------------------ estimates (not bounds)


def log_ratio_estimate(
    k_hi: int, n_hi: int, k_lo: int, n_lo: int, *, delta: float = 0.0, confidence: float
) -> tuple[float, float, float]:
    """Plug-in ``ln((k_hi/n_hi - delta) / (k_lo/n_lo))`` and a two-sided interval.

    The interval puts the two-sided Clopper–Pearson interval of each
    proportion (Bonferroni: ``1 - (1 - confidence) / 2`` each) into the ratio:
    ``[ln((lo_hi - delta) / up_lo), ln((up_hi - delta) / lo_lo)]``. An estimate,
    not a bound: the event was chosen to make the ratio large.
    """
    confidence = check_confidence(confidence)
    level = 1.0 - (1.0 - confidence) / 2.0
    hi = clopper_pearson(k_hi, n_hi, confidence=level)
    lo = clopper_pearson(k_lo, n_lo, confidence=level)

    def ratio(a: float, b: float) -> float:
        if a - delta <= 0:
            return -math.inf
        return math.inf if b <= 0 else math.log((a - delta) / b)

    point = ratio(k_hi / n_hi, k_lo / n_lo)
    return point, ratio(float(hi.lower), float(lo.upper)), ratio(float(hi.upper), float(lo.lower))


def gdp_delta(epsilon: float, mu: float) -> float:
    """delta(epsilon) of mu-Gaussian DP (Dong, Roth & Su 2022, Cor. 2.13)."""
    if mu <= 0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    return float(
        stats.norm.cdf(-epsilon / mu + mu / 2)
        - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
    )


def gdp_epsilon(delta: float, mu: float) -> float:
    """The smallest epsilon with ``gdp_delta(epsilon, mu) <= delta`` (``inf`` for delta = 0)."""
    if mu <= 0:
        return 0.0
    if delta <= 0 or math.isinf(mu):
        return math.inf
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
        if hi > 1e6:  # pragma: no cover - mu astronomically large
            return math.inf
    from scipy import optimize

    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-10))


def gdp_mu_estimate(
    k1: int, n1: int, k0: int, n0: int, *, confidence: float
) -> tuple[float, float, float]:
    """mu of Gaussian DP from one threshold's rates, with a two-sided interval.

    Under mu-GDP a threshold test has ``TPR = Phi(Phi^-1(FPR) + mu)``, so
    ``mu = Phi^-1(k1/n1) - Phi^-1(k0/n0)`` (Nasr et al. 2023, Sec. 4: the
    Gaussian fit of the trade-off curve); the interval combines the two-sided
    Clopper–Pearson intervals of the rates. It assumes the Gaussian shape of
    the trade-off curve: an estimate, not a bound.
    """
    confidence = check_confidence(confidence)
    level = 1.0 - (1.0 - confidence) / 2.0
    c1 = clopper_pearson(k1, n1, confidence=level)
    c0 = clopper_pearson(k0, n0, confidence=level)
    q = stats.norm.ppf
    clip = 0.5 / max(n0, n1)
    p1 = min(max(k1 / n1, clip), 1 - clip)
    p0 = min(max(k0 / n0, clip), 1 - clip)
    return (
        float(q(p1) - q(p0)),
        float(q(c1.lower) - q(c0.upper)),
        float(q(c1.upper) - q(c0.lower)),
    )
