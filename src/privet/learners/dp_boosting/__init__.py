"""DP gradient-boosted trees with data-independent splits from the public schema.

privet's own learner (issue 18), built from the published designs of DP-EBM
(Nori et al. 2021), DP-TR / federated DP-GBDT (Maddock et al. 2022) and S-BDT
(Kaiser et al. 2023): see ``docs/dp_boosting.md``.
"""

from privet.learners.dp_boosting.estimator import DPGradientBoostingClassifier

__all__ = ["DPGradientBoostingClassifier"]
