"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.ldp_boosting.estimator import LDPBoostingClassifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "ldp_boosting",
        "class": LDPBoostingClassifier,
        "short_name": "ldpboosting",
        "title": "LDPBoostingClassifier(strict=True) (seed 004, local DP)",
        "note": "each owner perturbs once: epsilon-LDP under replace-one",
        "relation": "replace_one",
        "order": 90,
    },
)
