"""Helpers for tests that kill party or host processes (real processes, real signals)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from privet.mpc import spawn


def alive(pid: int) -> bool:
    """Whether ``pid`` is running (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def launch_killing(party: int, *, wait: float = 60.0) -> Callable[..., Any]:
    """A stand-in for :func:`privet.mpc.launch` that SIGKILLs ``party`` once it is connected.

    It spawns the real party processes, waits until ``party``'s log says it is
    connected to the others (at most ``wait`` seconds), kills it and returns what
    the launcher's ``wait`` reports: the run as the host sees a crashed party.
    """

    def launch(target: str, args: Any, **kwargs: Any) -> Any:
        kwargs.pop("run_timeout", None)
        with spawn(target, args, **kwargs) as group:
            log = group.workdir / f"party{party}.log"
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if log.exists() and "connected" in log.read_text(errors="replace"):
                    break
                time.sleep(0.05)
            group.kill(party)
            return group.wait(run_timeout=wait)

    return launch
