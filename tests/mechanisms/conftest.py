"""Fixtures for the mechanisms' tests; statistical helpers live in mech_stats.py."""

from __future__ import annotations

import pytest

from privet.ledger import Guarantee, Ledger


@pytest.fixture
def ledger() -> Ledger:
    """An add/remove ledger that accepts any charge (for sampling-heavy tests)."""
    return Ledger(Guarantee.unbounded(), dataset="mechanisms-test")


@pytest.fixture
def replace_ledger() -> Ledger:
    return Ledger(Guarantee.unbounded(), relation="replace_one", dataset="mechanisms-test")
