"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

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
