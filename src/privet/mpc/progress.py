"""Progress of a running MPC program, as the host learns of it: one line per opening.

A long protocol (ODP+FMPC-ID3 on Adult runs for many minutes) opens values at
known steps: a tree level's chosen splits, the noisy leaf counts, the predicted
labels. Every opening goes through :func:`privet.mpc.sharing.reveal`, so the
openings are the program's natural milestones, and their labels are public by
construction (every party learns that the value is opened).

The party started with ``--progress-file PATH`` appends one JSON line there
before each opening (:func:`record_openings`); :func:`privet.mpc.launch` starts
party 0 so, and :class:`ProgressReader` reads the new lines while it waits.
Each becomes an INFO record of the ``privet.mpc.progress`` logger and, where
given, a call of ``on_progress(Progress)``::

    import logging
    logging.basicConfig(level=logging.INFO)   # or: privet train ... --verbose

Nothing here touches the network: the host reads a file its own child writes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from privet.mpc.sharing import RevealEvent, add_reveal_hook

logger = logging.getLogger(__name__)

#: Party 0's progress file in a launch's work directory, and how often the host reads it (s).
PROGRESS_FILE = "party0.progress"
PROGRESS_EVERY = 1.0


@dataclass(frozen=True, slots=True)
class Progress:
    """One opening of party 0, in the order they happened.

    Attributes
    ----------
    index : int
        How many openings so far, this one included (1 for the first).
    seconds : float
        Time since party 0 started its program.
    label : str
        What is opened (the ``label`` given to ``reveal``).
    shape : tuple of int
        Shape of the opened array (``()`` for a scalar).
    """

    index: int
    seconds: float
    label: str
    shape: tuple[int, ...]


def record_openings(path: str | Path) -> Callable[[], None]:
    """In a party process: append a JSON line to ``path`` before every opening.

    Returns the function that stops recording (and closes the file).
    """
    start = time.monotonic()
    fh = open(path, "a", buffering=1, encoding="utf-8")  # one line, one write

    def hook(event: RevealEvent) -> None:
        line = {"t": round(time.monotonic() - start, 3), "label": event.label}
        fh.write(json.dumps({**line, "shape": list(event.shape)}) + "\n")

    remove = add_reveal_hook(hook)

    def stop() -> None:
        remove()
        fh.close()

    return stop


class ProgressReader:
    """On the host: the complete lines a party has added to its progress file since
    the last :meth:`poll`, as :class:`Progress` records, logged and passed on."""

    def __init__(
        self,
        path: Path,
        name: str,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.path = path
        self.name = name
        self.on_progress = on_progress
        self.seen: list[Progress] = []
        self._offset = 0

    def poll(self) -> list[Progress]:
        """Read what is new; a line still being written waits for the next poll."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:  # party 0 has not reached its program yet
            return []
        end = data.rfind(b"\n") + 1
        self._offset += end
        new = []
        for raw in data[:end].splitlines():
            line = json.loads(raw)
            item = Progress(
                index=len(self.seen) + 1,
                seconds=float(line["t"]),
                label=str(line["label"]),
                shape=tuple(int(s) for s in line["shape"]),
            )
            self.seen.append(item)
            new.append(item)
            logger.info(
                "%s: opening %d after %.1f s: %s %s",
                self.name,
                item.index,
                item.seconds,
                item.label,
                item.shape,
            )
            if self.on_progress is not None:
                self.on_progress(item)
        return new
