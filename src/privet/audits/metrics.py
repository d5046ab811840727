"""Metrics of membership-inference attacks, with exact confidence intervals.

An attack gives each candidate record a score (higher: "more likely a member").
Its power is summarised by the ROC curve: ROC AUC, the best balanced accuracy,
the membership advantage ``max(TPR - FPR)`` [1]_, and — the numbers that matter
for privacy, since an attack that is right about a few records at very low
false-positive rate is a real breach — the TPR at FPR 0.1% and 1% [2]_.

A test of ``(epsilon, delta)``-DP bounds every such operating point:
``TPR <= e^epsilon FPR + delta`` and ``1 - FPR <= e^epsilon (1 - TPR) + delta``
[3]_, so an operating point implies ``epsilon >= ln((TPR - delta) / FPR)``; with a
Clopper–Pearson lower bound on the TPR and an upper bound on the FPR this is a
conservative statement.

References
----------
.. [1] S. Yeom, I. Giacomelli, M. Fredrikson, S. Jha, "Privacy risk in machine
   learning: Analyzing the connection to overfitting", CSF 2018.
.. [2] N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr, "Membership
   inference attacks from first principles", IEEE S&P 2022.
.. [3] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for
   differential privacy", ICML 2015.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn import metrics as skm

from privet.audits.bounds import (
    check_confidence,
    check_delta,
    check_real,
    clopper_pearson,
    epsilon_lower_from_counts,
)
from privet.errors import InvalidParameterError

__all__ = [
    "MIAMetrics",
    "OperatingPoint",
    "balanced_accuracy",
    "implied_epsilon",
    "membership_advantage",
    "mia_metrics",
    "roc_auc",
    "roc_curve",
    "tpr_at_fpr",
]


def _check(membership: ArrayLike, scores: ArrayLike) -> tuple[NDArray[np.bool_], NDArray[Any]]:
    y = np.asarray(membership)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.ndim != 1 or len(y) != len(s):
        raise InvalidParameterError(
            "'membership' and 'scores' must be 1-D arrays of the same length; got shapes "
            f"{y.shape} and {s.shape}."
        )
    if not np.isin(y, [0, 1]).all():
        raise InvalidParameterError(
            "'membership' must hold 0/1 or booleans (1 = member); got other values."
        )
    y = y.astype(bool)
    if y.all() or not y.any():
        raise InvalidParameterError(
            "Both members and non-members are needed to evaluate an attack; got only one class."
        )
    if not np.all(np.isfinite(s)):
        raise InvalidParameterError("'scores' contains NaN or infinite values; clip them first.")
    return y, s


def check_fpr_targets(fpr_targets: Any) -> tuple[float, ...]:
    """A non-empty sequence of false positive rates in (0, 1), as a tuple of floats."""
    if isinstance(fpr_targets, str) or not isinstance(fpr_targets, Sequence | np.ndarray):
        raise InvalidParameterError(
            f"'fpr_targets' must be a sequence of rates in (0, 1), e.g. (0.001, 0.01); got "
            f"{fpr_targets!r}."
        )
    out = tuple(check_real(f, "fpr_targets", lower=0.0, upper=1.0) for f in fpr_targets)
    if not out:
        raise InvalidParameterError("'fpr_targets' is empty; give rates such as (0.001, 0.01).")
    return out


def roc_curve(
    membership: ArrayLike, scores: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """ROC curve ``(fpr, tpr, thresholds)`` of the rule "member iff score >= threshold".

    All thresholds are kept (none dropped), so the curve is exact at low FPR;
    plot it on log-log axes to see the low-FPR regime.
    """
    y, s = _check(membership, scores)
    fpr, tpr, thr = skm.roc_curve(y, s, drop_intermediate=False)
    return fpr, tpr, thr


def roc_auc(membership: ArrayLike, scores: ArrayLike) -> float:
    """Area under the ROC curve (0.5 for a guessing attack, ties count half)."""
    y, s = _check(membership, scores)
    return float(skm.roc_auc_score(y, s))


def membership_advantage(membership: ArrayLike, scores: ArrayLike) -> float:
    """``max over thresholds of TPR - FPR`` (Yeom et al. 2018), in [0, 1]."""
    fpr, tpr, _ = roc_curve(membership, scores)
    return float(max(0.0, np.max(tpr - fpr)))


def balanced_accuracy(membership: ArrayLike, predictions_or_scores: ArrayLike) -> float:
    """Balanced accuracy ``(TPR + TNR) / 2``.

    With 0/1 (boolean) predictions, that of the predictions; with real-valued
    scores, the best over thresholds, ``(1 + advantage) / 2``.
    """
    y, p = _check(membership, predictions_or_scores)
    if np.isin(p, [0.0, 1.0]).all():
        tpr = float(np.mean(p[y] == 1))
        tnr = float(np.mean(p[~y] == 0))
        return 0.5 * (tpr + tnr)
    return 0.5 * (1.0 + membership_advantage(y, p))


def implied_epsilon(
    tp: int,
    n_members: int,
    fp: int,
    n_nonmembers: int,
    *,
    delta: float = 0.0,
    confidence: float,
) -> float:
    """Epsilon lower bound implied by one operating point of an attack.

    ``max(ln((TPR_lo - delta) / FPR_hi), ln((TNR_lo - delta) / FNR_hi))``, with
    Clopper–Pearson bounds; each of the two directions is stated at
    ``1 - (1 - confidence) / 2`` and splits it over its two proportions
    (Bonferroni), so the maximum holds with probability ``confidence``.

    The statement is about the trials that produced the counts: it is a DP lower
    bound only if each member/non-member score is an independent run on
    neighbouring inputs (e.g. one canary per training run) and if the threshold
    was not chosen on these same scores.
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    each = 1.0 - (1.0 - confidence) / 2.0
    forward, _, _ = epsilon_lower_from_counts(
        tp, n_members, fp, n_nonmembers, delta=delta, confidence=each
    )
    backward, _, _ = epsilon_lower_from_counts(
        n_nonmembers - fp, n_nonmembers, n_members - tp, n_members, delta=delta, confidence=each
    )
    return max(forward, backward)


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatingPoint:
    """One threshold of an attack, with exact confidence intervals.

    Attributes
    ----------
    target_fpr : float
        The FPR the threshold was chosen for (empirical FPR <= target).
    threshold : float
        Members are predicted for ``score >= threshold`` (``inf``: none).
    tp, n_members, fp, n_nonmembers : int
        Counts behind the rates.
    tpr, fpr : float
        Empirical rates.
    tpr_interval, fpr_interval : tuple of float
        Two-sided Clopper–Pearson intervals at ``confidence``.
    epsilon_lower : float
        :func:`implied_epsilon` at ``confidence`` (optimistic if the threshold
        was chosen on the same scores, as here).
    confidence : float
        Confidence level of the intervals and of ``epsilon_lower``.
    """

    target_fpr: float
    threshold: float
    tp: int
    n_members: int
    fp: int
    n_nonmembers: int
    tpr: float
    fpr: float
    tpr_interval: tuple[float, float]
    fpr_interval: tuple[float, float]
    epsilon_lower: float
    confidence: float

    @classmethod
    def from_counts(
        cls,
        target_fpr: float,
        threshold: float,
        tp: int,
        n_members: int,
        fp: int,
        n_nonmembers: int,
        *,
        confidence: float,
        delta: float = 0.0,
    ) -> OperatingPoint:
        """The rates, their Clopper–Pearson intervals and the implied epsilon of the counts."""
        tpr_ci = clopper_pearson(tp, n_members, confidence=confidence)
        fpr_ci = clopper_pearson(fp, n_nonmembers, confidence=confidence)
        return cls(
            target_fpr=float(target_fpr),
            threshold=float(threshold),
            tp=tp,
            n_members=n_members,
            fp=fp,
            n_nonmembers=n_nonmembers,
            tpr=tp / n_members,
            fpr=fp / n_nonmembers,
            tpr_interval=(float(tpr_ci.lower), float(tpr_ci.upper)),
            fpr_interval=(float(fpr_ci.lower), float(fpr_ci.upper)),
            epsilon_lower=implied_epsilon(
                tp, n_members, fp, n_nonmembers, delta=delta, confidence=confidence
            ),
            confidence=confidence,
        )


def tpr_at_fpr(
    membership: ArrayLike,
    scores: ArrayLike,
    target_fpr: float,
    *,
    confidence: float,
    delta: float = 0.0,
) -> OperatingPoint:
    """TPR of the best threshold whose empirical FPR is at most ``target_fpr``.

    Parameters
    ----------
    membership : array_like of bool
        1 for members, 0 for non-members.
    scores : array_like of float
        Attack scores, higher for "member".
    target_fpr : float
        E.g. 0.001 or 0.01. With ``n`` non-members the finest FPR is ``1 / n``;
        below it only ``threshold = inf`` (TPR 0) qualifies.
    confidence : float
        Level of the Clopper–Pearson intervals and of the implied epsilon.
    delta : float, default=0
        Delta for the implied epsilon.

    Returns
    -------
    OperatingPoint
    """
    target_fpr = check_real(target_fpr, "target_fpr", lower=0.0, upper=1.0, closed="both")
    confidence = check_confidence(confidence)
    y, s = _check(membership, scores)
    fpr, tpr, thr = skm.roc_curve(y, s, drop_intermediate=False)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    ok = np.flatnonzero(fpr <= target_fpr + 1e-12)
    i = int(ok[np.argmax(tpr[ok])])
    tp = round(float(tpr[i]) * n_pos)
    fp = round(float(fpr[i]) * n_neg)
    return OperatingPoint.from_counts(
        target_fpr, float(thr[i]), tp, n_pos, fp, n_neg, confidence=confidence, delta=delta
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class MIAMetrics:
    """Summary of a membership-inference attack.

    Attributes
    ----------
    auc : float
        ROC AUC.
    balanced_accuracy : float
        Best balanced accuracy over thresholds.
    advantage : float
        Membership advantage ``max(TPR - FPR)``.
    operating_points : tuple of OperatingPoint
        TPR at each target FPR, with intervals and implied epsilon.
    n_members, n_nonmembers : int
        Sample sizes.
    confidence : float
        Level of the intervals.
    delta : float
        Delta used for the implied epsilons.
    """

    auc: float
    balanced_accuracy: float
    advantage: float
    operating_points: tuple[OperatingPoint, ...]
    n_members: int
    n_nonmembers: int
    confidence: float
    delta: float

    @property
    def epsilon_lower(self) -> float:
        """Largest implied epsilon over the operating points (optimistic, see Notes
        of :func:`implied_epsilon`)."""
        return max((p.epsilon_lower for p in self.operating_points), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly record."""
        return asdict(self)

    def __str__(self) -> str:
        lines = [
            f"MIA: AUC {self.auc:.4f}, balanced accuracy {self.balanced_accuracy:.4f}, "
            f"advantage {self.advantage:.4f} ({self.n_members} members, "
            f"{self.n_nonmembers} non-members)"
        ]
        for p in self.operating_points:
            lo, hi = p.tpr_interval
            lines.append(
                f"  TPR at FPR {p.target_fpr:.2%}: {p.tpr:.4f} "
                f"[{lo:.4f}, {hi:.4f}] ({p.confidence:.0%} CI), implied epsilon >= "
                f"{p.epsilon_lower:.3g}"
            )
        return "\n".join(lines)


def mia_metrics(
    membership: ArrayLike,
    scores: ArrayLike,
    *,
    confidence: float,
    delta: float = 0.0,
    fpr_targets: Sequence[float] = (0.001, 0.01),
) -> MIAMetrics:
    """All attack metrics at once: AUC, balanced accuracy, advantage, TPR at low FPR.

    Parameters
    ----------
    membership : array_like of bool
        1 for members, 0 for non-members.
    scores : array_like of float
        Attack scores, higher for "member".
    confidence : float
        Level of the Clopper–Pearson intervals.
    delta : float, default=0
        Delta for the implied epsilons.
    fpr_targets : sequence of float, default=(0.001, 0.01)
        FPRs at which to report the TPR.

    Returns
    -------
    MIAMetrics
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    y, s = _check(membership, scores)
    adv = membership_advantage(y, s)
    return MIAMetrics(
        auc=roc_auc(y, s),
        balanced_accuracy=0.5 * (1.0 + adv),
        advantage=adv,
        operating_points=tuple(
            tpr_at_fpr(y, s, f, confidence=confidence, delta=delta)
            for f in check_fpr_targets(fpr_targets)
        ),
        n_members=int(y.sum()),
        n_nonmembers=int((~y).sum()),
        confidence=confidence,
        delta=delta,
    )
