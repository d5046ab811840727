"""Helpers for the privet.mpc tests (imported by the test modules of this folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROGRAMS = Path(__file__).with_name("_mpc_party_programs.py")


def opened(mpc: Any, x: Any) -> Any:
    """Open a secure value in the one-party runtime."""
    return mpc.run(mpc.output(x))


def program(name: str) -> str:
    """Import path of a test party program, loaded by file path in each party."""
    return f"{PROGRAMS}:{name}"
