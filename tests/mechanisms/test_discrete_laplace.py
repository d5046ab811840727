"""The exact vectorised discrete Laplace sampler (privet.mechanisms._discrete_laplace).

Its law is checked against the exact probability mass function, not against
OpenDP's sampler: chi-square and binomial tests at level ALPHA = 1e-5 each
(mech_stats), so this file's nineteen statistical assertions fail by chance with
probability about 2e-4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mech_stats import ALPHA, assert_frequencies, assert_ks
from scipy import stats

from privet.errors import PrivetError
from privet.mechanisms import _discrete_laplace, _opendp, laplace_noise
from privet.mechanisms._random import seed_for_tests


def _pmf_bins(scale: float, m: int) -> np.ndarray:
    """P[Z < -m], P[Z = -m], ..., P[Z = m], P[Z > m] for the discrete Laplace of ``scale``."""
    q = math.exp(-1 / scale)
    z = np.arange(-m, m + 1)
    centre = (1 - q) / (1 + q) * q ** np.abs(z)
    tail = q ** (m + 1) / (1 + q)
    return np.concatenate([[tail], centre, [tail]])


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 16.666666666666668, 100.0])
def test_its_law_is_the_discrete_laplace(scale):
    """Chi-square fit of 200,000 draws to the exact pmf (cells pooled at expected 5)."""
    z = _discrete_laplace.sample(200_000, scale, np.random.default_rng())
    assert z.dtype == np.int64
    m = max(3, int(6 * scale))
    assert_frequencies(np.clip(z, -m - 1, m + 1) + m + 1, _pmf_bins(scale, m))


@pytest.mark.parametrize("u, t", [(0, 7), (3, 7), (6, 7), (1, 2**52 + 1)])
def test_the_exp_coin_is_bernoulli_exp_minus_u_over_t(u, t):
    """Algorithm 1's coin: a two-sided binomial test of 100,000 coins at level ALPHA."""
    n = 100_000
    coins = _discrete_laplace._bernoulli_exp_minus_ratio(
        np.full(n, u, dtype=np.int64), t, np.random.default_rng()
    )
    if u == 0:
        assert coins.all()  # exp(0) = 1: K stops at 1 on the first coin
        return
    p = math.exp(-u / t)
    assert stats.binomtest(int(coins.sum()), n, p).pvalue > ALPHA


class _Scripted:
    """A generator whose first ``integers`` call returns ``first``; later calls are random."""

    def __init__(self, first):
        self.first = np.asarray(first, dtype=np.int64)
        self.rng = np.random.default_rng()
        self.used = False

    def integers(self, low, high, size=None, dtype=np.int64):
        if not self.used:
            self.used = True
            return self.first.copy()
        return self.rng.integers(low, high, size=size, dtype=dtype)


def test_the_chain_stop_has_p_k_equal_k_minus_1_over_k_factorial():
    """The first j >= 2 whose Bernoulli(1/j) coin fails has P[K = k] = (k - 1) / k!:
    chi-square fit of 200,000 draws."""
    k = _discrete_laplace._inverse_chain_stop(200_000, np.random.default_rng())
    assert k.min() >= 2
    p = np.array([0.0, 0.0] + [(j - 1) / math.factorial(j) for j in range(2, 9)])
    p = np.append(p, 1 - p.sum())
    assert_frequencies(np.minimum(k, 9), p)


def test_the_chain_goes_on_past_twenty_with_fresh_coins():
    """R = 0 (the coins up to 20 all succeeded) continues from j = 21."""

    k = _discrete_laplace._inverse_chain_stop(3, _Scripted(np.zeros(3)))
    assert np.all(k >= 21)


def test_the_exp_minus_one_coin():
    """Algorithm 1 at gamma = 1: the chain's stop is odd with probability e^-1."""
    coins = _discrete_laplace._inverse_chain_stop(100_000, np.random.default_rng()) % 2 == 1
    assert stats.binomtest(int(coins.sum()), coins.size, math.exp(-1)).pvalue > ALPHA


def test_the_count_of_exp_minus_one_successes_is_geometric():
    """P[V = v] = (1 - e^-1) e^-v: chi-square fit of 200,000 counts."""
    v = _discrete_laplace._count_exp_minus_one(200_000, np.random.default_rng())
    top = 12
    p = (1 - math.exp(-1)) * np.exp(-np.arange(top + 1.0))
    p = np.append(p, math.exp(-(top + 1)))
    assert_frequencies(np.minimum(v, top + 1), p)


def test_a_value_beyond_64_bits_is_computed_exactly(monkeypatch):
    """U + t V past 2^63 goes through Python integers: with t = 3, s = 2^61 and V = 2^62
    every output is floor((U + 3 * 2^62) / 2^61) = 6 in absolute value."""
    monkeypatch.setattr(
        _discrete_laplace,
        "_count_exp_minus_one",
        lambda n, rng: np.full(n, 2**62, dtype=np.int64),
    )
    z = _discrete_laplace.sample(50, 3 / 2**61, np.random.default_rng(0))
    assert set(np.abs(z).tolist()) == {6}


def test_an_output_beyond_64_bits_is_an_error_not_a_wrapped_value(monkeypatch):
    monkeypatch.setattr(
        _discrete_laplace,
        "_count_exp_minus_one",
        lambda n, rng: np.full(n, 2**62, dtype=np.int64),
    )
    with pytest.raises(PrivetError, match="64 bits"):
        _discrete_laplace.sample(5, 3.0, np.random.default_rng(0))


@pytest.mark.parametrize(
    "scale, ok",
    [
        (1.0, True),
        (1e-3, True),
        (2.0**53 - 1, True),
        (2.0**53, False),
        (1e-300, False),
        (2.0**70, False),
        (0.0, False),
    ],
)
def test_supports_names_the_64_bit_range(scale, ok):
    assert _discrete_laplace.supports(scale) is ok


def test_out_of_range_scales_fall_back_to_opendp(monkeypatch):
    """A scale of 2^-70 (denominator 2^70) is drawn by OpenDP's sampler."""
    calls = []
    real = _opendp.laplace_int
    monkeypatch.setattr(_opendp, "laplace_int", lambda v, s: calls.append(s) or real(v, s))
    x = _opendp.laplace_int_vectorised(np.arange(5, dtype=np.int64), 2.0**-70)
    assert calls == [2.0**-70]
    np.testing.assert_array_equal(x, np.arange(5))  # P[Z != 0] is about 2 e^(-2^70)
    _opendp.laplace_int_vectorised(np.arange(5, dtype=np.int64), 2.0)
    assert calls == [2.0**-70]


def test_integer_values_get_the_noise_added_and_keep_their_shape():
    values = np.arange(12, dtype=np.int64).reshape(3, 4) * 1000
    x = _opendp.laplace_int_vectorised(values, 2.0)
    assert x.shape == (3, 4) and x.dtype == np.int64
    assert np.all(np.abs(x - values) < 200)  # P[|Z| >= 200] < 1e-43 each


def test_float_values_are_noised_on_opendps_grid():
    """Continuous Laplace(2) up to the grid 2^k: a KS test of 50,000 draws, all on the grid."""
    values = np.full(50_000, 0.3)
    x = _opendp.laplace_float_vectorised(values, 2.0, 1.0)
    k = _opendp.granularity(1.0, values.size)
    assert np.all(np.ldexp(x, -k) == np.rint(np.ldexp(x, -k)))
    assert_ks(x - 0.3, stats.laplace(scale=2.0).cdf)


def test_seeded_tests_are_reproducible():
    with seed_for_tests(5):
        a = laplace_noise((100,), 3.0, discrete=True, vectorised=True)
    with seed_for_tests(5):
        b = laplace_noise((100,), 3.0, discrete=True, vectorised=True)
    np.testing.assert_array_equal(a, b)


def test_an_int64_overflow_of_the_noisy_value_is_an_error(monkeypatch):
    monkeypatch.setattr(
        _discrete_laplace, "sample", lambda n, scale, rng: np.full(n, 2**63 - 1, dtype=np.int64)
    )
    with pytest.raises(PrivetError, match="overflowed"):
        _opendp.laplace_int_vectorised(np.full(3, 2**61, dtype=np.int64), 2.0)


def test_the_chain_thresholds_are_exact_at_every_boundary():
    """R = 20!/k! - 1 gives K = k + 1 and R = 20!/k! gives K = k, for k = 2..19, and
    R = 1 gives 20 (deterministic: a threshold off by one for a large k is invisible to
    a chi-square); R = 0 continues past 20."""
    top = math.factorial(20)
    for k in range(2, 20):
        r = top // math.factorial(k)
        got = _discrete_laplace._inverse_chain_stop(2, _Scripted([r - 1, r]))
        assert got.tolist() == [k + 1, k], k
    # k = 20: R = 20!/20! = 1 gives 20; R = 0 goes on with fresh coins from 21
    got = _discrete_laplace._inverse_chain_stop(2, _Scripted([0, 1]))
    assert got[0] >= 21 and got[1] == 20
    assert _discrete_laplace._inverse_chain_stop(1, _Scripted([top - 1])).tolist() == [2]


def test_the_continuation_past_twenty_has_the_chain_law():
    """Given R = 0: P[K = 21] = 20/21, P[K = 22] = 1/22, P[K >= 23] = 1/(21 * 22)."""
    n = 20_000
    k = _discrete_laplace._inverse_chain_stop(n, _Scripted(np.zeros(n)))
    p = np.array([20 / 21, 1 / 22, 1 / (21 * 22)])
    assert_frequencies(np.minimum(k, 23) - 21, p)


@pytest.mark.parametrize("u, t", [(1, 3), (2, 3), (5, 7), (2**52, 2**52 + 1)])
def test_algorithm_1_stops_with_its_whole_law(u, t):
    """P[K = k] = g^(k-1)/(k-1)! - g^k/k! with g = u/t: the whole law, not only its parity."""
    n = 200_000
    k = _discrete_laplace._algorithm1_stop(
        np.full(n, u, dtype=np.int64), t, np.random.default_rng()
    )
    g = u / t
    p = np.array(
        [0.0]
        + [g ** (j - 1) / math.factorial(j - 1) - g**j / math.factorial(j) for j in range(1, 7)]
    )
    p = np.append(p, 1 - p.sum())
    assert_frequencies(np.minimum(k, 7), p)


def test_consecutive_draws_are_independent():
    """Signs of non-overlapping consecutive pairs: a chi-square test of independence of
    100,000 pairs (a round that reordered its accepted values would fail it)."""
    z = _discrete_laplace.sample(200_000, 2.0, np.random.default_rng())
    sign = np.sign(z).astype(int) + 1
    table = np.zeros((3, 3))
    np.add.at(table, (sign[0::2], sign[1::2]), 1)
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_the_64_bit_cutoff_of_u_plus_t_v_is_exact_on_both_sides(monkeypatch):
    """t = 3, s = 2^61: at the largest V the numpy path takes, U + 3V is at most 2^63 - 3
    and every output is 3 in absolute value; one more and U = 2 reaches 2^63 (the Python
    path), giving 4. 400 draws see U = 2 with probability above 1 - 1e-20."""
    cutoff = (np.iinfo(np.int64).max - 3) // 3
    for v, want in ((cutoff, {3}), (cutoff + 1, {3, 4})):
        monkeypatch.setattr(
            _discrete_laplace,
            "_count_exp_minus_one",
            lambda n, rng, v=v: np.full(n, v, dtype=np.int64),
        )
        z = _discrete_laplace.sample(400, 3 / 2**61, np.random.default_rng())
        assert set(np.abs(z).tolist()) == want


def test_a_scale_whose_grid_value_overflows_falls_back_to_opendp():
    """ldexp(1e300, -k) overflows: OpenDP draws it (no OverflowError)."""
    x = laplace_noise((3,), 1e300, discrete=False, vectorised=True)
    assert x.shape == (3,)


def test_a_block_sets_the_grid_of_each_record_not_of_the_whole_array():
    """With block = 2 the grid is that of 2 values, however many records there are."""
    values = np.zeros((5000, 2))
    x = _opendp.laplace_float_vectorised(values, 3.0, 1.0, block=2)
    k = _opendp.granularity(1.0, 2)
    assert k > _opendp.granularity(1.0, values.size)
    assert np.all(np.ldexp(x, -k) == np.rint(np.ldexp(x, -k)))


def test_the_local_laplace_randomiser_stays_vectorised_at_many_owners(monkeypatch):
    """10^4 records x 10 values at epsilon 1e-4: the per-record grid keeps the grid scale
    below 2^53, so OpenDP's sampler is not needed (it is refused here)."""
    from privet.mechanisms.local import LocalLaplace

    def refuse(*args, **kwargs):
        raise AssertionError("fell back to OpenDP")

    monkeypatch.setattr(_opendp, "laplace_float", refuse)
    mech = LocalLaplace(epsilon=1e-4, dimension=10)
    out = mech._perturb(np.zeros((10_000, 10)))
    assert out.shape == (10_000, 10)


def test_the_law_is_symmetric():
    """P[Z > 0] = P[Z < 0]: a binomial test on the signs of 400,000 draws at scale 1."""
    z = _discrete_laplace.sample(400_000, 1.0, np.random.default_rng())
    pos, neg = int((z > 0).sum()), int((z < 0).sum())
    assert stats.binomtest(pos, pos + neg, 0.5).pvalue > ALPHA
