"""Attribute specs, Schema construction, properties and JSON round-trips."""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privet.data import Categorical, Numeric, Schema, list_datasets, load_schema
from privet.errors import DataNotFoundError, SchemaError

# -- Categorical --------------------------------------------------------------------------


def test_categorical_basics():
    c = Categorical("outlook", ["Sunny", "Overcast", "Rain"])
    assert c.categories == ("Sunny", "Overcast", "Rain")
    assert c.domain_size == 3
    assert c.labels == c.categories


def test_categorical_normalises_numpy_scalars():
    c = Categorical("k", np.array([1, 2, 3]))
    assert c.categories == (1, 2, 3)
    assert all(type(v) is int for v in c.categories)
    assert Categorical("b", [np.True_, np.False_]).categories == (True, False)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "", "categories": ["a"]}, "non-empty string"),
        ({"name": 3, "categories": ["a"]}, "non-empty string"),
        ({"name": "c", "categories": []}, "categories is empty"),
        ({"name": "c", "categories": "abc"}, "must be a list of values"),
        ({"name": "c", "categories": ["a", "b", "a"]}, "'a' appears more than once"),
        ({"name": "c", "categories": ["a", 1]}, r"mix the types \['int', 'str'\]"),
        ({"name": "c", "categories": [True, 1]}, "mix the types"),
        ({"name": "c", "categories": [1.5, 2.5]}, "has type float"),
        ({"name": "c", "categories": ["a", float("nan")]}, "has type float"),
        ({"name": "c", "categories": [None]}, "has type NoneType"),
    ],
)
def test_categorical_errors(kwargs, match):
    with pytest.raises(SchemaError, match=match):
        Categorical(**kwargs)


# -- Numeric ------------------------------------------------------------------------------


def test_numeric_basics():
    a = Numeric("age", 17, 90, [25, 45, 65])
    assert a.bins == (25.0, 45.0, 65.0)
    assert a.edges == (17.0, 25.0, 45.0, 65.0, 90.0)
    assert a.domain_size == 4
    assert a.labels == ("[17, 25)", "[25, 45)", "[45, 65)", "[65, 90]")
    assert Numeric("x", 0, 1).domain_size == 1
    assert Numeric("x", 0, 1).labels == ("[0, 1]",)


def test_numeric_bin_labels():
    a = Numeric("age", 0, 100, (18,), ("minor", "adult"))
    assert a.labels == ("minor", "adult")


def test_numeric_equal_width():
    a = Numeric.equal_width("x", 0, 10, 5)
    assert a.bins == (2.0, 4.0, 6.0, 8.0)
    assert Numeric.equal_width("x", 0, 10, 1).bins == ()
    with pytest.raises(SchemaError, match="n_bins must be a positive integer, got 0"):
        Numeric.equal_width("x", 0, 10, 0)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("a", 5, 5), r"lower=5.0 must be smaller than upper=5.0"),
        (("a", 6, 5), "must be smaller than upper"),
        (("a", float("nan"), 5), "lower must be finite, got nan"),
        (("a", 0, float("inf")), "upper must be finite, got inf"),
        (("a", True, 5), "lower must be a real number, got True"),
        (("a", "0", 5), "lower must be a real number, got '0'"),
        (("a", 0, 10, [5, 3]), r"strictly increasing, found 5.0 followed by 3.0"),
        (("a", 0, 10, [3, 3]), "strictly increasing"),
        (("a", 0, 10, [0]), r"bin edge 0.0 is outside the open range \(0.0, 10.0\)"),
        (("a", 0, 10, [10]), "outside the open range"),
        (("a", 0, 10, [11]), "outside the open range"),
        (("a", 0, 10, [float("nan")]), "bin edge must be finite, got nan"),
        (("a", 0, 10, "5"), "bins must be a list of interior edges"),
        (("a", 0, 10, [5], ["only-one"]), "2 bins but 1 bin_labels"),
        (("a", 0, 10, [5], ["x", "x"]), "bin_labels must be unique"),
        (("a", 0, 10, [5], ["x", ""]), "non-empty strings"),
        (("", 0, 10), "non-empty string"),
    ],
)
def test_numeric_errors(args, match):
    with pytest.raises(SchemaError, match=match):
        Numeric(*args)


# -- Schema -------------------------------------------------------------------------------


def test_schema_properties(schema):
    assert schema.feature_names == ("color", "age")
    assert schema.target_name == "label"
    assert schema.columns == ("color", "age", "label")
    assert schema.n_features == 2
    assert schema.domain_sizes == (3, 3)
    assert schema.max_domain_size == 3
    assert schema.n_classes == 2
    assert schema.classes == ("no", "yes")
    assert schema["age"].domain_size == 3
    assert schema["label"] is schema.target
    assert schema.index("age") == 1
    assert "color" in schema and "nope" not in schema
    with pytest.raises(KeyError, match="No attribute 'nope'"):
        schema["nope"]
    with pytest.raises(KeyError, match="No feature 'label'"):
        schema.index("label")


def test_schema_subset(schema):
    sub = schema.subset(["age"])
    assert sub.feature_names == ("age",)
    assert sub.target == schema.target
    assert schema.subset("color").feature_names == ("color",)
    with pytest.raises(KeyError, match="No feature 'zzz'"):
        schema.subset(["zzz"])


def test_schema_is_frozen_and_hashable(schema):
    with pytest.raises(AttributeError):
        schema.target = None  # type: ignore[misc]
    assert hash(schema) == hash(Schema.from_json(schema.to_json()))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (
            lambda: Schema((Categorical("a", ["x"]),), Categorical("a", [0, 1])),
            r"Schema names \['a'\] more than once",
        ),
        (
            lambda: Schema((Categorical("a", ["x"]), Numeric("a", 0, 1)), Categorical("y", [0, 1])),
            "more than once",
        ),
        (lambda: Schema((), Categorical("y", [0, 1])), "no feature attributes"),
        (
            lambda: Schema((Categorical("a", ["x"]),), Numeric("y", 0, 1)),
            "target must be a Categorical",
        ),
        (
            lambda: Schema((Categorical("a", ["x"]),), Categorical("y", ["only"])),
            "at least two classes",
        ),
        (
            lambda: Schema(("a",), Categorical("y", [0, 1])),
            "use privet.data.Categorical",
        ),
        (
            lambda: Schema(Categorical("a", ["x"]), Categorical("y", [0, 1])),
            "must be a list",
        ),
    ],
)
def test_schema_errors(make, match):
    with pytest.raises(SchemaError, match=match):
        make()


# -- JSON ---------------------------------------------------------------------------------

_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
_cat_values = st.one_of(
    st.lists(st.text(max_size=6), min_size=1, max_size=6, unique=True),
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=6, unique=True),
    st.lists(st.booleans(), min_size=1, max_size=2, unique=True),
)
_finite = st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False)


@st.composite
def _numeric(draw, name):
    lo, hi = sorted(draw(st.lists(_finite, min_size=2, max_size=2, unique=True)))
    inner = draw(st.lists(_finite.filter(lambda x: lo < x < hi), max_size=5, unique=True))
    edges = tuple(sorted(inner))
    labels = None
    if draw(st.booleans()):
        labels = tuple(f"bin{k}" for k in range(len(edges) + 1))
    return Numeric(name, lo, hi, edges, labels)


@st.composite
def schemas(draw):
    names = draw(st.lists(_names, min_size=2, max_size=6, unique=True))
    attrs = []
    for name in names[:-1]:
        if draw(st.booleans()):
            attrs.append(Categorical(name, draw(_cat_values)))
        else:
            attrs.append(draw(_numeric(name)))
    classes = draw(
        st.one_of(
            st.lists(st.text(max_size=4), min_size=2, max_size=5, unique=True),
            st.lists(st.integers(0, 9), min_size=2, max_size=5, unique=True),
        )
    )
    return Schema(tuple(attrs), Categorical(names[-1], classes), draw(st.text(max_size=20)))


@given(schemas())
def test_json_round_trip(s):
    back = Schema.from_json(s.to_json())
    assert back == s
    # types survive too (True == 1 in Python, so compare them explicitly)
    for a, b in zip(s.attributes, back.attributes, strict=True):
        if isinstance(a, Categorical):
            assert [type(v) for v in a.categories] == [type(v) for v in b.categories]
    assert Schema.from_json(s.to_json(indent=None)) == s
    assert Schema.from_dict(json.loads(s.to_json())) == s


def test_save_load(tmp_path, schema):
    path = tmp_path / "s.json"
    schema.save(path)
    assert Schema.load(path) == schema
    assert Schema.load(str(path)) == schema
    assert json.loads(path.read_text())["format"] == "privet.schema"


def test_load_missing_file(tmp_path):
    with pytest.raises(DataNotFoundError, match="No schema file at"):
        Schema.load(tmp_path / "absent.json")


def test_load_bad_file_names_the_path(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"attributes": []}')
    with pytest.raises(SchemaError, match=r"In schema file .*bad\.json.*no \['target'\] key"):
        Schema.load(path)


_T = {"type": "categorical", "name": "y", "categories": [0, 1]}
_A = {"type": "categorical", "name": "a", "categories": ["x"]}


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"attributes": [_A]}), r"no \['target'\] key"),
        (
            json.dumps({"attributes": [_A], "target": _T, "extra": 1}),
            r"unexpected keys \['extra'\]",
        ),
        (json.dumps({"attributes": [_A], "target": _T, "version": 2}), "version 2"),
        (json.dumps({"attributes": [_A], "target": _T, "format": "x"}), "format 'x'"),
        (json.dumps({"attributes": _A, "target": _T}), "'attributes' must be a list"),
        (json.dumps({"attributes": [{**_A, "type": "ordinal"}], "target": _T}), "type 'ordinal'"),
        (
            json.dumps({"attributes": [{**_A, "cats": 1}], "target": _T}),
            r"unexpected keys \['cats'\]",
        ),
        (
            json.dumps(
                {"attributes": [{"type": "numeric", "name": "n", "lower": 0}], "target": _T}
            ),
            r"lacks keys \['upper'\]",
        ),
        (
            json.dumps(
                {
                    "attributes": [_A],
                    "target": {"type": "numeric", "name": "y", "lower": 0, "upper": 1},
                }
            ),
            "'target' must be categorical",
        ),
        (json.dumps({"attributes": [5], "target": _T}), "must be a JSON object"),
    ],
)
def test_from_json_errors(payload, match):
    with pytest.raises(SchemaError, match=match):
        Schema.from_json(payload)


@pytest.mark.parametrize("name", list_datasets())
def test_shipped_schemas_load_and_round_trip(name):
    s = load_schema(name)
    assert Schema.from_json(s.to_json()) == s
    assert s.n_classes >= 2
    for a in s.attributes:
        if isinstance(a, Numeric):
            assert math.isfinite(a.lower) and math.isfinite(a.upper)


def test_schema_files_are_package_data():
    files = resources.files("privet.data")
    stems = {p.name for p in files.joinpath("schemas").iterdir() if p.name.endswith(".json")}
    assert {"adult.json", "titanic.json", "heart.json", "car.json", "tennis.json"} <= stems
    assert files.joinpath("bundled", "car.csv").is_file()
    assert files.joinpath("bundled", "tennis.csv").is_file()
    assert files.joinpath("bundled", "README.md").is_file()
