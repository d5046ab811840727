"""A wall-clock limit for one call in the fuzz tests (main thread, POSIX SIGALRM)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block if it runs for more than ``seconds``."""

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the call did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
