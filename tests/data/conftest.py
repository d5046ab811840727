"""Fixtures for the privet.data tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from privet.data import Categorical, Numeric, Schema, find_data_file
from privet.errors import DataNotFoundError


def _shared_data_dir() -> Path | None:
    try:
        return find_data_file("README.md").parent
    except DataNotFoundError:
        return None


SHARED_DATA = _shared_data_dir()


@pytest.fixture
def shared_data() -> Path:
    """The shared data directory; tests using it are skipped only when it is absent."""
    if SHARED_DATA is None:
        pytest.skip("shared data directory not found: set PRIVET_DATA_DIR to shared/data")
    return SHARED_DATA


@pytest.fixture
def schema() -> Schema:
    """Two features (one categorical, one numeric) and a binary class."""
    return Schema(
        (
            Categorical("color", ["red", "green", "blue"]),
            Numeric("age", 0, 100, (18, 65)),
        ),
        Categorical("label", ["no", "yes"]),
    )
