"""How every command reports: rich on a terminal, plain text when piped, JSON on request.

Errors and exit codes are the command line's contract with scripts:

====  ==========================================================================
code  meaning
====  ==========================================================================
0     success
1     any other refusal (a damaged ledger file, a protocol that failed, ...)
2     usage: a bad option, an unknown name, a missing ``--budget``, a declined prompt
3     budget refused: the call does not fit in what the ledger has left
4     data invalid: a missing or unreadable CSV or schema, a schema violation
====  ==========================================================================

Every error is one line on standard error that says what to do; ``--debug``
adds the traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    PrivetError,
    SchemaError,
)

__all__ = [
    "EXIT_BUDGET",
    "EXIT_DATA",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandError",
    "DataInvalid",
    "UsageError",
    "console",
    "exit_code",
    "interactive",
    "print_json",
    "print_table",
    "working",
]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET, EXIT_DATA = 0, 1, 2, 3, 4


class CommandError(PrivetError):
    """A refusal by the command line itself; ``code`` is its exit code."""

    code = EXIT_ERROR


class UsageError(CommandError, InvalidParameterError):
    """The command was called wrongly (exit 2)."""

    code = EXIT_USAGE


class DataInvalid(CommandError, SchemaError):
    """A data or schema file is missing, unreadable or does not match (exit 4)."""

    code = EXIT_DATA


def exit_code(exc: BaseException) -> int:
    """The exit code of an error raised by a command."""
    if isinstance(exc, CommandError):
        return exc.code
    if isinstance(exc, BudgetExceededError):
        return EXIT_BUDGET
    if isinstance(exc, SchemaError):
        return EXIT_DATA
    if isinstance(exc, InvalidParameterError):
        return EXIT_USAGE
    return EXIT_ERROR  # DataNotFoundError (a ledger file), damaged files, MPC failures...


def interactive() -> bool:
    """Whether standard output is a terminal (rich tables and colour) or a pipe (plain text)."""
    return sys.stdout.isatty()


def console(*, stderr: bool = False) -> Console:
    """A rich console on a terminal; when piped, one that never cuts or wraps a line (a
    pipe has no width: rich would assume 80 columns and crop a tree's lines there)."""
    if not (sys.stderr if stderr else sys.stdout).isatty():
        return Console(highlight=False, stderr=stderr, width=1_000_000, soft_wrap=True)
    return Console(highlight=False, stderr=stderr)


def print_json(value: Any) -> None:
    """One JSON document on standard output (``--json``)."""
    print(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None
) -> None:
    """A rich table on a terminal; tab-separated plain text with a header line when piped."""
    if interactive():
        table = Table(*columns, title=title)
        for row in rows:
            table.add_row(*(str(c) for c in row))
        console().print(table)
        return
    if title:
        print(f"# {title}")
    print("\t".join(columns))
    for row in rows:
        print("\t".join(str(c).replace("\t", " ").replace("\n", " ") for c in row))


#: The logger an MPC run's openings are reported on (:mod:`privet.mpc.progress`).
PROGRESS_LOGGER = "privet.mpc.progress"
#: The logger a learner's steps are reported on (:mod:`privet.learners._progress`).
STEPS_LOGGER = "privet.progress"


class _Bar(logging.Handler):
    """Draws a fit on one rich progress bar: the learner's steps (trees done out of the
    total, hence the time left) and, in its text, the latest value an MPC run opened."""

    def __init__(self, progress: Any, task: Any, text: str) -> None:
        super().__init__(logging.INFO)
        self.progress, self.task, self.text = progress, task, text
        self.openings = 0
        self.steps = False

    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        step = getattr(record, "progress", None)
        if step is not None:
            done, total, what = step
            self.steps = True
            self.progress.update(
                self.task, completed=done, total=total, description=f"{self.text} {what}"
            )
            return
        self.openings += 1  # an MPC run's opening or secret step (no total known)
        update: dict[str, Any] = {
            "description": f"{self.text} [dim]{escape(record.getMessage())}[/dim]"
        }
        if not self.steps:
            update["completed"] = self.openings
        self.progress.update(self.task, **update)


@contextlib.contextmanager
def working(text: str, *, quiet: bool = False) -> Iterator[None]:
    """A rich progress bar with ``text`` on a terminal while the block runs (nothing when
    piped or ``quiet``): the steps a learner reports (a forest's or a boosted model's
    trees: done out of the total, time elapsed and left), and each value an MPC run's
    parties open, and each secret step, as it happens (counted where no total is known)."""
    if quiet or not interactive():
        yield
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    loggers = [logging.getLogger(name) for name in (STEPS_LOGGER, PROGRESS_LOGGER)]
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console(),
    )
    with progress:
        handler = _Bar(progress, progress.add_task(text, total=None), text)
        levels = [logger.level for logger in loggers]
        for logger in loggers:
            logger.addHandler(handler)
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
        try:
            yield
        finally:
            for logger, level in zip(loggers, levels, strict=True):
                logger.removeHandler(handler)
                logger.setLevel(level)
