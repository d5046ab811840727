"""ReportNoisyMax(noise="discrete_laplace"): the plaintext reference of the sound MPC selection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    NoisyMax,
    discrete_noisy_max_probabilities,
    make_report_noisy_max,
)
from privet.mechanisms.bitwise_geometric import discrete_laplace_pmf
from privet.mechanisms.laws import SelectionLaw

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


def test_charge_is_a_pure_noisy_max_entry_and_monotone_halves_the_scale_at_the_same_charge():
    led = Ledger(budget=Guarantee(1.0))
    mech = make_report_noisy_max(0.5, noise="discrete_laplace")
    assert mech.scale == pytest.approx(4.0)  # ceil(2 Delta) / epsilon
    mech([1.0, 2.0], scope=led.root)
    (charge,) = led.charges
    assert charge.entry == NoisyMax(epsilon=0.5, sensitivity=1.0, noise="discrete_laplace")
    assert led.spent() == Guarantee(0.5)
    mono = make_report_noisy_max(0.5, noise="discrete_laplace", monotone=True)
    assert mono.scale == pytest.approx(2.0)  # ceil(Delta) / epsilon
    assert mono.law() == SelectionLaw("discrete_laplace", 2.0)  # what an audit sees
    led = Ledger(budget=Guarantee(1.0))
    mono([1.0, 2.0], scope=led.root)
    (charge,) = led.charges
    assert charge.entry == NoisyMax(
        epsilon=0.5, sensitivity=1.0, noise="discrete_laplace", monotone=True
    )
    assert led.spent() == Guarantee(0.5)  # the same charge
    # a non-integer sensitivity shifts by its ceiling
    assert make_report_noisy_max(
        0.5, sensitivity=1.5, noise="discrete_laplace", monotone=True
    ).scale == pytest.approx(4.0)


def _max_loss(u: np.ndarray, v: np.ndarray, scale: float) -> float:
    p, q = discrete_noisy_max_probabilities(u, scale), discrete_noisy_max_probabilities(v, scale)
    return float(np.max(np.abs(np.log(p) - np.log(q))))


def test_monotone_form_is_epsilon_dp_on_monotone_utilities_and_not_beyond():
    """Exact selection probabilities, every u in {0..3}^3 and every monotone neighbour
    u + b, b in {0, 1}^3 (what adding a record does to max-operator scores and counts):
    the loss at scale ceil(Delta)/eps is at most eps, and reaches 0.9 eps. A record
    that lowers one utility and raises another (replace-one) exceeds eps at that scale,
    and stays within it at the paper's ceil(2 Delta)/eps: why the monotone form is used
    under add/remove only."""
    import itertools

    for eps in (0.3, 1.0, 2.0):
        worst = 0.0
        for u in itertools.product(range(4), repeat=3):
            base = np.array(u, dtype=float)
            for b in itertools.product((0.0, 1.0), repeat=3):
                loss = _max_loss(base, base + np.array(b), 1.0 / eps)
                assert loss <= eps + 1e-9, (eps, u, b, loss)
                worst = max(worst, loss)
        assert worst > 0.9 * eps
        moved, base = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        assert _max_loss(base, moved, 1.0 / eps) > 1.1 * eps
        assert _max_loss(base, moved, 2.0 / eps) <= eps + 1e-9


def test_discrete_laplace_tail_ratio_used_by_the_proof():
    """P(Z >= k + 1) >= q P(Z >= k) for every integer k (q = e^(-1/t)): the step of the
    proof in privet.mpc.discrete; equality for k >= 0."""
    for t in (0.5, 1.0, 3.0):
        q = np.exp(-1.0 / t)
        k = np.arange(-60, 60)
        tail = np.array([np.sum(discrete_laplace_pmf(t, np.arange(j, 400))) for j in k])
        assert np.all(tail[1:] >= q * tail[:-1] - 1e-15)
        np.testing.assert_allclose(tail[61:], q * tail[60:-1], rtol=1e-9)


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


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "discrete_laplace"])
def test_the_monotone_form_is_refused_under_replace_one(noise):
    """Replacing a record can lower one candidate's utility and raise another's: the
    monotone form's scale Delta / epsilon is not epsilon-DP there (review of monompc, F4)."""
    from privet.errors import InvalidParameterError
    from privet.mechanisms.selection import make_report_noisy_max

    with pytest.raises(InvalidParameterError, match="only under add/remove"):
        make_report_noisy_max(epsilon=1.0, noise=noise, monotone=True, relation="replace_one")
    assert make_report_noisy_max(epsilon=1.0, noise=noise, monotone=True).monotone
