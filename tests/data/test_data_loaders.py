"""Real datasets: row counts, columns, domain sizes, the paper's Table 1, data-dir resolution."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from privet.data import (
    ENV_VAR,
    Dataset,
    Numeric,
    candidate_data_dirs,
    find_data_file,
    list_datasets,
    load_dataset,
    load_schema,
    one_hot,
)
from privet.data.mfeat import MFEAT_KINDS, mfeat_schema
from privet.errors import DataNotFoundError, InvalidParameterError, SchemaError

# name: (rows, features, largest domain, classes)
EXPECTED = {
    "adult": (32561, 12, 7, 2),
    "adult_test": (16281, 12, 7, 2),
    "titanic": (890, 5, 5, 2),
    "heart": (297, 13, 5, 2),
    "car": (1728, 6, 4, 4),
    "nursery": (12960, 8, 5, 5),
    "mushroom": (8124, 22, 12, 2),
    "tennis": (14, 4, 3, 2),
    "balance_scale": (625, 4, 5, 3),
    "spect": (267, 22, 2, 2),
    "krkpa7": (3196, 36, 3, 2),
    "tic_tac_toe": (958, 9, 3, 2),
    "house_votes": (435, 16, 3, 2),
    "mfeat_fac": (2000, 216, 5, 10),
    "mfeat_fou": (2000, 76, 5, 10),
    "mfeat_kar": (2000, 64, 5, 10),
    "mfeat_mor": (2000, 6, 5, 10),
    "mfeat_pix": (2000, 240, 5, 10),
    "mfeat_zer": (2000, 47, 5, 10),
}


def test_registry_names():
    assert set(list_datasets()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_each_dataset(name, shared_data):
    rows, d, w, c = EXPECTED[name]
    ds = load_dataset(name)
    assert isinstance(ds, Dataset)
    assert ds.name == name and ds.n_rows == rows
    assert ds.schema.n_features == d
    assert ds.schema.max_domain_size == w
    assert ds.schema.n_classes == c
    assert list(ds.frame.columns) == list(ds.schema.columns)  # class last
    assert ds.target == ds.schema.target_name == ds.frame.columns[-1]
    assert ds.frame.index.equals(pd.RangeIndex(rows))
    assert not ds.frame.isna().any().any()
    X, y = ds.codes()
    assert X.shape == (rows, d) and y.shape == (rows,)
    assert (X < np.asarray(ds.schema.domain_sizes)).all() and (X >= 0).all()
    assert ds.schema == load_schema(name)
    assert ds.description and ds.citation and ds.source
    assert name in repr(ds)


# -- seed 000 Table 1 ---------------------------------------------------------------------
# "# of attributes" counts the class attribute; "domain size" is the largest domain (w).


def test_adult_matches_table_1(shared_data):
    ds = load_dataset("adult")
    s = ds.schema
    assert s.n_features + 1 == 13
    assert s.max_domain_size == 7
    assert dict(zip(s.feature_names, s.domain_sizes, strict=True)) == {
        "age": 4,
        "workclass": 5,
        "education": 7,
        "marital-status": 5,
        "occupation": 7,
        "relationship": 6,
        "race": 5,
        "sex": 2,
        "capital-gain": 4,
        "capital-loss": 3,
        "hours-per-week": 5,
        "native-country": 6,
    }
    assert "fnlwgt" not in ds.frame and "education-num" not in ds.frame
    # '?' becomes the public category 'Unknown', no row dropped
    counts = {c: int((ds.frame[c] == "Unknown").sum()) for c in ("workclass", "occupation")}
    assert counts == {"workclass": 1836, "occupation": 1843}
    assert int((ds.frame["native-country"] == "Unknown").sum()) == 583
    assert ds.frame["income"].value_counts().to_dict() == {"<=50K": 24720, ">50K": 7841}
    # numeric attributes keep their raw values; bins are applied by the codes
    assert ds.frame["age"].min() == 17 and ds.frame["age"].max() == 90
    assert isinstance(s["hours-per-week"], Numeric)
    H = one_hot(ds.codes()[0], s)
    assert H.shape == (32561, 12, 7)


def test_adult_test_labels_lose_their_dot(shared_data):
    ds = load_dataset("adult_test")
    assert set(ds.frame["income"]) == {"<=50K", ">50K"}
    assert ds.schema == load_schema("adult")


def test_heart_matches_table_1(shared_data):
    ds = load_dataset("heart")
    assert ds.n_rows == 297
    assert ds.schema.n_features + 1 == 14
    assert ds.schema.max_domain_size == 5
    assert ds.frame["disease"].value_counts().to_dict() == {0: 160, 1: 137}
    assert ds.frame["thal"].isin([3, 6, 7]).all()
    assert ds.frame["cp"].dtype == np.int64


def test_titanic_matches_table_1(shared_data):
    ds = load_dataset("titanic")
    assert ds.schema.n_features + 1 == 6
    assert ds.schema.max_domain_size == 5
    assert ds.n_rows == 890  # Kaggle's 891 minus the row with a blank SibSp
    assert list(ds.schema.feature_names) == ["Pclass", "Sex", "Age", "SibSp", "Parch"]
    assert int((ds.frame["Age"] == "Unknown").sum()) == 176
    assert ds.frame["Survived"].value_counts().to_dict() == {0: 548, 1: 342}


def test_quirky_files(shared_data):
    mush = load_dataset("mushroom")
    assert mush.frame.columns[-1] == "class"
    assert int((mush.frame["stalk-root"] == "?").sum()) == 2480
    assert mush.frame["class"].value_counts().to_dict() == {"e": 4208, "p": 3916}
    votes = load_dataset("house_votes")
    assert votes.frame.columns[-1] == "class" and votes.frame.columns[0] == "handicapped-infants"
    bal = load_dataset("balance_scale")
    assert bal.frame.columns[-1] == "Class Name" and bal.frame["Left-Weight"].dtype == np.int64
    nursery = load_dataset("nursery")  # CRLF endings: no '\r' may survive
    assert not nursery.frame["class"].str.contains("\r").any()
    assert nursery.frame["class"].value_counts()["recommend"] == 2


def test_mfeat_shipped_bounds_follow_the_documented_procedure(shared_data):
    for kind in MFEAT_KINDS:
        release = None
        if kind != "pix":
            release = pd.read_csv(shared_data / "mfeat" / f"mfeat-{kind}.csv").iloc[:, :-1]
        assert load_schema(f"mfeat_{kind}") == mfeat_schema(kind, release)
    pix = load_schema("mfeat_pix")
    assert {(a.lower, a.upper) for a in pix.attributes} == {(0.0, 6.0)}


def test_mfeat_schema_needs_the_release():
    with pytest.raises(InvalidParameterError, match="pass its 216 feature columns"):
        mfeat_schema("fac")
    with pytest.raises(InvalidParameterError, match="mfeat kind 'xyz' is unknown"):
        mfeat_schema("xyz")


# -- names, schemas without data ----------------------------------------------------------


def test_name_normalisation_and_unknown_names():
    assert load_schema("Tic-Tac-Toe") == load_schema("tic_tac_toe")
    with pytest.raises(
        InvalidParameterError, match="Unknown dataset 'adlut'; did you mean 'adult'"
    ):
        load_dataset("adlut")
    with pytest.raises(InvalidParameterError, match="must be a string"):
        load_schema(3)  # type: ignore[arg-type]


def test_load_schema_reads_no_data(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert load_schema("adult").max_domain_size == 7


# -- data directory resolution ------------------------------------------------------------


def test_bundled_datasets_need_no_shared_data(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    car = load_dataset("car")
    assert car.source == "bundled:car.csv" and car.n_rows == 1728
    tennis = load_dataset("tennis")
    assert tennis.source == "bundled:tennis.csv" and tennis.n_rows == 14
    with pytest.raises(DataNotFoundError):
        load_dataset("nursery")


def test_explicit_data_dir_wins(shared_data, tmp_path):
    ds = load_dataset("car", data_dir=shared_data)
    assert ds.source == str(shared_data / "id3" / "car.csv")
    assert ds.frame.equals(load_dataset("car").frame)
    with pytest.raises(DataNotFoundError) as info:
        load_dataset("tennis", data_dir=tmp_path)
    msg = str(info.value)
    assert str(tmp_path / "id3" / "tennis.csv") in msg
    assert ENV_VAR in msg and "data_dir" in msg
    assert isinstance(info.value, FileNotFoundError)


def test_env_var(shared_data, monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(shared_data))
    assert load_dataset("heart").source == str(shared_data / "processed.cleveland.data")
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    # an env var that lacks the file is an error, not a fallback to another copy
    with pytest.raises(DataNotFoundError, match=f"{ENV_VAR}=.*tried: {tmp_path}"):
        load_dataset("heart")


def test_search_walks_up(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "marker.txt").write_text("x")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert tmp_path.resolve() / "shared" / "data" in candidate_data_dirs()
    assert find_data_file("marker.txt") == tmp_path.resolve() / "shared" / "data" / "marker.txt"
    with pytest.raises(
        DataNotFoundError, match=r"searched upwards\); tried: .*a/b/shared/data/absent\.txt"
    ):
        find_data_file("absent.txt")


def test_candidate_dirs_explicit_and_env(monkeypatch, tmp_path):
    assert candidate_data_dirs(tmp_path) == [tmp_path]
    monkeypatch.setenv(ENV_VAR, os.fspath(tmp_path))
    assert candidate_data_dirs() == [tmp_path]


def test_malformed_file_is_a_schema_error(tmp_path):
    (tmp_path / "id3").mkdir()
    (tmp_path / "id3" / "tennis.csv").write_text(
        "Outlook,Temperature,Humidity,Wind,Play\nSunny,Hot,High,Weak,No\nFoggy,Hot,High,Weak,No\n"
    )
    with pytest.raises(
        SchemaError, match=r"Dataset 'tennis' \(.*tennis.csv\) does not match its schema.*'Foggy'"
    ):
        load_dataset("tennis", data_dir=tmp_path)
    (tmp_path / "id3" / "tennis.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SchemaError, match="has 2 columns but its schema has 5"):
        load_dataset("tennis", data_dir=tmp_path)


def test_dataset_target_must_match_schema():
    car = load_dataset("car")
    with pytest.raises(SchemaError, match="is not the schema's class"):
        Dataset("x", car.frame, car.schema, "buying", "", "", "")
    assert list(car.X.columns) == list(car.schema.feature_names)
    assert car.y.name == "class"
