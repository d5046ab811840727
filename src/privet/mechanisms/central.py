"""Central mechanisms: Laplace, discrete Laplace, Gaussian, exponential, noisy max, histograms.

All noise is drawn by OpenDP's samplers (see :mod:`privet.mechanisms._opendp`);
never by ``numpy.random.laplace``, whose floating-point output leaks the input
(Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012).

Every mechanism is vectorised: one call perturbs a whole array and makes one
charge, which is right when the array is one query of the declared L1 (or L2)
sensitivity, e.g. a histogram whose cells partition the records.
"""

from __future__ import annotations

from privet.mechanisms.additive import (
    DiscreteLaplaceMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    make_discrete_laplace,
    make_gaussian,
    make_laplace,
)
from privet.mechanisms.histogram import NoisyHistogram, make_noisy_histogram
from privet.mechanisms.selection import (
    ExponentialMechanism,
    ReportNoisyMax,
    discrete_noisy_max_probabilities,
    exponential_mechanism_probabilities,
    make_exponential,
    make_report_noisy_max,
    permute_and_flip_probabilities,
)

__all__ = [
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "NoisyHistogram",
    "ReportNoisyMax",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "discrete_noisy_max_probabilities",
    "exponential_mechanism_probabilities",
    "make_discrete_laplace",
    "make_exponential",
    "make_gaussian",
    "make_laplace",
    "make_noisy_histogram",
    "make_report_noisy_max",
    "permute_and_flip_probabilities",
]
