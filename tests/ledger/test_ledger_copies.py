"""Issue 11, item 1: every copy of an estimator charges the same ledger.

``copy.deepcopy`` and scikit-learn's ``clone`` return the ledger itself; a file
ledger pickles as a handle that reopens the same file in a worker process; an
in-memory ledger pickles as a read-only copy that refuses to charge, so that
``cross_val_score(..., n_jobs=2)`` cannot silently fork a fresh budget.
"""

from __future__ import annotations

import copy
import pickle

import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from privet.data import load_dataset
from privet.errors import LedgerNotShareableError
from privet.learners import DPID3Classifier
from privet.ledger import Guarantee, Ledger

EPS = 0.25
K = 3


@pytest.fixture(scope="module")
def car():
    data = load_dataset("car")
    return data.schema, data.X.iloc[:600], data.y.iloc[:600]


def _model(schema, led):
    return DPID3Classifier(epsilon=EPS, max_depth=2, schema=schema, ledger=led, random_state=0)


def test_deepcopy_and_clone_return_the_same_ledger_and_scope(sqlite_path):
    for led in (Ledger(budget=1.0), Ledger.open(sqlite_path, "car", budget=1.0)):
        assert copy.deepcopy(led) is led and copy.copy(led) is led
        assert copy.deepcopy(led.root) is led.root or copy.deepcopy(led.root).ledger is led
        est = _model(None, led)
        assert clone(est).ledger is led
        assert clone(_model(None, led.root)).ledger.ledger is led


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_cross_val_score_in_process_charges_the_given_ledger(car, kind, sqlite_path):
    schema, X, y = car
    led = Ledger(budget=10.0) if kind == "memory" else Ledger.open(sqlite_path, "car", budget=10.0)
    cross_val_score(_model(schema, led), X, y, cv=K, n_jobs=1)
    assert led.spent().epsilon == pytest.approx(K * EPS, rel=1e-9)
    assert len({c.reservation for c in led.charges}) == K


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_grid_search_in_process_charges_the_given_ledger(car, kind, sqlite_path):
    schema, X, y = car
    led = Ledger(budget=10.0) if kind == "memory" else Ledger.open(sqlite_path, "car", budget=10.0)
    grid = GridSearchCV(_model(schema, led), {"max_depth": [1, 2]}, cv=K, n_jobs=1, refit=False)
    grid.fit(X, y)
    assert led.spent().epsilon == pytest.approx(2 * K * EPS, rel=1e-9)


def test_cross_val_score_in_worker_processes_charges_the_ledger_file(car, sqlite_path):
    schema, X, y = car
    led = Ledger.open(sqlite_path, "car", budget=10.0)
    cross_val_score(_model(schema, led), X, y, cv=K, n_jobs=2)
    assert led.spent().epsilon == pytest.approx(K * EPS, rel=1e-9)
    assert Ledger.open(sqlite_path, "car").spent() == led.spent()


def test_grid_search_in_worker_processes_charges_the_ledger_file(car, sqlite_path):
    schema, X, y = car
    led = Ledger.open(sqlite_path, "car", budget=10.0)
    grid = GridSearchCV(_model(schema, led), {"max_depth": [1, 2]}, cv=K, n_jobs=2, refit=False)
    grid.fit(X, y)
    assert led.spent().epsilon == pytest.approx(2 * K * EPS, rel=1e-9)


def test_worker_processes_refuse_an_in_memory_ledger_and_charge_nothing(car):
    schema, X, y = car
    led = Ledger(budget=10.0)
    with pytest.raises(ValueError, match=r"Ledger\.open"):  # all fits failed, with our message
        cross_val_score(_model(schema, led), X, y, cv=K, n_jobs=2)
    with pytest.raises(LedgerNotShareableError, match=r"ledger file: Ledger\.open"):
        cross_val_score(_model(schema, led), X, y, cv=K, n_jobs=2, error_score="raise")
    assert led.spent() == Guarantee(0.0) and led.charges == []


def test_a_pickled_in_memory_ledger_is_a_read_only_copy(car):
    schema, X, y = car
    led = Ledger(budget=1.0, dataset="car")
    led.root.charge(0.25, mechanism="m")
    twin = pickle.loads(pickle.dumps(led))
    assert twin is not led and twin.spent() == led.spent() and twin.to_json() == led.to_json()
    for attempt in (
        lambda: twin.root.charge(0.25, mechanism="m"),
        lambda: twin.reserve(0.25),
        lambda: twin.root.partition(2),
        lambda: _model(schema, twin).fit(X, y),
    ):
        with pytest.raises(LedgerNotShareableError, match="read-only copy"):
            attempt()
    assert twin.spent() == led.spent() == Guarantee(0.25)


def test_a_fitted_model_with_its_own_ledger_still_pickles(car):
    schema, X, y = car
    m = _model(schema, None).fit(X, y)
    again = pickle.loads(pickle.dumps(m))
    assert (again.predict(X) == m.predict(X)).all()
    assert again.ledger_.spent() == m.ledger_.spent()
    again.fit(X, y)  # ledger=None: a fresh private ledger, as for any new fit


def test_a_pickled_file_ledger_reopens_the_same_file(sqlite_path):
    led = Ledger.open(sqlite_path, "car", budget=1.0, timeout=5.0)
    twin = pickle.loads(pickle.dumps(led))
    assert twin is not led and twin.path == led.path
    twin.root.charge(0.25, mechanism="m")
    assert led.spent() == Guarantee(0.25)
