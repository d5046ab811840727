"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.secure_sum_id3.estimator import SecureSumID3Classifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "secure_sum_id3",
        "class": SecureSumID3Classifier,
        "short_name": "securesumid3",
        "title": "SecureSumID3Classifier(epsilon=...) (seed 001, sound DP variant)",
        "note": "distributed discrete Laplace on every summed count: proven epsilon",
        "order": 70,
    },
)
