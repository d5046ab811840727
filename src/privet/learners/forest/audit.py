"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.forest.estimator import DPExtraTreesClassifier, DPRandomForestClassifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "dp_forest",
        "class": DPRandomForestClassifier,
        "short_name": "dpforest",
        "title": "DPRandomForestClassifier(5 trees, disjoint subsets)",
        "note": "parallel composition over disjoint subsets: claimed = proven",
        "options": {"n_estimators": 5},
        "order": 50,
    },
    {
        "name": "dp_forest_poisson",
        "class": DPRandomForestClassifier,
        "title": "DPRandomForestClassifier(5 trees, Poisson subsamples)",
        "note": "claims k g epsilon (linearised amplification); proves the exact bound",
        "options": {"n_estimators": 5, "sampling": "poisson"},
        "order": 51,
    },
    {
        "name": "dp_extra_trees",
        "class": DPExtraTreesClassifier,
        "short_name": "dpextratrees",
        "title": "DPExtraTreesClassifier(5 trees, disjoint subsets)",
        "note": "random splits, DP leaves: claimed = proven",
        "options": {"n_estimators": 5},
        "order": 52,
    },
)
