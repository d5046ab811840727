"""Integer coding with public bins, and decoding back to labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privet.data import Categorical, Numeric, Schema, bin_index, from_codes, to_codes
from privet.errors import SchemaError


def test_bins_are_closed_on_the_left():
    a = Numeric("x", 0, 10, (2, 5))
    values = [0, 1.999, 2, 4.999, 5, 9.999, 10]
    assert bin_index(values, a).tolist() == [0, 0, 1, 1, 2, 2, 2]


def test_codes_follow_schema_order(schema):
    df = pd.DataFrame(
        {"color": ["blue", "red", "green"], "age": [17.9, 18, 65], "label": ["yes", "no", "no"]}
    )
    X, y = to_codes(df, schema)
    assert X.dtype == np.int64 and y.dtype == np.int64
    assert X.tolist() == [[2, 0], [0, 1], [1, 2]]
    assert y.tolist() == [1, 0, 0]


def test_to_codes_needs_the_class(schema):
    with pytest.raises(SchemaError, match="Missing the class column 'label'"):
        to_codes(pd.DataFrame({"color": ["red"], "age": [1]}), schema)


def test_to_codes_missing_policy(schema):
    df = pd.DataFrame({"color": ["red", None], "age": [1, 2], "label": ["no", "yes"]})
    X, y = to_codes(df, schema, missing="drop")
    assert X.tolist() == [[0, 0]] and y.tolist() == [0]


def test_from_codes_gives_labels(schema):
    out = from_codes(np.array([[0, 0], [2, 2]]), schema, np.array([1, 0]))
    assert list(out.columns) == ["color", "age", "label"]
    assert out["color"].tolist() == ["red", "blue"]
    assert out["age"].tolist() == ["[0, 18)", "[65, 100]"]
    assert out["label"].tolist() == ["yes", "no"]
    assert list(out["color"].cat.categories) == ["red", "green", "blue"]
    assert schema.decode(np.array([[1, 1]]))["age"].tolist() == ["[18, 65)"]
    assert schema.decode_target(np.array([0, 1])).tolist() == ["no", "yes"]


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        (np.array([[0, 3]]), None, r"holds code 3 at position \(0, 1\), outside 0\.\.2"),
        (np.array([[-1, 0]]), None, "holds code -1"),
        (np.array([[0.0, 1.0]]), None, "must hold integers, got dtype float64"),
        (np.array([0, 1]), None, r"shape \(n, 2\) for this schema, got \(2,\)"),
        (np.array([[0, 1, 1]]), None, r"got \(1, 3\)"),
        (np.array([[0, 1]]), np.array([0, 1]), r"y_codes must have shape \(1,\)"),
        (np.array([[0, 1]]), np.array([2]), "Codes of 'label' holds code 2"),
    ],
)
def test_from_codes_errors(schema, X, y, match):
    with pytest.raises(SchemaError, match=match):
        from_codes(X, schema, y)


@st.composite
def frames(draw):
    """A small schema and a frame that conforms to it."""
    n_attr = draw(st.integers(1, 4))
    attrs = []
    for j in range(n_attr):
        if draw(st.booleans()):
            cats = draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5, unique=True))
            attrs.append(Categorical(f"c{j}", cats))
        else:
            k = draw(st.integers(1, 5))
            attrs.append(Numeric.equal_width(f"n{j}", -3.0, 7.0, k))
    schema = Schema(tuple(attrs), Categorical("y", ["p", "q", "r"]))
    n = draw(st.integers(0, 30))
    cols = {}
    for a in attrs:
        if isinstance(a, Categorical):
            cols[a.name] = draw(st.lists(st.sampled_from(a.categories), min_size=n, max_size=n))
        else:
            cols[a.name] = draw(st.lists(st.floats(a.lower, a.upper), min_size=n, max_size=n))
    cols["y"] = draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n))
    return schema, pd.DataFrame(cols, columns=list(schema.columns))


@settings(max_examples=60, deadline=None)
@given(frames())
def test_codes_round_trip(case):
    schema, df = case
    X, y = to_codes(df, schema)
    assert X.shape == (len(df), schema.n_features)
    assert ((X >= 0) & (X < np.asarray(schema.domain_sizes))).all()
    back = from_codes(X, schema, y)
    for j, a in enumerate(schema.attributes):
        if isinstance(a, Categorical):
            assert back[a.name].astype(object).tolist() == df[a.name].tolist()
        else:
            # the value lies in the bin whose label was decoded
            edges = np.asarray(a.edges)
            v = df[a.name].to_numpy(dtype=float)
            assert (edges[X[:, j]] <= v).all() and (v <= edges[X[:, j] + 1]).all()
    assert back["y"].astype(object).tolist() == df["y"].tolist()
    np.testing.assert_array_equal(schema.encode(df.drop(columns="y")), X)
    np.testing.assert_array_equal(schema.encode_target(df["y"]), y)
