"""Secure log/exp and samplers against numpy (one-party runtime)."""

from __future__ import annotations

import numpy as np
import pytest
from _mpc_helpers import opened
from scipy import stats

from privet.errors import InvalidParameterError
from privet.mpc import fixedpoint as fx

ALPHA = 1e-4  # significance level of every statistical test in this file


def quantise(x: np.ndarray, f: int) -> np.ndarray:
    """The fixed-point value a secure array actually holds."""
    return np.round(np.asarray(x) * 2**f) / 2**f


@pytest.mark.parametrize("bit_length", [32, 50])
def test_log2_and_ln_within_two_ulp_of_numpy(mpc, bit_length):
    sectype = fx.secfxp_type(bit_length)
    f = sectype.frac_length
    x = quantise(np.exp2(np.linspace(-f + 1, bit_length - f - 2, 601)), f)
    log2 = opened(mpc, fx.secure_log2(sectype.array(x)))
    ln = opened(mpc, fx.secure_ln(sectype.array(x)))
    ulp = 2.0**-f
    assert np.max(np.abs(log2 - np.log2(x))) <= 2 * ulp
    assert np.max(np.abs(ln - np.log(x))) <= 2 * ulp


@pytest.mark.parametrize("bit_length", [32, 50])
def test_exp_within_two_ulp_of_numpy_and_zero_below_resolution(mpc, bit_length):
    sectype = fx.secfxp_type(bit_length)
    f = sectype.frac_length
    x = quantise(np.concatenate([np.linspace(-(f + 2) * np.log(2), 0, 601), [-50.0, -1e3]]), f)
    y = opened(mpc, fx.secure_exp(sectype.array(x)))
    assert np.max(np.abs(y - np.exp(x))) <= 2 * 2.0**-f
    assert np.all(y[-2:] == 0)


def test_exp_clip_threshold_sets_small_weights_to_exact_zero(mpc):
    sectype = fx.secfxp_type(32)
    x = quantise(np.array([0.0, -1.0, -4.9, -5.1, -8.0]), 16)
    y = opened(mpc, fx.secure_exp(sectype.array(x), clip_threshold=-5.0))
    assert np.allclose(y[:3], np.exp(x[:3]), atol=3e-5)
    assert np.all(y[3:] == 0)


def test_prefix_all_zero_is_exact(mpc):
    sectype = fx.secfxp_type(32)
    bits = np.random.default_rng(0).integers(0, 2, size=(40, 13))
    bits[:3] = 0
    got = opened(mpc, fx.prefix_all_zero(sectype.array(bits)))
    assert np.array_equal(got, np.cumprod(1 - bits, axis=1))


def test_polynomial_degrees_meet_their_error_target():
    for bit_length in (32, 50):
        report = fx.approximation_report(bit_length)
        for name in ("log2_mantissa", "neg_ln_mantissa", "exp2_neg_fraction"):
            assert report[name]["max_error"] <= report["ulp"] / 4


def test_random_uniform_lives_on_the_grid_in_unit_interval(mpc):
    sectype = fx.secfxp_type(32)
    u = opened(mpc, fx.random_uniform(sectype, (4000,)))
    assert u.min() >= 0 and u.max() < 1
    assert np.all(u * 2**16 == np.round(u * 2**16))
    assert stats.kstest(u, "uniform").pvalue > ALPHA


def test_neg_ln_uniform_is_exponential(mpc):
    sectype = fx.secfxp_type(32)
    e = opened(mpc, fx.random_neg_ln_uniform(sectype, (3000,)))
    assert e.min() > 0 and e.max() <= 17 * np.log(2) + 1e-3
    assert stats.kstest(e, "expon").pvalue > ALPHA


def test_log_rejects_plain_arrays_and_bad_bit_lengths():
    with pytest.raises(InvalidParameterError, match="secure fixed-point array"):
        fx.secure_log2(np.array([1.0]))
    with pytest.raises(InvalidParameterError, match="bit_length must be an int >= 8"):
        fx.secfxp_type(4)
    with pytest.raises(InvalidParameterError, match="frac_length must be an int in"):
        fx.secfxp_type(32, 30)
