"""Learners: the papers' systems as scikit-learn style estimators.

Every learner has ``epsilon``, ``ledger`` and a ``privacy_plan()`` that works
without data; ``fit`` reserves the plan before it reads the data.
"""

from privet.learners._base import PrivacyWarning
from privet.learners.dp_id3 import DPID3Classifier
from privet.learners.federated_cart import FederatedDPTreeClassifier
from privet.learners.forest import DPExtraTreesClassifier, DPRandomForestClassifier
from privet.learners.id3 import ID3Classifier
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier

__all__ = [
    "DPExtraTreesClassifier",
    "DPID3Classifier",
    "DPRandomForestClassifier",
    "FederatedDPTreeClassifier",
    "ID3Classifier",
    "ObliviousID3Classifier",
    "PartialMPCID3Classifier",
    "PrivacyWarning",
]
