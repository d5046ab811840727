"""Secure discrete Laplace and report-noisy-max (privet.mpc.discrete): exact guarantees.

The deterministic tests compute the *exact* distribution that the secure
sampler draws from (from its public coin thresholds) and check the claimed
(epsilon, delta) against the exact hockey-stick divergence. The statistical
tests draw from the sampler in MPyC and compare with the exact pmf by a
chi-square test at a stated failure probability.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.errors import InvalidParameterError
from privet.ledger import ApproxDP
from privet.mechanisms import discrete_noisy_max_probabilities
from privet.mechanisms.bitwise_geometric import (
    discrete_laplace_delta,
    discrete_laplace_pmf,
    geometric_coins,
    laplace_tv,
    noisy_max_delta,
)
from privet.mpc import run_local
from privet.mpc.discrete import SecureDiscreteLaplace, SecureReportNoisyMax

ALPHA = 1e-4  # failure probability of each statistical test


def sampled_laplace_pmf(scale: float, security_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact pmf of G1 - G2 as the secure sampler draws it: (support, pmf)."""
    g = geometric_coins(scale, security_bits).probabilities()
    pmf = np.convolve(g, g[::-1])  # P(G1 - G2 = z), z = -(2**J - 1) .. 2**J - 1
    half = g.size - 1
    return np.arange(-half, half + 1), pmf


def hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    return float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0.0)))


@pytest.mark.parametrize("security_bits", [8, 12, 40])
@pytest.mark.parametrize("scale", [1.0, 2.5, 7.0])
def test_coins_are_within_the_stated_total_variation(scale, security_bits):
    coins = geometric_coins(scale, security_bits)
    assert coins.tv <= 2.0 ** -(security_bits + 1)
    g = coins.probabilities()
    k = np.arange(g.size)
    q = math.exp(-1.0 / scale)
    ideal = (1 - q) * q**k  # the untruncated geometric on the sampler's support
    tv = 0.5 * (np.abs(g - ideal).sum() + q**g.size)  # + the ideal mass beyond 2**J
    assert tv <= coins.tv * (1 + 1e-9)
    assert g.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("security_bits", [8, 12])
@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1), (0.4, 1), (1.0, 2)])
def test_exact_privacy_loss_is_within_the_charged_delta(epsilon, sensitivity, security_bits):
    """The exact hockey-stick divergence between neighbours' outputs is at most the charge.

    Few security bits make the truncation visible, so the bound is checked where it bites.
    """
    _, pmf = sampled_laplace_pmf(sensitivity / epsilon, security_bits)
    for shift in range(1, sensitivity + 1):  # one count moves by up to Delta
        p = np.concatenate([pmf, np.zeros(shift)])  # outputs of x
        q = np.concatenate([np.zeros(shift), pmf])  # outputs of x + shift
        exact = max(hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon))
        assert exact <= discrete_laplace_delta(epsilon, sensitivity, None, security_bits)
    if sensitivity == 2:  # replace-one: two counts move by one each, in opposite directions
        joint = np.outer(pmf, pmf)
        p = np.pad(joint, ((0, 1), (1, 0)))
        q = np.pad(joint, ((1, 0), (0, 1)))
        exact = max(hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon))
        assert exact <= discrete_laplace_delta(epsilon, 2, 2, security_bits)


def test_the_noisy_max_proof_premise_holds_for_discrete_laplace():
    """P(Z >= r + 1) >= q P(Z >= r) for every integer r (the survival-ratio step)."""
    for scale in (0.5, 2.0, 9.0):
        q = math.exp(-1.0 / scale)
        r = np.arange(-60, 61)
        # closed form, checked against the pmf on a window first
        survival = np.where(
            r >= 1, q ** np.maximum(r, 0) / (1 + q), 1 - q ** (1 - np.minimum(r, 0)) / (1 + q)
        )
        window = np.arange(-2000, 2001)
        pmf = discrete_laplace_pmf(scale, window)
        for k in (-3, 0, 1, 4):
            assert survival[r == k][0] == pytest.approx(pmf[window >= k].sum(), rel=1e-9)
        assert np.all(survival[1:] >= q * survival[:-1] * (1 - 1e-12))


def test_noisy_max_delta_grows_with_candidates_and_entries_say_so():
    rnm = SecureReportNoisyMax(epsilon=0.5)
    assert rnm.scale == pytest.approx(4.0)
    assert rnm.delta(10) == pytest.approx(10 * rnm.delta(1))
    assert rnm.entry(7) == ApproxDP(epsilon=0.5, delta=noisy_max_delta(0.5, 1.0, 7))
    lap = SecureDiscreteLaplace(epsilon=0.5, sensitivity=2)
    assert lap.entry(3).delta == pytest.approx(discrete_laplace_delta(0.5, 2, 3))
    assert 0 < lap.entry(3).delta < 1e-11


def test_monotone_noisy_max_samples_at_ceil_delta_over_epsilon_and_its_delta_follows():
    mono = SecureReportNoisyMax(epsilon=0.5, monotone=True)
    assert mono.scale == pytest.approx(2.0)  # ceil(Delta) / epsilon, not ceil(2 Delta)
    assert mono.laplace.sensitivity == 1
    assert mono.laplace.coins == SecureDiscreteLaplace(epsilon=0.5, sensitivity=1).coins
    # delta at the scale sampled: (1 + e^eps) d tau(2.0), not tau(4.0)
    assert mono.delta(7) == pytest.approx(
        (1 + math.exp(0.5)) * 7 * laplace_tv(2.0), rel=1e-12, abs=0.0
    )
    assert mono.delta(7) != pytest.approx(rnm_delta := noisy_max_delta(0.5, 1.0, 7), abs=0.0)
    assert rnm_delta == SecureReportNoisyMax(epsilon=0.5).delta(7)
    assert mono.delta(7) == noisy_max_delta(0.5, 1.0, 7, monotone=True)
    assert mono.entry(7) == ApproxDP(epsilon=0.5, delta=mono.delta(7))
    assert SecureReportNoisyMax(epsilon=0.5, sensitivity=1.5, monotone=True).scale == 4.0
    with pytest.raises(InvalidParameterError, match="monotone"):
        SecureReportNoisyMax(epsilon=0.5, monotone="yes")


def test_bad_parameters_are_refused_with_what_to_fix():
    with pytest.raises(InvalidParameterError, match="whole number"):
        SecureDiscreteLaplace(epsilon=1.0, sensitivity=1.5)
    with pytest.raises(InvalidParameterError, match="bit_length"):
        SecureDiscreteLaplace(epsilon=1e-4)  # noise beyond SecFxp32
    SecureDiscreteLaplace(epsilon=1e-4, bit_length=50)
    with pytest.raises(InvalidParameterError, match="security_bits"):
        SecureReportNoisyMax(epsilon=1.0, security_bits=4)
    # the coin probabilities are doubles: past 43 bits the promise no longer holds
    with pytest.raises(InvalidParameterError, match=r"\[8, 43\].*double precision"):
        SecureDiscreteLaplace(epsilon=1.0, security_bits=44)
    SecureDiscreteLaplace(epsilon=1.0, security_bits=43)


@pytest.mark.parametrize("security_bits", [40, 43])
def test_the_coins_keep_their_promised_distance_at_every_allowed_precision(security_bits):
    """TV(sampled, exact) <= 2**-(s+1) for scales 0.05 to 1e8 (it failed at s = 45 for a
    scale of 1000: the float coin probabilities cap the precision)."""
    from privet.mechanisms.bitwise_geometric import geometric_coins

    for scale in np.geomspace(0.05, 1e8, 40):
        assert geometric_coins(float(scale), security_bits).tv <= 2.0 ** -(security_bits + 1)


async def _draw(ctx, kind="laplace", n=3000, epsilon=0.5, scores=(0, 0, 0), monotone=False):
    from privet.mpc._runtime import get_runtime

    mpc = get_runtime()
    if kind == "laplace":
        mech = SecureDiscreteLaplace(epsilon=epsilon)
        out = await mpc.output(mech.noise((n,)))
    else:
        mech = SecureReportNoisyMax(epsilon=epsilon, monotone=monotone)
        s = mech.sectype.array(np.tile(np.asarray(scores, dtype=np.int64), (n, 1)))
        onehot = mech.select(s)
        out = await mpc.output(mpc.np_sum(onehot * np.arange(len(scores)), axis=1))
    return [float(v) for v in np.asarray(out, dtype=float)]


def chi_square_p(counts: np.ndarray, probs: np.ndarray) -> float:
    """p-value of a chi-square test, cells with expected count < 5 pooled."""
    n = counts.sum()
    order = np.argsort(probs)
    c, p = counts[order].astype(float), probs[order]
    pooled_c, pooled_p, acc_c, acc_p = [], [], 0.0, 0.0
    for ci, pi in zip(c, p, strict=True):
        acc_c, acc_p = acc_c + ci, acc_p + pi
        if acc_p * n >= 5:
            pooled_c.append(acc_c)
            pooled_p.append(acc_p)
            acc_c = acc_p = 0.0
    pooled_c[-1] += acc_c
    pooled_p[-1] += acc_p
    return float(stats.chisquare(pooled_c, np.asarray(pooled_p) * n).pvalue)


def test_secure_discrete_laplace_draws_follow_discrete_laplace():
    draws = np.asarray(run_local(f"{__file__}:_draw", {}).results[0])
    assert np.all(draws == np.round(draws))
    lap = SecureDiscreteLaplace(epsilon=0.5)
    support = np.arange(-lap.noise_bound, lap.noise_bound + 1)
    counts = np.bincount((draws + lap.noise_bound).astype(int), minlength=support.size)
    assert chi_square_p(counts, discrete_laplace_pmf(lap.scale, support)) > ALPHA


@pytest.mark.parametrize("monotone", [False, True])
def test_secure_noisy_max_follows_the_exact_selection_probabilities(monotone):
    """At scale ceil(2 Delta)/eps = 2, or ceil(Delta)/eps = 1 for monotone scores."""
    scores = (3, 5, 5, 0)
    args = {"kind": "rnm", "n": 2000, "epsilon": 1.0, "scores": list(scores)}
    args["monotone"] = monotone
    picks = np.asarray(run_local(f"{__file__}:_draw", args).results[0], dtype=int)
    scale = 1.0 if monotone else 2.0
    probs = discrete_noisy_max_probabilities(np.asarray(scores, dtype=float), scale)
    counts = np.bincount(picks, minlength=len(scores))
    assert chi_square_p(counts, probs) > ALPHA
    assert probs[1] > probs[2]  # first maximum wins ties: the tie rule is fixed
