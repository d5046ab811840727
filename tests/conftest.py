"""Suite-wide test configuration.

Tests that load a dataset from ``../shared/data`` (Adult, Heart, Titanic, ...)
are skipped, with the reason, only when that directory does not exist at all
(a clone without the shared data); when it exists, a missing file is a failure.
The bundled datasets (car, tennis) never need it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privet.data import Categorical, Schema, find_data_file, load_dataset
from privet.errors import DataNotFoundError


def _has_shared_data() -> bool:
    try:
        find_data_file("README.md")
    except DataNotFoundError:
        return False
    return True


HAS_SHARED_DATA = _has_shared_data()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    outcome = yield
    if HAS_SHARED_DATA or outcome.excinfo is None:
        return
    if isinstance(outcome.excinfo[1], DataNotFoundError):
        outcome.force_exception(
            pytest.skip.Exception(
                "needs ../shared/data, which is absent: set PRIVET_DATA_DIR to run this test",
                _use_item_location=True,
            )
        )


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for this test session (one per xdist worker).

    Skipped, with the reason, only where no PostgreSQL server binaries exist; a
    server that exists but fails to start is a failure.
    """
    from privet.testing.postgres import TemporaryPostgres, find_postgres_bin

    if find_postgres_bin() is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): install postgresql")
    pytest.importorskip("psycopg", reason="needs psycopg 3: pip install -e '.[test]'")
    server = TemporaryPostgres().start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def car():
    """The bundled Car evaluation dataset (loaded once per test module)."""
    return load_dataset("car")


@pytest.fixture(scope="module")
def tennis():
    """The bundled play-tennis dataset (loaded once per test module)."""
    return load_dataset("tennis")


@pytest.fixture(scope="module")
def toy():
    """20 rows (X, y, schema): 'good' predicts the class, 'noise' is a permutation of it."""
    rng = np.random.default_rng(1)
    y = np.array(["p", "q"] * 10)
    good = np.where(y == "p", "x", "y")
    X = pd.DataFrame({"good": good, "noise": rng.permutation(good)})
    schema = Schema(
        [Categorical("good", ["x", "y"]), Categorical("noise", ["x", "y"])],
        Categorical("c", ["p", "q"]),
    )
    return X, y, schema
