"""This learner's audit configurations (``AUDIT_CONFIGURATIONS``), declared where it lives;
:mod:`privet.audits.learners.registry` collects them and describes their keys."""

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
