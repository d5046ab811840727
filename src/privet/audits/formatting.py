"""How the audits write numbers: JSON-safe records and epsilons for people."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["finite", "format_epsilon"]


def finite(x: Any) -> Any:
    """JSON-friendly floats: inf and nan as strings, numpy scalars as Python ones.

    >>> finite({"eps": float("inf"), "k": [np.int64(3), float("nan")]})
    {'eps': 'inf', 'k': [3, 'nan']}
    """
    if isinstance(x, dict):
        return {str(k): finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [finite(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def format_epsilon(x: float | None, digits: int = 3) -> str:
    """``∞`` for infinity, ``—`` for None, else ``digits`` significant digits.

    >>> format_epsilon(float("inf")), format_epsilon(None), format_epsilon(0.123456)
    ('∞', '—', '0.123')
    """
    if x is None:
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if math.isnan(x):
        return "nan"
    return f"{x:.{digits}g}"
