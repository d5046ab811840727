"""Stored forms: one committed charge, and guarantees as JSON values."""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from privet.errors import LedgerCorruptError, PrivetError
from privet.ledger.entries import Claim, Entry
from privet.ledger.guarantee import Guarantee


@dataclass(frozen=True, slots=True)
class ChargeLabels:
    """What a charge records besides its entry and its scope, checked before anything else.

    The mechanism's name, the sensitivity it was calibrated for, and the
    learner (``caller``), step and published ``claim`` that charged it: passed
    as one value from :meth:`Scope.charge` and :meth:`Ledger.charge_many` down
    to the :class:`ChargeRecord` that stores them.
    """

    mechanism: str
    sensitivity: float | None
    caller: str
    step: str
    claim: Claim | None


@dataclass(frozen=True, slots=True)
class ChargeRecord:
    """One committed charge, as stored.

    ``relation`` is the neighbouring relation the mechanism's analysis assumed,
    ``sensitivity`` the sensitivity it was calibrated for, ``caller``/``step``
    the learner and the step of its algorithm that charged it.
    """

    id: int
    scope_id: int
    path: str
    entry: Entry
    mechanism: str
    sensitivity: float | None
    relation: str
    caller: str
    step: str
    claim: Claim | None
    timestamp: float
    reservation: int | None

    @property
    def guarantee(self) -> Guarantee:
        return self.entry.guarantee()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope_id": self.scope_id,
            "path": self.path,
            "entry": self.entry.to_dict(),
            "mechanism": self.mechanism,
            "sensitivity": self.sensitivity,
            "relation": self.relation,
            "caller": self.caller,
            "step": self.step,
            "claim": None if self.claim is None else self.claim.to_dict(),
            "timestamp": self.timestamp,
            "reservation": self.reservation,
        }

    def to_row(self, dataset: str, delta: float = 0.0) -> dict[str, Any]:
        """This charge as one flat row of plain values, for tables, CSV and pandas.

        The columns of ``privet ledger history`` and of ``privet ledger export
        --format csv``: the time in UTC, who charged (caller, step, scope), the
        (epsilon, delta) the ledger proves for this release alone within ``delta``
        (the budget's; :func:`privet.ledger.per_charge.alone`) with the accountant
        that proved it, the noise's own parameters (``sigma``, ``scale``, ``rho``,
        ``mu`` and every field in ``parameters``), and the paper's claim beside them.
        """
        from privet.ledger.per_charge import alone, native_parameters

        c = self.claim
        bound = alone(self.entry, delta)
        return {
            "dataset": dataset,
            "id": self.id,
            "time": utc_text(self.timestamp),
            "caller": self.caller,
            "step": self.step,
            "scope": self.path,
            "mechanism": self.mechanism,
            "entry": type(self.entry).__name__,
            "epsilon": bound.guarantee.epsilon,
            "delta": bound.guarantee.delta,
            "accountant": bound.method,
            "at_delta": delta,
            **native_parameters(self.entry),
            "relation": self.relation,
            "sensitivity": self.sensitivity,
            "claim_epsilon": None if c is None else c.epsilon,
            "claim_delta": None if c is None else c.delta,
            "claim_source": None if c is None else c.source,
            "claim_note": None if c is None else c.note,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ChargeRecord:
        """The record :meth:`to_dict` wrote; a malformed one raises LedgerCorruptError."""
        try:
            return ChargeRecord._from_dict(d)
        except PrivetError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LedgerCorruptError(
                f"A stored charge record is malformed ({type(exc).__name__}: {exc}); the "
                "ledger document is damaged. Restore it from a backup."
            ) from None

    @staticmethod
    def _from_dict(d: dict[str, Any]) -> ChargeRecord:
        # A ledger holds many records of few kinds (a DP-SGD run: 100,000 alike): their
        # texts are interned and equal entries shared (entries are immutable).
        return ChargeRecord(
            id=_int(d["id"]),
            scope_id=_int(d["scope_id"]),
            path=_str(d["path"]),
            entry=_shared_entry(d["entry"]),
            mechanism=sys.intern(_str(d["mechanism"])),
            sensitivity=None if d["sensitivity"] is None else float(d["sensitivity"]),
            relation=sys.intern(_str(d["relation"])),
            caller=sys.intern(_str(d["caller"])),
            step=sys.intern(_str(d["step"])),
            claim=None if d["claim"] is None else Claim.from_dict(d["claim"]),
            timestamp=float(d["timestamp"]),
            reservation=None if d["reservation"] is None else _int(d["reservation"]),
        )


@functools.lru_cache(maxsize=1024)
def _entry_from_items(items: tuple[tuple[str, Any], ...]) -> Entry:
    return Entry.from_dict(dict(items))


def _shared_entry(data: Any) -> Entry:
    """``Entry.from_dict(data)``, one object for equal stored entries."""
    if isinstance(data, dict):
        try:
            return _entry_from_items(tuple(sorted(data.items())))
        except TypeError:  # an unhashable value: a malformed entry, reported by from_dict
            pass
    return Entry.from_dict(data)


def utc_text(ts: float) -> str:
    """A POSIX time as ``YYYY-MM-DD HH:MM:SS UTC``."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, got {v!r}")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {v!r}")
    return v


def eps_text(eps: float) -> str:
    """An epsilon as stored text: ``"inf"`` or the exact repr of the float."""
    return "inf" if math.isinf(eps) else repr(float(eps))


def eps_from_text(text: Any) -> float:
    if text == "inf":
        return math.inf
    if not isinstance(text, str | int | float) or isinstance(text, bool):
        raise TypeError(f"expected an epsilon, got {text!r}")
    return float(text)


def guarantee_dict(g: Guarantee) -> dict[str, Any]:
    return {"epsilon": "inf" if math.isinf(g.epsilon) else g.epsilon, "delta": g.delta}


def guarantee_from(d: Any) -> Guarantee:
    if not isinstance(d, dict):
        raise TypeError(f"expected a guarantee object, got {d!r}")
    eps = eps_from_text(d["epsilon"])
    if math.isinf(eps) and float(d["delta"]) == 0.0:
        return Guarantee.unbounded()
    return Guarantee(eps, float(d["delta"]))
