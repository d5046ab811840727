"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

from privet.learners.mpc_id3.estimator import MPCID3Classifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "mpc_id3",
        "class": MPCID3Classifier,
        "short_name": "mpcid3",
        "title": "MPCID3Classifier (MPC-ID3 baseline, 3 parties over TCP)",
        "note": "non-private: the opened tree is exact",
        "options": {"backend": "mpc"},
        "path": "mpc",
        "slow": True,
        "order": 110,
    },
)
