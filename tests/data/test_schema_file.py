"""The schema file's format as a JSON Schema, every problem of a file at once, and the
Python route from a CSV and a schema file to a fitted model (issue 33, item 10)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator

from privet.data import (
    Schema,
    list_datasets,
    load_dataset,
    load_schema,
    read_csv,
    schema_file_problems,
    schema_format,
)
from privet.errors import SchemaError
from privet.learners import DPID3Classifier
from privet.testing import schemas

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


def test_the_shipped_json_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(schema_format())
    text = resources.files("privet.data").joinpath("schema.schema.json").read_text("utf-8")
    assert json.loads(text) == schema_format()


@pytest.mark.parametrize("name", list_datasets())
def test_every_shipped_schema_follows_the_format(name):
    assert schema_file_problems(load_schema(name).to_json()) == []


@settings(max_examples=60, deadline=None)
@given(schemas(max_features=6))
def test_every_schema_privet_writes_follows_the_format(schema):
    doc = schema.to_dict()
    assert list(Draft202012Validator(schema_format()).iter_errors(doc)) == []
    assert schema_file_problems(schema.to_json()) == []


def _doc() -> dict:
    return load_schema("car").to_dict()


def test_every_problem_is_listed_with_its_place():
    doc = _doc()
    doc["attributes"][0]["categories"].append(doc["attributes"][0]["categories"][0])
    doc["attributes"][1]["type"] = "ordinal"
    doc["attributes"][2] = {
        "type": "numeric",
        "name": "doors",
        "lower": 2,
        "upper": 5,
        "bins": [4, 3],
    }
    doc["attributes"][3] = {"type": "numeric", "name": "persons", "lower": "2", "upper": 6}
    doc["attributes"][4]["bin"] = [1]
    doc["target"]["categories"] = ["unacc"]
    found = schema_file_problems(json.dumps(doc))
    places = [p.split(": ", 1)[0] for p in found]
    assert places == [
        "attributes[0].categories",
        "attributes[1].type",
        "attributes[2]",
        "attributes[3].lower",
        "attributes[4]",
        "target.categories",
    ], found
    assert "lists a value twice" in found[0] and "'categorical' or 'numeric'" in found[1]
    assert "strictly increasing" in found[2] and "not of type 'number'" in found[3]
    assert "unexpected key(s) ['bin']" in found[4]
    assert found[5] == "target.categories: needs at least 2 classes, got ['unacc']"
    assert schema_file_problems("{not json") == [
        "the file: not valid JSON (Expecting property name enclosed in double quotes at line "
        "1, column 2)"
    ]


def test_schema_load_raises_every_problem_at_once(tmp_path):
    doc = _doc()
    doc["attributes"][0]["categories"] = []
    doc["attributes"][5]["lower"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SchemaError) as info:
        Schema.load(path)
    text = str(info.value)
    assert "2 problems" in text and "attributes[0].categories" in text and "attributes[5]" in text


def test_the_example_on_the_reference_page_is_a_valid_schema():
    block = re.search(r"```json\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert block is not None
    assert schema_file_problems(block.group(1)) == []
    schema = Schema.from_json(block.group(1))
    assert schema["age"].labels[0] == "[18, 25)" and schema["age"].domain_size == 5


def test_a_csv_and_a_schema_file_to_a_fitted_model(tmp_path, car):
    car.frame.to_csv(tmp_path / "car.csv", index=False)
    car.schema.save(tmp_path / "schema.json")
    schema = Schema.load(tmp_path / "schema.json")
    data = read_csv(tmp_path / "car.csv", schema)
    assert data.name == "car" and data.n_rows == car.n_rows
    assert data.frame.equals(car.frame.reset_index(drop=True))
    model = DPID3Classifier(epsilon=1.0, max_depth=2, schema=schema).fit(data.X, data.y)
    assert np.mean(model.predict(data.X) == data.y.to_numpy()) > 0.5


def test_read_csv_refuses_violations_counting_from_the_first_data_row(tmp_path, car):
    frame = car.frame.copy()
    frame.loc[4, "buying"] = "free"
    frame["note"] = "x"
    frame.loc[2, "class"] = None
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SchemaError, match=r"3 violations: column 'note'.*row 3, column 'class'"):
        read_csv(tmp_path / "bad.csv", car.schema)
    with pytest.raises(SchemaError, match=r"1 violation: row 5, column 'buying' = 'free'"):
        read_csv(tmp_path / "bad.csv", car.schema, extra="ignore", missing="drop")
    frame.loc[4, "buying"] = "low"
    frame.to_csv(tmp_path / "ok.csv", index=False)
    data = read_csv(tmp_path / "ok.csv", car.schema, extra="ignore", missing="drop")
    assert data.n_rows == car.n_rows - 1 and list(data.frame.columns) == list(car.schema.columns)


def test_typed_columns_follow_the_schema_not_the_text(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("age,smoker,grade,risk\n70,TRUE,2,high\n20.5,false,1.0,low\n")
    schema = Schema.from_dict(
        {
            "attributes": [
                {"type": "numeric", "name": "age", "lower": 0, "upper": 120},
                {"type": "categorical", "name": "smoker", "categories": [False, True]},
                {"type": "categorical", "name": "grade", "categories": [1, 2, 3]},
            ],
            "target": {"type": "categorical", "name": "risk", "categories": ["low", "high"]},
        }
    )
    data = read_csv(path, schema)
    assert data.frame["age"].tolist() == [70.0, 20.5]
    assert data.frame["smoker"].tolist() == [True, False]
    assert data.frame["grade"].tolist() == [2, 1]
    assert load_dataset  # the bundled loaders stay the route for the papers' datasets
