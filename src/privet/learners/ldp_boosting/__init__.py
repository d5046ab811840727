"""Seed 004 (Wang & Chang, "Privacy-Preserving Boosting in the Local Setting").

SAMME boosting (Alg. 1-2) of base learners fitted on locally perturbed shares
of data owners who each take part in one round only:

- :mod:`.estimator`: :class:`LDPBoostingClassifier`, plan, ledger, fit/predict;
- :mod:`.samme`: the SAMME driver of Alg. 2 (weights, errors, alphas);
- :mod:`.stump` (Sec. 3.5.3), :mod:`.centroid` (Sec. 3.5.1), :mod:`.logistic`
  (Sec. 3.5.2): the base learners' shares and aggregation;
- :mod:`.randomisers`: Piecewise / Duchi / Laplace from :mod:`privet.mechanisms`,
  and the ``without_noise`` testing hook;
- :mod:`.secure_sum`: the owners' secure sum as an MPyC party program.
"""

from privet.learners.ldp_boosting.estimator import LDPBoostingClassifier
from privet.learners.ldp_boosting.randomisers import without_noise

__all__ = ["LDPBoostingClassifier", "without_noise"]
