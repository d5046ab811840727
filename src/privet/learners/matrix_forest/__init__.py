"""The matrix random forest of seed 002 (Tajima et al.): one package.

- :mod:`.trees`: random trees from the schema (Alg. 3 lines 1-3), implicit T;
- :mod:`.reference`: direct evaluation of the trees (leaves, counts, votes);
- :mod:`.matrices`: D, Q, Q T^T, Q T^T T and the strategy choice;
- :mod:`.estimator`: :class:`MatrixRandomForestClassifier` (Alg. 1, 2, 3 and baselines);
- :mod:`.tuning`: the data-independent Err_eps(W, A) and privacy-free tuning.
"""

from privet.learners.matrix_forest.estimator import MatrixRandomForestClassifier
from privet.learners.matrix_forest.tuning import expected_error, select_hyperparameters

__all__ = ["MatrixRandomForestClassifier", "expected_error", "select_hyperparameters"]
