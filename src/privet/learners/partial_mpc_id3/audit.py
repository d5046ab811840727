"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.partial_mpc_id3.estimator import PartialMPCID3Classifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "partial_mpc_id3",
        "class": PartialMPCID3Classifier,
        "short_name": "partialmpcid3",
        "title": "PartialMPCID3Classifier (CDP+PMPC-ID3, reference path)",
        "note": "revealed EM splits, DP leaves: claimed = proven",
        "order": 20,
    },
)
