"""Horizontal and vertical partitions over parties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privet.data import (
    horizontal_partition,
    split_columns,
    split_rows,
    vertical_partition,
)
from privet.errors import InvalidParameterError


def test_given_sizes_contiguous():
    parts = horizontal_partition(10, sizes=[3, 5, 2], shuffle=False)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5, 6, 7], [8, 9]]


def test_random_split_is_reproducible_and_covers():
    a = horizontal_partition(100, n_parties=7, random_state=3)
    b = horizontal_partition(100, n_parties=7, random_state=np.random.default_rng(3))
    assert [len(p) for p in a] == [15, 15, 14, 14, 14, 14, 14]
    assert all((x == y).all() for x, y in zip(a, b, strict=True))
    allrows = np.concatenate(a)
    assert sorted(allrows.tolist()) == list(range(100))
    assert all((np.diff(p) > 0).all() for p in a)
    c = horizontal_partition(100, n_parties=7, random_state=4)
    assert any((x != y).any() for x, y in zip(a, c, strict=True))
    legacy = horizontal_partition(100, sizes=[50, 50], random_state=np.random.RandomState(0))
    assert sum(len(p) for p in legacy) == 100


@given(st.integers(1, 200), st.data())
def test_partition_property(n, data):
    k = data.draw(st.integers(1, n))
    parts = horizontal_partition(n, n_parties=k, random_state=data.draw(st.integers(0, 99)))
    sizes = [len(p) for p in parts]
    assert len(parts) == k and sum(sizes) == n and max(sizes) - min(sizes) <= 1
    assert len(np.unique(np.concatenate(parts))) == n


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": [3, 3]}, r"sizes \[3, 3\] sum to 6 but there are 10 rows"),
        ({"sizes": [10, 0]}, r"sizes must be positive .* got 0"),
        ({"sizes": [12, -2]}, "got -2"),
        ({"sizes": [5.0, 5.0]}, "sizes must hold ints, got 5.0"),
        ({"sizes": [True, 9]}, "sizes must hold ints"),
        ({"sizes": []}, "sizes is empty"),
        ({"sizes": 10}, "sizes must be a list of ints"),
        ({"sizes": [5, 5], "n_parties": 2}, "exactly one of sizes= or n_parties="),
        ({}, "exactly one of sizes= or n_parties="),
        ({"n_parties": 11}, r"n_parties=11 must be between 1 and the number of rows \(10\)"),
        ({"n_parties": 0}, "must be between 1"),
        ({"n_parties": 2.0}, "n_parties must be an int"),
        ({"n_parties": 2, "shuffle": False, "random_state": 1}, "no effect with shuffle=False"),
        ({"n_parties": 2, "random_state": -1}, "random_state=-1 is negative"),
        ({"n_parties": 2, "random_state": "seed"}, "is not an int"),
    ],
)
def test_horizontal_errors(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        horizontal_partition(10, **kwargs)


def test_bad_n_rows():
    with pytest.raises(InvalidParameterError, match="n_rows must be a positive int, got 0"):
        horizontal_partition(0, n_parties=1)


def test_split_rows_frames_and_arrays():
    df = pd.DataFrame({"a": range(6)}, index=list("uvwxyz"))
    parts = horizontal_partition(6, sizes=[4, 2], random_state=0)
    pieces = split_rows(df, parts)
    assert [len(p) for p in pieces] == [4, 2]
    assert sorted(pd.concat(pieces)["a"].tolist()) == list(range(6))
    arr_pieces = split_rows(np.arange(12).reshape(6, 2), parts)
    assert arr_pieces[1].shape == (2, 2)
    with pytest.raises(InvalidParameterError, match=r"Part 0 holds row positions outside 0\.\.5"):
        split_rows(df, [np.array([0, 9])])


def test_vertical_groups(schema):
    assert vertical_partition(["a", "b", "c", "d"], groups=[["d", "a"], ["c", "b"]]) == [
        ("a", "d"),
        ("b", "c"),
    ]
    assert vertical_partition(schema, groups=[["age"], ["color"]]) == [("age",), ("color",)]


def test_vertical_random_split():
    cols = [f"f{i}" for i in range(10)]
    g1 = vertical_partition(cols, n_parties=3, random_state=1)
    assert g1 == vertical_partition(cols, n_parties=3, random_state=1)
    assert sorted(c for g in g1 for c in g) == sorted(cols)
    assert [len(g) for g in g1] == [4, 3, 3]
    assert vertical_partition(cols, n_parties=2, shuffle=False) == [
        tuple(cols[:5]),
        tuple(cols[5:]),
    ]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"groups": [["a", "b"], ["b", "c"]]}, "Column 'b' is in group 0 and group 1"),
        ({"groups": [["a"], ["b"]]}, r"Columns \['c'\] are in no group"),
        ({"groups": [["a", "b", "zz"], ["c"]]}, "Group 0 names column 'zz'"),
        ({"groups": [["a", "b", "c"], []]}, "Group 1 is empty"),
        ({"groups": ["abc"]}, "list of lists"),
        ({"groups": [["a"], ["b", "c"]], "n_parties": 2}, "exactly one of groups="),
        ({"groups": [["a"], ["b", "c"]], "random_state": 0}, "no effect with explicit groups"),
        ({"n_parties": 4}, r"between 1 and the number of columns \(3\)"),
        ({}, "exactly one of sizes= or n_parties="),
    ],
)
def test_vertical_errors(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        vertical_partition(["a", "b", "c"], **kwargs)


def test_vertical_bad_columns():
    with pytest.raises(InvalidParameterError, match="unique names"):
        vertical_partition(["a", "a"], n_parties=1)
    with pytest.raises(InvalidParameterError, match="unique names"):
        vertical_partition("abc", n_parties=1)


def test_split_columns_and_schema_subset(schema):
    df = pd.DataFrame({"color": ["red"], "age": [3], "label": ["no"]})
    groups = vertical_partition(schema, n_parties=2, random_state=0)
    pieces = split_columns(df, groups)
    assert sorted(c for p in pieces for c in p.columns) == ["age", "color"]
    for g, piece in zip(groups, pieces, strict=True):
        sub = schema.subset(g)
        assert sub.encode(piece).shape == (1, len(g))
    with pytest.raises(InvalidParameterError, match=r"Group 0 names columns \['nope'\]"):
        split_columns(df, [["nope"]])
