"""Membership-inference metrics with exact intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.audits import implied_epsilon, mia_metrics, tpr_at_fpr
from privet.audits.metrics import balanced_accuracy, membership_advantage, roc_auc
from privet.errors import InvalidParameterError

TEST_LEVEL = 1e-4


def test_perfect_attack():
    y = np.r_[np.ones(100), np.zeros(100)]
    s = np.r_[np.linspace(2, 3, 100), np.linspace(0, 1, 100)]
    m = mia_metrics(y, s, confidence=0.95)
    assert m.auc == 1.0 and m.advantage == 1.0 and m.balanced_accuracy == 1.0
    p = m.operating_points[1]
    assert p.tpr == 1.0 and p.fpr == 0.0
    assert p.tpr_interval[0] == pytest.approx(0.025 ** (1 / 100))
    assert "AUC 1.0000" in str(m)


def test_guessing_attack_is_at_chance():
    rng = np.random.default_rng(0)
    n = 2000
    y = rng.random(n) < 0.5
    s = rng.normal(size=n)
    n1, n0 = int(y.sum()), int((~y).sum())
    sd = math.sqrt((n0 + n1 + 1) / (12 * n0 * n1))  # Mann–Whitney null sd of the AUC
    assert abs(roc_auc(y, s) - 0.5) < stats.norm.isf(TEST_LEVEL / 2) * sd
    m = mia_metrics(y, s, confidence=0.95)
    for p in m.operating_points:
        assert p.fpr <= p.target_fpr
        lo, hi = p.tpr_interval
        assert lo <= p.target_fpr <= hi or p.tp == 0


def test_tpr_at_fpr_matches_brute_force():
    rng = np.random.default_rng(1)
    y = rng.random(3000) < 0.5
    s = rng.normal(size=3000) + 1.5 * y
    p = tpr_at_fpr(y, s, 0.01, confidence=0.9)
    best = 0.0
    for t in np.unique(s):
        pred = s >= t
        if np.mean(pred[~y]) <= 0.01:
            best = max(best, np.mean(pred[y]))
    assert p.tpr == pytest.approx(best)
    assert p.fpr <= 0.01 and p.tp == round(best * y.sum())


def test_implied_epsilon_is_conservative_for_a_dp_guesser():
    """Guesses from eps-DP randomised response never imply more than eps (w.p. >= conf)."""
    eps, conf, reps, n = 1.0, 0.9, 300, 500
    q = math.exp(eps) / (1 + math.exp(eps))
    rng = np.random.default_rng(2)
    over = 0
    for _ in range(reps):
        tp = rng.binomial(n, q)
        fp = rng.binomial(n, 1 - q)
        over += implied_epsilon(tp, n, fp, n, confidence=conf) > eps
    assert stats.binomtest(over, reps, 1 - conf, alternative="greater").pvalue > TEST_LEVEL
    assert (
        implied_epsilon(int(q * 10_000), 10_000, int((1 - q) * 10_000), 10_000, confidence=conf)
        > 0.9
    )


def test_advantage_and_balanced_accuracy():
    y = np.array([1, 1, 1, 0, 0, 0])
    s = np.array([0.9, 0.8, 0.1, 0.7, 0.2, 0.1])
    assert membership_advantage(y, s) == pytest.approx(2 / 3)
    assert balanced_accuracy(y, s) == pytest.approx(0.5 + 1 / 3)
    assert balanced_accuracy(y, np.array([1, 1, 0, 0, 0, 1])) == pytest.approx(2 / 3)


def test_metrics_reject_bad_input():
    with pytest.raises(InvalidParameterError, match="only one class"):
        mia_metrics(np.ones(5), np.zeros(5), confidence=0.9)
    with pytest.raises(InvalidParameterError, match="same length"):
        roc_auc(np.ones(5), np.zeros(4))
    with pytest.raises(InvalidParameterError, match="0/1"):
        roc_auc(np.array([0, 2]), np.zeros(2))
