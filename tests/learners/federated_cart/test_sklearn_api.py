"""scikit-learn conformance of FederatedDPTreeClassifier (reference backend).

The checks feed arbitrary float arrays with no public schema, so the learner
runs with ``public_domain="infer"`` (domains read from the data, with a
PrivacyWarning) and K = 2 owners dealt at random.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from _sklearn_checks import DP_EXPECTED, run_check
from privet.learners import FederatedDPTreeClassifier


@parametrize_with_checks(
    [FederatedDPTreeClassifier(public_domain="infer", max_depth=2, n_parties=2, random_state=0)],
    expected_failed_checks=lambda est: DP_EXPECTED,
)
def test_sklearn_compatible(estimator, check):
    run_check(estimator, check)
