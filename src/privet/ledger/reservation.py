"""Reservations: a planned cost set aside before the data is read."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

from privet.ledger.guarantee import Guarantee
from privet.ledger.tree import ReservationState

if TYPE_CHECKING:  # the ledger owns its reservations; this module never imports it
    from privet.ledger.history import History as Ledger


class Reservation:
    """A planned cost set aside; a context manager.

    While the reservation is open, charges made inside its ``with`` block are
    checked against its amount, and everyone else keeps room for what it may still
    charge (its plan's cost, or its amount, less what it has charged). When the block
    exits (normally or by an exception) the reservation
    closes: the charges made in it stay (charged means released), the unused
    rest returns to the budget.
    """

    def __init__(self, ledger: Ledger, rid: int) -> None:
        self._ledger = ledger
        self._id = rid
        self._token: contextvars.Token[Any] | None = None

    @property
    def _state(self) -> ReservationState:
        # Looked up each time: a ledger may rebuild its model from its store.
        return self._ledger._reservations[self._id]

    @property
    def id(self) -> int:
        return self._id

    @property
    def amount(self) -> Guarantee:
        return self._state.amount

    @property
    def is_open(self) -> bool:
        return self._state.status == "open"

    def used(self) -> Guarantee:
        """Composed cost of the charges made inside this reservation so far."""
        return self._ledger._used(self._id).guarantee

    def __enter__(self) -> Reservation:
        self._token = self._ledger._active.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            self._ledger._active.reset(self._token)
            self._token = None
        self.close()

    def close(self) -> None:
        """Return the unused rest of the reservation to the budget."""
        if self.is_open:
            self._ledger._close_reservation(self._id)

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"Reservation(#{self.id}, {self.amount}, {state})"
