"""A CSV file and a public schema: the Python route from a user's file to a fitted model.

::

    from privet.data import Schema, read_csv
    from privet.learners import DPGradientBoostingClassifier
    from privet.ledger import Guarantee, Ledger

    schema = Schema.load("schema.json")            # public domains, reviewed by hand
    data = read_csv("credit.csv", schema)          # typed, every cell checked
    led = Ledger.open("budget.sqlite", dataset="credit", budget=Guarantee(2.0, 1e-5))
    model = DPGradientBoostingClassifier(epsilon=1.0, schema=schema, ledger=led)
    model.fit(data.X, data.y)

A CSV is read as text (nothing is guessed) and each schema column is then turned
into the schema's value type (:func:`typed`): integers for integer categories,
``True`` / ``False`` for boolean ones, numbers for numeric attributes. An empty
cell is a missing value. :func:`violations` lists every cell the schema refuses,
with its row (1 = the first data row after the header), column and value, in the
order of the file; :func:`read_csv` refuses a file with any, naming the first few.
``privet train``, ``predict`` and ``schema check`` read CSV files the same way.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from privet.data.attributes import Categorical, Numeric
from privet.data.loaders import Dataset
from privet.data.schema import Schema
from privet.data.validation import redacting
from privet.errors import DataNotFoundError, SchemaError

__all__ = ["Violation", "drop_missing", "read_csv", "read_text_csv", "typed", "violations"]


def read_text_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The CSV at ``path`` as text, one column per header name; empty cells are missing.

    Raises :class:`~privet.errors.DataNotFoundError` if there is no file, and
    :class:`~privet.errors.SchemaError` if it is not readable as CSV or has no rows.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise DataNotFoundError(
            f"No data file at {path!r}; check the path (a CSV with a header row)."
        )
    try:
        frame = pd.read_csv(
            path, dtype=str, keep_default_na=False, na_values=[""], skipinitialspace=True
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split())
        raise SchemaError(
            f"Cannot read {path!r} as CSV ({reason}); save it as UTF-8 comma-separated text "
            "with one header row and the same number of fields on every line."
        ) from None
    if frame.shape[0] == 0:
        raise SchemaError(f"{path!r} has a header but no data rows; add the records.")
    return frame


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


def _int_text(v: str) -> str:
    try:
        f = float(v)
    except ValueError:
        return v
    return str(int(f)) if f.is_integer() else v


def drop_missing(frame: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, int]:
    """``frame`` without the rows that miss a value in a column the schema names.

    A rule applied to each row on its own: neighbouring datasets stay neighbours, so
    the learner's guarantee holds for the rows it is given.
    """
    cols = [c for c in schema.columns if c in frame.columns]
    keep = frame[cols].notna().all(axis=1)
    return frame[keep].reset_index(drop=True), int((~keep).sum())


def read_csv(
    path: str | os.PathLike[str],
    schema: Schema,
    *,
    extra: Literal["error", "ignore"] = "error",
    missing: Literal["error", "drop"] = "error",
    name: str | None = None,
) -> Dataset:
    """The training data in the CSV at ``path``, typed by ``schema`` and checked cell by cell.

    Parameters
    ----------
    path : str or path-like
        A CSV file with one header row; the class column is required.
    schema : Schema
        The public schema (e.g. ``Schema.load("schema.json")``); it fixes the value
        types, never the data.
    extra : {"error", "ignore"}, default="error"
        Columns the schema does not name: refused, or left out.
    missing : {"error", "drop"}, default="error"
        Empty cells: refused, or their rows left out (a rule applied to each row
        on its own, so neighbouring datasets stay neighbours).
    name : str, optional
        The dataset's name (default: the file name without extension).

    Returns
    -------
    Dataset
        ``.X`` (features in schema order) and ``.y`` for ``fit``; ``.frame`` both.

    Raises
    ------
    SchemaError
        Any cell or column the schema refuses, counted, with the first few named
        (row 1 is the first data row); list them all with ``privet schema check``.
    """
    if extra not in ("error", "ignore") or missing not in ("error", "drop"):
        raise SchemaError(
            f"read_csv: extra must be 'error' or 'ignore' and missing 'error' or 'drop', got "
            f"extra={extra!r}, missing={missing!r}."
        )
    raw = read_text_csv(path)
    found = violations(raw, schema, extra=extra, missing=missing)
    if found:
        shown = "; ".join(
            ("" if v.row is None else f"row {v.row}, ")
            + f"column {v.column!r}"
            + ("" if v.value is None or redacting() else f" = {v.value!r}")
            + f": {v.problem}"
            for v in found[:3]
        )
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        plural = "" if len(found) == 1 else "s"
        raise SchemaError(
            f"{os.fspath(path)!r} does not match the schema: {len(found)} violation{plural}: "
            f"{shown}{more}. List them all with `privet schema check {os.fspath(path)} "
            "SCHEMA.json`; fix the data, or the schema from public knowledge only."
        )
    if missing == "drop":
        raw, _ = drop_missing(raw, schema)
        if raw.empty:
            raise SchemaError(f"Every row of {os.fspath(path)!r} misses a value; nothing to read.")
    frame = typed(raw, schema)[list(schema.columns)].reset_index(drop=True)
    return Dataset(
        name or Path(path).stem,
        frame,
        schema,
        schema.target.name,
        f"read from {os.fspath(path)}",
        "",
        os.fspath(path),
    )
