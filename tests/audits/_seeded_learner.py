"""A toy learner whose only randomness is its ``random_state``, for backend tests.

privet's DP learners draw their noise from OpenDP's CSPRNG, which no seed reaches;
this one makes "the same seed gives the same numbers on every backend" testable.
"""

from __future__ import annotations

import numpy as np

from privet.audits import LearnerSpec


class SeededCoin:
    """Predicts one class drawn from ``random_state``."""

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.classes_ = np.unique(np.asarray(y))
        self.label_ = self.classes_[rng.integers(len(self.classes_))]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def build_coin(*, epsilon, max_depth, schema, ledger, random_state=None):
    return SeededCoin(random_state=random_state)


COIN = LearnerSpec(name="coin", title="seeded coin", build=build_coin)
