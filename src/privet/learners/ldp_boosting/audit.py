"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
