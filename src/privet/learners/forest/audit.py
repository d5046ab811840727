"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
