"""Progress of a running MPC program, as the host learns of it: one line per opening or step.

A long protocol (ODP+FMPC-ID3 on Adult runs for many minutes) opens values at
known steps: a tree level's chosen splits, the noisy leaf counts, the predicted
labels. Every opening goes through :func:`privet.mpc.sharing.reveal`, so the
openings are the program's natural milestones, and their labels are public by
construction (every party learns that the value is opened).

A protocol that keeps everything secret until the end marks its steps with
:func:`mark_step`: a line is written once the *shares* of a secret value are
computed on party 0, so nothing is opened. (MPyC runs a coroutine's body ahead
of the values it waits for, so a line written in the loop itself would mark
when a level was scheduled, not when it was done.) That a step is done is
public: the parties run the same public sequence of operations.

The party started with ``--progress-file PATH`` appends one JSON line there
before each opening and after each step (:func:`record_openings`);
:func:`privet.mpc.launch` starts party 0 so, and :class:`ProgressReader` reads
the new lines while it waits.
Each becomes an INFO record of the ``privet.mpc.progress`` logger and, where
given, a call of ``on_progress(Progress)``::

    import logging
    logging.basicConfig(level=logging.INFO)   # or: privet train ... --verbose

Nothing here touches the network: the host reads a file its own child writes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privet.mpc._runtime import get_runtime
from privet.mpc.sharing import add_reveal_hook

logger = logging.getLogger(__name__)

#: Party 0's progress file in a launch's work directory, and how often the host reads it (s).
PROGRESS_FILE = "party0.progress"
PROGRESS_EVERY = 1.0


@dataclass(frozen=True, slots=True)
class Progress:
    """One opening or step of party 0, in the order they happened.

    Attributes
    ----------
    index : int
        How many openings and steps so far, this one included (1 for the first).
    seconds : float
        Time since party 0 started its program.
    label : str
        What is opened (the ``label`` given to ``reveal``), or the step done
        (the ``label`` given to :func:`mark_step`).
    shape : tuple of int
        Shape of the opened array (``()`` for a scalar and for a step).
    kind : {"opening", "step"}
        A value opened, or a step whose result stays secret.
    """

    index: int
    seconds: float
    label: str
    shape: tuple[int, ...]
    kind: str = "opening"


#: Called with a step's label once it is done (:func:`record_openings` adds one).
_step_hooks: list[Callable[[str], None]] = []


def mark_step(x: Any, label: str) -> None:
    """Report ``label`` once the shares of the secret ``x`` are computed; opens nothing.

    Returns at once (no ``await``: the protocol's schedule is unchanged). Does
    nothing unless this party records its progress. ``label`` must be public,
    like a ``reveal`` label: a level number, never a value. ``x=None``: report now.
    """
    if not _step_hooks:
        return

    def done(_: object = None) -> None:
        for hook in list(_step_hooks):
            hook(label)

    if x is None:  # nothing secret to wait for: the step is done now
        done()
        return
    shares = get_runtime().gather(x)
    if isinstance(shares, asyncio.Future):
        shares.add_done_callback(done)
    else:  # computed already
        done()


def record_openings(path: str | Path) -> Callable[[], None]:
    """In a party process: append a JSON line to ``path`` before every opening and
    after every step (:func:`mark_step`).

    Returns the function that stops recording (and closes the file).
    """
    start = time.monotonic()
    fh = open(path, "a", buffering=1, encoding="utf-8")  # one line, one write

    def write(label: str, shape: tuple[int, ...], kind: str) -> None:
        line = {"t": round(time.monotonic() - start, 3), "label": label, "shape": list(shape)}
        fh.write(json.dumps(line if kind == "opening" else {**line, "kind": kind}) + "\n")

    def step(label: str) -> None:
        if not fh.closed:
            write(label, (), "step")

    remove = add_reveal_hook(lambda event: write(event.label, event.shape, "opening"))
    _step_hooks.append(step)

    def stop() -> None:
        remove()
        if step in _step_hooks:
            _step_hooks.remove(step)
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
                kind=str(line.get("kind", "opening")),
            )
            self.seen.append(item)
            new.append(item)
            logger.info(
                "%s: %s %d after %.1f s: %s%s",
                self.name,
                item.kind,
                item.index,
                item.seconds,
                item.label,
                f" {item.shape}" if item.kind == "opening" else "",
            )
            if self.on_progress is not None:
                self.on_progress(item)
        return new
