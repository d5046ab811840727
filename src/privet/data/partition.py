"""Splitting a dataset over parties: horizontally (rows) or vertically (columns).

- :func:`horizontal_partition` gives each party a disjoint set of row indices
  (seed 001's parties, seed 003's federated owners, seed 000 App. C.1's
  horizontal owners); :func:`split_rows` applies it to a frame or array.
- :func:`vertical_partition` gives each party a disjoint set of feature columns
  (seed 000's vertical owners); :func:`split_columns` applies it to a frame, and
  :meth:`Schema.subset <privet.data.Schema.subset>` gives each party its schema.
  Only features are partitioned; who holds the class column is the protocol's
  business.

Sizes are given explicitly, or as a number of parties (as equal as possible,
the first ``n % k`` parties one larger). With ``shuffle=True`` (the default)
rows or columns are permuted with ``random_state`` first; with
``shuffle=False`` parties get contiguous blocks in the original order.
Indices within a part are always sorted.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import pandas as pd

from privet.data.schema import Schema
from privet.errors import InvalidParameterError

__all__ = [
    "horizontal_partition",
    "split_columns",
    "split_rows",
    "vertical_partition",
]

RandomState = int | np.random.Generator | np.random.RandomState | None
T = TypeVar("T", pd.DataFrame, pd.Series, np.ndarray)


def _rng(random_state: RandomState) -> np.random.Generator:
    if isinstance(random_state, np.random.RandomState):
        # Draw a seed so that a legacy RandomState still drives the split reproducibly.
        return np.random.default_rng(random_state.randint(0, 2**32 - 1))
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InvalidParameterError(
                f"random_state={random_state} is negative; use a non-negative int, a "
                "numpy Generator, or None."
            )
        return np.random.default_rng(int(random_state))
    raise InvalidParameterError(
        f"random_state={random_state!r} is not an int, numpy Generator/RandomState or None."
    )


def _part_sizes(n: int, what: str, sizes: Sequence[int] | None, n_parties: int | None) -> list[int]:
    if (sizes is None) == (n_parties is None):
        raise InvalidParameterError(
            f"Give exactly one of sizes= or n_parties= to split {n} {what}; got "
            f"sizes={sizes!r}, n_parties={n_parties!r}."
        )
    if n_parties is not None:
        if isinstance(n_parties, bool) or not isinstance(n_parties, numbers.Integral):
            raise InvalidParameterError(f"n_parties must be an int, got {n_parties!r}.")
        if not 1 <= n_parties <= n:
            raise InvalidParameterError(
                f"n_parties={n_parties} must be between 1 and the number of {what} ({n}) "
                "so that every party gets at least one; use fewer parties."
            )
        q, r = divmod(n, int(n_parties))
        return [q + 1] * r + [q] * (int(n_parties) - r)
    assert sizes is not None
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence | np.ndarray):
        raise InvalidParameterError(f"sizes must be a list of ints, got {sizes!r}.")
    out = []
    for s in sizes:
        if isinstance(s, bool | np.bool_) or not isinstance(s, numbers.Integral):
            raise InvalidParameterError(f"sizes must hold ints, got {s!r} in {list(sizes)}.")
        if s < 1:
            raise InvalidParameterError(
                f"sizes must be positive (every party holds at least one of the {what}), got "
                f"{int(s)} in {list(sizes)}."
            )
        out.append(int(s))
    if not out:
        raise InvalidParameterError(f"sizes is empty; give one size per party for the {what}.")
    if sum(out) != n:
        raise InvalidParameterError(
            f"sizes {out} sum to {sum(out)} but there are {n} {what}; make them sum to {n}."
        )
    return out


def _order(n: int, shuffle: bool, random_state: RandomState) -> np.ndarray:
    if not shuffle:
        if random_state is not None:
            raise InvalidParameterError(
                f"random_state={random_state!r} has no effect with shuffle=False; drop it, "
                "or pass shuffle=True for a random split."
            )
        return np.arange(n)
    return _rng(random_state).permutation(n)


def horizontal_partition(
    n_rows: int,
    *,
    sizes: Sequence[int] | None = None,
    n_parties: int | None = None,
    shuffle: bool = True,
    random_state: RandomState = None,
) -> list[np.ndarray]:
    """Row indices for each party: a partition of ``range(n_rows)``.

    Parameters
    ----------
    n_rows : int
        Number of rows (or pass ``len(df)``).
    sizes : sequence of int, optional
        Rows per party; positive, summing to ``n_rows``.
    n_parties : int, optional
        Number of parties, sizes as equal as possible. Give ``sizes`` or this.
    shuffle : bool, default=True
        Permute the rows before cutting; ``False`` gives contiguous blocks.
    random_state : int, numpy Generator or RandomState, or None
        Seeds the permutation (non-private randomness).

    Returns
    -------
    list of numpy.ndarray of int64
        Sorted row positions of each party.

    Examples
    --------
    >>> [p.tolist() for p in horizontal_partition(5, sizes=[3, 2], shuffle=False)]
    [[0, 1, 2], [3, 4]]
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, numbers.Integral) or n_rows < 1:
        raise InvalidParameterError(f"n_rows must be a positive int, got {n_rows!r}.")
    counts = _part_sizes(int(n_rows), "rows", sizes, n_parties)
    order = _order(int(n_rows), shuffle, random_state)
    cuts = np.cumsum(counts)[:-1]
    return [np.sort(part).astype(np.int64) for part in np.split(order, cuts)]


def split_rows(data: T, parts: Sequence[np.ndarray]) -> list[T]:
    """The rows of ``data`` (DataFrame, Series or array) for each part, by position."""
    n = len(data)
    for k, p in enumerate(parts):
        p = np.asarray(p)
        if p.size and (p.min() < 0 or p.max() >= n):
            raise InvalidParameterError(
                f"Part {k} holds row positions outside 0..{n - 1} (min {p.min()}, max "
                f"{p.max()}); build the parts from len(data)."
            )
    if isinstance(data, pd.DataFrame | pd.Series):
        return [data.iloc[np.asarray(p)] for p in parts]
    return [np.asarray(data)[np.asarray(p)] for p in parts]


def vertical_partition(
    columns: Sequence[str] | Schema,
    *,
    groups: Sequence[Sequence[str]] | None = None,
    n_parties: int | None = None,
    shuffle: bool = True,
    random_state: RandomState = None,
) -> list[tuple[str, ...]]:
    """Feature columns for each party: a partition of ``columns``.

    Parameters
    ----------
    columns : sequence of str or Schema
        The feature names to share out (a Schema gives its ``feature_names``).
    groups : sequence of sequences of str, optional
        Explicit assignment: every column exactly once. Each group is returned
        in the order of ``columns``.
    n_parties : int, optional
        Random (``shuffle=True``) or contiguous split into this many groups of
        near-equal size. Give ``groups`` or this.
    shuffle, random_state
        As in :func:`horizontal_partition`; used with ``n_parties`` only.

    Returns
    -------
    list of tuple of str

    Examples
    --------
    >>> vertical_partition(["a", "b", "c"], groups=[["c", "a"], ["b"]])
    [('a', 'c'), ('b',)]
    """
    names = list(columns.feature_names if isinstance(columns, Schema) else columns)
    if isinstance(columns, str) or len(set(names)) != len(names) or not names:
        raise InvalidParameterError(
            f"columns must be a non-empty list of unique names, got {columns!r}."
        )
    position = {c: i for i, c in enumerate(names)}
    if groups is not None:
        if n_parties is not None:
            raise InvalidParameterError(
                f"Give exactly one of groups= or n_parties=, got both (n_parties={n_parties})."
            )
        if random_state is not None:
            raise InvalidParameterError(
                f"random_state={random_state!r} has no effect with explicit groups; drop it."
            )
        if (
            isinstance(groups, str | bytes)
            or not isinstance(groups, Sequence)
            or any(
                isinstance(g, str | bytes) or not isinstance(g, Sequence | set | frozenset)
                for g in groups
            )
        ):
            raise InvalidParameterError(
                f"groups must be a list of lists of column names, got {groups!r}."
            )
        seen: dict[str, int] = {}
        out = []
        for k, g in enumerate(groups):
            g = list(g)
            if not g:
                raise InvalidParameterError(
                    f"Group {k} is empty; every party must hold at least one column."
                )
            for c in g:
                if not isinstance(c, str) or c not in position:
                    raise InvalidParameterError(
                        f"Group {k} names column {c!r}, which is not among {names}."
                    )
                if c in seen:
                    raise InvalidParameterError(
                        f"Column {c!r} is in group {seen[c]} and group {k}; a vertical "
                        "partition gives every column to exactly one party."
                    )
                seen[c] = k
            out.append(tuple(sorted(g, key=position.__getitem__)))
        left = [c for c in names if c not in seen]
        if left:
            raise InvalidParameterError(
                f"Columns {left} are in no group; assign every column to a party."
            )
        return out
    counts = _part_sizes(len(names), "columns", None, n_parties)
    order = _order(len(names), shuffle, random_state)
    cuts = np.cumsum(counts)[:-1]
    return [tuple(names[i] for i in np.sort(part)) for part in np.split(order, cuts)]


def split_columns(data: pd.DataFrame, groups: Sequence[Sequence[str]]) -> list[pd.DataFrame]:
    """The columns of ``data`` held by each party (e.g. from :func:`vertical_partition`)."""
    cols = set(data.columns)
    for k, g in enumerate(groups):
        absent = [c for c in g if c not in cols]
        if absent:
            raise InvalidParameterError(
                f"Group {k} names columns {absent} that the data does not have "
                f"(it has {list(data.columns)})."
            )
    return [data[list(g)] for g in groups]
