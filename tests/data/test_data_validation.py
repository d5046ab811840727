"""Schema.validate / Schema.encode: every refusal, the missing-value policies, arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privet.data import Categorical, Numeric, Schema
from privet.errors import InvalidParameterError, SchemaError


def frame(**cols):
    return pd.DataFrame(cols)


def good():
    return frame(color=["red", "blue", "green"], age=[10, 40, 70], label=["no", "yes", "no"])


def test_valid_frame_passes_unchanged(schema):
    df = good()
    out = schema.validate(df)
    pd.testing.assert_frame_equal(out, df)
    assert out is not df


def test_columns_returned_in_schema_order(schema):
    df = good()[["label", "age", "color"]]
    assert list(schema.validate(df).columns) == ["color", "age", "label"]


def test_missing_column(schema):
    with pytest.raises(
        SchemaError, match=r"Missing columns \['age'\].*has \['color', 'label'\].*add or rename"
    ):
        schema.validate(good().drop(columns="age"))


def test_unknown_category_names_column_values_and_allowed(schema):
    df = good()
    df.loc[1, "color"] = "purple"
    with pytest.raises(
        SchemaError,
        match=r"Column 'color' has 1 value outside its public categories: \['purple'\] at rows "
        r"\[1\]; allowed are \['red', 'green', 'blue'\]",
    ):
        schema.validate(df)


def test_unknown_category_lists_a_few_values():
    s = Schema((Categorical("c", ["a"]),), Categorical("y", [0, 1]))
    df = frame(c=[f"v{i}" for i in range(20)])
    with pytest.raises(SchemaError, match=r"20 values .*'v4', \.\.\. \(15 more\)"):
        s.validate(df)


def test_category_type_mismatch_gets_a_hint():
    s = Schema((Categorical("k", [1, 2, 3]),), Categorical("y", [0, 1]))
    with pytest.raises(SchemaError, match=r"type \['str'\] but the categories have type \['int'\]"):
        s.validate(frame(k=["1", "2"]))


def test_numeric_out_of_range(schema):
    df = good()
    df.loc[2, "age"] = 130
    with pytest.raises(
        SchemaError,
        match=r"Column 'age' has 1 value outside its public range \[0, 100\]: \[130\.0\] "
        r"\(min 130, max 130\) at rows \[2\]; clip",
    ):
        schema.validate(df)
    df.loc[2, "age"] = -1
    with pytest.raises(SchemaError, match="outside its public range"):
        schema.validate(df)


def test_bounds_are_inclusive(schema):
    df = frame(color=["red", "red"], age=[0, 100])
    assert schema.encode(df)[:, 1].tolist() == [0, 2]


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinity(schema, bad):
    df = good().astype({"age": float})
    df.loc[0, "age"] = bad
    with pytest.raises(SchemaError, match=r"non-finite values \[-?inf\] at rows \[0\]"):
        schema.validate(df)


#: What Schema.validate says about one missing cell, by default and with missing="category".
MISSING_COLOR = (
    r"Missing values \(None/NaN\) in columns \{'color': 1\} \(rows \[1\]\).*missing='drop'"
)
NO_PUBLIC_CATEGORY = (
    r"'color' has 1 missing value but missing_category='Unknown' is not one of its "
    r"public categories"
)
AGE_IS_NUMERIC = "'age' is Numeric and has 1 missing value"
CATEGORY = {"missing": "category"}


@pytest.mark.parametrize(
    ("dtypes", "cell", "value", "policy", "match"),
    [
        pytest.param(object, (1, "color"), None, {}, MISSING_COLOR, id="error-None"),
        pytest.param(object, (1, "color"), np.nan, {}, MISSING_COLOR, id="error-nan"),
        pytest.param(object, (1, "color"), pd.NA, {}, MISSING_COLOR, id="error-NA"),
        pytest.param({"age": float}, (0, "age"), np.nan, {}, r"\{'age': 1\}", id="error-numeric"),
        pytest.param(object, (0, "color"), None, CATEGORY, NO_PUBLIC_CATEGORY, id="category-color"),
        pytest.param(
            {"age": float}, (0, "age"), np.nan, CATEGORY, AGE_IS_NUMERIC, id="category-age"
        ),
    ],
)
def test_missing_value_is_refused(schema, dtypes, cell, value, policy, match):
    """One missing cell (row, column): refused by default (missing="error"), and by
    missing="category" when the column has no public category to put it in."""
    df = good().astype(dtypes)
    df.loc[cell] = value
    with pytest.raises(SchemaError, match=match):
        schema.validate(df, **policy)


def test_missing_drop_returns_clean_rows(schema):
    df = good().astype({"age": float, "color": object})
    df.loc[0, "age"] = np.nan
    df.loc[2, "color"] = None
    out = schema.validate(df, missing="drop")
    assert out.index.tolist() == [1]
    assert schema.encode(df.drop(columns="label"), missing="drop").shape == (1, 2)
    assert len(df) == 3  # the caller's frame is untouched


def test_missing_category_policy():
    s = Schema(
        (Categorical("c", ["a", "Unknown"]), Numeric("n", 0, 1)), Categorical("y", ["p", "q"])
    )
    df = frame(c=["a", None, np.nan], n=[0.5, 0.5, 0.5], y=["p", "q", "p"])
    out = s.validate(df, missing="category")
    assert out["c"].tolist() == ["a", "Unknown", "Unknown"]
    assert df["c"].isna().sum() == 2  # not modified in place
    assert s.encode(df.drop(columns="y"), missing="category")[:, 0].tolist() == [0, 1, 1]
    out = s.validate(frame(c=["a", None], n=[0.1, 0.2]), missing="category", missing_category="a")
    assert out["c"].tolist() == ["a", "a"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"missing": "impute"}, "missing='impute' is not a policy"),
        ({"target": "maybe"}, "target='maybe' is not a policy"),
        ({"extra": "keep"}, "extra='keep' is not a policy"),
    ],
)
def test_bad_policies(schema, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        schema.validate(good(), **kwargs)


def test_strings_in_numeric_column(schema):
    df = good().astype({"age": str})
    with pytest.raises(
        SchemaError,
        match=r"Column 'age' is Numeric in the schema but (has dtype|holds non-numbers) .*to_numeric",
    ):
        schema.validate(df)


def test_mixed_object_numeric_column(schema):
    df = good().astype({"age": object})
    df.loc[1, "age"] = "forty"
    with pytest.raises(SchemaError, match=r"holds non-numbers \['forty'\] \(1 value, rows \[1\]\)"):
        schema.validate(df)
    df.loc[1, "age"] = 40.0  # Python numbers in an object column are fine
    assert schema.encode(df.drop(columns="label"))[:, 1].tolist() == [0, 1, 2]


def test_booleans_in_numeric_column(schema):
    df = good()
    df["age"] = [True, False, True]
    with pytest.raises(SchemaError, match="holds booleans but 'age' is Numeric"):
        schema.validate(df)


def test_bool_column_against_int_categories():
    s = Schema((Categorical("k", [0, 1]),), Categorical("y", ["a", "b"]))
    with pytest.raises(SchemaError, match=r"dtype bool but its categories \[0, 1\] are int"):
        s.validate(frame(k=[True, False]))
    s2 = Schema((Categorical("k", [False, True]),), Categorical("y", ["a", "b"]))
    with pytest.raises(SchemaError, match="are booleans"):
        s2.validate(frame(k=[0, 1]))
    assert s2.encode(frame(k=[True, False])).ravel().tolist() == [1, 0]


def test_nullable_and_categorical_dtypes(schema):
    df = frame(
        color=pd.Categorical(["blue", "red"]),
        age=pd.array([5, 99], dtype="Int64"),
    )
    assert schema.encode(df).tolist() == [[2, 0], [0, 2]]


def test_int_categories_accept_integral_floats():
    s = Schema((Categorical("k", [1, 2, 3]),), Categorical("y", [0, 1]))
    assert s.encode(frame(k=[1.0, 3.0])).ravel().tolist() == [0, 2]
    with pytest.raises(SchemaError, match=r"\[1\.5\]"):
        s.encode(frame(k=[1.5]))


def test_target_policies(schema):
    X = good().drop(columns="label")
    with pytest.raises(SchemaError, match="Missing the class column 'label'"):
        schema.validate(X, target="required")
    with pytest.raises(SchemaError, match="holds the class column 'label' where only features"):
        schema.validate(good(), target="absent")
    with pytest.raises(SchemaError, match="holds the class column"):
        schema.encode(good())
    assert list(schema.validate(X).columns) == ["color", "age"]


def test_unknown_label(schema):
    df = good()
    df.loc[0, "label"] = "maybe"
    with pytest.raises(SchemaError, match=r"Column 'label' has 1 value .*\['maybe'\]"):
        schema.validate(df)


def test_extra_columns(schema):
    df = good().assign(notes=["a", "b", "c"])
    with pytest.raises(
        SchemaError, match=r"Columns \['notes'\] are not in the schema.*extra='ignore'"
    ):
        schema.validate(df)
    assert list(schema.validate(df, extra="ignore").columns) == ["color", "age", "label"]


def test_duplicate_columns(schema):
    df = pd.DataFrame([["red", 1, 2]], columns=["color", "age", "age"])
    with pytest.raises(SchemaError, match=r"Columns \['age'\] appear more than once"):
        schema.validate(df)


def test_arrays_in_schema_order(schema):
    X = np.array([["red", 5], ["blue", 99.5]], dtype=object)
    assert schema.encode(X).tolist() == [[0, 0], [2, 2]]
    Xy = np.array([["red", 5, "yes"]], dtype=object)
    assert list(schema.validate(Xy).columns) == ["color", "age", "label"]
    assert schema.encode([["green", 20]]).tolist() == [[1, 1]]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (np.array(["red", "blue"], dtype=object), r"got an array of shape \(2,\)"),
        (np.zeros((2, 3, 1)), "got an array of shape"),
        (np.array([["red"]], dtype=object), r"Array has 1 columns but the schema expects 2"),
        (np.array([["red", 1, "no", 0]], dtype=object), "expects 2 \\(features\\) or 3"),
        (pd.Series(["red"], name="color"), "got a Series named 'color'"),
    ],
)
def test_bad_array_shapes(schema, data, match):
    with pytest.raises(SchemaError, match=match):
        schema.validate(data)


def test_array_with_target_refused_by_encode(schema):
    with pytest.raises(SchemaError, match=r"expects 2 \(the features, in schema order\)"):
        schema.encode(np.array([["red", 1, "no"]], dtype=object))


def test_encode_target(schema):
    assert schema.encode_target(["yes", "no", "yes"]).tolist() == [1, 0, 1]
    assert schema.encode_target(pd.Series(["no"], index=[7])).tolist() == [0]
    with pytest.raises(SchemaError, match=r"Column 'label' has 1 value .*\['maybe'\]"):
        schema.encode_target(["maybe", "no"])
    with pytest.raises(SchemaError, match="has 1 missing value"):
        schema.encode_target(["no", None])
    with pytest.raises(SchemaError, match="got a DataFrame"):
        schema.encode_target(good())
    with pytest.raises(SchemaError, match=r"1-D array .*shape \(1, 2\)"):
        schema.encode_target(np.array([["no", "yes"]], dtype=object))


def test_empty_frame(schema):
    out = schema.encode(frame(color=pd.Series([], dtype=object), age=pd.Series([], dtype=float)))
    assert out.shape == (0, 2)


def test_a_party_process_withholds_private_values_and_rows(monkeypatch):
    """Issue 11: validation errors quoted private values and rows ("[72.0] ... at rows
    [677]"); in an MPC party they reach the others and the host's logs. A party names the
    column and the count only; a local call still shows the values."""
    import pandas as pd

    from privet.data import Categorical, Numeric, Schema
    from privet.data.validation import REDACT_ENV
    from privet.errors import SchemaError
    from privet.mpc._runtime import REDACT_ENV as PARTY_ENV

    assert PARTY_ENV == REDACT_ENV
    schema = Schema([Numeric.equal_width("duration", 0.0, 60.0, 4)], Categorical("y", ["a", "b"]))
    frame = pd.DataFrame({"duration": [10.0] * 677 + [72.0], "y": ["a"] * 678})
    with pytest.raises(SchemaError, match=r"72") as local:
        schema.encode(frame[["duration"]])
    assert "677" in str(local.value)
    monkeypatch.setenv(REDACT_ENV, "1")
    with pytest.raises(SchemaError, match=r"'duration' has 1 value outside") as party:
        schema.encode(frame[["duration"]])
    assert "72" not in str(party.value) and "677" not in str(party.value)
    assert "withheld" in str(party.value)
