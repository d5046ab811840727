"""Neighbouring inputs that differ in one canary record: :func:`canary_pair`."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from privet.errors import InvalidParameterError

__all__ = ["canary_pair"]


def _append(dataset: Any, record: Any, index: int | None) -> Any:
    import pandas as pd

    if isinstance(dataset, pd.DataFrame):
        row = record if isinstance(record, pd.DataFrame) else pd.DataFrame([record])
        row = row.reindex(columns=dataset.columns)
        if index is None:
            return pd.concat([dataset, row], ignore_index=True)
        return pd.concat([dataset.iloc[:index], row, dataset.iloc[index:]], ignore_index=True)
    if isinstance(dataset, np.ndarray):
        rec = np.asarray(record, dtype=dataset.dtype)
        if rec.shape != dataset.shape[1:]:
            raise InvalidParameterError(
                f"The canary has shape {rec.shape} but rows of the dataset have shape "
                f"{dataset.shape[1:]}; give one record."
            )
        where = len(dataset) if index is None else index
        return np.insert(dataset, where, rec, axis=0)
    if isinstance(dataset, list):
        out = list(dataset)
        out.insert(len(out) if index is None else index, record)
        return out
    raise InvalidParameterError(
        f"Cannot insert a canary into a {type(dataset).__name__}; use a numpy array, a "
        "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
    )


def _replace(dataset: Any, record: Any, index: int) -> Any:
    import pandas as pd

    if isinstance(dataset, pd.DataFrame):
        out = dataset.copy()
        row = record.iloc[0] if isinstance(record, pd.DataFrame) else pd.Series(record)
        out.iloc[index] = row.reindex(dataset.columns).to_numpy()
        return out
    if isinstance(dataset, np.ndarray):
        out = dataset.copy()
        out[index] = np.asarray(record, dtype=dataset.dtype)
        return out
    if isinstance(dataset, list):
        out_list = list(dataset)
        out_list[index] = record
        return out_list
    raise InvalidParameterError(
        f"Cannot replace a record of a {type(dataset).__name__}; use a numpy array, a "
        "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
    )


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
