"""The same rows cannot be charged to a second dataset of one ledger (issue 33, item 1).

A ledger file keeps one salted fingerprint per table it was charged for
(:mod:`privet.ledger.fingerprint`); the same rows in any order under another dataset
name are refused, naming the first dataset. What it does not catch (a subset, a
re-encoded copy) is tested too, so that docs/ledger.md says what the code does.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from privet.errors import SchemaError
from privet.learners import DPID3Classifier
from privet.ledger import Guarantee, Ledger, table_owner
from privet.ledger.fingerprint import row_digests, table_fingerprint


def _meta(path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def test_the_fingerprint_is_of_the_whole_table_in_any_order_and_any_reading(car):
    salt = "ab" * 32
    fp = table_fingerprint(row_digests(car.X, car.y), salt)
    shuffled = car.frame.sample(frac=1.0, random_state=1)
    assert (
        table_fingerprint(row_digests(shuffled[list(car.X.columns)], shuffled["class"]), salt) == fp
    )
    # the same values read another way (text, an object array) are the same table
    as_text = car.X.astype(str)
    assert table_fingerprint(row_digests(as_text, car.y.astype(str)), salt) == fp
    assert (
        table_fingerprint(row_digests(car.X.to_numpy(dtype=object), car.y.to_numpy()), salt) == fp
    )
    numbers = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, -0.0, 2]})
    floats = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["0.5", "0", "2"]})
    assert np.array_equal(row_digests(numbers), row_digests(floats))
    assert len(set(row_digests(car.X, car.y).tolist())) == len(car.frame.drop_duplicates())
    # one row less, one value changed, the labels changed, another salt: another fingerprint
    assert table_fingerprint(row_digests(car.X[1:], car.y[1:]), salt) != fp
    changed = car.X.copy()
    changed.iloc[5, 0] = "low" if changed.iloc[5, 0] != "low" else "high"
    assert table_fingerprint(row_digests(changed, car.y), salt) != fp
    assert table_fingerprint(row_digests(car.X), salt) != fp
    assert table_fingerprint(row_digests(car.X, car.y), "cd" * 32) != fp


def test_the_same_rows_under_a_second_dataset_name_are_refused(car, tmp_path):
    path = tmp_path / "budget.sqlite"
    first = Ledger.open(path, "car", budget=1.0)
    DPID3Classifier(epsilon=0.5, max_depth=2, schema=car.schema, ledger=first).fit(car.X, car.y)
    assert table_owner(path, car.X, car.y) == "car"

    again = Ledger.open(path, "car_again", budget=1.0)
    shuffled = car.frame.sample(frac=1.0, random_state=2)
    est = DPID3Classifier(epsilon=0.5, max_depth=2, schema=car.schema, ledger=again)
    with pytest.raises(SchemaError, match=r"already charged to dataset 'car'.*Nothing was charged"):
        est.fit(shuffled[list(car.schema.feature_names)], shuffled["class"])
    assert again.spent() == Guarantee(0.0) and not again.charges
    # the first dataset goes on as before, with the same rows
    DPID3Classifier(epsilon=0.2, max_depth=2, schema=car.schema, ledger=first).fit(car.X, car.y)
    assert first.spent() == Guarantee(0.7)

    # stored: the salt and one fingerprint per table, nothing computed from one record
    meta = _meta(path)
    tables = {k: v for k, v in meta.items() if k.startswith("table:")}
    assert tables == {
        f"table:{table_fingerprint(row_digests(car.X, car.y), meta['table-salt'])}": "car"
    }
    digests = {format(int(d), "016x") for d in row_digests(car.X, car.y)}
    stored = " ".join(f"{k} {v}" for k, v in meta.items())
    assert not any(d in stored for d in digests)
    # the ledger's documents leave it out
    assert meta["table-salt"] not in first.to_json()
    assert all(t[6:] not in first.to_json() for t in tables)
    first.close()
    again.close()


def test_what_it_does_not_catch_a_subset_or_a_recoded_copy(car, tmp_path):
    path = tmp_path / "budget.sqlite"
    with Ledger.open(path, "car", budget=1.0) as led:
        DPID3Classifier(epsilon=0.3, max_depth=1, schema=car.schema, ledger=led).fit(car.X, car.y)
    with Ledger.open(path, "part", budget=1.0) as led:  # all rows but one: another table
        DPID3Classifier(epsilon=0.3, max_depth=1, schema=car.schema, ledger=led).fit(
            car.X[1:], car.y[1:]
        )
        assert led.spent() == Guarantee(0.3)
    assert table_owner(path, car.X[1:], car.y[1:]) == "part"


def test_two_ledger_files_salt_the_same_table_differently(car, tmp_path):
    fingerprints = []
    for name in ("one.sqlite", "two.sqlite"):
        with Ledger.open(tmp_path / name, "car", budget=1.0) as led:
            led.check_table(car.X, car.y)
        meta = _meta(tmp_path / name)
        fingerprints.append({k for k in meta if k.startswith("table:")})
    assert len(fingerprints[0]) == len(fingerprints[1]) == 1
    assert fingerprints[0] != fingerprints[1]


def test_check_only_writes_nothing_and_a_missing_file_holds_no_table(car, tmp_path):
    path = tmp_path / "budget.sqlite"
    assert table_owner(path, car.X, car.y) is None and not path.exists()
    with Ledger.open(path, "car", budget=1.0) as led:
        led.check_table(car.X, car.y, record=False)
    assert "table-salt" not in _meta(path)
    mem = Ledger(budget=1.0)  # one dataset per in-memory ledger: nothing to compare
    mem.check_table(car.X, car.y)


@pytest.mark.postgres
def test_a_postgres_ledger_refuses_the_same_rows_under_a_second_name(car, postgres_server):
    url = postgres_server.url("tables", search_path="issue33_tables")
    with Ledger.open(url, "car", budget=1.0) as led:
        led.check_table(car.X, car.y)
    rows = np.random.default_rng(0).permutation(len(car.y))
    with Ledger.open(url, "car_again", budget=1.0) as led:
        with pytest.raises(SchemaError, match="dataset 'car'"):
            led.check_table(car.X.iloc[rows], car.y.iloc[rows])
    assert table_owner(url, car.X, car.y) == "car"
