"""Charging OpenDP measurements: read the privacy map, turn it into an entry."""

from __future__ import annotations

from typing import Any

from privet.errors import InvalidParameterError, RelationMismatchError, UnsupportedEntryError
from privet.ledger.entries import ZCDP, ApproxDP, Entry, PureDP
from privet.ledger.relation import NeighbouringRelation


def entry_for_measurement(
    measurement: Any, d_in: Any, relation: NeighbouringRelation
) -> tuple[Entry, str]:
    """The ledger entry for ``measurement`` at input distance ``d_in``.

    The relation is checked where OpenDP's input metric says it: a symmetric
    (insert/delete) distance is add/remove, where one replaced record is a
    distance of 2; change-one and Hamming distances are replace-one.
    """
    measure = str(measurement.output_measure)
    metric = str(measurement.input_metric)
    if relation is NeighbouringRelation.ADD_REMOVE and (
        "ChangeOne" in metric or "Hamming" in metric
    ):
        raise RelationMismatchError(
            f"The OpenDP measurement's input metric {metric} bounds replace-one changes, "
            "but the ledger uses add/remove neighbours; build the measurement on "
            "SymmetricDistance or open the ledger with relation='replace_one'."
        )
    if (
        relation is NeighbouringRelation.REPLACE_ONE
        and ("SymmetricDistance" in metric or "InsertDelete" in metric)
        and float(d_in) < 2
    ):
        raise RelationMismatchError(
            f"Under replace-one neighbours a replaced record is {metric} distance 2, "
            f"got d_in={d_in!r}; pass d_in=2."
        )
    dataset_metric = any(
        m in metric for m in ("SymmetricDistance", "InsertDelete", "ChangeOne", "Hamming")
    )
    if dataset_metric and float(d_in) < 1:
        raise InvalidParameterError(
            f"d_in={d_in!r} is below one record for the dataset distance {metric}; the "
            "privacy map would charge (almost) nothing for touching the data. Pass d_in=1 "
            "(add/remove, change-one) or d_in=2 (symmetric distance under replace-one)."
        )
    loss = measurement.map(d_in)
    name = f"opendp[{measure}]"
    if measure == "MaxDivergence":
        return PureDP(epsilon=float(loss)), name
    if measure == "ZeroConcentratedDivergence":
        return ZCDP(rho=float(loss)), name
    if measure.startswith("Approximate(MaxDivergence"):
        eps, delta = loss
        return ApproxDP(epsilon=float(eps), delta=float(delta)), name
    raise UnsupportedEntryError(
        f"Cannot charge an OpenDP measurement into {measure}; use a measurement into "
        "MaxDivergence, ZeroConcentratedDivergence or Approximate(MaxDivergence) "
        "(e.g. wrap a profile with dp.c.make_fix_delta)."
    )


def check_measurement_input(measurement: Any, data: Any) -> None:
    """Refuse ``data`` outside the measurement's input domain, before anything is charged.

    OpenDP's privacy map holds only for members of the input domain; a value of
    the wrong type would also make the call fail after the charge.
    """
    import warnings

    domain = getattr(measurement, "input_domain", None)
    if domain is None or not hasattr(domain, "member"):
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = bool(domain.member(data))
    except Exception as exc:  # OpenDP raises its own exception types for foreign values
        ok, why = False, f" ({type(exc).__name__}: {exc})"
    else:
        why = ""
    if not ok:
        raise InvalidParameterError(
            f"The data passed to the OpenDP measurement is not a member of its input domain "
            f"{domain}{why}; got a value of type {type(data).__name__}. Convert the data "
            "(type, bounds, no NaN) to that domain. Nothing was charged."
        )
