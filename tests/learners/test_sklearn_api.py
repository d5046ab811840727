"""scikit-learn conformance of the plaintext learners.

The checks feed arbitrary float arrays with no public schema, so the learners
run with ``public_domain="infer"`` (domains read from the data, with a
PrivacyWarning). Checks that cannot hold for a DP learner are listed with the
reason.
"""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from _sklearn_checks import COMMON, DP_EXPECTED, run_check
from privet.learners import (
    DPID3Classifier,
    DPRandomForestClassifier,
    ID3Classifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
    PrivacyWarning,
)

warnings.filterwarnings("ignore", category=PrivacyWarning)


def _expected(estimator):
    return (
        DP_EXPECTED
        if not isinstance(estimator, ID3Classifier)
        else {**COMMON, "check_classifiers_train": "depth-2 tree on 8 inferred bins"}
    )


@parametrize_with_checks(
    [
        ID3Classifier(public_domain="infer", max_depth=2),
        DPID3Classifier(public_domain="infer", max_depth=2, epsilon=1.0),
        PartialMPCID3Classifier(public_domain="infer", max_depth=2, epsilon=1.0),
        # the paper-faithful default (exact hidden splits) refuses any finite budget
        ObliviousID3Classifier(public_domain="infer", max_depth=2, split="exponential"),
        DPRandomForestClassifier(public_domain="infer", max_depth=2, n_estimators=3),
    ],
    expected_failed_checks=_expected,
)
def test_sklearn_compatible(estimator, check):
    run_check(estimator, check)
