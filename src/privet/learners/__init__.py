"""Learners: the papers' systems as scikit-learn style estimators."""

from privet.learners._base import PrivacyWarning
from privet.learners.dp_id3 import DPID3Classifier
from privet.learners.id3 import ID3Classifier

__all__ = ["DPID3Classifier", "ID3Classifier", "PrivacyWarning"]
