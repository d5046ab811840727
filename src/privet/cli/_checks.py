"""Checks of the parsed command line that argparse's types do not make (issue 37).

argparse turns ``--max-parts -1`` into the int -1 and ``--attacks ''`` into an
empty string, and both were accepted. :func:`check_args` runs after parsing,
for every command: one table says which numbers may be negative, zero or not
finite, by option; every text option must be non-empty; a report's ``--name``
is a file name, not a path. A refusal is a UsageError (exit 2) naming the
option, the value and what is allowed.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any, NoReturn

__all__ = ["check_args"]


def _refuse(message: str) -> NoReturn:
    """A usage error (exit 2), printed like every command's: ``privet: UsageError: ...``."""
    from privet.cli._output import UsageError

    raise UsageError(message)


#: Option (argparse dest) -> (smallest allowed, what it is). Zero where it means
#: something documented ("0 = all rows"); an absent option (None) is not checked.
_AT_LEAST: dict[str, tuple[int, str]] = {
    "max_parts": (1, "parts shown per partition"),
    "rows": (0, "rows of the population (0 = all rows)"),
    "shadows": (0, "shadow models"),
    "trials": (1, "trials"),
    "audit_trials": (1, "trainings"),
    "depth": (0, "tree depth"),
    "max_depth": (0, "tree depth"),
    "parties": (1, "parties"),
    "bins": (1, "bins per numeric column"),
    "max_categories": (1, "values of a categorical column"),
    "max": (0, "rows of the table (0 = all)"),
    "seed": (0, "seed"),
}
#: Options that are real numbers, in (lower, upper) (budget_delta: [0, 1)).
_REAL: dict[str, tuple[float, float]] = {
    "epsilon": (0.0, math.inf),
    "budget": (0.0, math.inf),
    "budget_delta": (0.0, 1.0),
    "confidence": (0.0, 1.0),
    "test_size": (0.0, 1.0),
}
#: Report and file stems: a name, not a path.
_STEMS = ("name",)


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> None:
    """Refuse negative counts, empty text and path-like names; see the module docstring."""
    for dest, value in vars(args).items():
        flag = "--" + dest.replace("_", "-")
        if not any(a == flag or a.startswith(flag + "=") for a in argv):
            flag = dest.upper()  # a positional argument (FILE, DATA, MODEL)
        if isinstance(value, str) and not value.strip():
            _refuse(f"{flag} needs a non-empty value, got {value!r}.")
        if value is None or isinstance(value, bool):
            continue
        if dest in _AT_LEAST and isinstance(value, int):
            least, what = _AT_LEAST[dest]
            if value < least:
                _refuse(f"{flag} must be at least {least} ({what}), got {value}.")
        if dest == "n_jobs" and isinstance(value, int) and (value < -1 or value == 0):
            _refuse(f"--n-jobs is a number of workers >= 1, or -1 for all cores; got {value}.")
        if dest in _REAL and isinstance(value, float):
            _check_real(parser, flag, dest, value)
        if dest in _STEMS and isinstance(value, str):
            _check_stem(parser, flag, value)
        if dest == "attacks" and isinstance(value, str):
            names = [a.strip() for a in value.split(",")]
            if not all(names):
                _refuse(
                    f"--attacks is a comma-separated list of attack names, got {value!r} (an "
                    "empty name); omit it for every attack (see `privet audit list`)."
                )


def _check_real(parser: argparse.ArgumentParser, flag: str, dest: str, value: float) -> None:
    lower, upper = _REAL[dest]
    low_ok = value >= lower if dest == "budget_delta" else value > lower
    if not (math.isfinite(value) and low_ok and value < upper):
        left = "[" if dest == "budget_delta" else "("
        _refuse(f"{flag} must be a finite number in {left}{lower:g}, {upper:g}); got {value!r}.")


def _check_stem(parser: argparse.ArgumentParser, flag: str, value: Any) -> None:
    seps = {os.sep, os.altsep, "/", "\\"} - {None}
    if any(s in value for s in seps) or value.strip() in (".", "..") or "\x00" in value:
        _refuse(
            f"{flag} is a file name stem (the report files are NAME.html, NAME.md, NAME.json "
            f"in --out), not a path; got {value!r}. Put the folder in --out."
        )
