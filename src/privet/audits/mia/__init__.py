"""Membership inference against any model with ``predict_proba`` (or a query callable).

Attacks
    * loss threshold — Yeom et al. (CSF 2018): score ``log p_y``;
    * shadow models — Shokri et al. (IEEE S&P 2017): per-class attack classifiers
      trained on shadow outputs;
    * LiRA offline and online — Carlini et al. (IEEE S&P 2022, Algorithm 1):
      Gaussian fits of the logit-scaled confidence over shadow models;
    * RMIA offline (and online) — Zarifzadeh et al. (ICML 2024): likelihood of
      ``x`` relative to population samples ``z`` and reference models.

Experiment
    :func:`membership_inference` builds the LiRA setup on a population dataset
    (shadow models on random halves of a pool, every candidate IN for half of
    them), trains the targets, runs every attack and evaluates it with
    :mod:`privet.audits.metrics` (ROC AUC, balanced accuracy, advantage, TPR at
    FPR 0.1% and 1% with Clopper–Pearson intervals, implied epsilon next to the
    ledger's proven epsilon). Training fans out with joblib (``n_jobs``).

Targets are queried only through ``query(X) -> probabilities``: a
secret-shared model plugs in through its oblivious prediction protocol.

Example
-------
>>> from privet.data import load_dataset
>>> from privet.learners import DPID3Classifier
>>> from privet.audits.mia import membership_inference, plot_roc
>>> car = load_dataset("car")
>>> res = membership_inference(
...     car, lambda: DPID3Classifier(epsilon=1.0, max_depth=2, schema=car.schema),
...     n_shadows=4, confidence=0.95, random_state=0, n_jobs=1)
>>> res.proven_epsilon
1.0
>>> sorted(res.names)
['lira_offline', 'lira_online', 'loss', 'rmia', 'shokri']
"""

from privet.audits.mia.attacks import (
    ATTACKS,
    DEFAULT_ATTACKS,
    GaussianFit,
    fit_gaussians,
    lira_offline,
    lira_online,
    loss_attack,
    rmia,
    shokri_attack,
    tune_rmia_a,
)
from privet.audits.mia.experiment import (
    AttackResult,
    MIAResult,
    attack_signals,
    evaluate_scores,
    membership_inference,
)
from privet.audits.mia.report import markdown_table, plot_roc
from privet.audits.mia.signals import (
    DEFAULT_CLIP,
    MembershipSignals,
    ModelInfo,
    Query,
    collect_signals,
    inclusion_matrix,
    logit_confidence,
    true_class_probability,
)
from privet.audits.mia.stats import (
    AUCComparison,
    AUCEstimate,
    ImpliedEpsilon,
    auc_interval,
    compare_auc,
    heldout_operating_point,
    implied_epsilon_estimate,
)

__all__ = [
    "ATTACKS",
    "DEFAULT_ATTACKS",
    "DEFAULT_CLIP",
    "AUCComparison",
    "AUCEstimate",
    "AttackResult",
    "GaussianFit",
    "ImpliedEpsilon",
    "MIAResult",
    "MembershipSignals",
    "ModelInfo",
    "Query",
    "attack_signals",
    "auc_interval",
    "collect_signals",
    "compare_auc",
    "evaluate_scores",
    "fit_gaussians",
    "heldout_operating_point",
    "implied_epsilon_estimate",
    "inclusion_matrix",
    "lira_offline",
    "lira_online",
    "logit_confidence",
    "loss_attack",
    "markdown_table",
    "membership_inference",
    "plot_roc",
    "rmia",
    "shokri_attack",
    "true_class_probability",
    "tune_rmia_a",
]
