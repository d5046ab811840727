"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
