"""Statistical helpers for the mechanisms' tests (imported by name; conftest keeps fixtures).

Every statistical assertion is made at a stated confidence, not against a fixed
seed (OpenDP's samplers cannot be seeded): each test fails by chance with
probability at most ALPHA (1e-5), so the whole folder (about 80 such
assertions) fails by chance with probability below 0.1%.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

ALPHA = 1e-5
"""Per-assertion false-failure probability of the statistical tests."""

CONFIDENCE = 1 - ALPHA
Z = float(stats.norm.ppf(1 - ALPHA / 2))


def assert_mean(samples: np.ndarray, mean: float, variance: float) -> None:
    """|sample mean - mean| <= z sqrt(variance / n): a CLT bound at confidence 1 - ALPHA."""
    x = np.asarray(samples, dtype=float).ravel()
    bound = Z * math.sqrt(variance / x.size)
    assert abs(x.mean() - mean) <= bound, (x.mean(), mean, bound)


def assert_variance(samples: np.ndarray, variance: float, mean: float | None = None) -> None:
    """Sample variance matches ``variance`` within a CLT bound on squared deviations.

    With the true mean known the squared deviations are i.i.d. with mean
    ``variance``; their empirical standard deviation gives the bound.
    """
    x = np.asarray(samples, dtype=float).ravel()
    center = x.mean() if mean is None else mean
    sq = (x - center) ** 2
    bound = Z * sq.std(ddof=1) / math.sqrt(x.size) + (0 if mean is not None else variance / x.size)
    assert abs(sq.mean() - variance) <= bound * 1.05 + 1e-9 * variance, (sq.mean(), variance)


def assert_ks(samples: np.ndarray, cdf) -> None:
    """Kolmogorov–Smirnov goodness of fit at level ALPHA."""
    res = stats.kstest(np.asarray(samples, dtype=float).ravel(), cdf)
    assert res.pvalue > ALPHA, res


def assert_frequencies(indices: np.ndarray, probabilities: np.ndarray) -> None:
    """Chi-square goodness of fit of category frequencies at level ALPHA (cells pooled >= 5)."""
    p = np.asarray(probabilities, dtype=float)
    counts = np.bincount(np.asarray(indices).ravel(), minlength=p.size).astype(float)
    expected = p * counts.sum()
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    res = stats.chisquare(obs, exp)
    assert res.pvalue > ALPHA, (res, counts, expected)
