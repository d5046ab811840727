"""Fixtures for the ledger tests."""

from __future__ import annotations

import pytest

from privet.ledger import Guarantee, Ledger


@pytest.fixture
def sqlite_path(tmp_path):
    return tmp_path / "budget.sqlite"


@pytest.fixture
def mem_ledger() -> Ledger:
    return Ledger(budget=Guarantee(epsilon=1.0, delta=1e-6), dataset="adult")
