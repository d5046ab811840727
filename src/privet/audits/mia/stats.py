"""Statistics of attack results that :mod:`privet.audits.metrics` does not provide.

* :func:`auc_interval` — a confidence interval for the ROC AUC (DeLong et al.
  1988, with the midrank formulation of Sun and Xu 2014; Obuchowski's 1997
  clustered variant when scores come in dependent groups);
* :func:`compare_auc` — the paired DeLong test of two attacks on the same
  examples (e.g. LiRA online vs offline);
* :func:`implied_epsilon_estimate` — the point estimate ``ln((TPR - delta) /
  FPR)`` of the epsilon an operating point implies (metrics only gives the
  conservative Clopper–Pearson bound), and :class:`ImpliedEpsilon`, estimate
  and interval side by side;
* :func:`heldout_operating_point` — the threshold chosen on one part of the
  scores, the rates counted on the other, so that the implied epsilon is not
  inflated by choosing the threshold on the scores it is evaluated on.

The AUC intervals of the experiment driver treat each candidate as a cluster
(its scores against the different targets share the shadow statistics) but
treat candidates as independent. They are not quite: the candidates of one
target model share its training run. With a pool much larger than any leaf the
effect is small; statements meant as DP lower bounds should use independent
trials (:mod:`privet.audits.dptest`).

References
----------
.. [DeLong88] E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson, "Comparing the
   areas under two or more correlated receiver operating characteristic curves:
   a nonparametric approach", Biometrics 44(3), 1988.
.. [SunXu14] X. Sun, W. Xu, "Fast implementation of DeLong's algorithm for
   comparing the areas under correlated receiver operating characteristic
   curves", IEEE Signal Processing Letters 21(11), 2014.
.. [Obuchowski97] N. A. Obuchowski, "Nonparametric analysis of clustered ROC
   curve data", Biometrics 53(2), 1997.
.. [Kairouz15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for
   differential privacy", ICML 2015.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from privet.audits.bounds import check_confidence, check_delta
from privet.audits.metrics import OperatingPoint, tpr_at_fpr
from privet.errors import InvalidParameterError

__all__ = [
    "AUCComparison",
    "AUCEstimate",
    "ImpliedEpsilon",
    "auc_interval",
    "compare_auc",
    "heldout_operating_point",
    "implied_epsilon_estimate",
]


def _check(membership: ArrayLike, scores: ArrayLike) -> tuple[NDArray, NDArray]:
    y = np.asarray(membership).astype(bool)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape:
        raise InvalidParameterError(
            f"'membership' and 'scores' must be 1-D of the same length; got {y.shape}, {s.shape}."
        )
    if y.all() or not y.any():
        raise InvalidParameterError("An AUC needs both members and non-members; got one class.")
    if not np.all(np.isfinite(s)):
        raise InvalidParameterError("'scores' contains NaN or infinite values.")
    return y, s


def _placements(y: NDArray[np.bool_], s: NDArray[np.float64]) -> tuple[float, NDArray]:
    """AUC and DeLong's placement values, in the order of ``s``.

    For a member: the share of non-members scored below it (V10); for a
    non-member: the share of members scored above it (V01); ties count 1/2.
    """
    m, n = int(y.sum()), int((~y).sum())
    r_all = stats.rankdata(s)  # midranks
    v = np.empty_like(s)
    v[y] = (r_all[y] - stats.rankdata(s[y])) / n
    v[~y] = 1.0 - (r_all[~y] - stats.rankdata(s[~y])) / m
    return float(v[y].mean()), v


def _variance(
    y: NDArray[np.bool_], v: NDArray[np.float64], auc: float, groups: ArrayLike | None
) -> float:
    """Variance of an AUC (or of a difference of AUCs) from its placement values.

    Without groups, DeLong's ``Var(V10) / m + Var(V01) / n``. With groups
    (clusters of correlated records, e.g. one candidate scored against several
    targets), Obuchowski's (1997) clustered estimator: with per-cluster sums
    ``X_i`` of V10, ``Y_i`` of V01, counts ``m_i``, ``n_i`` and ``I`` clusters,
    ``S10 = I / ((I-1) M) sum (X_i - m_i A)^2``, ``S01`` likewise,
    ``S11 = I / (I-1) sum (X_i - m_i A)(Y_i - n_i A)``, and
    ``Var = S10 / M + S01 / N + 2 S11 / (M N)``.
    """
    m, n = int(y.sum()), int((~y).sum())
    if groups is None:
        return _var(v[y]) / m + _var(v[~y]) / n
    g = np.asarray(groups)
    if g.shape != y.shape:
        raise InvalidParameterError(
            f"'groups' must have one entry per score; got shape {g.shape} for {y.shape}."
        )
    _, idx = np.unique(g, return_inverse=True)
    k = int(idx.max()) + 1
    if k < 2:
        return 0.0
    x = np.bincount(idx, weights=np.where(y, v, 0.0), minlength=k)
    yy = np.bincount(idx, weights=np.where(~y, v, 0.0), minlength=k)
    mi = np.bincount(idx, weights=y.astype(float), minlength=k)
    ni = np.bincount(idx, weights=(~y).astype(float), minlength=k)
    dx, dy = x - mi * auc, yy - ni * auc
    c = k / (k - 1)
    s10 = c * float(np.sum(dx**2)) / m
    s01 = c * float(np.sum(dy**2)) / n
    s11 = c * float(np.sum(dx * dy))
    return s10 / m + s01 / n + 2.0 * s11 / (m * n)


@dataclass(frozen=True, slots=True, kw_only=True)
class AUCEstimate:
    """ROC AUC with its DeLong standard error and a normal confidence interval."""

    auc: float
    std_error: float
    interval: tuple[float, float]
    confidence: float
    clustered: bool = False


def auc_interval(
    membership: ArrayLike,
    scores: ArrayLike,
    *,
    confidence: float,
    groups: ArrayLike | None = None,
) -> AUCEstimate:
    """ROC AUC with a two-sided DeLong interval at ``confidence``.

    ``Var(AUC) = Var(V10) / m + Var(V01) / n`` with the placement values of
    [DeLong88]_ computed from midranks [SunXu14]_ (ties count one half, as in
    the AUC itself); interval ``AUC ± z_{(1+confidence)/2} se``, clipped to
    [0, 1]. If every score is tied, the AUC is exactly 0.5 with zero variance.

    ``groups`` (one label per score) marks clusters of dependent scores — in
    :func:`~privet.audits.mia.membership_inference`, the same candidate scored
    against several targets shares its shadow statistics — and switches to
    Obuchowski's clustered variance [Obuchowski97]_, which is wider when scores
    of a cluster are positively correlated.
    """
    confidence = check_confidence(confidence)
    y, s = _check(membership, scores)
    auc, v = _placements(y, s)
    se = math.sqrt(max(_variance(y, v, auc, groups), 0.0))
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    return AUCEstimate(
        auc=auc,
        std_error=se,
        interval=(max(0.0, auc - z * se), min(1.0, auc + z * se)),
        confidence=confidence,
        clustered=groups is not None,
    )


def _var(x: NDArray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class AUCComparison:
    """Paired comparison of two attacks' AUCs on the same examples (``a - b``)."""

    auc_a: float
    auc_b: float
    difference: float
    std_error: float
    interval: tuple[float, float]
    p_value: float
    confidence: float


def compare_auc(
    membership: ArrayLike,
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    confidence: float,
    groups: ArrayLike | None = None,
) -> AUCComparison:
    """Paired DeLong test of ``AUC_a - AUC_b`` [DeLong88]_.

    The two score vectors must belong to the same examples. The placement
    values are linear in the AUC, so the variance of the difference is that of
    the differences of the two attacks' placement values (which carries their
    covariance); ``groups`` as in :func:`auc_interval`. ``p_value`` is two-sided
    for ``AUC_a = AUC_b``.
    """
    confidence = check_confidence(confidence)
    y, sa = _check(membership, scores_a)
    _, sb = _check(y, scores_b)
    auc_a, va = _placements(y, sa)
    auc_b, vb = _placements(y, sb)
    diff = auc_a - auc_b
    se = math.sqrt(max(_variance(y, va - vb, diff, groups), 0.0))
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    if se > 0:
        p = float(2.0 * stats.norm.sf(abs(diff) / se))
    else:
        p = 1.0 if diff == 0 else 0.0
    return AUCComparison(
        auc_a=auc_a,
        auc_b=auc_b,
        difference=diff,
        std_error=se,
        interval=(diff - z * se, diff + z * se),
        p_value=p,
        confidence=confidence,
    )


def implied_epsilon_estimate(tpr: float, fpr: float, *, delta: float = 0.0) -> float:
    """Point estimate of the epsilon an operating point ``(TPR, FPR)`` implies.

    An ``(epsilon, delta)``-DP training algorithm bounds every membership test
    by ``TPR <= e^epsilon FPR + delta`` and ``1 - FPR <= e^epsilon (1 - TPR) +
    delta`` [Kairouz15]_, so

        epsilon >= max( ln((TPR - delta) / FPR), ln((1 - FPR - delta) / (1 - TPR)) ),

    floored at 0. A zero denominator with a positive numerator gives ``inf``:
    with no false positive at all the point estimate is unbounded, and only the
    confidence bound (:class:`ImpliedEpsilon`) is meaningful. Non-decreasing in
    ``tpr``, non-increasing in ``fpr`` and in ``delta``.
    """
    delta = check_delta(delta)
    for name, v in (("tpr", tpr), ("fpr", fpr)):
        if not 0.0 <= float(v) <= 1.0:
            raise InvalidParameterError(f"'{name}' must be a rate in [0, 1]; got {v!r}.")

    def term(num: float, den: float) -> float:
        if num <= 0.0:
            return 0.0
        if den <= 0.0:
            return math.inf
        return math.log(num / den)

    forward = term(float(tpr) - delta, float(fpr))
    backward = term(1.0 - float(fpr) - delta, 1.0 - float(tpr))
    return max(0.0, forward, backward)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImpliedEpsilon:
    """The epsilon implied by the TPR at one target FPR, with its uncertainty.

    Attributes
    ----------
    target_fpr : float
    tpr, fpr : float
        The operating point.
    estimate : float
        :func:`implied_epsilon_estimate` of the empirical rates (``inf`` when
        there is no false positive).
    lower : float
        Conservative lower confidence bound at ``confidence``:
        :func:`privet.audits.metrics.implied_epsilon` (Clopper–Pearson lower TPR
        and upper FPR, Bonferroni over the two directions).
    upper : float
        The estimate at the other ends of the two-sided Clopper–Pearson
        intervals (upper TPR, lower FPR); ``inf`` when the FPR interval reaches 0.
    confidence, delta : float
    """

    target_fpr: float
    tpr: float
    fpr: float
    estimate: float
    lower: float
    upper: float
    confidence: float
    delta: float

    @classmethod
    def from_operating_point(cls, op: OperatingPoint, *, delta: float = 0.0) -> ImpliedEpsilon:
        _, hi_tpr = op.tpr_interval
        lo_fpr, _ = op.fpr_interval
        return cls(
            target_fpr=op.target_fpr,
            tpr=op.tpr,
            fpr=op.fpr,
            estimate=implied_epsilon_estimate(op.tpr, op.fpr, delta=delta),
            lower=op.epsilon_lower,
            upper=implied_epsilon_estimate(min(hi_tpr, 1.0), max(lo_fpr, 0.0), delta=delta),
            confidence=op.confidence,
            delta=delta,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def heldout_operating_point(
    select_membership: ArrayLike,
    select_scores: ArrayLike,
    membership: ArrayLike,
    scores: ArrayLike,
    target_fpr: float,
    *,
    confidence: float,
    delta: float = 0.0,
) -> OperatingPoint:
    """Operating point whose threshold is chosen on other scores than it is counted on.

    The threshold is that of :func:`privet.audits.metrics.tpr_at_fpr` on the
    *selection* part (best TPR with empirical FPR at most ``target_fpr``); the
    counts, Clopper–Pearson intervals and implied epsilon come from the
    *estimation* part (``membership``, ``scores``), whose FPR may then exceed the
    target. This removes the optimism of choosing the threshold on the same
    scores (see the Notes of :func:`privet.audits.metrics.implied_epsilon`).
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    sel = tpr_at_fpr(select_membership, select_scores, target_fpr, confidence=confidence)
    y = np.asarray(membership).astype(bool)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape or y.all() or not y.any():
        raise InvalidParameterError(
            "The estimation part needs 1-D membership and scores of equal length with both "
            "members and non-members."
        )
    hit = s >= sel.threshold
    tp, fp = int(np.sum(hit & y)), int(np.sum(hit & ~y))
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    return OperatingPoint.from_counts(
        target_fpr, sel.threshold, tp, n_pos, fp, n_neg, confidence=confidence, delta=delta
    )
