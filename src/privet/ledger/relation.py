"""The neighbouring relation a guarantee is stated for."""

from __future__ import annotations

import enum

from privet.errors import InvalidParameterError, RelationMismatchError


class NeighbouringRelation(enum.Enum):
    """Which datasets count as neighbours.

    ``ADD_REMOVE``: D' is D with one record added or removed (unbounded DP, the
    default). ``REPLACE_ONE``: D' is D with one record replaced by another
    (bounded DP). A replace-one neighbour is two add/remove steps apart, so a
    guarantee does not transfer from one relation to the other for free.
    """

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"

    @classmethod
    def parse(cls, value: NeighbouringRelation | str) -> NeighbouringRelation:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower().replace("-", "_").replace("/", "_"))
        except ValueError:
            allowed = ", ".join(repr(r.value) for r in cls)
            raise InvalidParameterError(
                f"Unknown neighbouring relation {value!r}; use one of {allowed}."
            ) from None

    @property
    def label(self) -> str:
        return "add/remove" if self is NeighbouringRelation.ADD_REMOVE else "replace-one"


ADD_REMOVE = NeighbouringRelation.ADD_REMOVE
REPLACE_ONE = NeighbouringRelation.REPLACE_ONE


def check_relation(
    ledger_relation: NeighbouringRelation,
    assumed: NeighbouringRelation | str | None,
    what: str,
) -> None:
    """Refuse an entry analysed under another relation than the ledger's."""
    if assumed is None:
        return
    assumed = NeighbouringRelation.parse(assumed)
    if assumed is not ledger_relation:
        raise RelationMismatchError(
            f"{what} is analysed for {assumed.label} neighbours but the ledger uses "
            f"{ledger_relation.label} neighbours; state the mechanism's sensitivity for "
            f"{ledger_relation.label} neighbours (e.g. a histogram has L1 sensitivity 1 "
            "under add/remove and 2 under replace-one) or open a ledger with "
            f"relation={assumed.value!r}."
        )
