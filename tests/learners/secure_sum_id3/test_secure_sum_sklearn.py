"""scikit-learn conformance of SecureSumID3Classifier (reference path, exact protocol)."""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from _sklearn_checks import COMMON, run_check
from privet.learners import PrivacyWarning, SecureSumID3Classifier
from privet.ledger import Guarantee, Ledger

warnings.filterwarnings("ignore", category=PrivacyWarning)


@parametrize_with_checks(
    [
        SecureSumID3Classifier(
            public_domain="infer",
            max_depth=2,
            random_state=0,
            ledger=Ledger(budget=Guarantee.unbounded()),  # the exact protocol, on purpose
        )
    ],
    expected_failed_checks=lambda est: COMMON,
)
def test_sklearn_conformance(estimator, check):
    run_check(estimator, check)
