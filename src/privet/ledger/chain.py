"""Tamper evidence: a hash chain over every event that changes a ledger's state.

A ledger's state is the sequence of its events: the dataset's creation (name,
budget, relation, root scope), each partition or subsample group, each
reservation opened or closed, each charge, and the schema fingerprint. Event
``seq`` stores ``hash = sha256(previous hash, seq, kind, payload)``, and the
dataset stores the hash of its last event (its *head*). Whoever reads the events
recomputes the chain from the payloads *as they are stored now*: a raw SQL
``UPDATE`` of a budget, a rate or a charge, a deleted or inserted row, a
reordered event or a flipped bit then breaks the chain and the ledger refuses to
load. The chain is not a signature: someone who rewrites every hash with the
algorithm below can forge a history; it makes edits evident, not impossible.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from privet.errors import LedgerCorruptError

#: Kinds of event, in the order a new ledger may first see them.
KINDS = ("dataset", "group", "reserve", "close", "charge", "schema")


@dataclass(frozen=True, slots=True)
class Event:
    """One stored event: its position, kind, payload (JSON values) and chain hash."""

    seq: int
    kind: str
    payload: dict[str, Any]
    hash: str


def canonical(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(_dumps(payload))


def seal(prev: str, seq: int, kind: str, payload: dict[str, Any]) -> str:
    """The chain hash of an event that follows the event hashed ``prev``."""
    text = _dumps([prev, seq, kind, payload])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify(events: Iterable[Event], prev: str, where: str) -> str:
    """Recompute the chain after ``prev``; return the last hash or raise LedgerCorruptError."""
    for ev in events:
        if ev.kind not in KINDS:
            raise LedgerCorruptError(
                f"{where}: event {ev.seq} has unknown kind {ev.kind!r}; the ledger is damaged "
                "or was written by a newer privet."
            )
        expected = seal(prev, ev.seq, ev.kind, ev.payload)
        if expected != ev.hash:
            raise LedgerCorruptError(
                f"{where}: event {ev.seq} ({ev.kind}) does not match its hash chain: the "
                "ledger was edited outside privet or is damaged. Do not use it; restore it "
                "from a backup."
            )
        prev = ev.hash
    return prev


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:  # pragma: no cover - payloads are JSON by construction
        raise LedgerCorruptError(f"A ledger event is not JSON data: {exc}.") from None
