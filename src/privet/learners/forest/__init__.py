"""DP random forests and extra-trees of seed 000 (App. D), built on the seed-000 tree systems.

``estimator``  :class:`DPRandomForestClassifier`, :class:`DPExtraTreesClassifier`.
``protocol``   one MPC majority vote over a forest of secret ODP+FMPC-ID3 trees.
"""

from privet.learners.forest.extra_trees import DPExtraTreesClassifier
from privet.learners.forest.random_forest import DPRandomForestClassifier

__all__ = ["DPExtraTreesClassifier", "DPRandomForestClassifier"]
