"""Reading the user's files: a CSV, a public schema, and every way they can disagree.

A CSV is read as text (nothing is guessed) and each schema column is then
turned into the schema's value type: integers for integer categories, ``True``
/ ``False`` for boolean ones, numbers for numeric attributes. An empty cell is
a missing value. :func:`violations` lists every cell the schema refuses, with
its row (1 = the first data row after the header), column and value, where
:meth:`privet.data.Schema.validate` stops at the first bad column.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from privet.cli._output import DataInvalid
from privet.data import Categorical, Numeric, Schema, list_datasets, load_schema
from privet.errors import SchemaError

__all__ = [
    "Violation",
    "count",
    "read_csv",
    "read_schema",
    "require_valid",
    "typed",
    "violations",
]


def read_csv(path: str) -> pd.DataFrame:
    """The CSV at ``path`` as text, one column per header name; empty cells are missing."""
    if not os.path.isfile(path):
        raise DataInvalid(f"No data file at {path!r}; check the path (a CSV with a header row).")
    try:
        frame = pd.read_csv(
            path, dtype=str, keep_default_na=False, na_values=[""], skipinitialspace=True
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split())
        raise DataInvalid(
            f"Cannot read {path!r} as CSV ({reason}); save it as UTF-8 comma-separated text "
            "with one header row and the same number of fields on every line."
        ) from None
    if frame.shape[0] == 0:
        raise DataInvalid(f"{path!r} has a header but no data rows; add the records.")
    return frame


def read_schema(source: str) -> Schema:
    """A schema file written by ``privet schema infer`` (or by hand), or a shipped schema's name."""
    if os.path.isfile(source):
        try:
            with open(source, encoding="utf-8") as fh:
                return Schema.from_json(fh.read())
        except SchemaError as exc:
            raise DataInvalid(f"Schema file {source!r} is not a valid schema: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataInvalid(f"Cannot read schema file {source!r}: {exc}.") from None
    if source.strip().lower().replace("-", "_") in list_datasets():
        return load_schema(source)
    raise DataInvalid(
        f"No schema file at {source!r}; write a draft with `privet schema infer DATA.csv "
        f"--target COL -o {source}` and review it, or name a shipped schema "
        f"({', '.join(list_datasets())})."
    )


def _bool(text: str) -> bool | str:
    return {"true": True, "false": False}.get(text.strip().lower(), text)


def typed(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """The text columns converted to the schema's value types where every cell parses.

    A column with a cell that does not parse stays text, so that validation names
    the offending value instead of a silent NaN.
    """
    out = frame.copy()
    for attr in (*schema.attributes, schema.target):
        if attr.name not in out.columns:
            continue
        col = out[attr.name]
        present = col.notna()
        if isinstance(attr, Numeric):
            parsed = pd.to_numeric(col, errors="coerce")
            if parsed[present].notna().all():
                out[attr.name] = parsed.astype(float)
            continue
        first = attr.categories[0]
        if isinstance(first, bool):
            conv = col[present].map(_bool)
            if conv.map(lambda v: isinstance(v, bool)).all():
                new = col.astype(object)
                new[present] = conv
                out[attr.name] = new if not present.all() else new.astype(bool)
        elif isinstance(first, int):
            parsed = pd.to_numeric(col, errors="coerce")
            ok = parsed[present].notna().all() and (parsed[present] % 1 == 0).all()
            if ok:
                new = col.astype(object)
                new[present] = parsed[present].astype(np.int64).map(int)
                out[attr.name] = new if not present.all() else new.astype(np.int64)
    return out


@dataclass(frozen=True, slots=True)
class Violation:
    """One cell (or one whole column) the schema refuses."""

    row: int | None  # 1 = first data row; None for a whole column
    column: str
    value: Any
    problem: str

    def to_dict(self) -> dict[str, Any]:
        """``{"row", "column", "value", "problem"}``, in that order (``privet schema check --json``)."""
        return asdict(self)


def violations(
    frame: pd.DataFrame,
    schema: Schema,
    *,
    target: str = "required",
    extra: str = "error",
    missing: str = "error",
) -> list[Violation]:
    """Every violation of ``schema`` in the text frame ``frame`` (from :func:`read_csv`).

    ``target``: ``"required"`` (training data), ``"optional"`` (data to predict).
    ``extra="ignore"``: columns the schema does not name are left out, not violations.
    ``missing="drop"``: missing values are not violations (their rows are dropped, see
    :func:`drop_missing`).
    """
    found: list[Violation] = []
    columns = list(frame.columns)
    attrs = list(schema.attributes)
    tname = schema.target.name
    if target == "required" or tname in columns:
        attrs.append(schema.target)
    for attr in attrs:
        if attr.name not in columns:
            found.append(Violation(None, attr.name, None, "column missing from the data"))
    known = set(schema.columns)
    for name in columns if extra == "error" else ():
        if name not in known:
            found.append(Violation(None, str(name), None, "column not in the schema"))
    for attr in attrs:
        if attr.name not in columns:
            continue
        col = frame[attr.name]
        rows = np.arange(1, len(col) + 1)
        absent = col.isna().to_numpy()
        for r in rows[absent] if missing == "error" else ():
            found.append(Violation(int(r), attr.name, None, "missing value"))
        text = col.to_numpy(dtype=object)
        if isinstance(attr, Numeric):
            nums = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            for i in np.flatnonzero(~absent):
                v = nums[i]
                if np.isnan(v):
                    problem = "not a number"
                elif not np.isfinite(v):
                    problem = "not finite"
                elif v < attr.lower or v > attr.upper:
                    problem = f"outside the public range [{attr.lower:g}, {attr.upper:g}]"
                else:
                    continue
                found.append(Violation(int(rows[i]), attr.name, text[i], problem))
        else:
            assert isinstance(attr, Categorical)
            allowed = {str(c) for c in attr.categories}
            if isinstance(attr.categories[0], bool):
                allowed |= {s.lower() for s in allowed}
            for i in np.flatnonzero(~absent):
                v = str(text[i])
                if v in allowed or (isinstance(attr.categories[0], bool) and v.lower() in allowed):
                    continue
                if isinstance(attr.categories[0], int) and _int_text(v) in allowed:
                    continue
                found.append(
                    Violation(int(rows[i]), attr.name, text[i], "not one of the public categories")
                )
    order = {name: k for k, name in enumerate(columns)}
    # whole columns first, then row by row (the first listed is the first in the file)
    return sorted(
        found,
        key=lambda v: (v.row is not None, v.row or 0, order.get(v.column, len(order))),
    )


def count(n: int, what: str) -> str:
    """``1 violation``, ``2 violations``."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def _int_text(v: str) -> str:
    try:
        f = float(v)
    except ValueError:
        return v
    return str(int(f)) if f.is_integer() else v


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


def drop_missing(frame: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, int]:
    """``frame`` without the rows that miss a value in a column the schema names.

    A rule applied to each row on its own: neighbouring datasets stay neighbours, so
    the learner's guarantee holds for the rows it is given.
    """
    cols = [c for c in schema.columns if c in frame.columns]
    keep = frame[cols].notna().all(axis=1)
    return frame[keep].reset_index(drop=True), int((~keep).sum())


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
