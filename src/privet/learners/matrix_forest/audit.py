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
        # The trees' shapes and the strategy's optimisation use only ``random_state``, public
        # randomness the guarantee holds for whatever its value (the records are dealt and
        # the noise drawn from the privacy RNG): fixed here, every training reuses one
        # optimised strategy (a fit: 0.1 CPU s, was 0.8; the benchmark's training with its
        # replay: 0.17, was 3.8), and the audit measures the
        # mechanism at that public structure.
        "options": {"n_trees": 16, "random_state": 0},
        "order": 80,
    },
)
