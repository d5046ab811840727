"""ReportNoisyMax(noise="discrete_laplace"): the plaintext reference of the sound MPC selection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privet.errors import InvalidParameterError
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    NoisyMax,
    discrete_noisy_max_probabilities,
    make_report_noisy_max,
)

ALPHA = 1e-5  # failure probability of the statistical test


def test_selection_frequencies_match_the_exact_probabilities():
    led = Ledger(budget=Guarantee.unbounded())
    mech = make_report_noisy_max(0.8, noise="discrete_laplace")
    u = np.array([4.0, 6.0, 6.0, 1.0, 5.5])
    picks = mech(np.tile(u, (3000, 1)), scope=led.root, disjoint_rows=True)
    probs = discrete_noisy_max_probabilities(u, mech.scale)
    counts = np.bincount(picks, minlength=u.size)
    assert stats.chisquare(counts, probs * counts.sum()).pvalue > ALPHA
    assert probs.sum() == pytest.approx(1.0)
    assert probs[1] > probs[2]  # ties go to the first maximum


def test_charge_is_a_pure_noisy_max_entry_and_monotone_is_refused():
    led = Ledger(budget=Guarantee(1.0))
    mech = make_report_noisy_max(0.5, noise="discrete_laplace")
    assert mech.scale == pytest.approx(4.0)  # ceil(2 Delta) / epsilon
    mech([1.0, 2.0], scope=led.root)
    (charge,) = led.charges
    assert charge.entry == NoisyMax(epsilon=0.5, sensitivity=1.0, noise="discrete_laplace")
    assert led.spent() == Guarantee(0.5)
    with pytest.raises(InvalidParameterError, match="monotone"):
        make_report_noisy_max(0.5, noise="discrete_laplace", monotone=True)


def test_probabilities_agree_with_brute_force_enumeration():
    scale, u = 1.5, np.array([0.0, 1.0, 1.0])
    q = np.exp(-1.0 / scale)
    z = np.arange(-40, 41)
    pmf = (1 - q) / (1 + q) * q ** np.abs(z)
    grid = np.stack(np.meshgrid(z, z, z, indexing="ij"), axis=-1).reshape(-1, 3)
    weight = pmf[grid[:, 0] + 40] * pmf[grid[:, 1] + 40] * pmf[grid[:, 2] + 40]
    winner = np.argmax(u + grid, axis=1)
    brute = np.bincount(winner, weights=weight, minlength=3)
    np.testing.assert_allclose(
        discrete_noisy_max_probabilities(u, scale), brute / brute.sum(), atol=1e-9
    )
