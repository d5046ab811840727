"""What the audits need to know about this learner, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (``privet audit learner NAME``), each a dict with ``name``, ``class`` (the
estimator class), ``short_name`` (the class's short name, on the configuration
a class name stands for), ``title``, ``note`` and optionally ``options`` (fixed
constructor arguments), ``relation``, ``path`` (``"reference"`` or ``"mpc"``),
``slow`` and ``order`` (its place in listings). :mod:`privet.audits.learners.registry`
collects them from every learner package; nothing else lists learners.
"""

from privet.learners.matrix_forest.estimator import MatrixRandomForestClassifier

AUDIT_CONFIGURATIONS = (
    {
        "name": "matrix_forest",
        "class": MatrixRandomForestClassifier,
        "short_name": "matrixforest",
        "title": "MatrixRandomForestClassifier(16 trees, batch training) (seed 002)",
        "note": "matrix mechanism on the leaf counts: claimed = proven",
        "options": {"n_trees": 16},
        "order": 80,
    },
)
