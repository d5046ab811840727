"""Privacy guarantees: (epsilon, delta) pairs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from privet.errors import InvalidParameterError


def check_epsilon(epsilon: float, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float, or raise if it is not a valid privacy loss."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{name} must be a number, got {epsilon!r} of type {type(epsilon).__name__}."
        ) from None
    if math.isnan(value) or value < 0 or (math.isinf(value) and not allow_inf):
        raise InvalidParameterError(
            f"{name} must be a finite number >= 0, got {epsilon!r}; "
            "pass a positive value such as 1.0."
        )
    return value


def check_delta(delta: float, name: str = "delta") -> float:
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{name} must be a number in [0, 1), got {delta!r} of type {type(delta).__name__}."
        ) from None
    if not (0.0 <= value < 1.0):
        raise InvalidParameterError(
            f"{name} must lie in [0, 1), got {delta!r}; use 0 for pure DP or a value "
            "well below 1/n such as 1e-6."
        )
    return value


def check_positive(value: float, name: str, owner: str) -> float:
    """``value`` as a finite float > 0 (an entry's scale, sigma or sensitivity), or raise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{owner}: {name} must be a number, got {value!r}.") from None
    if not math.isfinite(v) or v <= 0:
        raise InvalidParameterError(f"{owner}: {name} must be finite and > 0, got {value!r}.")
    return v


@dataclass(frozen=True, slots=True)
class Guarantee:
    """An (epsilon, delta)-DP guarantee; ``delta=0`` is pure DP.

    ``epsilon`` may be ``math.inf`` only through :meth:`unbounded` or for a
    non-private release (see :class:`privet.ledger.NonPrivate`).
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @classmethod
    def unbounded(cls) -> Guarantee:
        """A budget with no limit: for paper-faithful runs that release exact aggregates.

        The only way to give a ledger an infinite budget: ``Ledger(budget=float("inf"))``
        or ``Guarantee(math.inf)`` as a budget is refused as a likely mistake.
        """
        return _UNBOUNDED

    @property
    def is_unbounded(self) -> bool:
        """Whether this is the explicit :meth:`unbounded` budget."""
        return self is _UNBOUNDED

    def __reduce__(self) -> tuple[object, ...]:
        if self is _UNBOUNDED:
            return (Guarantee.unbounded, ())
        return (Guarantee, (self.epsilon, self.delta))

    @property
    def is_pure(self) -> bool:
        return self.delta == 0.0

    @property
    def is_finite(self) -> bool:
        return math.isfinite(self.epsilon)

    def fits_in(self, budget: Guarantee) -> bool:
        """Whether this guarantee is within ``budget``, up to float rounding.

        Sums of many charges (0.1 ten times is 0.9999999999999999) are compared
        with a relative tolerance of 1e-9 so exact splits of a budget fit. The
        tolerance is relative only: a budget of 1e-12 never covers 2e-12, and a
        budget of 0 covers only 0.
        """
        if math.isinf(budget.epsilon):
            return True  # Guarantee.unbounded(): a paper-faithful run that accepts any loss
        eps_ok = self.epsilon <= budget.epsilon * (1 + 1e-9)
        delta_ok = self.delta <= budget.delta * (1 + 1e-9)
        return eps_ok and delta_ok

    def __str__(self) -> str:
        eps = "∞" if math.isinf(self.epsilon) else f"{self.epsilon:.6g}"
        return f"ε={eps}" + ("" if self.delta == 0 else f", δ={self.delta:.3g}")


_UNBOUNDED = Guarantee(math.inf, 0.0)
