"""Secure Laplace and exponential mechanism: distributions vs their plaintext definitions.

One-party runtime, many draws per test. Every test fixes the significance
level ALPHA (probability of a false alarm when the implementation is right),
not the random outcome.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _mpc_helpers import opened
from scipy import stats

from privet.errors import InvalidParameterError
from privet.mpc import (
    PAPER_CLIP_THRESHOLD,
    SecureExponentialMechanism,
    SecureLaplace,
    add_reveal_hook,
    secfxp_type,
)

ALPHA = 1e-4


@pytest.mark.parametrize("method", ["difference", "sign"])
def test_laplace_noise_follows_laplace_scale(mpc, method):
    lap = SecureLaplace(epsilon=0.5, sensitivity=1.0, method=method)
    noise = opened(mpc, lap.noise((2000,)))
    assert lap.scale == 2.0
    assert np.max(np.abs(noise)) <= lap.noise_bound
    assert stats.kstest(noise, "laplace", args=(0.0, lap.scale)).pvalue > ALPHA


def test_laplace_release_adds_noise_to_counts_and_reports_to_hooks(mpc):
    lap = SecureLaplace(epsilon=2.0, bit_length=50)
    counts = np.array([0, 5, 120, 32000], dtype=np.int64)
    seen = []
    remove = add_reveal_hook(seen.append)
    try:
        noisy = mpc.run(lap.release(lap.sectype.array(counts), label="leaf counts"))
    finally:
        remove()
    assert [e.label for e in seen] == ["leaf counts"] and seen[0].entry is lap
    # P(|Lap(0.5)| > 10) = e^-20: this bound fails with negligible probability
    assert np.all(np.abs(noisy - counts) < 10)


def test_laplace_converts_secure_integers(mpc):
    lap = SecureLaplace(epsilon=4.0)
    secint = mpc.SecInt(32)
    noisy = opened(mpc, lap.add_noise(secint.array(np.array([7, 9]))))
    assert np.all(np.abs(noisy - [7, 9]) < 10)


def test_laplace_declares_its_parameters_and_rejects_bad_ones():
    lap = SecureLaplace(epsilon=0.1, sensitivity=2.0)
    assert (lap.epsilon, lap.sensitivity, lap.scale) == (0.1, 2.0, 20.0)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter of SecureLaplace"):
        SecureLaplace(epsilon=-1.0)
    with pytest.raises(InvalidParameterError, match="'method' parameter"):
        SecureLaplace(epsilon=1.0, method="gumbel")
    with pytest.raises(InvalidParameterError, match="use a larger bit_length"):
        SecureLaplace(epsilon=1e-4)
    assert SecureLaplace(epsilon=1e-4, bit_length=50).noise_bound < 2**24


def test_laplace_refuses_a_different_fixed_point_type(mpc):
    lap = SecureLaplace(epsilon=1.0, bit_length=32)
    other = secfxp_type(40).array(np.array([1.0]))
    with pytest.raises(InvalidParameterError, match=r"share the data with mechanism\.sectype"):
        lap.add_noise(other)


def test_exponential_mechanism_frequencies_match_plaintext(mpc):
    em = SecureExponentialMechanism(epsilon=1.0)
    scores = np.array([5.0, 4.0, 2.0, 0.0])
    draws = 1200
    onehot = opened(mpc, em.select(em.sectype.array(np.tile(scores, (draws, 1)))))
    assert np.all(onehot.sum(axis=1) == 1) and set(np.unique(onehot)) <= {0.0, 1.0}
    expected = em.probabilities(scores) * draws
    ideal = np.exp(scores / em.scale) / np.exp(scores / em.scale).sum()
    assert np.allclose(expected / draws, ideal, atol=1e-4)  # no clipping at this gap
    assert stats.chisquare(onehot.sum(axis=0), expected).pvalue > ALPHA


def test_exponential_mechanism_paper_clipping_never_picks_clipped(mpc):
    em = SecureExponentialMechanism(epsilon=1.0, clip_threshold=PAPER_CLIP_THRESHOLD)
    scores = np.array([12.0, 11.0, 4.0, 1.0])  # s = (q - 12) / 2: 0, -0.5, -4, -5.5
    draws = 400
    index = mpc.run(em.select_index(em.sectype.array(np.tile(scores, (draws, 1)))))
    counts = np.bincount(index, minlength=4)
    p = em.probabilities(scores)
    assert p[3] == 0 and counts[3] == 0
    assert stats.chisquare(counts[:3], p[:3] * draws).pvalue > ALPHA
    assert 0 < em.clip_tv_bound(4) < 3 * math.exp(-5)


def test_exponential_mechanism_opens_a_single_index(mpc):
    em = SecureExponentialMechanism(epsilon=50.0, sensitivity=1.0)
    index = mpc.run(em.select_index(em.sectype.array(np.array([0.0, 3.0, 1.0]))))
    assert index == 1  # other candidates have weight below 2**-17: exactly zero
    one = opened(mpc, em.select(em.sectype.array(np.array([[4.0]]))))
    assert one.tolist() == [[1.0]]


def test_exponential_mechanism_declares_scale_and_gap():
    em = SecureExponentialMechanism(epsilon=0.5, sensitivity=2.0)
    assert em.scale == 8.0
    assert SecureExponentialMechanism(epsilon=0.5, sensitivity=2.0, monotone=True).scale == 4.0
    assert em.max_score_gap == 2.0**16
    with pytest.raises(InvalidParameterError, match="'clip_threshold' parameter"):
        SecureExponentialMechanism(epsilon=1.0, clip_threshold=5.0)
