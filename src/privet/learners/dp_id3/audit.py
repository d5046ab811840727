"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
