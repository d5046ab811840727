"""The JSON document of a ledger (``Ledger.to_json`` / ``Ledger.from_json``).

The document lists the dataset, budget, relation, groups, reservations and charges
(format ``privet-ledger`` version 1, unchanged since the first release);
:func:`events_from_json` turns one back into the events that rebuild the ledger.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from privet.ledger.history import as_int, dataset_name, genesis
from privet.ledger.records import ChargeRecord, eps_text, guarantee_dict, guarantee_from
from privet.ledger.relation import NeighbouringRelation

if TYPE_CHECKING:
    from privet.ledger.history import History


def to_document(led: History) -> dict[str, Any]:
    """Everything in the ledger's model as JSON values."""
    data = {
        "format": "privet-ledger",
        "version": 1,
        "dataset": led.dataset,
        "budget": guarantee_dict(led.budget),
        "relation": led.relation.value,
        "root": led._root_id,
        "groups": [
            {
                "id": g.id,
                "parent": g.parent,
                "kind": g.kind,
                "stable": g.stable,
                "rate": g.rate,
                "method": g.method,
                "members": [{"id": m, "label": led._nodes[m].label} for m in g.members],
            }
            for g in (led._groups[k] for k in sorted(led._groups))
        ],
        "charges": [led._charges[k].to_dict() for k in sorted(led._charges)],
        "reservations": [
            {
                "id": r.id,
                "amount": guarantee_dict(r.amount),
                "status": r.status,
                "caller": r.caller,
                "pid": r.pid,
                "host": r.host,
                "created": r.created,
                "scope_id": r.scope_id,
                **({} if r.cost is None else {"cost": r.cost.to_payload()}),
            }
            for r in (led._reservations[k] for k in sorted(led._reservations))
        ],
    }
    if led._schema is not None:
        data["schema"] = led._schema
    return data


def events_from_json(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The events that rebuild a to_json() document, in an order that replays it."""
    budget = guarantee_from(data["budget"])
    if math.isinf(budget.epsilon) and not budget.is_unbounded:
        raise ValueError("an infinite budget must be Guarantee.unbounded()")
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "dataset",
            genesis(
                dataset_name(data["dataset"]),
                budget,
                NeighbouringRelation.parse(data["relation"]),
                root=as_int(data.get("root", 1)),
            ),
        )
    ]
    for g in sorted(data["groups"], key=lambda g: g["id"]):
        events.append(
            (
                "group",
                {
                    "id": as_int(g["id"]),
                    "parent": as_int(g["parent"]),
                    "kind": g["kind"],
                    "stable": bool(g["stable"]),
                    "rate": float(g["rate"]),
                    "method": str(g["method"]),
                    "members": [[as_int(m["id"]), str(m["label"])] for m in g["members"]],
                },
            )
        )
    closed = []
    for r in sorted(data["reservations"], key=lambda r: r["id"]):
        amount = guarantee_from(r["amount"])
        events.append(
            (
                "reserve",
                {
                    "id": as_int(r["id"]),
                    "epsilon": eps_text(amount.epsilon),
                    "delta": amount.delta,
                    "caller": str(r["caller"]),
                    "pid": as_int(r["pid"]),
                    "host": str(r["host"]),
                    "created": float(r["created"]),
                    "scope_id": as_int(r["scope_id"]),
                    **({"cost": r["cost"]} if "cost" in r else {}),
                },
            )
        )
        if r["status"] == "closed":
            closed.append(as_int(r["id"]))
        elif r["status"] != "open":
            raise ValueError(f"reservation status {r['status']!r}")
    for c in sorted(data["charges"], key=lambda c: c["id"]):
        record = ChargeRecord.from_dict(c)
        events.append(("charge", {"id": record.id, "record": record.to_dict()}))
    events += [("close", {"id": rid}) for rid in closed]
    if data.get("schema") is not None:
        events.append(("schema", {"fingerprint": str(data["schema"])}))
    return events
