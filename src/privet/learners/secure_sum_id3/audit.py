"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
