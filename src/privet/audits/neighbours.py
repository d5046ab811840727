"""Neighbouring inputs that differ in one canary record: :func:`canary_pair`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from privet.errors import InvalidParameterError

__all__ = ["canary_pair"]


def _as_record(dataset: Any, record: Any) -> Any:
    """The canary in the dataset's own form: a one-row frame or an array row."""
    import pandas as pd

    if isinstance(dataset, pd.DataFrame):
        if isinstance(record, pd.DataFrame) and len(record) == 1:
            row = record
        elif isinstance(record, Mapping | pd.Series):
            row = pd.DataFrame([dict(record)])
        else:
            raise InvalidParameterError(
                "A canary for a DataFrame must be a mapping {column: value}, a Series or a "
                f"one-row DataFrame; got {type(record).__name__}."
            )
        if set(row.columns) != set(dataset.columns):
            missing = sorted(map(str, set(dataset.columns) - set(row.columns)))
            extra = sorted(map(str, set(row.columns) - set(dataset.columns)))
            raise InvalidParameterError(
                f"The canary's columns differ from the dataset's: missing {missing}, extra "
                f"{extra}; give one value per column."
            )
        return row[list(dataset.columns)]
    if isinstance(dataset, np.ndarray):
        try:
            rec = np.asarray(record, dtype=dataset.dtype)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"The canary {record!r} is not a row of dtype {dataset.dtype}: {exc}."
            ) from None
        if rec.shape != dataset.shape[1:]:
            raise InvalidParameterError(
                f"The canary has shape {rec.shape} but rows of the dataset have shape "
                f"{dataset.shape[1:]}; give one record."
            )
        return rec
    if isinstance(dataset, list):
        return record
    raise InvalidParameterError(
        f"Cannot put a canary into a {type(dataset).__name__}; use a numpy array, a "
        "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
    )


def _append(dataset: Any, record: Any, index: int | None) -> Any:
    import pandas as pd

    rec = _as_record(dataset, record)
    where = len(dataset) if index is None else index
    if isinstance(dataset, pd.DataFrame):
        return pd.concat([dataset.iloc[:where], rec, dataset.iloc[where:]], ignore_index=True)
    if isinstance(dataset, np.ndarray):
        return np.insert(dataset, where, rec, axis=0)
    out = list(dataset)
    out.insert(where, rec)
    return out


def _replace(dataset: Any, record: Any, index: int) -> Any:
    import pandas as pd

    rec = _as_record(dataset, record)
    if isinstance(dataset, pd.DataFrame):
        out = dataset.copy()
        out.iloc[index] = rec.iloc[0].to_numpy()
        return out
    out = dataset.copy() if isinstance(dataset, np.ndarray) else list(dataset)
    out[index] = rec
    return out


def _check_index(dataset: Any, index: Any, relation: str) -> int | None:
    if index is None:
        return None
    n = len(dataset[0]) if isinstance(dataset, tuple) and dataset else len(dataset)
    top = n if relation == "add_remove" else n - 1
    if isinstance(index, bool) or not isinstance(index, int | np.integer) or not 0 <= index <= top:
        raise InvalidParameterError(
            f"index must be an int in [0, {top}] for {relation} on {n} records; got {index!r}."
        )
    return int(index)


def canary_pair(
    dataset: Any,
    canary: Any,
    *,
    relation: Literal["add_remove", "replace_one"] = "add_remove",
    index: int | None = None,
) -> tuple[Any, Any]:
    """Neighbouring inputs ``(D, D')`` that differ in one canary record.

    Parameters
    ----------
    dataset : ndarray, DataFrame, list or tuple of those
        The base data ``D``. A tuple such as ``(X, y)`` is treated column-wise:
        the canary is then a tuple ``(x, y)`` of one record per part.
    canary : object
        The record: a row (array), a mapping or one-row DataFrame, a list item,
        or a tuple of those matching a tuple dataset.
    relation : {"add_remove", "replace_one"}, default="add_remove"
        ``"add_remove"``: ``D' = D`` plus the canary (appended, or inserted at
        ``index``). ``"replace_one"``: ``D'`` is ``D`` with record ``index``
        replaced by the canary; ``index`` is then required.
    index : int, optional
        Position of the canary, see ``relation``.

    Returns
    -------
    tuple
        ``(D, D')``; ``D`` is ``dataset`` itself (not copied).
    """
    if relation not in ("add_remove", "replace_one"):
        raise InvalidParameterError(
            f"The 'relation' parameter must be 'add_remove' or 'replace_one'; got {relation!r}."
        )
    if relation == "replace_one" and index is None:
        raise InvalidParameterError(
            "relation='replace_one' needs the index of the record to replace; pass index=i."
        )
    if not isinstance(dataset, tuple | list | np.ndarray) and not hasattr(dataset, "iloc"):
        raise InvalidParameterError(
            f"Cannot put a canary into a {type(dataset).__name__}; use a numpy array, a "
            "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
        )
    index = _check_index(dataset, index, relation)
    if isinstance(dataset, tuple):
        if not isinstance(canary, tuple) or len(canary) != len(dataset):
            raise InvalidParameterError(
                f"A dataset given as a tuple of {len(dataset)} parts needs a canary tuple of "
                f"as many parts (one record each); got {type(canary).__name__}."
            )
        pairs = [
            canary_pair(part, rec, relation=relation, index=index)
            for part, rec in zip(dataset, canary, strict=True)
        ]
        return dataset, tuple(p[1] for p in pairs)
    if relation == "add_remove":
        return dataset, _append(dataset, canary, index)
    assert index is not None
    return dataset, _replace(dataset, canary, index)
