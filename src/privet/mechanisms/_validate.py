"""Parameter and input checks shared by the mechanisms.

Every check raises :class:`~privet.errors.InvalidParameterError` with the
scikit-learn message shape (parameter, owner, allowed values, value got) and is
called before anything is charged, so a refused call costs nothing.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Set
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import (
    DiscreteGaussian,
    DiscreteLaplaceCounts,
    Entry,
    Exponential,
    Gaussian,
    Laplace,
    Ledger,
    NeighbouringRelation,
    PlanNode,
    Scope,
)

MAX_EPSILON = 1e6
"""Largest epsilon a mechanism accepts: beyond it nothing is protected (e^eps overflows)."""
MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-300, 1e300
MAX_INTEGER = 2**62
"""Integer counts (and sums of them) must stay below this in magnitude: they and their
discrete noise must fit in int64."""
"""Range of a scale, sigma or sensitivity (noise and answers stay finite floats)."""
_MAGNITUDES = ("scale", "sigma", "sensitivity")


#: Smallest sensitivity / scale ratio (a privacy loss): below it the loss, or a
#: Gaussian's squared ratio (its zCDP rho), underflows to 0 in floating point and
#: the ledger cannot state it; the noise drowns any answer anyway.
MIN_LOSS = 1e-300
#: A Gaussian's sigma and sensitivity are squared by its accounting: at most this.
MAX_SQUARED = 1e150


def bounded_loss(sensitivity: float, scale: float, owner: str, *, squared: bool = False) -> None:
    """Refuse a sensitivity / scale ratio (the privacy loss) above MAX_EPSILON, or one
    the accounting cannot represent: below MIN_LOSS (its square, with ``squared``, for
    a Gaussian), or a sigma or sensitivity whose square overflows."""
    if sensitivity / scale > MAX_EPSILON:
        raise InvalidParameterError(
            f"{owner}: sensitivity / scale = {sensitivity / scale:.3g} is above "
            f"{MAX_EPSILON:g}, a privacy loss that protects nothing and overflows the "
            "accounting; raise the noise scale."
        )
    floor = math.sqrt(MIN_LOSS) if squared else MIN_LOSS
    if sensitivity / scale < floor or (squared and max(sensitivity, scale) > MAX_SQUARED):
        what = "sigma and sensitivity at most {MAX_SQUARED:g}, and " if squared else ""
        raise InvalidParameterError(
            f"{owner}: sensitivity / scale = {sensitivity / scale:.3g} (scale {scale:g}, "
            f"sensitivity {sensitivity:g}) is outside what the accounting can state: it "
            f"needs {what.format(MAX_SQUARED=MAX_SQUARED)}sensitivity / scale at least "
            f"{floor:g} (below, the privacy loss underflows to 0 in floating point, and the "
            "noise drowns any answer). Rescale the query; nothing was charged."
        )


def positive(value: Any, name: str, owner: str, *, allow_inf: bool = False) -> float:
    """``value`` as a float in (0, inf) (or (0, inf] with ``allow_inf``).

    A parameter named ``epsilon`` must also be at most :data:`MAX_EPSILON`; a
    ``scale``, ``sigma`` or ``sensitivity`` must lie in [MIN_MAGNITUDE, MAX_MAGNITUDE].
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be a float in the range (0, inf); "
            f"got {value!r} of type {type(value).__name__}."
        )
    v = float(value)
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be a float in the range (0, inf); "
            f"got {value!r}. Pass a finite positive number such as 1.0."
        )
    if name in _MAGNITUDES and not MIN_MAGNITUDE <= v <= MAX_MAGNITUDE:
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must lie in [{MIN_MAGNITUDE:g}, "
            f"{MAX_MAGNITUDE:g}] (so that noise and answers stay finite floats); got "
            f"{value!r}. Rescale the query."
        )
    if name == "epsilon" and v > MAX_EPSILON:
        raise InvalidParameterError(
            f"The 'epsilon' parameter of {owner} must be at most {MAX_EPSILON:g}; got {value!r}. "
            "An epsilon that large protects nothing and overflows the accounting; use a "
            "non-private release (NonPrivate) if that is what is meant."
        )
    return v


def probability(value: Any, name: str, owner: str, *, allow_zero: bool = False) -> float:
    """``value`` as a float in (0, 1) (or [0, 1) with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be a float in (0, 1); got {value!r}."
        )
    v = float(value)
    lo_ok = v >= 0 if allow_zero else v > 0
    if math.isnan(v) or not lo_ok or v >= 1:
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be a float in {interval}; got {value!r}."
        )
    return v


def integer(value: Any, name: str, owner: str, *, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be an int >= {minimum}; got {value!r}."
        )
    if int(value) < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be an int >= {minimum}; got {value!r}."
        )
    return int(value)


def finite_width(lower: float, upper: float, dimension: int, owner: str) -> float:
    """dimension (upper - lower), refused when it overflows to infinity."""
    width = dimension * (upper - lower)
    if not math.isfinite(width):
        raise InvalidParameterError(
            f"The range [{lower:g}, {upper:g}] of {owner} is too wide: its width (times the "
            f"dimension {dimension}) overflows a float. Rescale the values to a narrower public "
            "range before releasing them."
        )
    return upper - lower


def finite_result(value: float, what: str, owner: str) -> float:
    """A derived noise parameter, refused when it is not a finite positive float."""
    if not (math.isfinite(value) and value > 0):
        raise InvalidParameterError(
            f"{owner}: {what} is {value!r}, which is not a finite positive float; the "
            "parameters are too extreme to sample from. Use an epsilon and a range whose "
            "ratio is within floating-point range (e.g. epsilon <= 1e6 and a range below 1e300)."
        )
    return value


def relation(value: Any, owner: str) -> NeighbouringRelation:
    try:
        return NeighbouringRelation.parse(value)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"The 'relation' parameter of {owner}: {exc}") from None


def one_of(values: dict[str, Any], owner: str) -> str:
    """Name of the single parameter of ``values`` that is not None."""
    given = [k for k, v in values.items() if v is not None]
    if len(given) != 1:
        names = " or ".join(repr(k) for k in values)
        raise InvalidParameterError(f"{owner} needs exactly one of {names}; got {given or 'none'}.")
    return given[0]


def _not_numbers(values: Any, name: str, owner: str) -> None:
    """Refuse text (str, bytes), complex numbers, dicts and sets where numbers are
    expected: numpy would parse b"1" or "1" into 1.0 and drop an imaginary part."""
    if isinstance(values, Mapping | Set | str | bytes):
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be an array of numbers; got a "
            f"{type(values).__name__}. Pass a list or a numpy array."
        )
    try:
        raw = values if isinstance(values, np.ndarray) else np.asarray(values)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be a rectangular array of numbers; got "
            f"a ragged {type(values).__name__} (rows of different lengths)."
        ) from None
    kind = raw.dtype.kind
    if kind == "O":
        flat = raw.ravel()
        if any(isinstance(v, str | bytes | complex | np.complexfloating) for v in flat):
            kind = "U"
    if kind in "SUc":
        what = "complex numbers" if kind == "c" else "text (str or bytes)"
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be an array of real numbers; got "
            f"{what}. Convert it to numbers explicitly: privet does not parse text or drop "
            "imaginary parts."
        )


def finite_array(values: Any, name: str, owner: str) -> NDArray[np.float64]:
    """``values`` as a float array with no NaN or infinity."""
    _not_numbers(values, name, owner)
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a Python int past 1e308
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be an array of real numbers; "
            f"got {type(values).__name__}."
        ) from None
    if arr.size and not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)].ravel()[0]
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be finite; found {bad!r}. "
            "Remove or impute NaN and infinite values before releasing them."
        )
    return arr


def integer_array(values: Any, name: str, owner: str) -> NDArray[np.int64]:
    """``values`` as an int64 array; floats are accepted only if integral.

    Magnitudes of 2^62 and above are refused (unsigned values at 2^63 used to
    wrap around to negative int64 counts; the noise must also fit in int64).
    """
    _not_numbers(values, name, owner)
    arr = np.asarray(values)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must be an array of integers; got dtype {arr.dtype}."
        )
    if np.issubdtype(arr.dtype, np.floating):
        arr = finite_array(arr, name, owner)
        if arr.size and not np.all(arr == np.round(arr)):
            raise InvalidParameterError(
                f"The '{name}' argument of {owner} must hold integer counts; got non-integral "
                "values. Use the real-valued Laplace mechanism for real values."
            )
    if arr.size and (arr.max() >= MAX_INTEGER or arr.min() <= -MAX_INTEGER):
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must hold integers of magnitude below 2^62 "
            "(so that they and their noise fit in int64); found one outside. Rescale or "
            "clip the counts to a public bound first."
        )
    return arr.astype(np.int64)


def in_range(arr: NDArray[Any], lower: float, upper: float, name: str, owner: str) -> None:
    """Refuse values outside the declared public range ``[lower, upper]``."""
    if arr.size == 0:
        return
    lo, hi = float(arr.min()), float(arr.max())
    if lo < lower or hi > upper:
        bad = lo if lo < lower else hi
        raise InvalidParameterError(
            f"The '{name}' argument of {owner} must lie in the declared range "
            f"[{lower:g}, {upper:g}]; found {bad!r}. Clip values to the public range first "
            "(clipping is part of the data preparation, not of the mechanism)."
        )


def scope_of(scope: Any, owner: str) -> Scope:
    """Accept a ledger scope, or a ledger (its root scope)."""
    if isinstance(scope, Ledger):
        return scope.root
    if isinstance(scope, Scope):
        return scope
    raise InvalidParameterError(
        f"{owner} needs a ledger scope to charge before it releases anything: pass "
        f"scope=ledger.root (or a child scope); got {scope!r}."
    )


#: Largest scale of integer noise (discrete Laplace shares): its draws must stay far
#: below 2**63 (numpy's negative binomial refuses scales above about 1e18).
MAX_DISCRETE_SCALE = 1e15


def check_entry(entry: Entry, owner: str) -> None:
    """Refuse an entry whose noise no privet sampler can draw: the same range checks
    the mechanism that charges it makes when it is built (scale, sigma, epsilon,
    sensitivity), so that a plan can be refused before anything is charged."""
    from privet.mechanisms.entries import DistributedLaplace, NoisyMax

    if isinstance(entry, Laplace | DistributedLaplace | DiscreteLaplaceCounts):
        scale = positive(entry.scale, "scale", owner)
        bounded_loss(positive(entry.sensitivity, "sensitivity", owner), scale, owner)
        discrete = isinstance(entry, DiscreteLaplaceCounts) or getattr(entry, "discrete", False)
        if discrete and scale > MAX_DISCRETE_SCALE:
            raise InvalidParameterError(
                f"The 'scale' parameter of {owner}'s integer noise must be at most "
                f"{MAX_DISCRETE_SCALE:g} (its draws must fit in 64-bit integers); got {scale:g}."
            )
    elif isinstance(entry, Gaussian | DiscreteGaussian):
        sigma = positive(entry.sigma, "sigma", owner)
        bounded_loss(positive(entry.sensitivity, "sensitivity", owner), sigma, owner, squared=True)
    elif isinstance(entry, Exponential | NoisyMax):
        positive(entry.epsilon, "epsilon", owner)
        positive(entry.sensitivity, "sensitivity", owner)


def check_plan(plan: PlanNode, owner: str) -> None:
    """Refuse a privacy plan with a release no sampler can draw, before anything is
    charged: a fit that would charge its first steps and then fail at a later one
    (a leaf's noise scale out of range) is refused whole."""
    seen: set[Entry] = set()
    todo = [plan]
    while todo:
        node = todo.pop()
        for charge in node.charges:
            if charge.entry in seen:
                continue
            seen.add(charge.entry)
            try:
                check_entry(charge.entry, owner)
            except InvalidParameterError as exc:
                step = f", step {charge.step!r}" if charge.step else ""
                raise InvalidParameterError(
                    f"{owner}: the privacy plan holds a release ({charge.mechanism}{step}) "
                    f"that no sampler can draw: {exc} Change the parameters (epsilon, "
                    "max_depth, the number of trees); nothing was charged."
                ) from None
        todo += [child for child, *_ in node.groups]
        todo += [child for child, *_ in node.subsamples]
