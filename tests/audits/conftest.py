"""Fixtures shared by the audit tests."""

from __future__ import annotations

import pytest

from privet.audits.learner_audit import audit_learner


@pytest.fixture(scope="module")
def exact_id3_audit(car):
    """``audit_learner`` of the paper-faithful oblivious ID3 (``split="exact"``) on Car.

    Epsilon 1, depth 1, 40 trainings per dataset on both pairs and a one-run
    step with 200 canaries: the learner claims epsilon = 1, its ledger proves
    nothing finite, and the near-tie pair refutes the claim. Used as it is by
    the audit tests and as report content by the report tests.
    """
    return audit_learner(
        "oblivious_id3_exact",
        car,
        epsilon=1.0,
        trials=40,
        confidence=0.95,
        max_depth=1,
        one_run=True,
        one_run_m=200,
    )
