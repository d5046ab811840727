"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.id3.estimator import ID3Classifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "id3",
        "class": ID3Classifier,
        "short_name": "id3",
        "title": "ID3Classifier (non-private baseline)",
        "note": "no claim, no ledger: exact splits and counts, any bound is possible",
        "order": 0,
    },
)
