"""One charge on its own: its proven (epsilon, delta) at a given delta, and its native parameters.

A ledger composes its charges over the scope tree; a history, a CSV export or a
report also wants each charge by itself. A Gaussian entry has no (epsilon, delta)
of its own (its ``epsilon`` is infinite: it is stated by sigma and sensitivity,
hence rho and mu), so its figure depends on the delta it is read at. This module
reads it with the ledger's own accountants, at the budget's delta: the smallest
epsilon that basic, advanced, zCDP, Gaussian-DP or Rényi composition proves for the
release alone (:func:`~privet.ledger.composition.best_guarantee`), next to the
parameters that determine it, so that a reader of the CSV can rebuild every figure.

The figure is of the release alone: a charge under a subsample is amplified by the
scope above it, and charges compose by the scope tree (``privet ledger show``),
not by adding these rows up.
"""

from __future__ import annotations

import json
import math
from typing import Any

from privet.ledger.composition import Bound, Cost, best_guarantee
from privet.ledger.entries import Entry

__all__ = ["alone", "native_parameters", "native_text"]


def alone(entry: Entry, delta: float) -> Bound:
    """The (epsilon, delta) the ledger proves for ``entry`` on its own within ``delta``.

    A pure or (epsilon, delta) entry keeps its own statement unless an accountant
    proves less; a Gaussian or zCDP entry is converted at ``delta`` (infinite at
    ``delta = 0``, where it has no finite guarantee).
    """
    return best_guarantee(Cost.of(entry), delta)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def native_parameters(entry: Entry) -> dict[str, Any]:
    """The entry's noise parameters: ``sigma``, ``scale``, ``rho``, ``mu`` (None where the
    entry has none), ``parameters``, every stored field as JSON text, and ``noise``, the
    short text of :func:`native_text`."""
    fields = {k: v for k, v in entry.to_dict().items() if k not in ("type", "module")}
    rho = entry.rho
    mu = getattr(entry, "gdp_mu", None)
    return {
        "sigma": _number(fields.get("sigma")),
        "scale": _number(fields.get("scale")),
        "rho": None if rho is None or not math.isfinite(rho) else float(rho),
        "mu": None if mu is None else float(mu),
        "parameters": json.dumps(fields, sort_keys=True, default=str),
        "noise": native_text(entry),
    }


def native_text(entry: Entry) -> str:
    """The native parameters in a few characters: ``σ=17.6 Δ=1.03 μ=0.0584``, ``b=2 Δ=1``."""
    fields = entry.to_dict()
    parts = []
    for key, sign in (("sigma", "σ"), ("scale", "b"), ("sensitivity", "Δ")):
        value = _number(fields.get(key))
        if value is not None:
            parts.append(f"{sign}={value:.3g}")
    mu = getattr(entry, "gdp_mu", None)
    if mu is not None:
        parts.append(f"μ={mu:.3g}")
    elif fields.get("sigma") is None and entry.rho is not None and math.isinf(entry.epsilon):
        parts.append(f"ρ={entry.rho:.3g}")
    return " ".join(parts)
