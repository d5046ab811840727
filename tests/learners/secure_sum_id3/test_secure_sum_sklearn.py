"""scikit-learn conformance of SecureSumID3Classifier (reference path, exact protocol)."""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from privet.learners import PrivacyWarning, SecureSumID3Classifier

warnings.filterwarnings("ignore", category=PrivacyWarning)

EXPECTED = {
    "check_classifiers_regression_target": "inferred domain treats every distinct value as a class",
    "check_supervised_y_2d": "y of shape (n, 1) is accepted and flattened without a warning",
    "check_n_features_in_after_fitting": "privet raises SchemaError with its own message",
}


@parametrize_with_checks(
    [SecureSumID3Classifier(public_domain="infer", max_depth=2, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED,
)
def test_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        check(estimator)
