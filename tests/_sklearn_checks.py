"""scikit-learn conformance of the learners: the checks expected to fail (with why), and
the runner of one check (``parametrize_with_checks``).
"""

from __future__ import annotations

import warnings
from typing import Any

import sklearn

from privet.learners import PrivacyWarning

DP_NOISE = "compares two trainings, which differ by privacy noise (cannot be seeded)"

#: Every learner fitted on an inferred domain (``public_domain="infer"``).
COMMON = {
    "check_classifiers_regression_target": "inferred domain treats every distinct value as a class",
    "check_supervised_y_2d": "y of shape (n, 1) is accepted and flattened without a warning",
    "check_n_features_in_after_fitting": "privet raises SchemaError with its own message",
}
if sklearn.__version__.startswith("1.6."):
    # scikit-learn 1.6 casts the X of a categorical-input estimator to int and then
    # subtracts a float mean in place (numpy refuses the cast); 1.7 fixed the check
    COMMON["check_positive_only_tag_during_fit"] = "bug in scikit-learn 1.6's own check"

#: A learner whose fit draws privacy noise.
DP_EXPECTED = {
    **COMMON,
    "check_fit_idempotent": DP_NOISE,
    "check_classifier_data_not_an_array": DP_NOISE,
    "check_estimators_data_not_an_array": DP_NOISE,
    "check_pipeline_consistency": DP_NOISE,
    "check_readonly_memmap_input": DP_NOISE,
    "check_classifiers_classes": "a DP tree on tiny data may never predict some class",
    "check_classifiers_train": "a DP tree at epsilon=1 on tiny data need not reach sklearn's accuracy floor",
}


def run_check(estimator: Any, check: Any) -> None:
    """One scikit-learn check, silent about the PrivacyWarning of an inferred domain."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        check(estimator)
