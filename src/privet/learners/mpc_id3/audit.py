"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
