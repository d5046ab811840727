"""Audits: white-box learner audits, empirical DP tests, one-run audits, membership inference.

* :func:`audit_learner` with ``output="releases"`` / :func:`release_test` — the
  white-box learner audit: every noisy value the learner's mechanisms release
  (recorded by :mod:`privet.mechanisms.recorder`) replayed on the neighbouring
  dataset, the exact likelihood ratio as statistic; a rigorous bound, an
  estimate and what the pair allows (:class:`ReleaseTest`).
  :func:`protocol_release_test` does it on what MPC parties open,
  :func:`release_one_run` with one training; :func:`worst_case_pair` builds the
  pair from the public schema.

* :func:`dp_test` / :func:`estimate_epsilon_lower_bound` — epsilon lower bounds
  from repeated runs on neighbouring inputs (threshold, classifier and set
  events chosen on held-out trials; Clopper–Pearson bounds).
* :func:`one_run_audit` / :func:`one_run_epsilon_lower_bound` — Steinke, Nasr,
  Jagielski (2023): a lower bound from a single training run with random canaries.
* :func:`mia_metrics` — ROC AUC, balanced accuracy, advantage, TPR at low FPR
  with exact intervals.
* :mod:`~privet.audits.zoo` — the bug zoos: broken mechanisms, their claims, the
  neighbours that expose them and their correct counterparts (:func:`run_zoo`);
  learners with planted accounting bugs and their twins (:func:`run_learner_zoo`).
* :mod:`~privet.audits.learners` — learners under test: near-tie and
  lone-leaf neighbours, many-trainings and one-run bounds, claimed vs proven vs
  measured epsilon (:func:`audit_learner`); :func:`resolve_learner` names a
  learner by class name (``"DPID3Classifier"``), short name (``"dpid3"``) or
  audit configuration (``"dp_id3"``).
* :mod:`~privet.audits.report` — HTML, markdown and JSON reports (:func:`write_report`).
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
from privet.audits.learners import (
    LEARNERS,
    SHORT_NAMES,
    LearnerAudit,
    LearnerDPTest,
    LearnerPair,
    LearnerSpec,
    audit_learner,
    learner_dp_test,
    learner_names,
    learner_one_run,
    lone_leaf_pair,
    near_tie_pair,
    resolve_learner,
)
from privet.audits.learners.whitebox import (
    ReleaseTest,
    protocol_release_test,
    release_one_run,
    release_test,
)
from privet.audits.learners.worst_case import (
    count_pair,
    deep_split_pair,
    split_pair,
    worst_case_pair,
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
from privet.audits.report import ReportFiles, write_report
from privet.audits.zoo import (
    LEARNER_ZOO,
    ZOO,
    LearnerZooResult,
    ZooEntry,
    ZooResult,
    run_learner_zoo,
    run_zoo,
)

__all__ = [
    "LEARNERS",
    "LEARNER_ZOO",
    "SHORT_NAMES",
    "ZOO",
    "DPTestResult",
    "Interval",
    "LearnerAudit",
    "LearnerDPTest",
    "LearnerPair",
    "LearnerSpec",
    "LearnerZooResult",
    "MIAMetrics",
    "OneRunAuditResult",
    "OperatingPoint",
    "PairSearchResult",
    "ReleaseTest",
    "ReportFiles",
    "ZooEntry",
    "ZooResult",
    "audit_learner",
    "canary_pair",
    "clopper_pearson",
    "count_pair",
    "deep_split_pair",
    "dp_test",
    "epsilon_lower_from_counts",
    "estimate_epsilon_lower_bound",
    "implied_epsilon",
    "learner_dp_test",
    "learner_names",
    "learner_one_run",
    "lone_leaf_pair",
    "mia_metrics",
    "near_tie_pair",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "plan_trials",
    "protocol_release_test",
    "release_one_run",
    "release_test",
    "resolve_learner",
    "run_learner_zoo",
    "run_zoo",
    "search_neighbouring_pairs",
    "split_pair",
    "tpr_at_fpr",
    "worst_case_pair",
    "write_report",
]
