"""Small helpers shared by the ledger tests (imported by name: tests have no packages)."""

from __future__ import annotations

import io
import math

from rich.console import Console


def render_text(renderable, width: int = 160) -> str:
    """Plain text of a rich renderable."""
    console = Console(record=True, width=width, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def close_enough(a: float, b: float, rel: float = 1e-9) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
