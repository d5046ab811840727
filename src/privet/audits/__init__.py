"""Audits: empirical DP tests, one-run audits and membership-inference metrics.

* :func:`dp_test` / :func:`estimate_epsilon_lower_bound` — epsilon lower bounds
  from repeated runs on neighbouring inputs (threshold, classifier and set
  events chosen on held-out trials; Clopper–Pearson bounds).
* :func:`one_run_audit` / :func:`one_run_epsilon_lower_bound` — Steinke, Nasr,
  Jagielski (2023): a lower bound from a single training run with random canaries.
* :func:`mia_metrics` — ROC AUC, balanced accuracy, advantage, TPR at low FPR
  with exact intervals.
"""

from privet.audits.bounds import (
    Interval,
    clopper_pearson,
    epsilon_lower_from_counts,
    plan_trials,
)
from privet.audits.dptest import (
    DPTestResult,
    PairSearchResult,
    canary_pair,
    dp_test,
    estimate_epsilon_lower_bound,
    search_neighbouring_pairs,
)
from privet.audits.metrics import (
    MIAMetrics,
    OperatingPoint,
    implied_epsilon,
    mia_metrics,
    tpr_at_fpr,
)
from privet.audits.one_run import (
    OneRunAuditResult,
    one_run_audit,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)

__all__ = [
    "DPTestResult",
    "Interval",
    "MIAMetrics",
    "OneRunAuditResult",
    "OperatingPoint",
    "PairSearchResult",
    "canary_pair",
    "clopper_pearson",
    "dp_test",
    "epsilon_lower_from_counts",
    "estimate_epsilon_lower_bound",
    "implied_epsilon",
    "mia_metrics",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "plan_trials",
    "search_neighbouring_pairs",
    "tpr_at_fpr",
]
