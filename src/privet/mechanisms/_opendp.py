"""Cached OpenDP samplers: the only place central noise is drawn.

OpenDP's samplers are exact: the integer Laplace is the discrete Laplace
(two-sided geometric) and the integer Gaussian the discrete Gaussian of
Canonne, Kamath & Steinke (2020), sampled with exact arithmetic from the
operating system's CSPRNG; the float versions round the input to the grid
2^k and add discrete noise on that grid, so the floating-point attack on
``numpy.random.laplace`` (Mironov 2012) does not apply.

Granularity. With ``k=None`` OpenDP uses the finest float grid, which runs at
about a third of the speed. We pick, per call, the coarsest grid that keeps the
rounding of an ``n``-vector within a relative sensitivity slack of
``ROUNDING_SLACK``: ``n * 2^k <= ROUNDING_SLACK * sensitivity``. OpenDP's
privacy map accounts for this rounding (its map is (d_in + n 2^k) / scale for
the Laplace, (d_in + sqrt(n) 2^k)^2 / (2 scale^2) for the Gaussian), so the
mechanisms charge the sensitivity ``sensitivity * (1 + ROUNDING_SLACK)``; each
measurement's map is checked against that once, when it is built.

Each measurement is built once per (scale, vector size, granularity) and cached.

Volume. OpenDP's exact sampler draws about 1.4e5 values a second. Where the volume
needs more, :func:`laplace_int_vectorised` and :func:`laplace_float_vectorised`
draw the same distributions (the discrete Laplace on the integers, or on the same
grid 2^k with the same rounding and the same charged sensitivity) with the exact
numpy sampler of :mod:`privet.mechanisms._discrete_laplace`, 10-30x faster
(benchmarks/results/mechanisms_discrete_laplace.md).
They are used by the local Laplace randomiser (every local randomiser draws from
numpy, :mod:`privet.mechanisms._random`) and by the simulations of seed 003's
paper (synthetic data); a model's central releases keep OpenDP's sampler, which
reads the OS CSPRNG for every coin.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import opendp.prelude as dp
from numpy.typing import NDArray

from privet.errors import InvalidParameterError, PrivetError
from privet.mechanisms import _discrete_laplace
from privet.mechanisms._random import local_rng

ROUNDING_SLACK = 2.0**-30
"""Relative sensitivity slack that pays for rounding float inputs to OpenDP's grid."""

_MIN_K = -1074


def _enable() -> None:
    dp.enable_features("contrib")


def granularity(sensitivity: float, size: int) -> int:
    """Exponent k of the coarsest grid 2^k with size * 2^k <= slack * sensitivity."""
    k = math.floor(math.log2(ROUNDING_SLACK * sensitivity / max(size, 1)))
    return max(k, _MIN_K)


def _check(measurement: Any, d_in: float, bound: float, what: str) -> None:
    value = float(measurement.map(d_in))
    if value > bound * (1 + 1e-12):
        raise PrivetError(  # pragma: no cover - guards against a change in OpenDP
            f"OpenDP's {what} map gives {value!r} at d_in={d_in!r}, above the {bound!r} "
            "privet charges; refusing to sample. Report this as a bug in privet."
        )


def _laplace_bound(sensitivity: float, scale: float) -> float:
    return sensitivity * (1 + ROUNDING_SLACK) / scale


def _gaussian_bound(sensitivity: float, scale: float) -> float:
    return (sensitivity * (1 + ROUNDING_SLACK)) ** 2 / (2 * scale**2)


# constructor, metric and the map privet charges, per noise kind
_KINDS: dict[str, tuple[Any, Any, Any]] = {
    "Laplace": (lambda: dp.m.make_laplace, lambda T: dp.l1_distance(T=T), _laplace_bound),
    "Gaussian": (lambda: dp.m.make_gaussian, lambda T: dp.l2_distance(T=T), _gaussian_bound),
}


@functools.lru_cache(maxsize=1024)
def _float_measurement(kind: str, scale: float, size: int, k: int, sensitivity: float) -> Any:
    _enable()
    make, metric, bound = _KINDS[kind]
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    m = make()(domain, metric(float), scale=scale, k=k)
    _check(m, sensitivity, bound(sensitivity, scale), kind)
    return m


@functools.lru_cache(maxsize=1024)
def _int_measurement(kind: str, scale: float) -> Any:
    _enable()
    make, metric, _ = _KINDS[kind]
    return make()(dp.vector_domain(dp.atom_domain(T="i64")), metric("i64"), scale=scale)


@functools.lru_cache(maxsize=512)
def _noisy_max(scale: float, gumbel: bool) -> Any:
    _enable()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    measure = dp.zero_concentrated_divergence() if gumbel else dp.max_divergence()
    return dp.m.make_noisy_max(*space, measure, scale=scale)


def _vector(values: NDArray[Any], dtype: Any, measurement: Any) -> NDArray[Any]:
    """Apply ``measurement(size)`` (an OpenDP vector measurement) to ``values``, keeping the shape."""
    flat = np.ascontiguousarray(values, dtype=dtype).ravel()
    if flat.size == 0:
        return np.array(values, dtype=dtype)
    out = measurement(flat.size)(flat.tolist())
    return np.asarray(out, dtype=dtype).reshape(np.shape(values))


def _on_float_grid(build: Any, doc: str) -> Any:
    """A sampler ``(values, scale, sensitivity) -> noisy values`` on the grid chosen per call."""

    def sample(values: NDArray[np.float64], scale: float, sensitivity: float) -> NDArray:
        k_of = functools.partial(granularity, sensitivity)
        return _vector(values, float, lambda n: build(scale, n, k_of(n), sensitivity))

    sample.__doc__ = doc
    return sample


def _on_integers(build: Any, doc: str) -> Any:
    """A sampler ``(values, scale) -> noisy integers``."""

    def sample(values: NDArray[np.int64], scale: float) -> NDArray[np.int64]:
        return _vector(values, np.int64, lambda n: build(scale))

    sample.__doc__ = doc
    return sample


laplace_float = _on_float_grid(
    functools.partial(_float_measurement, "Laplace"),
    "values + Laplace(scale) noise on OpenDP's grid (see module docstring).",
)
laplace_int = _on_integers(
    functools.partial(_int_measurement, "Laplace"),
    "values + discrete Laplace(scale) noise (two-sided geometric).",
)
gaussian_float = _on_float_grid(
    functools.partial(_float_measurement, "Gaussian"),
    "values + N(0, scale^2) noise on OpenDP's grid (discrete Gaussian on 2^k).",
)
gaussian_int = _on_integers(
    functools.partial(_int_measurement, "Gaussian"), "values + discrete Gaussian(scale) noise."
)


_INT64_SAFE = 2**62
"""Inputs of the vectorised samplers stay below this in absolute value (grid units)."""


def laplace_int_vectorised(values: NDArray[np.int64], scale: float) -> NDArray[np.int64]:
    """``values`` + discrete Laplace(``scale``) noise, the law of :data:`laplace_int`,
    drawn a whole array at a time (:mod:`privet.mechanisms._discrete_laplace`).

    Falls back to OpenDP's sampler for a scale or values outside its 64-bit range.
    """
    arr = np.asarray(values, dtype=np.int64)
    if not _discrete_laplace.supports(scale) or (
        arr.size and float(np.abs(arr.astype(float)).max()) >= _INT64_SAFE
    ):
        return laplace_int(arr, scale)
    return _add_noise(arr, scale)


def _add_noise(arr: NDArray[np.int64], scale: float) -> NDArray[np.int64]:
    """``arr`` (|values| < 2^62) + exact discrete Laplace noise; an int64 overflow
    (noise beyond 2^62, probability below e^-512 per draw at scales below 2^53) is an
    error, never a wrapped value."""
    noise = _discrete_laplace.sample(arr.size, scale, local_rng()).reshape(arr.shape)
    total = arr + noise
    if np.any(((arr ^ total) & (noise ^ total)) < 0):  # both signs flipped: wrapped
        raise PrivetError(f"Discrete Laplace noise of scale {scale!r} overflowed 64 bits.")
    return total


def laplace_float_vectorised(
    values: NDArray[np.float64], scale: float, sensitivity: float, *, block: int | None = None
) -> NDArray[np.float64]:
    """``values`` + Laplace(``scale``) noise on the grid 2^k, the law of :data:`laplace_float`.

    As in OpenDP's float Laplace: each value is rounded to the nearest multiple of
    2^k, with k from :func:`granularity` (``n 2^k <= ROUNDING_SLACK * sensitivity``
    for the ``n`` values one neighbour can move, so neighbours' rounded vectors are
    at most ``sensitivity (1 + ROUNDING_SLACK)`` apart, the sensitivity privet
    charges); discrete Laplace noise of scale ``scale / 2^k`` is added in grid
    units, and the result is scaled back (a public function of the noisy
    integers). ``n`` is the whole array, or ``block`` when each block of that many
    values is a release of its own (a local randomiser's record: its grid then
    does not get finer with the number of owners). Exact ties round to even
    (OpenDP's rounding may differ; either moves a value by at most 2^(k-1)).
    Falls back to OpenDP's sampler when the grid values or the scale leave the
    64-bit range.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return arr.copy()
    k = granularity(sensitivity, arr.size if block is None else block)
    try:
        grid_scale = math.ldexp(scale, -k)
    except OverflowError:
        return laplace_float(arr, scale, sensitivity)
    with np.errstate(over="ignore"):
        units = np.ldexp(arr, -k)  # a power-of-two scaling (inexact only if subnormal)
    if (
        not np.all(np.isfinite(units))
        or float(np.abs(units).max()) >= _INT64_SAFE
        or math.ldexp(grid_scale, k) != scale
        or not _discrete_laplace.supports(grid_scale)
    ):
        return laplace_float(arr, scale, sensitivity)
    noisy = _add_noise(np.rint(units).astype(np.int64), grid_scale)
    return np.asarray(np.ldexp(noisy.astype(float), k))


def laplace_noise(
    shape: tuple[int, ...], scale: float, *, discrete: bool, vectorised: bool = False
) -> NDArray[np.float64]:
    """Laplace(scale) noise of ``shape`` from OpenDP's samplers: discrete Laplace on the
    integers, or continuous Laplace on OpenDP's grid (sensitivity 1).

    ``vectorised=True`` draws the same law with the exact numpy sampler
    (:func:`laplace_int_vectorised`, :func:`laplace_float_vectorised`): for
    simulations, where OpenDP's 1.4e5 values a second is the bottleneck.
    """
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < math.inf:
        raise InvalidParameterError(f"laplace_noise: scale must be finite and > 0, got {scale!r}.")
    if not all(isinstance(n, int | np.integer) and n >= 0 for n in shape):
        raise InvalidParameterError(
            f"laplace_noise: shape must be non-negative integers, got {shape!r}."
        )
    if not isinstance(vectorised, bool):
        raise InvalidParameterError(
            f"laplace_noise: vectorised must be True or False, got {vectorised!r}."
        )
    if discrete:
        draw_int = laplace_int_vectorised if vectorised else laplace_int
        return draw_int(np.zeros(shape, dtype=np.int64), scale).astype(float)
    draw_float = laplace_float_vectorised if vectorised else laplace_float
    return np.asarray(draw_float(np.zeros(shape), scale, 1.0), dtype=float)


def noisy_max(scores: NDArray[np.float64], scale: float, *, gumbel: bool) -> NDArray[np.int64]:
    """argmax of scores + noise, row by row: Gumbel(scale) or Exponential(scale) noise.

    ``scores`` is 1-D (one selection) or 2-D (one selection per row).
    """
    m = _noisy_max(scale, gumbel)
    arr = np.asarray(scores, dtype=float)
    rows = arr.reshape(-1, arr.shape[-1])
    out = np.fromiter((m(r.tolist()) for r in rows), dtype=np.int64, count=rows.shape[0])
    return out.reshape(arr.shape[:-1])
