"""privet.mechanisms.laplace_noise: OpenDP's Laplace samplers for simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.errors import InvalidParameterError
from privet.mechanisms import laplace_noise


@pytest.mark.parametrize("vectorised", [False, True])
@pytest.mark.parametrize("discrete", [True, False])
def test_its_noise_has_the_laplace_spread(discrete, vectorised):
    """Variance 2 scale^2 (continuous) or 2 e^(-1/s) / (1 - e^(-1/s))^2 (discrete):
    within 6 standard errors of the sample variance over 20,000 draws (fails by chance
    far below 1e-6)."""
    scale = 3.0
    x = laplace_noise((200, 100), scale, discrete=discrete, vectorised=vectorised)
    assert x.shape == (200, 100)
    if discrete:
        assert np.all(x == np.round(x))
        t = math.exp(-1 / scale)
        want = 2 * t / (1 - t) ** 2
    else:
        want = 2 * scale**2
    # the sample variance of a Laplace has relative standard error sqrt(5 / n)
    assert abs(x.var() / want - 1) < 6 * math.sqrt(5 / x.size)


@pytest.mark.parametrize(
    "shape, scale", [((2,), -1.0), ((2,), float("nan")), ((2,), "1"), ((-1,), 1.0), ((2,), True)]
)
@pytest.mark.parametrize("vectorised", [False, True])
def test_bad_input_is_one_privet_error(shape, scale, vectorised):
    with pytest.raises(InvalidParameterError, match="laplace_noise"):
        laplace_noise(shape, scale, discrete=True, vectorised=vectorised)


@pytest.mark.parametrize("vectorised", ["yes", 1, None])
def test_vectorised_must_be_a_bool(vectorised):
    with pytest.raises(InvalidParameterError, match="vectorised must be True or False"):
        laplace_noise((2,), 1.0, discrete=True, vectorised=vectorised)
