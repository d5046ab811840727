"""Single-process reference path of the federated CART (seed 003), vectorised with numpy.

What one data owner computes locally, and how the released sums are formed:

* :func:`local_histograms` -- party k's per-class bin counts of some tree
  features (the input of Alg. 3);
* :func:`local_bounds` -- party k's impurity lower-bound summands
  ``n_k G(Q_k, theta*_kj)`` of Thm. 7, one per feature (the input of Alg. 6's
  private sum);
* :func:`local_leaf_counts` -- party k's class counts in a leaf (Sec. 3.3.2);
* :func:`split_impurities` -- Alg. 4 on released noisy histograms
  (post-processing);
* :class:`ReferenceOps` -- the private sum of Alg. 1 + Alg. 3 in one process:
  every party's noise share (gamma DLPA, Sec. 2.4.1: Gamma differences, or by
  default their integer analogue, Polya differences) is added to its local vector, the noisy vector is encoded in the ring Z_{2^64} exactly as the
  protocol encodes it (:func:`to_ring`), and the encodings are summed mod
  2^64. Without masks: the masks of Alg. 1 cancel in the sum, so the released
  value is the same bit for bit as the protocol's for the same noise.

Impurity. The paper's binary impurity ``p (1 - p)`` is half the Gini index; for
C classes privet uses ``h(p) = (1 - sum_c p_c^2) / 2``, which equals ``p (1 - p)``
for two classes, is the mean squared error of the one-hot labels (so Thm. 7's
proof carries over unchanged), and keeps Lemma 3.2's sensitivity bound 5/4 (a
direct computation gives 1 for any C).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field

import numpy as np

from privet.errors import PrivetError
from privet.learners._protocols.switch import testing_seed
from privet.mechanisms import GammaDLPA, laplace_noise, recorder

#: Fractional bits of the fixed-point encoding of noisy values in Z_{2^64}.
FRAC_BITS = 32
_SCALE = float(2**FRAC_BITS)


class TestingNoiseRefused(PrivetError):
    """Public testing noise was requested outside a test."""

    __test__ = False  # not a pytest class


# ------------------------------------------------------------------ ring encoding
def to_ring(values: np.ndarray) -> np.ndarray:
    """Fixed point with FRAC_BITS fractional bits, two's complement in uint64."""
    v = np.asarray(values, dtype=float)
    return np.round(v * _SCALE).astype(np.int64).view(np.uint64)


def from_ring(words: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_ring` (for a sum of encodings: the sum of the values)."""
    return np.asarray(words, dtype=np.uint64).view(np.int64).astype(float) / _SCALE


def ring_sum(words: np.ndarray) -> np.ndarray:
    """Sum over the first axis mod 2^64."""
    w = np.asarray(words, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return w.sum(axis=0, dtype=np.uint64)


# ------------------------------------------------------------------ local statistics
def local_histograms(
    Z: np.ndarray, y: np.ndarray, features: np.ndarray, n_classes: int, max_bins: int
) -> np.ndarray:
    """Per-class bin counts ``(n_classes, len(features), max_bins)`` of one party's rows."""
    f = np.asarray(features, dtype=np.int64)
    nf = len(f)
    if Z.shape[0] == 0 or nf == 0:
        return np.zeros((n_classes, nf, max_bins))
    idx = (y[:, None] * nf + np.arange(nf)[None, :]) * max_bins + Z[:, f]
    counts = np.bincount(idx.ravel(), minlength=n_classes * nf * max_bins)
    return counts.reshape(n_classes, nf, max_bins).astype(float)


def local_leaf_counts(y: np.ndarray, n_classes: int) -> np.ndarray:
    return np.bincount(y, minlength=n_classes).astype(float)


def _border_impurities(H: np.ndarray, n_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled impurity ``n_left h_left + n_right h_right`` and n at every border (Alg. 4).

    ``H`` is ``(C, F, B)``; returns ``(F, B - 1)`` arrays for borders ``l = 1 .. B - 1``
    (scaled impurity ``inf`` where the border is not a candidate: beyond the
    feature's bins, or a side with a count <= 0).
    """
    left = np.cumsum(H, axis=2)[:, :, :-1]  # (C, F, B-1): bins < l
    total = H.sum(axis=2, keepdims=True)
    right = total - left
    n_left = left.sum(axis=0)
    n_right = right.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_left = np.clip(left / n_left, 0.0, 1.0)
        p_right = np.clip(right / n_right, 0.0, 1.0)
    h_left = (1.0 - np.sum(p_left**2, axis=0)) / 2.0
    h_right = (1.0 - np.sum(p_right**2, axis=0)) / 2.0
    scaled = n_left * h_left + n_right * h_right
    borders = np.arange(1, H.shape[2])[None, :]
    ok = (n_left > 0) & (n_right > 0) & (borders < np.asarray(n_bins)[:, None])
    return np.where(ok, scaled, np.inf), n_left + n_right


def split_impurities(H: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Weighted impurity ``G(Q, (j, l))`` of every border from noisy histograms (Alg. 4)."""
    scaled, n = _border_impurities(H, n_bins)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(scaled), scaled / n, np.inf)


def local_bounds(Z: np.ndarray, y: np.ndarray, n_classes: int, n_bins: np.ndarray) -> np.ndarray:
    """Party k's summands ``n_k G(Q_k, theta*_kj)`` of Thm. 7, one per tree feature.

    The minimum is over the public bin borders of feature j, the candidates of
    the federated split (Thm. 7 holds for any candidate set that contains the
    global candidates). An empty node gives 0; a feature with no valid border on
    this party's rows (all on one side) gives ``n_k h(Q_k)``, the impurity of
    not splitting, which every split's summand is at most.
    """
    p = len(n_bins)
    if Z.shape[0] == 0:
        return np.zeros(p)
    B = int(np.max(n_bins))
    H = local_histograms(Z, y, np.arange(p), n_classes, B)
    scaled, _ = _border_impurities(H, n_bins)
    counts = np.bincount(y, minlength=n_classes).astype(float)
    n = counts.sum()
    whole = n * (1.0 - np.sum((counts / n) ** 2)) / 2.0
    best = scaled.min(axis=1)
    return np.where(np.isfinite(best), np.minimum(best, whole), whole)


# ------------------------------------------------------------------ noise
@functools.lru_cache(maxsize=4096)
def _mechanism(parties: int, scale: float, discrete: bool = False) -> GammaDLPA:
    return GammaDLPA(parties=parties, scale=scale, colluders=0, discrete=discrete)


def gamma_shares(
    parties: int, scale: float, shape: tuple[int, ...], *, discrete: bool = False
) -> np.ndarray:
    """Party shares of Laplace(``scale``) noise: shape ``(parties, *shape)``.

    ``discrete=False``: ``G_k - G'_k``, ``G ~ Gamma(1/K, scale)`` (floats, the
    paper's Sec. 2.4.1). ``discrete=True``: integer Polya shares ``N_k - N'_k``,
    ``N ~ NB(1/K, 1 - e^(-1/scale))``, whose sum is the discrete Laplace(scale)
    (:mod:`privet.mechanisms.polya`), for integer-valued sums.
    """
    mech = _mechanism(int(parties), float(scale), bool(discrete))
    n = int(np.prod(shape)) if shape else 1
    return mech.shares(n).reshape((parties, *shape))


class _SharePool:
    """Unit-scale gamma DLPA shares drawn in blocks (``GammaDLPA(scale=1).shares``).

    ``Gamma(1/K, b) = b * Gamma(1/K, 1)``, so a share at scale b is b times a
    unit share; drawing unit shares in large blocks removes the per-sum
    sampler overhead of the reference path (thousands of small sums per tree).
    Every share is used once.
    """

    def __init__(self, parties: int, block: int = 1 << 16) -> None:
        self.parties = parties
        self.block = block
        self._buf = np.zeros((parties, 0))
        self._pos = 0

    def take(self, scale: float, shape: tuple[int, ...]) -> np.ndarray:
        n = int(np.prod(shape)) if shape else 1
        if self._pos + n > self._buf.shape[1]:
            self._buf = _mechanism(self.parties, 1.0).shares(max(self.block, n))
            self._pos = 0
        out = self._buf[:, self._pos : self._pos + n]
        self._pos += n
        return float(scale) * out.reshape((self.parties, *shape))


def check_testing_noise(seed: object) -> int:
    """Refuse public testing noise unless the test switch is on (:mod:`~privet.learners._protocols.switch`)."""
    return testing_seed(
        seed, TestingNoiseRefused, "(the launched parties inherit it) or drop the argument."
    )


def testing_share(
    seed: int, key: str, party: int, shape: tuple[int, ...], *, discrete: bool = False
) -> np.ndarray:
    """Public share of party ``party`` for the sum ``key``: multiples of 1/8 in [-2, 2]
    (integers in [-2, 2] with ``discrete``).

    Keyed by (seed, key, party) only, so the reference and the party processes
    draw the same values in any order; exactly representable in fixed point.
    """
    rng = np.random.default_rng([seed, zlib.crc32(key.encode()), party])
    if discrete:
        return rng.integers(-2, 3, size=shape).astype(float)
    return rng.integers(-16, 17, size=shape) / 8.0


# ------------------------------------------------------------------ sum operations
@dataclass
class ReferenceOps:
    """Alg. 1 + Alg. 3 for all K parties in this process (see module docstring).

    Parameters
    ----------
    parties : int
        K.
    testing_seed : int or None
        Public testing noise (refused unless the test switch is on).
    discrete : bool, default=True
        Integer Polya shares (the sound default, ``noise="discrete"``); False:
        the paper's float Gamma shares.
    aggregate : bool, default=False
        For simulations (the Sec. 4 benchmark): draw the sum of the K shares
        directly, with the exact vectorised sampler (the law of OpenDP's Laplace,
        :func:`privet.mechanisms.laplace_noise` with ``vectorised=True``), instead
        of K shares per sum. The released sums have the same distribution (K Polya
        differences NB(1/K) sum to a difference of geometrics, the discrete
        Laplace; K Gamma(1/K) differences to a Laplace), at 2 draws per value
        instead of 2K and without a generator per sum. The estimator keeps the
        per-party shares.
    """

    parties: int
    testing_seed: int | None = None
    discrete: bool = True
    aggregate: bool = False
    releases: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.testing_seed is not None:
            self.testing_seed = check_testing_noise(self.testing_seed)
        self._pool = _SharePool(int(self.parties))

    @property
    def testing(self) -> bool:
        return self.testing_seed is not None

    def noisy_sum(self, key: str, local: np.ndarray, scale: float) -> np.ndarray:
        """Release ``sum_k local[k] + Laplace(scale)`` (each party adds its share).

        A key ending in ``/*`` is the prefetched block of per-feature histograms
        of Alg. 6 (``grow(..., prefetch=True)``, shape ``(K, C, p, B)``): under
        testing noise each feature ``j`` gets the shares of the key ``.../j``, so
        the prefetched and the sequential control flows build the same tree.
        """
        local = np.asarray(local, dtype=float)
        shape = local.shape[1:]
        if self.testing_seed is not None:
            if key.endswith("/*"):
                per = (*shape[:-2], 1, shape[-1])
                shares = np.concatenate(
                    [
                        np.stack(
                            [
                                testing_share(
                                    self.testing_seed,
                                    f"{key[:-1]}{j}",
                                    k,
                                    per,
                                    discrete=self.discrete,
                                )
                                for k in range(self.parties)
                            ]
                        )
                        for j in range(shape[-2])
                    ],
                    axis=-2,
                )
            else:
                shares = np.stack(
                    [
                        testing_share(self.testing_seed, key, k, shape, discrete=self.discrete)
                        for k in range(self.parties)
                    ]
                )
        elif self.aggregate:  # the sum of the K shares, drawn directly (simulations)
            # NB(1/K) shares sum to a discrete Laplace(scale), Gamma(1/K) ones to a Laplace
            noise = laplace_noise(shape, scale, discrete=self.discrete, vectorised=True)
            total = np.asarray(local.sum(axis=0) + noise, dtype=float)
            self.releases[key] = total
            return total
        else:
            total = _recorded_sum(self, key, local, scale)
            self.releases[key] = total
            return total
        total = from_ring(ring_sum(to_ring(local + shares)))
        self.releases[key] = total
        return total


def _recorded_sum(ops: ReferenceOps, key: str, local: np.ndarray, scale: float) -> np.ndarray:
    """The noisy sum of ``local`` through the release recorder (:mod:`privet.mechanisms.recorder`):
    an outsider sees the parties' total plus one (discrete) Laplace(``scale``)."""
    shape = local.shape[1:]

    def draw() -> np.ndarray:
        if ops.discrete:  # a discrete Laplace is not a multiple of a unit one: no pool
            shares = gamma_shares(ops.parties, scale, shape, discrete=True)
        else:
            shares = ops._pool.take(scale, shape)
        return from_ring(ring_sum(to_ring(local + shares)))

    law = _mechanism(int(ops.parties), float(scale), bool(ops.discrete)).law()
    return recorder.release(law, local, draw, label=f"gamma_dlpa: {key}")  # type: ignore[no-any-return]


@dataclass
class ReplayOps:
    """Sum operations that return what a finished run released, by key (no data needed)."""

    releases: dict[str, np.ndarray]
    testing: bool = False

    def noisy_sum(self, key: str, local: np.ndarray, scale: float) -> np.ndarray:
        try:
            return np.asarray(self.releases[key], dtype=float)
        except KeyError:
            raise PrivetError(
                f"The protocol run has no release {key!r}: it did not follow the reference "
                "control flow (different parameters or schema?)."
            ) from None


__all__ = [
    "FRAC_BITS",
    "ReferenceOps",
    "ReplayOps",
    "TestingNoiseRefused",
    "from_ring",
    "gamma_shares",
    "local_bounds",
    "local_histograms",
    "local_leaf_counts",
    "ring_sum",
    "split_impurities",
    "testing_share",
    "to_ring",
]
