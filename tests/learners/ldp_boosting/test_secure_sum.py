"""The owners' secure sum: real MPyC party processes agree with the plaintext path."""

import numpy as np
import pytest

from privet.learners import LDPBoostingClassifier
from privet.learners.ldp_boosting.secure_sum import mpc_sum, reference_sum
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import seed_for_tests


@pytest.mark.mpc
def test_mpc_sum_of_thousands_of_owners_in_three_processes():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3000, 2)) * 3  # 3,000 owners grouped into 3 party processes
    sums, stats = mpc_sum(values, n_parties=3)
    np.testing.assert_array_equal(sums, reference_sum(values))
    np.testing.assert_allclose(sums, values.sum(axis=0), atol=3000 * 2**-16)
    assert len(stats.parties) == 3 and all(p.bytes_sent > 0 for p in stats.parties)


def test_reference_sum_rounding():
    v = np.array([[0.1, -2.0], [0.2, 1.0]])
    np.testing.assert_allclose(reference_sum(v), [0.3, -1.0], atol=2**-15)


@pytest.mark.mpc
@pytest.mark.parametrize("strict", [True, False])
def test_fit_with_mpc_secure_sum_equals_reference(small, strict):
    X, y, schema = small
    fits = []
    for backend in ("reference", "mpc"):
        clf = LDPBoostingClassifier(
            n_rounds=1,
            epsilon=4.0,
            schema=schema,
            strict=strict,
            secure_sum=backend,
            ledger=None if strict else Ledger(budget=Guarantee.unbounded(), relation="replace_one"),
            random_state=3,
        )
        with seed_for_tests(11):
            fits.append(clf.fit(X, y))
    ref, mpc = fits
    np.testing.assert_array_equal(ref.estimator_errors_, mpc.estimator_errors_)
    np.testing.assert_array_equal(ref.predict(X), mpc.predict(X))
    assert all(s is not None for s in mpc.mpc_stats_)
    assert ref.privacy_spent_ == mpc.privacy_spent_
