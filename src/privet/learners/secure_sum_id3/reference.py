"""Seed 001's ID3 over many parties, computed in this process (the reference path).

The secure summation of Alg. 2 returns exactly the sum of the parties' local
count vectors (and, in the DP variant, the sum of their noise shares), so the
reference path adds the vectors here: the same counts, hence the same tree as
the real protocol for the exact variant, and the same distribution for the DP
variant (the n noise shares are drawn at once as their sum, which has the same
law). It is what the accuracy sweeps of Fig. 2 use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from privet.learners.secure_sum_id3.grower import (
    Level,
    LevelGrower,
    TreeArrays,
    local_counts,
    route,
)
from privet.learners.secure_sum_id3.sharing import noise_shares, pooled_noise
from privet.mechanisms import recorder
from privet.mechanisms.laws import AdditiveLaw, NegativeBinomialDifferenceLaw


def _noisy_total(
    total: np.ndarray, scale: float, n_parties: int, rng: np.random.Generator
) -> np.ndarray:
    """The summed counts plus every party's noise share, through the release recorder
    (:mod:`privet.mechanisms.recorder`), so that a white-box audit sees the release.

    With two or more parties the release is recorded as party 0 sees it: the
    strongest adversary the proof covers is any single party (party 0 without
    loss of generality), since any n - 1 shares add up to a discrete Laplace.
    First its own share, which does not depend on the data, then the sum less
    that share, a discrete Laplace(``scale``) around the counts. The
    output is their sum, which has the law of all n shares drawn at once. An
    audit of the sum alone would test a weaker adversary: the pooled noise
    (negative binomial difference, r = n / (n - 1)) loses less than epsilon on
    most outputs.
    """
    if n_parties < 2:  # one party adds the whole noise: the outsider's view
        law = NegativeBinomialDifferenceLaw.pooled(n_parties, scale)
        return recorder.release(  # type: ignore[no-any-return]
            law,
            total,
            lambda: total + pooled_noise(total.shape, scale, n_parties, rng),
            label="secure sum (pooled noise shares)",
        )
    own = recorder.release(
        NegativeBinomialDifferenceLaw.share(n_parties, scale),
        np.zeros_like(total),
        lambda: noise_shares(total.shape, scale, n_parties, rng),
        label="party 0's own noise share (no data)",
    )
    seen = recorder.release(
        AdditiveLaw("laplace", scale, discrete=True),
        total,
        lambda: total + pooled_noise(total.shape, scale, n_parties, rng, of=n_parties - 1),
        label="secure sum less party 0's share (what party 0 learns)",
    )
    return np.asarray(seen) + np.asarray(own)  # type: ignore[no-any-return]


def grow_reference(
    codes: Sequence[np.ndarray],
    ys: Sequence[np.ndarray],
    sizes: Sequence[int],
    n_classes: int,
    max_depth: int,
    *,
    scales: Sequence[float] | None = None,
    rng: np.random.Generator | None = None,
    before_release: Callable[[Level, LevelGrower], None] | None = None,
) -> TreeArrays:
    """Alg. 3 on the parties' data ``codes[i], ys[i]`` with in-process summation.

    Parameters
    ----------
    codes, ys : sequences of arrays
        Each party's integer-coded rows and class codes.
    scales : sequence of float or None
        Discrete-Laplace scale per level (DP variant); None for exact counts.
    rng : numpy Generator
        Noise source of the DP variant.
    before_release : callable, optional
        Called with each level before its sums exist (the estimator charges
        the ledger there).
    """
    n_parties = len(codes)
    all_codes = np.concatenate([np.asarray(c, dtype=np.int64) for c in codes])
    all_y = np.concatenate([np.asarray(y, dtype=np.int64) for y in ys])
    noisy = scales is not None
    if noisy and rng is None:
        rng = np.random.default_rng()
    grower = LevelGrower(sizes, n_classes, max_depth, marginals=not noisy, noisy=noisy)
    slot = np.zeros(all_y.shape[0], dtype=np.int64)
    level: Level | None = grower.root()
    while level is not None:
        if before_release is not None:
            before_release(level, grower)
        # sum_i v_i over the parties = the counts of the pooled rows
        total = local_counts(grower, level, all_codes, all_y, slot)
        if noisy:
            total = _noisy_total(total, float(scales[level.depth]), n_parties, rng)
        level, routes = grower.decide(level, total)
        slot = route(all_codes, slot, routes)
    return grower.tree
