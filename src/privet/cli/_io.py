"""Reading the user's files for the command line: a CSV, a public schema, and every way
they can disagree, as errors with exit codes.

The reading itself is :mod:`privet.data.csvfile` (the same route in Python): a CSV
is read as text and typed by the schema (:func:`typed`); :func:`violations` lists
every cell the schema refuses, with its row (1 = the first data row after the
header), column and value, in the order of the file.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from privet.cli._output import DataInvalid
from privet.data import Schema, list_datasets, load_schema
from privet.data.csvfile import Violation, drop_missing, read_text_csv, typed, violations
from privet.data.schema_file import check_schema_text
from privet.errors import DataNotFoundError, SchemaError

__all__ = [
    "Violation",
    "count",
    "drop_missing",
    "read_csv",
    "read_schema",
    "require_valid",
    "typed",
    "violations",
]


def read_csv(path: str) -> pd.DataFrame:
    """The CSV at ``path`` as text, one column per header name; empty cells are missing."""
    try:
        return read_text_csv(path)
    except (DataNotFoundError, SchemaError) as exc:
        raise DataInvalid(str(exc)) from None


def read_schema(source: str) -> Schema:
    """A schema file written by ``privet schema infer`` (or by hand), or a shipped schema's name."""
    if os.path.isfile(source):
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
            check_schema_text(text, f"Schema file {source!r}")  # every problem, each placed
            return Schema.from_json(text)
        except SchemaError as exc:
            raise DataInvalid(
                f"{exc} See them one per line with `privet schema check {source}`."
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataInvalid(f"Cannot read schema file {source!r}: {exc}.") from None
    if source.strip().lower().replace("-", "_") in list_datasets():
        return load_schema(source)
    raise DataInvalid(
        f"No schema file at {source!r}; write a draft with `privet schema infer DATA.csv "
        f"--target COL -o {source}` and review it, or name a shipped schema "
        f"({', '.join(list_datasets())})."
    )


def count(n: int, what: str) -> str:
    """``1 violation``, ``2 violations``."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def require_valid(
    frame: pd.DataFrame,
    schema: Schema,
    *,
    data: str,
    schema_ref: str,
    target: str = "required",
    extra: str = "error",
    missing: str = "error",
) -> None:
    """Refuse (exit 4) data with any violation, naming the first and the command listing all."""
    found = violations(frame, schema, target=target, extra=extra, missing=missing)
    if not found:
        return
    first = found[0]
    where = "" if first.row is None else f"row {first.row}, "
    flag = "" if target == "required" else "--no-target "
    hint = {
        "column not in the schema": " (or pass --extra ignore to leave such columns out)",
        "missing value": " (or pass --missing drop to leave out the rows with missing values)",
    }.get(first.problem, "")
    which = "" if len(found) == 1 else " (the first in the file)"
    listed = "see it" if len(found) == 1 else "list them all"
    raise DataInvalid(
        f"{data} does not match {schema_ref}: {count(len(found), 'violation')}; {where}column "
        f"{first.column!r}{which}: {first.problem}{hint}; {listed} with `privet schema check "
        f"{flag}{data} {schema_ref}`."
    )


def add_data_options(p: Any) -> None:
    """``--extra`` and ``--missing``: what to do with columns and cells the schema lacks."""
    p.add_argument(
        "--extra",
        choices=["error", "ignore"],
        default="error",
        help="columns the schema does not name: refuse (default) or leave them out",
    )
    p.add_argument(
        "--missing",
        choices=["error", "drop"],
        default="error",
        help="missing values: refuse (default) or leave out the rows that have one",
    )
