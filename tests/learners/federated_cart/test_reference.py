"""Reference path of seed 003: Alg. 4, Thm. 7, Lemma 3.2, ring encoding, the noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.learners.federated_cart.reference import (
    ReferenceOps,
    TestingNoiseRefused,
    from_ring,
    local_bounds,
    local_histograms,
    ring_sum,
    split_impurities,
    to_ring,
)


def _gini_half(y: np.ndarray, C: int) -> float:
    if len(y) == 0:
        return 0.0
    p = np.bincount(y, minlength=C) / len(y)
    return (1 - np.sum(p**2)) / 2


def test_split_impurities_match_a_direct_computation() -> None:
    rng = np.random.default_rng(1)
    C, B, n = 3, 6, 200
    Z = rng.integers(0, B, size=(n, 2))
    y = rng.integers(0, C, size=n)
    H = local_histograms(Z, y, np.arange(2), C, B)
    G = split_impurities(H, np.array([B, B]))
    for j in range(2):
        for border in range(1, B):
            left, right = y[Z[:, j] < border], y[Z[:, j] >= border]
            want = (len(left) * _gini_half(left, C) + len(right) * _gini_half(right, C)) / n
            if len(left) and len(right):
                assert G[j, border - 1] == pytest.approx(want)
            else:
                assert G[j, border - 1] == np.inf


def test_binary_impurity_is_the_papers_p_times_one_minus_p() -> None:
    H = np.array([[[3.0, 1.0]], [[1.0, 5.0]]])  # class 0 / class 1, one feature, 2 bins
    G = split_impurities(H, np.array([2]))[0, 0]
    pl, pr = 1 / 4, 5 / 6
    assert G == pytest.approx((4 * pl * (1 - pl) + 6 * pr * (1 - pr)) / 10)


def test_theorem_7_lower_bound_holds_for_every_border() -> None:
    rng = np.random.default_rng(2)
    C, B, K = 2, 8, 4
    n_bins = np.array([B, B, 2])
    for _ in range(30):
        parts = []
        for _k in range(K):
            n_k = int(rng.integers(1, 30))
            Z = np.column_stack(
                [rng.integers(0, B, n_k), rng.integers(0, B, n_k), rng.integers(0, 2, n_k)]
            )
            y = (Z[:, 0] + rng.integers(0, 4, n_k) > 5).astype(int)
            parts.append((Z, y))
        bound = sum(local_bounds(Z, y, C, n_bins) for Z, y in parts)
        Zall = np.vstack([p[0] for p in parts])
        yall = np.concatenate([p[1] for p in parts])
        H = local_histograms(Zall, yall, np.arange(3), C, B)
        G = split_impurities(H, n_bins) * len(yall)
        for j in range(3):
            finite = G[j][np.isfinite(G[j])]
            assert np.all(bound[j] <= finite + 1e-9)


def test_lemma_3_2_one_record_moves_a_summand_by_at_most_five_quarters() -> None:
    rng = np.random.default_rng(3)
    C, B = 2, 10
    n_bins = np.array([B, B])
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(0, 25))
        Z = rng.integers(0, B, size=(n, 2))
        y = rng.integers(0, C, size=n)
        z_new = rng.integers(0, B, size=(1, 2))
        y_new = rng.integers(0, C, size=1)
        a = local_bounds(Z, y, C, n_bins)
        b = local_bounds(np.vstack([Z, z_new]), np.concatenate([y, y_new]), C, n_bins)
        worst = max(worst, float(np.max(np.abs(a - b))))
    assert worst <= 5 / 4


def test_ring_encoding_round_trips_and_wraps() -> None:
    v = np.array([[1.5, -2.25, 1e6], [-1.5, 3.0, -1e6 + 0.125]])
    assert np.allclose(from_ring(to_ring(v[0])), v[0])
    assert np.allclose(from_ring(ring_sum(to_ring(v))), v.sum(axis=0))


def test_testing_noise_is_refused_without_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRIVET_TESTING_NOISE", raising=False)
    with pytest.raises(TestingNoiseRefused, match="removes all privacy"):
        ReferenceOps(3, testing_seed=1)


def test_summed_gamma_shares_are_laplace() -> None:
    """KS test at alpha = 1e-4: sum of K=5 parties' Gamma differences vs Laplace(b)
    (the paper's float shares, ``noise="paper"``)."""
    ops = ReferenceOps(5, discrete=False)
    b = 2.0
    draws = ops.noisy_sum("t", np.zeros((5, 4000)), b)
    assert stats.kstest(draws, stats.laplace(scale=b).cdf).pvalue > 1e-4


def test_summed_polya_shares_are_discrete_laplace_integers() -> None:
    """The default shares: integers whose sum over K=5 parties is the discrete Laplace(b),
    P(k) = (1 - a) / (1 + a) a^|k| with a = e^(-1/b); chi-square at alpha = 1e-4 over
    |k| <= 8 and the two tails."""
    ops = ReferenceOps(5)
    b, n = 2.0, 20_000
    draws = ops.noisy_sum("t", np.zeros((5, n)), b)
    assert np.array_equal(draws, np.round(draws))
    a = math.exp(-1.0 / b)
    ks = np.arange(-8, 9)
    pmf = (1 - a) / (1 + a) * a ** np.abs(ks)
    tail = (1.0 - pmf.sum()) / 2
    observed = [np.sum(draws < -8), *(np.sum(draws == k) for k in ks), np.sum(draws > 8)]
    expected = n * np.array([tail, *pmf, tail])
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_aggregate_noise_is_the_discrete_laplace_of_the_summed_shares() -> None:
    """``aggregate=True`` (simulations) draws the sum of the K shares directly: integers
    with the discrete Laplace(b) pmf; chi-square at alpha = 1e-5 as above."""
    ops = ReferenceOps(5, aggregate=True)
    b, n = 3.0, 20_000
    draws = ops.noisy_sum("t", np.full((5, n), 2.0), b) - 10.0  # the local values add up
    assert np.array_equal(draws, np.round(draws))
    a = math.exp(-1.0 / b)
    ks = np.arange(-8, 9)
    pmf = (1 - a) / (1 + a) * a ** np.abs(ks)
    tail = (1.0 - pmf.sum()) / 2
    observed = [np.sum(draws < -8), *(np.sum(draws == k) for k in ks), np.sum(draws > 8)]
    assert stats.chisquare(observed, n * np.array([tail, *pmf, tail])).pvalue > 1e-5


def test_aggregate_float_noise_is_laplace() -> None:
    """The paper's float shares sum to Laplace(b): KS at alpha = 1e-5."""
    ops = ReferenceOps(5, discrete=False, aggregate=True)
    draws = ops.noisy_sum("t", np.zeros((5, 4000)), 2.0)
    assert stats.kstest(draws, stats.laplace(scale=2.0).cdf).pvalue > 1e-5


@pytest.mark.parametrize("discrete", [True, False])
def test_prefetched_histograms_build_the_same_tree(
    monkeypatch: pytest.MonkeyPatch, discrete: bool
) -> None:
    """Alg. 6 with every feature's histogram in one request (``prefetch=True``) follows
    the sequential flow exactly: same tree and leaf values under the same testing noise
    (which is keyed per feature)."""
    from privet.learners.federated_cart.grower import CartParams, PartyRows, grow

    monkeypatch.setenv("PRIVET_TESTING_NOISE", "fixed-noise-breaks-privacy")
    rng = np.random.default_rng(4)
    p, K = 12, 4
    Z = rng.integers(0, 6, size=(400, p))
    y = ((Z[:, 0] + Z[:, 3] + rng.integers(0, 3, 400)) > 6).astype(np.int64)
    parts = np.array_split(np.arange(400), K)
    data = PartyRows([Z[g] for g in parts], [y[g] for g in parts])
    sizes = []
    for eps in (0.3, 3.0, 30.0):
        params = CartParams(
            parties=K,
            n_classes=2,
            n_bins=(6,) * p,
            epsilon=eps,
            max_depth=6,
            min_samples_leaf=5,
            leaf_prop=0.3,
            budget_saving=True,
            bounds_prop=0.25,
            noise="discrete" if discrete else "paper",
        )
        seq = grow(params, data, ReferenceOps(K, testing_seed=9, discrete=discrete))
        pre = grow(params, data, ReferenceOps(K, testing_seed=9, discrete=discrete), prefetch=True)
        assert seq.signature() == pre.signature()
        assert np.array_equal(np.vstack(seq.value), np.vstack(pre.value))
        sizes.append(seq.n_nodes)
    assert max(sizes) > 7  # the trees compared are not trivial


def test_prefetch_is_refused_when_charging() -> None:
    from privet.learners.federated_cart.grower import CartParams, PartyRows, grow

    params = CartParams(
        parties=2,
        n_classes=2,
        n_bins=(2,),
        epsilon=1.0,
        max_depth=1,
        min_samples_leaf=1,
        leaf_prop=0.5,
        budget_saving=True,
        bounds_prop=0.25,
    )
    data = PartyRows([np.zeros((3, 1), dtype=np.int64)] * 2, [np.zeros(3, dtype=np.int64)] * 2)
    with pytest.raises(ValueError, match="uncharged simulations"):
        grow(params, data, ReferenceOps(2), object(), prefetch=True)
