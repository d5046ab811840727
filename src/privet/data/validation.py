"""Checking data against its public schema, and coding it in the same pass.

:func:`check` is the one routine behind :meth:`Schema.validate
<privet.data.Schema.validate>` and :meth:`Schema.encode
<privet.data.Schema.encode>`: it refuses anything the schema does not allow
and, since it has to look every value up anyway, returns the integer codes too.

Nothing is coerced or dropped unless the caller asks for it:

- a missing column, a column not in the schema, a category outside the
  public list, a number outside ``[lower, upper]``, an infinity, or text in a
  numeric column raises :class:`~privet.errors.SchemaError`;
- missing values (``None``, ``NaN``, ``pd.NA``) follow the ``missing`` policy:
  ``"error"`` (default) raises; ``"drop"`` drops every row with a missing value
  in a schema column; ``"category"`` replaces missing values of a categorical
  column by ``missing_category``, which must be one of its public categories
  (numeric columns have no such category, so a missing number still raises).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from privet.data.attributes import Attribute, Categorical, CategoryValue, Numeric, SchemaView
from privet.errors import InvalidParameterError, SchemaError

__all__ = ["Checked", "MissingPolicy", "TargetPolicy", "as_frame", "check", "column_codes"]

MissingPolicy = Literal["error", "drop", "category"]
TargetPolicy = Literal["optional", "required", "absent"]

_MISSING_POLICIES = ("error", "drop", "category")
_TARGET_POLICIES = ("optional", "required", "absent")
_EXTRA_POLICIES = ("error", "ignore")
_SHOW = 5  # how many offending values or rows an error message lists


@dataclass(frozen=True, slots=True)
class Checked:
    """Result of :func:`check`.

    Attributes
    ----------
    frame : pandas.DataFrame
        The schema columns in schema order (features, then the target when
        present), after the missing-value policy.
    X_codes : numpy.ndarray of int64, shape (n, d)
        Feature codes (category index or bin index).
    y_codes : numpy.ndarray of int64, shape (n,), or None
        Class codes, or None when the data held no target column.
    """

    frame: pd.DataFrame
    X_codes: np.ndarray
    y_codes: np.ndarray | None


#: Set (to "1") in MPC party processes: validation messages then name the column and the
#: count but never the private values or the row numbers, since a party's error reaches
#: the other parties and the host's logs. A local call shows them, to help the data owner.
REDACT_ENV = "PRIVET_REDACT_PRIVATE_VALUES"


def redacting() -> bool:
    """Whether messages about private data must withhold values and rows."""
    return os.environ.get(REDACT_ENV) == "1"


def _private(values: Sequence[Any], limit: int = _SHOW) -> str:
    """Values read from the private data: shown locally, withheld in a party process."""
    return "[values withheld in a party process]" if redacting() else _show(values, limit)


def _show(values: Sequence[Any], limit: int = _SHOW) -> str:
    shown = ", ".join(repr(v) for v in list(values)[:limit])
    more = len(values) - limit
    return f"[{shown}{f', ... ({more} more)' if more > 0 else ''}]"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _rows(index: pd.Index, mask: np.ndarray) -> str:
    return "[rows withheld in a party process]" if redacting() else _show(index[mask].tolist())


def as_frame(schema: SchemaView, data: Any, *, target: TargetPolicy = "optional") -> pd.DataFrame:
    """Return ``data`` as a DataFrame with the schema's column names.

    A DataFrame is returned as is. A 2-D array (or list of rows) must have its
    columns in schema order: the ``d`` features, optionally followed by the
    target as a last column.
    """
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pd.Series):
        raise SchemaError(
            f"Expected a DataFrame or a 2-D array, got a Series named {data.name!r}; "
            "pass data.to_frame() or the whole table."
        )
    arr = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    if arr.ndim != 2:
        raise SchemaError(
            f"Expected a DataFrame or a 2-D array (rows x columns), got an array of shape "
            f"{arr.shape}; reshape it, e.g. X.reshape(-1, {schema.n_features})."
        )
    d = schema.n_features
    allowed = {"optional": (d, d + 1), "required": (d + 1,), "absent": (d,)}[target]
    if arr.shape[1] not in allowed:
        what = {
            "optional": f"{d} (features) or {d + 1} (features then target)",
            "required": f"{d + 1} (the {d} features, then the target)",
            "absent": f"{d} (the features, in schema order)",
        }[target]
        raise SchemaError(
            f"Array has {arr.shape[1]} columns but the schema expects {what}; the columns "
            f"of an array are read in schema order {list(schema.columns)}."
        )
    return pd.DataFrame(arr, columns=list(schema.columns)[: arr.shape[1]])


def _numeric_values(attr: Numeric, col: pd.Series, present: np.ndarray) -> np.ndarray:
    """The column as float64, refusing booleans and non-numbers."""
    name = attr.name
    if pd.api.types.is_bool_dtype(col.dtype):
        raise SchemaError(
            f"Column {name!r} holds booleans but {name!r} is Numeric in the schema; "
            "convert it to numbers (col.astype(int)) or declare it Categorical."
        )
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    if col.dtype == object:
        # Object columns may hold Python numbers (e.g. from a mixed array); accept
        # those, but never parse strings into numbers behind the caller's back.
        kinds = col[present].map(type)
        ok = kinds.map(
            lambda t: (
                issubclass(t, int | float | np.integer | np.floating)
                and not issubclass(t, bool | np.bool_)
            )
        ).to_numpy(dtype=bool)
        if not ok.all():
            bad = col[present][~ok]
            raise SchemaError(
                f"Column {name!r} is Numeric in the schema but holds non-numbers "
                f"{_private(pd.unique(bad).tolist())} ({_count(len(bad), 'value')}, rows "
                f"{_private(bad.index.tolist())}); convert them explicitly (e.g. "
                "pandas.to_numeric) or fix the data."
            )
        out = np.full(len(col), np.nan)
        out[present] = col[present].to_numpy(dtype=np.float64)
        return out
    sample = pd.unique(col[present]).tolist()
    raise SchemaError(
        f"Column {name!r} is Numeric in the schema but has dtype {col.dtype} (values "
        f"{_private(sample)}); convert it to numbers explicitly (e.g. pandas.to_numeric) "
        "if the text holds numbers, or declare the attribute Categorical."
    )


def _numeric_codes(attr: Numeric, col: pd.Series, present: np.ndarray) -> np.ndarray:
    values = _numeric_values(attr, col, present)
    v = values[present]
    finite = np.isfinite(v)
    if not finite.all():
        bad = v[~finite]
        raise SchemaError(
            f"Column {attr.name!r} holds non-finite values {_private(pd.unique(bad).tolist())} "
            f"at rows {_rows(col.index[present], ~finite)}; infinities are not missing "
            "values: replace them with numbers in the public range "
            f"[{attr.lower:g}, {attr.upper:g}] or remove those rows."
        )
    out_of_range = (v < attr.lower) | (v > attr.upper)
    if out_of_range.any():
        bad = v[out_of_range]
        count = _count(int(out_of_range.sum()), "value")
        raise SchemaError(
            f"Column {attr.name!r} has {count} outside its public "
            f"range [{attr.lower:g}, {attr.upper:g}]: {_private(pd.unique(bad).tolist())} (min "
            f"{_private([bad.min()]) if redacting() else format(bad.min(), 'g')}, max "
            f"{_private([bad.max()]) if redacting() else format(bad.max(), 'g')}) at rows "
            f"{_rows(col.index[present], out_of_range)}; clip them to the bounds "
            "(numpy.clip) or widen the bounds in the schema from public knowledge only, "
            "never from the data."
        )
    codes = np.zeros(len(col), dtype=np.int64)
    # side="right": a value equal to an edge starts the next bin ([a, b) bins).
    codes[present] = np.searchsorted(np.asarray(attr.bins, dtype=np.float64), v, side="right")
    return codes


def _type_hint(attr: Categorical, bad: list[Any]) -> str:
    want = {type(c) for c in attr.categories}
    got = {type(v) for v in bad}
    if got.isdisjoint(want):
        wn = sorted(t.__name__ for t in want)
        gn = sorted(t.__name__ for t in got)
        return (
            f" The values have type {gn} but the categories have type {wn}: "
            "convert the column (e.g. col.astype(str)) or fix the schema."
        )
    return ""


def _categorical_codes(attr: Categorical, col: pd.Series, present: np.ndarray) -> np.ndarray:
    # True == 1 in Python, so a bool column would silently match int categories
    # (and vice versa); refuse that at the dtype level.
    cats_are_bool = isinstance(attr.categories[0], bool)
    col_is_bool = pd.api.types.is_bool_dtype(col.dtype)
    if cats_are_bool != col_is_bool and (col_is_bool or pd.api.types.is_numeric_dtype(col.dtype)):
        want = "booleans" if cats_are_bool else type(attr.categories[0]).__name__
        raise SchemaError(
            f"Column {attr.name!r} has dtype {col.dtype} but its categories "
            f"{list(attr.categories)} are {want}; convert the column explicitly "
            "(e.g. col.astype(bool) or col.astype(int)) or fix the schema."
        )
    codes = pd.Index(list(attr.categories)).get_indexer(col).astype(np.int64)
    unknown = (codes < 0) & present
    if unknown.any():
        bad = pd.unique(col[unknown]).tolist()
        cats = list(attr.categories)
        shown = _show(cats) if len(cats) > 20 else str(cats)
        raise SchemaError(
            f"Column {attr.name!r} has {_count(int(unknown.sum()), 'value')} outside its public "
            f"categories: {_private(bad)} at rows {_rows(col.index, unknown)}; allowed are "
            f"{shown}. Map them to a listed category before validating, or extend the "
            f"public schema.{_type_hint(attr, bad)}"
        )
    codes[~present] = 0  # placeholder; rows with missing values never leave check()
    return codes


def _refuse_bytes_and_complex(attr: Attribute, col: pd.Series) -> None:
    """Byte strings (numpy dtype 'S') and complex numbers are no attribute's values."""
    if col.dtype.kind == "S":
        raise SchemaError(
            f"Column {attr.name!r} holds byte strings (dtype {col.dtype}); decode them to "
            "text first: X.astype(str) for a numpy array, or col.str.decode('utf-8') for a "
            "pandas column."
        )
    if col.dtype.kind == "c":
        raise SchemaError(
            f"Column {attr.name!r} holds complex numbers (dtype {col.dtype}); an attribute "
            "takes real numbers or categories. Pass the real part (numpy.real) if that is "
            "what is meant."
        )


def _codes(attr: Attribute, col: pd.Series, present: np.ndarray) -> np.ndarray:
    _refuse_bytes_and_complex(attr, col)
    if isinstance(attr, Numeric):
        return _numeric_codes(attr, col, present)
    return _categorical_codes(attr, col, present)


def column_codes(attr: Attribute, values: Any) -> np.ndarray:
    """Check one column of values (no missing values allowed) and return its codes."""
    if isinstance(values, pd.DataFrame):
        raise SchemaError(
            f"Expected one column of values for {attr.name!r}, got a DataFrame with columns "
            f"{list(values.columns)}; pass df[{attr.name!r}]."
        )
    if isinstance(values, pd.Series):
        col = values
    else:
        arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
        if arr.ndim != 1:
            raise SchemaError(
                f"Expected a 1-D array of values for {attr.name!r}, got shape {arr.shape}."
            )
        col = pd.Series(arr, name=attr.name)
    nan = pd.isna(col).to_numpy()
    if nan.any():
        count = _count(int(nan.sum()), "missing value")
        raise SchemaError(
            f"Column {attr.name!r} has {count} (None/NaN) at rows "
            f"{_rows(col.index, nan)}; remove or fill them first."
        )
    return _codes(attr, col, ~nan)


def check(
    schema: SchemaView,
    data: Any,
    *,
    missing: MissingPolicy = "error",
    missing_category: CategoryValue = "Unknown",
    target: TargetPolicy = "optional",
    extra: Literal["error", "ignore"] = "error",
) -> Checked:
    """Check ``data`` against ``schema`` and code it; see the module docstring.

    Parameters
    ----------
    schema : Schema
        The public schema.
    data : pandas.DataFrame or 2-D array
        Columns by name, or an array whose columns are in schema order.
    missing : {"error", "drop", "category"}, default="error"
        Policy for missing values.
    missing_category : str, int or bool, default="Unknown"
        Category that replaces a missing value when ``missing="category"``.
    target : {"optional", "required", "absent"}, default="optional"
        Whether the class column may, must, or must not be present.
    extra : {"error", "ignore"}, default="error"
        What to do with columns that are not in the schema.

    Returns
    -------
    Checked
        The cleaned frame and its codes.
    """
    if missing not in _MISSING_POLICIES:
        raise InvalidParameterError(
            f"missing={missing!r} is not a policy; use one of {_MISSING_POLICIES}."
        )
    if target not in _TARGET_POLICIES:
        raise InvalidParameterError(
            f"target={target!r} is not a policy; use one of {_TARGET_POLICIES}."
        )
    if extra not in _EXTRA_POLICIES:
        raise InvalidParameterError(
            f"extra={extra!r} is not a policy; use one of {_EXTRA_POLICIES}."
        )
    frame = as_frame(schema, data, target=target)

    columns = list(frame.columns)
    duplicated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if duplicated:
        raise SchemaError(
            f"Columns {duplicated} appear more than once in the data; give every column a "
            "unique name."
        )
    present_cols = set(columns)
    absent = [n for n in schema.feature_names if n not in present_cols]
    if absent:
        raise SchemaError(
            f"Missing columns {_show(absent, 10)}: the schema's features are "
            f"{_show(schema.feature_names, 10)} but the data has {_show(columns, 10)}; add or "
            "rename the columns."
        )
    tname = schema.target.name
    has_target = tname in present_cols
    if target == "required" and not has_target:
        raise SchemaError(
            f"Missing the class column {tname!r}; the data has {_show(columns, 10)}. Add "
            "the labels as that column."
        )
    if target == "absent" and has_target:
        raise SchemaError(
            f"The data holds the class column {tname!r} where only features are expected; "
            f"drop it (X.drop(columns={tname!r})) and pass the labels separately."
        )
    known = set(schema.columns)
    unexpected = [c for c in columns if c not in known]
    if unexpected and extra == "error":
        raise SchemaError(
            f"Columns {_show(unexpected, 10)} are not in the schema (expected "
            f"{_show(schema.columns, 10)}); "
            "remove them, or pass extra='ignore' to leave them out."
        )

    attrs: list[Attribute] = list(schema.attributes) + ([schema.target] if has_target else [])
    frame = frame[[a.name for a in attrs]]
    nan = np.column_stack([pd.isna(frame[a.name]).to_numpy() for a in attrs]) if attrs else None
    if nan is not None and nan.any():
        frame, nan = _apply_missing(frame, attrs, nan, missing, missing_category)

    n = len(frame)
    X_codes = np.empty((n, schema.n_features), dtype=np.int64)
    y_codes = None
    for j, attr in enumerate(attrs):
        codes = _codes(attr, frame[attr.name], ~nan[:, j])
        if j < schema.n_features:
            X_codes[:, j] = codes
        else:
            y_codes = codes
    return Checked(frame, X_codes, y_codes)


def _apply_missing(
    frame: pd.DataFrame,
    attrs: list[Attribute],
    nan: np.ndarray,
    missing: MissingPolicy,
    missing_category: CategoryValue,
) -> tuple[pd.DataFrame, np.ndarray]:
    counts = {a.name: int(nan[:, j].sum()) for j, a in enumerate(attrs) if nan[:, j].any()}
    if missing == "drop":
        keep = ~nan.any(axis=1)
        return frame[keep], nan[keep]
    if missing == "error":
        rows = nan.any(axis=1)
        raise SchemaError(
            f"Missing values (None/NaN) in columns {counts} (rows {_rows(frame.index, rows)}); "
            "nothing is imputed silently: pass missing='drop' to drop those rows, "
            "missing='category' to map them to a public category, or fill them yourself."
        )
    # missing == "category"
    frame = frame.copy()
    for j, attr in enumerate(attrs):
        if not nan[:, j].any():
            continue
        if isinstance(attr, Numeric):
            raise SchemaError(
                f"Column {attr.name!r} is Numeric and has "
                f"{_count(counts[attr.name], 'missing value')}; "
                "missing='category' only applies to categorical columns. Use missing='drop' "
                "or fill the numbers yourself."
            )
        if missing_category not in attr.categories:
            raise SchemaError(
                f"Column {attr.name!r} has {_count(counts[attr.name], 'missing value')} but "
                f"missing_category={missing_category!r} is not one of its public categories "
                f"{list(attr.categories)}; add it to the schema, pass another "
                "missing_category, or use missing='drop'."
            )
        col = frame[attr.name].astype(object)
        col[nan[:, j]] = missing_category
        frame[attr.name] = col
    return frame, np.zeros_like(nan)
