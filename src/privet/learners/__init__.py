"""Learners: the papers' systems as scikit-learn style estimators.

Every learner has ``epsilon``, ``ledger`` and a ``privacy_plan()`` that works
without data; ``fit`` reserves the plan before it reads the data.

Layout: one package per paper system, holding its estimator, its plaintext
reference path and its MPC program side by side; the shared tree code lives
below them in ``_trees`` (plaintext) and ``_protocols`` (MPC programs). The
packages never import each other, except the forests of seed 000 (App. D),
which are built from the seed-000 trees. See ``docs/architecture.md``.
"""

from privet.learners._base import PrivacyWarning, proven_guarantee
from privet.learners.dp_boosting import DPGradientBoostingClassifier
from privet.learners.dp_id3 import DPID3Classifier
from privet.learners.federated_cart import FederatedDPTreeClassifier
from privet.learners.forest import DPExtraTreesClassifier, DPRandomForestClassifier
from privet.learners.id3 import ID3Classifier
from privet.learners.ldp_boosting import LDPBoostingClassifier
from privet.learners.matrix_forest import MatrixRandomForestClassifier
from privet.learners.mpc_id3 import MPCID3Classifier
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
from privet.learners.secure_sum_id3 import SecureSumID3Classifier

__all__ = [
    "DPExtraTreesClassifier",
    "DPGradientBoostingClassifier",
    "DPID3Classifier",
    "DPRandomForestClassifier",
    "FederatedDPTreeClassifier",
    "ID3Classifier",
    "LDPBoostingClassifier",
    "MPCID3Classifier",
    "MatrixRandomForestClassifier",
    "ObliviousID3Classifier",
    "PartialMPCID3Classifier",
    "PrivacyWarning",
    "SecureSumID3Classifier",
    "proven_guarantee",
]
