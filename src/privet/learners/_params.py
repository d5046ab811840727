"""Declarative parameter constraints for privet's estimators, on public APIs only.

Same shape as scikit-learn's ``_parameter_constraints`` (read
``sklearn/utils/_param_validation.py`` for the model), but privet's own: that
module is private to scikit-learn and may change in any release (diffprivlib
stopped importing with scikit-learn 1.9 through exactly such an import).

An estimator declares ``_parameter_constraints = {"name": [constraint, ...]}``;
a value is valid when it satisfies any constraint of its list. Constraints are

- ``Interval(Integral | Real, left, right, closed=...)``,
- ``StrOptions({"a", "b"})`` (strings from a set),
- a type (``isinstance``), ``None`` (the value ``None``),
- the strings ``"random_state"`` (None, an int, or a ``numpy.random.RandomState``
  / ``Generator``), ``"boolean"``, ``"array-like"``, ``"no_validation"``.

``validate_params(estimator)`` checks every declared parameter and raises
:class:`privet.errors.InvalidParameterError` in scikit-learn's message shape:
"The 'epsilon' parameter of DPID3Classifier must be a float in the range (0, inf).
Got -1 instead."
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError

__all__ = ["Interval", "StrOptions", "describe", "satisfies", "validate_params"]


@dataclass(frozen=True)
class Interval:
    """Numbers of ``type`` (``Integral`` or ``Real``) between ``left`` and ``right``.

    ``closed`` is one of "left", "right", "both", "neither"; ``None`` bounds are
    unbounded but hold finite numbers only (a bound of ``math.inf`` admits infinity).
    Booleans are never numbers here, and NaN is in no interval.
    """

    type: type
    left: float | None
    right: float | None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.type not in (Integral, Real):
            raise TypeError("Interval type must be numbers.Integral or numbers.Real")
        if self.closed not in ("left", "right", "both", "neither"):
            raise ValueError("closed must be 'left', 'right', 'both' or 'neither'")

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool | np.bool_) or not isinstance(value, self.type):
            return False
        if isinstance(value, Real) and not math.isfinite(float(value)):
            # NaN is in no interval; an infinite value only where a bound says so
            # (timeout=inf silently meant "never notice a stalled party")
            bounds = (abs(self.left or 0), abs(self.right or 0))
            if math.isnan(float(value)) or math.inf not in bounds:
                return False
        left_ok = self.left is None or (
            value >= self.left if self.closed in ("left", "both") else value > self.left
        )
        right_ok = self.right is None or (
            value <= self.right if self.closed in ("right", "both") else value < self.right
        )
        return bool(left_ok and right_ok)

    def __str__(self) -> str:
        kind = "an int" if self.type is Integral else "a float"
        lo = "-inf" if self.left is None else _fmt(self.left)
        hi = "inf" if self.right is None else _fmt(self.right)
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class StrOptions:
    """A string from a fixed set."""

    options: frozenset[str]

    def __init__(self, options: Iterable[str]) -> None:
        object.__setattr__(self, "options", frozenset(options))

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among " + "{" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def satisfies(constraint: Any, value: Any) -> bool:
    """Whether ``value`` satisfies one constraint."""
    if constraint is None:
        return value is None
    if isinstance(constraint, Interval | StrOptions):
        return constraint.is_satisfied_by(value)
    if constraint == "random_state":
        return (
            value is None
            or (isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value < 2**32)
            or isinstance(value, np.random.RandomState | np.random.Generator)
        )
    if constraint == "boolean":
        return isinstance(value, bool | np.bool_)
    if constraint == "array-like":
        return hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    raise TypeError(f"unknown parameter constraint {constraint!r}")


def describe(constraint: Any) -> str:
    """The constraint in words, as it appears in error messages."""
    if constraint is None:
        return "None"
    if isinstance(constraint, Interval | StrOptions):
        return str(constraint)
    if constraint == "random_state":
        return "an int in the range [0, 4294967295], a numpy RandomState or Generator, or None"
    if constraint == "boolean":
        return "a bool"
    if constraint == "array-like":
        return "an array-like"
    if isinstance(constraint, type):
        return f"an instance of '{constraint.__module__}.{constraint.__qualname__}'"
    return repr(constraint)


def validate_params(estimator: Any) -> None:
    """Check ``estimator``'s parameters against its ``_parameter_constraints``.

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the estimator, what is allowed and the value got.
    """
    constraints: dict[str, Any] = getattr(type(estimator), "_parameter_constraints", {})
    params = estimator.get_params(deep=False)
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None or allowed == "no_validation":
            continue
        if any(satisfies(c, value) for c in allowed):
            continue
        words = [describe(c) for c in allowed]
        must = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        raise InvalidParameterError(
            f"The {name!r} parameter of {type(estimator).__name__} must be {must}. "
            f"Got {value!r} instead. Fix the parameter and call fit again."
        )
