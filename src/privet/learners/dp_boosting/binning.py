"""Tree shapes from the public schema alone: which features each tree splits on.

A tree of depth ``k`` is *oblivious* and multiway: it splits on ``k`` distinct
features, each on every one of its public bins (the schema's categories, or
the bins of a numeric attribute), so its leaves are the cells of the product
of those features' domains. With ``k = 1`` a tree is one feature's bin
histogram, the shape DP-EBM boosts (Nori et al. 2021, Alg. 1); with ``k > 1``
the trees also learn interactions. Nothing here reads private data: the
features come from a random permutation of the schema's features (seeded by
``random_state``), cycled so every feature is visited once per pass, like
DP-EBM's cyclic order and the random splits of Maddock et al. (2022, Sec. 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def feature_schedule(
    n_features: int, n_trees: int, depth: int, rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """Features of each tree: consecutive, distinct draws from shuffled passes."""
    depth = min(depth, n_features)
    stream: list[int] = []
    out: list[tuple[int, ...]] = []
    for _ in range(n_trees):
        feats: list[int] = []
        while len(feats) < depth:
            if not stream:
                stream = rng.permutation(n_features).tolist()
            f = stream.pop(0)
            if f in feats:  # a pass boundary can repeat a feature within a tree
                stream.append(f)
                continue
            feats.append(f)
        out.append(tuple(feats))
    return out


def n_leaves(features: Sequence[int], domain_sizes: Sequence[int]) -> int:
    """Number of leaves (cells) of a tree over ``features``."""
    return math.prod(int(domain_sizes[f]) for f in features)


def leaf_index(
    codes: np.ndarray, features: Sequence[int], domain_sizes: Sequence[int]
) -> np.ndarray:
    """Leaf of every row: the mixed-radix number of its bin codes on ``features``."""
    leaf = np.zeros(codes.shape[0], dtype=np.int64)
    for f in features:
        leaf = leaf * int(domain_sizes[f]) + codes[:, f]
    return leaf


PASSES = 2
"""Passes over the schema's features in the default number of trees."""


def default_n_trees(n_features: int, depth: int) -> int:
    """:data:`PASSES` passes over the schema's features (a public quantity)."""
    return PASSES * math.ceil(n_features / max(1, min(depth, n_features)))
