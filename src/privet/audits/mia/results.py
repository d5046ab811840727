"""Results of a membership-inference experiment and their markdown tables.

:class:`AttackResult` (one attack's scores and metrics) and :class:`MIAResult`
(every attack on the same targets), as returned by
:func:`~privet.audits.mia.membership_inference`; :func:`markdown_table` lays
one or several results out side by side. Both :mod:`~privet.audits.mia.experiment`
and :mod:`~privet.audits.mia.report` import this module, never the reverse.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.audits.formatting import finite, format_epsilon
from privet.audits.metrics import MIAMetrics, OperatingPoint
from privet.audits.mia.signals import MembershipSignals
from privet.audits.mia.stats import AUCEstimate, ImpliedEpsilon
from privet.errors import InvalidParameterError

__all__ = [
    "FPR_TARGETS",
    "AttackResult",
    "MIAResult",
    "finite",
    "format_epsilon",
    "markdown_table",
]

FPR_TARGETS = (0.001, 0.01)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AttackResult:
    """One attack's scores and metrics, pooled over all (target, candidate) pairs.

    Attributes
    ----------
    attack : str
        Registry name (``"loss"``, ``"shokri"``, ``"lira_offline"``,
        ``"lira_online"``, ``"rmia"``, ``"rmia_online"``).
    title : str
        Human-readable name with its paper.
    scores : ndarray, shape (T * n,)
        Higher for "member"; row-major over (target, candidate).
    membership : ndarray of bool, shape (T * n,)
        Ground truth.
    groups : ndarray of int, shape (T * n,)
        Candidate index of each score: the clusters of the AUC interval (a
        candidate's scores against several targets share its shadow statistics).
    metrics : MIAMetrics
        AUC, balanced accuracy, advantage and the operating points at each
        target FPR (thresholds chosen on these scores: optimistic epsilons).
    auc : AUCEstimate
        AUC with its DeLong interval at ``confidence``, clustered by candidate
        (Obuchowski 1997).
    implied : tuple of ImpliedEpsilon
        Per target FPR: estimate, lower and upper epsilon.
    heldout : tuple of OperatingPoint
        Per target FPR: threshold chosen on half of the targets (or of the
        candidates when there is one target), counted on the other half.
    fpr, tpr : ndarray
        The ROC curve (every threshold).
    confidence : float
    info : dict
        Attack details (LiRA variance mode, RMIA's ``a`` and ``gamma``...).
    """

    attack: str
    title: str
    scores: NDArray[np.float64] = field(repr=False)
    membership: NDArray[np.bool_] = field(repr=False)
    groups: NDArray[np.intp] = field(repr=False)
    metrics: MIAMetrics
    auc: AUCEstimate
    implied: tuple[ImpliedEpsilon, ...]
    heldout: tuple[OperatingPoint, ...]
    fpr: NDArray[np.float64] = field(repr=False)
    tpr: NDArray[np.float64] = field(repr=False)
    confidence: float
    info: dict[str, Any] = field(default_factory=dict)

    def operating_point(self, target_fpr: float) -> OperatingPoint:
        """The (same-score) operating point at ``target_fpr``."""
        return _pick(self.metrics.operating_points, target_fpr)

    def implied_at(self, target_fpr: float) -> ImpliedEpsilon:
        """The implied epsilon at ``target_fpr``."""
        return _pick(self.implied, target_fpr)

    def heldout_at(self, target_fpr: float) -> OperatingPoint:
        """The held-out operating point at ``target_fpr``."""
        return _pick(self.heldout, target_fpr)

    def to_dict(self, *, include_scores: bool = False) -> dict[str, Any]:
        """JSON-friendly record (``inf`` as the string ``"inf"``)."""
        d: dict[str, Any] = {
            "attack": self.attack,
            "title": self.title,
            "metrics": self.metrics.to_dict(),
            "auc": {
                "auc": self.auc.auc,
                "std_error": self.auc.std_error,
                "interval": list(self.auc.interval),
                "confidence": self.auc.confidence,
                "clustered": self.auc.clustered,
            },
            "implied_epsilon": [e.to_dict() for e in self.implied],
            "heldout": [_op_dict(p) for p in self.heldout],
            "confidence": self.confidence,
            "info": self.info,
        }
        if include_scores:
            d["scores"] = self.scores.tolist()
            d["membership"] = self.membership.astype(int).tolist()
        return finite(d)


def _op_dict(p: OperatingPoint) -> dict[str, Any]:
    return asdict(p)


def _pick(items: Sequence[Any], target_fpr: float) -> Any:
    for it in items:
        if math.isclose(it.target_fpr, float(target_fpr), rel_tol=1e-9, abs_tol=1e-15):
            return it
    raise InvalidParameterError(
        f"No operating point at FPR {target_fpr!r}; available: "
        f"{[it.target_fpr for it in items]}. Pass fpr_targets=... to membership_inference."
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MIAResult:
    """Outcome of :func:`membership_inference`: every attack on the same targets.

    Attributes
    ----------
    attacks : tuple of AttackResult
        In the order requested; ``result["lira_online"]`` picks one.
    model : str
        Class name of the target estimator.
    proven_epsilon, proven_delta : float
        What the targets' ledgers prove (``privacy_spent_``, the largest over
        targets); ``inf`` for a model without a ledger (non-private).
    claimed_epsilon : float or None
        The paper's claim (``privacy_claim_``), when recorded.
    n_shadows, n_targets, n_candidates, n_population : int
    in_fraction : float
        Share of the pool each model trains on.
    confidence, delta : float
        Level of all intervals; delta of the implied epsilons.
    fpr_targets : tuple of float
    clip : float
        Probability clipping before logs/logits (see ``DEFAULT_CLIP``).
    train_accuracy, test_accuracy : float
        Mean accuracy of the targets on their members / non-members.
    elapsed_seconds : float
    signals : MembershipSignals or None
        All model outputs, to rerun attacks with other options
        (:func:`evaluate_scores`, the functions of :mod:`.attacks`).
    """

    attacks: tuple[AttackResult, ...]
    model: str
    proven_epsilon: float
    proven_delta: float
    claimed_epsilon: float | None
    n_shadows: int
    n_targets: int
    n_candidates: int
    n_population: int
    in_fraction: float
    confidence: float
    delta: float
    fpr_targets: tuple[float, ...]
    clip: float
    train_accuracy: float
    test_accuracy: float
    elapsed_seconds: float
    signals: MembershipSignals | None = field(default=None, repr=False)

    def __getitem__(self, name: str) -> AttackResult:
        for a in self.attacks:
            if a.attack == name:
                return a
        raise KeyError(f"No attack {name!r} in this result; have {self.names}.")

    def __iter__(self) -> Iterator[AttackResult]:
        return iter(self.attacks)

    def __len__(self) -> int:
        return len(self.attacks)

    @property
    def names(self) -> list[str]:
        return [a.attack for a in self.attacks]

    @property
    def n_trials(self) -> int:
        """Scored (target, candidate) pairs per attack."""
        return self.n_targets * self.n_candidates

    @property
    def epsilon_lower(self) -> float:
        """The empirical epsilon: largest held-out lower bound over attacks and FPRs.

        The third number of DESIGN.md's "privacy truth" (next to the claimed and
        the proven epsilon), at level ``confidence`` for each operating point
        (not corrected for taking the maximum over attacks).
        """
        return max((p.epsilon_lower for a in self.attacks for p in a.heldout), default=0.0)

    @property
    def exceeds_proven(self) -> list[str]:
        """Attacks whose *held-out* epsilon lower bound exceeds the proven epsilon.

        Non-empty means the audit contradicts the ledger (a privet bug, or a
        dependence between examples the interval ignores); the same-score bounds
        are optimistic and are not used here.
        """
        out = []
        for a in self.attacks:
            if any(p.epsilon_lower > self.proven_epsilon + 1e-12 for p in a.heldout):
                out.append(a.attack)
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per attack (for CSV files and data frames)."""
        rows = []
        for a in self.attacks:
            m = a.metrics
            row: dict[str, Any] = {
                "model": self.model,
                "proven_epsilon": self.proven_epsilon,
                "claimed_epsilon": self.claimed_epsilon,
                "attack": a.attack,
                "auc": m.auc,
                "auc_lower": a.auc.interval[0],
                "auc_upper": a.auc.interval[1],
                "balanced_accuracy": m.balanced_accuracy,
                "advantage": m.advantage,
            }
            for op, imp, ho in zip(m.operating_points, a.implied, a.heldout, strict=True):
                tag = _fpr_tag(op.target_fpr)
                row[f"tpr_at_{tag}"] = op.tpr
                row[f"tpr_at_{tag}_lower"] = op.tpr_interval[0]
                row[f"tpr_at_{tag}_upper"] = op.tpr_interval[1]
                row[f"eps_implied_at_{tag}"] = imp.estimate
                row[f"eps_implied_at_{tag}_lower"] = imp.lower
                row[f"eps_implied_at_{tag}_upper"] = imp.upper
                row[f"eps_heldout_lower_at_{tag}"] = ho.epsilon_lower
            row.update(
                n_shadows=self.n_shadows,
                n_targets=self.n_targets,
                n_candidates=self.n_candidates,
                n_population=self.n_population,
                train_accuracy=self.train_accuracy,
                test_accuracy=self.test_accuracy,
                confidence=self.confidence,
                delta=self.delta,
            )
            rows.append(row)
        return rows

    def to_dict(self, *, include_scores: bool = False) -> dict[str, Any]:
        """JSON-friendly record (``inf`` as the string ``"inf"``)."""
        return finite(
            {
                "model": self.model,
                "proven_epsilon": self.proven_epsilon,
                "proven_delta": self.proven_delta,
                "claimed_epsilon": self.claimed_epsilon,
                "n_shadows": self.n_shadows,
                "n_targets": self.n_targets,
                "n_candidates": self.n_candidates,
                "n_population": self.n_population,
                "in_fraction": self.in_fraction,
                "confidence": self.confidence,
                "delta": self.delta,
                "fpr_targets": list(self.fpr_targets),
                "clip": self.clip,
                "train_accuracy": self.train_accuracy,
                "test_accuracy": self.test_accuracy,
                "elapsed_seconds": self.elapsed_seconds,
                "epsilon_lower": self.epsilon_lower,
                "exceeds_proven": self.exceeds_proven,
                "attacks": [a.to_dict(include_scores=include_scores) for a in self.attacks],
            }
        )

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_markdown(self, *, target_fpr: float = 0.01, header: bool = True) -> str:
        """A markdown summary: one row per attack, proven epsilon next to the implied one."""
        return markdown_table({self.model: self}, target_fpr=target_fpr, header=header)

    def __str__(self) -> str:
        return self.to_markdown()


def _fpr_tag(f: float) -> str:
    return f"{f * 100:g}pct".replace(".", "_")


# -- markdown ------------------------------------------------------------------------------


def _as_mapping(results: object) -> dict[str, MIAResult]:
    if isinstance(results, MIAResult):
        return {results.model: results}
    if isinstance(results, Mapping):
        out = dict(results)
    elif isinstance(results, Sequence):
        out = {}
        for i, r in enumerate(results):
            key = r.model if r.model not in out else f"{r.model} ({i})"
            out[key] = r
    else:
        raise InvalidParameterError(
            "Pass an MIAResult, a mapping label -> MIAResult, or a sequence of them; got "
            f"{type(results).__name__}."
        )
    if not out or not all(isinstance(r, MIAResult) for r in out.values()):
        raise InvalidParameterError("Expected at least one MIAResult.")
    return out


def _pct(x: float) -> str:
    return f"{100 * x:g}%"


def markdown_table(
    results: MIAResult | Mapping[str, MIAResult] | Sequence[MIAResult],
    *,
    target_fpr: float = 0.01,
    header: bool = True,
) -> str:
    """One markdown table over several results: a row per (model, attack).

    Columns: the proven epsilon of the ledger (and the claim, when it differs),
    ROC AUC with its DeLong interval, best balanced accuracy, TPR at each target
    FPR with its Clopper–Pearson interval, the epsilon implied at
    ``target_fpr`` (estimate and [lower, upper]; lower is the conservative
    Clopper–Pearson bound) and the held-out lower bound (threshold chosen on
    other targets).
    """
    res = _as_mapping(results)
    first = next(iter(res.values()))
    conf = _pct(first.confidence)
    fprs = first.fpr_targets
    tag = _pct(target_fpr)
    cols = ["model", "proven ε", "attack", f"AUC [{conf} CI]", "bal. acc."]
    cols += [f"TPR@{_pct(f)} [CI]" for f in fprs]
    cols += [f"implied ε @{tag}: est. [lower, upper]", f"held-out ε lower @{tag}"]
    lines = []
    if header:
        for label, r in res.items():
            claim = (
                f", claimed ε = {format_epsilon(r.claimed_epsilon)}"
                if r.claimed_epsilon is not None
                and not math.isclose(r.claimed_epsilon, r.proven_epsilon)
                else ""
            )
            lines.append(
                f"- **{label}**: proven ε = {format_epsilon(r.proven_epsilon)}"
                f" (δ = {r.proven_delta:g}){claim}; {r.n_shadows} shadow models, "
                f"{r.n_targets} target(s) × {r.n_candidates} candidates, "
                f"{r.n_population} population samples; empirical ε lower (held-out, best "
                f"attack) = {format_epsilon(r.epsilon_lower)}; target accuracy "
                f"{r.train_accuracy:.3f} (members) / {r.test_accuracy:.3f} (non-members)"
                + (
                    f"; **held-out bound exceeds the proven ε: {', '.join(r.exceeds_proven)}**"
                    if r.exceeds_proven
                    else ""
                )
            )
        lines.append("")
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for label, r in res.items():
        for a in r.attacks:
            m = a.metrics
            lo, hi = a.auc.interval
            cells = [
                label,
                format_epsilon(r.proven_epsilon),
                a.attack,
                f"{m.auc:.3f} [{lo:.3f}, {hi:.3f}]",
                f"{m.balanced_accuracy:.3f}",
            ]
            for f in fprs:
                op = a.operating_point(f)
                cells.append(f"{op.tpr:.4f} [{op.tpr_interval[0]:.4f}, {op.tpr_interval[1]:.4f}]")
            try:
                imp = a.implied_at(target_fpr)
                cells.append(
                    f"{format_epsilon(imp.estimate)} [{format_epsilon(imp.lower)}, "
                    f"{format_epsilon(imp.upper)}]"
                )
            except InvalidParameterError:
                cells.append("—")
            try:
                cells.append(format_epsilon(a.heldout_at(target_fpr).epsilon_lower))
            except InvalidParameterError:
                cells.append("—")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
