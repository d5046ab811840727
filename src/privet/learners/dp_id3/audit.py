"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.dp_id3.estimator import DPID3Classifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "dp_id3",
        "class": DPID3Classifier,
        "short_name": "dpid3",
        "title": "DPID3Classifier (seed 000, Alg. 6)",
        "note": "EM splits and Laplace leaves: claimed = proven",
        "order": 10,
    },
)
