"""Hypothesis strategies for privacy tests of your own code.

Every argument takes a value or a strategy; options are keyword-only and bad
arguments fail when the strategy is built, naming the bound and the value got.

>>> from privet.testing import schemas, datasets
>>> schema = schemas(max_features=3).example()
>>> frame = datasets(schema, max_rows=5).example()
>>> set(frame.columns) == set(schema.columns)
True
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from privet.data import Categorical, Numeric, Schema
from privet.errors import InvalidParameterError
from privet.ledger import Exponential, Gaussian, Laplace, NeighbouringRelation, PureDP
from privet.ledger.entries import Entry

__all__ = [
    "InvalidStrategyArgument",
    "canaries",
    "datasets",
    "entries",
    "neighbouring_pairs",
    "schemas",
]


class InvalidStrategyArgument(InvalidParameterError, InvalidArgument):
    """A bad argument to a strategy: a privet error and hypothesis's ``InvalidArgument``."""


def _resolve(value: Any, draw: Any) -> Any:
    return draw(value) if isinstance(value, st.SearchStrategy) else value


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidStrategyArgument(f"{name} must be an int at least {minimum}, got {value!r}.")
    return int(value)


def _check_range(name: str, lo: Any, hi: Any, minimum: int) -> None:
    lo = _check_int(f"min_{name}", lo, minimum)
    hi = _check_int(f"max_{name}", hi, minimum)
    if hi < lo:
        raise InvalidStrategyArgument(f"max_{name} ({hi}) must be >= min_{name} ({lo}).")


def _check_schema(schema: Any) -> None:
    if not isinstance(schema, Schema | st.SearchStrategy):
        raise InvalidStrategyArgument(
            "schema must be a privet Schema or a strategy of them (e.g. schemas()); got "
            f"{type(schema).__name__}."
        )


def schemas(
    *,
    min_features: int = 1,
    max_features: int = 5,
    max_categories: int = 5,
    numeric: bool = True,
    n_classes: int | st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[Schema]:
    """Public schemas: categorical and (optionally) numeric attributes and a class.

    >>> schemas(max_features=2).example().n_features <= 2
    True
    """
    _check_range("features", min_features, max_features, 1)
    _check_int("max_categories", max_categories, 2)
    if isinstance(n_classes, st.SearchStrategy):
        pass
    elif n_classes is not None:
        _check_int("n_classes", n_classes, 2)

    @st.composite
    def build(draw: Any) -> Schema:
        d = draw(st.integers(min_features, max_features))
        attrs: list[Categorical | Numeric] = []
        for j in range(d):
            if numeric and draw(st.booleans()):
                lo = draw(st.integers(-100, 100))
                width = draw(st.integers(1, 200))
                n_edges = draw(st.integers(0, 3))
                edges = sorted({lo + width * (k + 1) / (n_edges + 1) for k in range(n_edges)})
                attrs.append(Numeric(f"x{j}", float(lo), float(lo + width), bins=edges))
            else:
                k = draw(st.integers(2, max_categories))
                attrs.append(Categorical(f"x{j}", [f"c{i}" for i in range(k)]))
        c = _resolve(n_classes, draw) if n_classes is not None else draw(st.integers(2, 4))
        return Schema(attrs, Categorical("label", [f"y{i}" for i in range(c)]))

    return build()


def _value_for(attr: Categorical | Numeric) -> st.SearchStrategy[Any]:
    if isinstance(attr, Categorical):
        return st.sampled_from(attr.categories)
    return st.floats(attr.lower, attr.upper, allow_nan=False, allow_infinity=False)


def _row(schema: Schema) -> st.SearchStrategy[dict[str, Any]]:
    fields = {a.name: _value_for(a) for a in schema.attributes}
    fields[schema.target.name] = st.sampled_from(schema.target.categories)
    return st.fixed_dictionaries(fields)


def canaries(schema: Schema | st.SearchStrategy[Schema]) -> st.SearchStrategy[dict[str, Any]]:
    """One record valid under ``schema`` (features and class), as a dict."""
    _check_schema(schema)
    if isinstance(schema, st.SearchStrategy):
        return schema.flatmap(_row)
    return _row(schema)


def datasets(
    schema: Schema | st.SearchStrategy[Schema],
    *,
    min_rows: int = 1,
    max_rows: int = 50,
) -> st.SearchStrategy[pd.DataFrame]:
    """DataFrames that pass ``schema.validate`` (every value inside the public domain)."""
    _check_schema(schema)
    _check_range("rows", min_rows, max_rows, 0)

    def frames(s: Schema) -> st.SearchStrategy[pd.DataFrame]:
        rows = st.lists(_row(s), min_size=min_rows, max_size=max_rows)
        return rows.map(lambda r: pd.DataFrame(r, columns=list(s.columns)))

    if isinstance(schema, st.SearchStrategy):
        return schema.flatmap(frames)
    return frames(schema)


def neighbouring_pairs(
    schema: Schema | st.SearchStrategy[Schema],
    *,
    relation: NeighbouringRelation | str = "add_remove",
    min_rows: int = 1,
    max_rows: int = 30,
) -> st.SearchStrategy[tuple[pd.DataFrame, pd.DataFrame]]:
    """Pairs (D, D') of neighbouring datasets under ``relation``.

    add/remove: D' is D plus one record (in a random position). replace-one:
    D' is D with one record replaced by another valid record.
    """
    _check_schema(schema)
    _check_range("rows", min_rows, max_rows, 0)
    try:
        rel = NeighbouringRelation.parse(relation)
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidStrategyArgument(
            f"relation must be 'add_remove' or 'replace_one'; got {relation!r} ({exc})."
        ) from None

    @st.composite
    def build(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        s = _resolve(schema, draw)
        d = draw(datasets(s, min_rows=max(min_rows, 1), max_rows=max_rows))
        record = draw(_row(s))
        pos = draw(st.integers(0, len(d) - (1 if rel is NeighbouringRelation.REPLACE_ONE else 0)))
        if rel is NeighbouringRelation.ADD_REMOVE:
            d2 = pd.concat(
                [d.iloc[:pos], pd.DataFrame([record], columns=d.columns), d.iloc[pos:]],
                ignore_index=True,
            )
        else:
            d2 = d.copy()
            d2.iloc[pos] = pd.Series(record)[d.columns].to_numpy(dtype=object)
            d2 = d2.astype(d.dtypes.to_dict())
        return d.reset_index(drop=True), d2

    return build()


def entries(*, max_epsilon: float = 5.0) -> st.SearchStrategy[Entry]:
    """Ledger entries of the common kinds, with valid parameters."""
    real = isinstance(max_epsilon, numbers.Real) and not isinstance(max_epsilon, bool)
    if not (real and 1e-4 <= float(max_epsilon) < float("inf")):  # a string "1" too
        raise InvalidStrategyArgument(
            f"max_epsilon must be a finite float >= 1e-4, got {max_epsilon!r}."
        )
    eps = st.floats(1e-4, float(max_epsilon), allow_nan=False)
    sens = st.sampled_from([1.0, 2.0])
    return st.one_of(
        eps.map(lambda e: PureDP(epsilon=e)),
        st.builds(lambda e, s: Laplace(scale=s / e, sensitivity=s), eps, sens),
        st.builds(lambda e, s: Exponential(epsilon=e, sensitivity=s), eps, sens),
        st.builds(
            lambda sig: Gaussian(sigma=sig, sensitivity=1.0), st.floats(0.5, 50.0, allow_nan=False)
        ),
    )
