"""What a budget and a charge may be: the limits checked before anything is stored."""

from __future__ import annotations

import math
import numbers
from typing import Any

from privet.errors import InvalidParameterError
from privet.ledger.entries import Entry
from privet.ledger.guarantee import Guarantee

#: The largest epsilon a budget may have (beyond it e^epsilon overflows and no
#: statement is meaningful); use Guarantee.unbounded() for no limit at all.
MAX_EPSILON = 1e12


def check_budget(budget: Any) -> Guarantee:
    """A ledger budget as a Guarantee; refuse anything else, and implicit infinity."""
    if isinstance(budget, Guarantee):
        g = budget
    elif isinstance(budget, numbers.Real) and not isinstance(budget, bool):
        g = Guarantee(budget)
    else:
        raise InvalidParameterError(
            f"A ledger budget is a Guarantee(epsilon, delta) or an epsilon, got {budget!r}."
        )
    if math.isinf(g.epsilon):
        if g.is_unbounded:
            return g
        raise InvalidParameterError(
            f"A ledger budget of epsilon=inf ({budget!r}) is refused: it would accept any "
            "privacy loss. Give a finite epsilon, or budget=Guarantee.unbounded() if a "
            "paper-faithful run must release exact aggregates knowingly."
        )
    if g.epsilon > MAX_EPSILON:
        raise InvalidParameterError(
            f"A ledger budget of epsilon={g.epsilon!r} is above {MAX_EPSILON:g}, where no "
            "privacy statement is meaningful; give a smaller epsilon, or "
            "Guarantee.unbounded() for no limit."
        )
    return g


def check_entry_size(entry: Entry | Guarantee) -> None:
    eps = entry.epsilon
    if math.isfinite(eps) and eps > MAX_EPSILON:
        raise InvalidParameterError(
            f"epsilon={eps!r} is above {MAX_EPSILON:g}, where no privacy statement is "
            "meaningful; nothing was charged. Use a smaller epsilon."
        )
    rho = entry.rho if isinstance(entry, Entry) else None
    if rho is not None and not rho <= MAX_EPSILON**2:
        raise InvalidParameterError(
            f"rho={rho!r} is too large to account for; nothing was charged."
        )


def left_of(budget: Guarantee, used: Guarantee) -> Guarantee:
    if math.isinf(budget.epsilon):
        return budget
    return Guarantee(max(0.0, budget.epsilon - used.epsilon), max(0.0, budget.delta - used.delta))
