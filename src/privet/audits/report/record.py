"""The JSON record of an audit report (everything as data; ``inf`` as ``"inf"``)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any

from privet.audits.formatting import finite

__all__ = ["report_record"]


def report_record(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    learner_zoo: Sequence[Any] = (),
    notes: str = "",
) -> dict[str, Any]:
    """Everything as JSON-ready data."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        privet_version = version("privet")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        privet_version = "unknown"
    return finite(  # type: ignore[no-any-return]
        {
            "title": title,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "privet_version": privet_version,
            "notes": notes,
            "internal": any(getattr(a, "internal", False) for a in learners),
            "zoo": [r.to_dict() for r in zoo],
            "learner_zoo": [r.to_dict() for r in learner_zoo],
            "learners": [a.to_dict() for a in learners],
            "mia": {k: v.to_dict() for k, v in (mias or {}).items()},
        }
    )
