from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from privet.ledger import Ledger
from privet.testing import datasets, entries, neighbouring_pairs, schemas


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_datasets_validate_against_their_schema(data):
    schema = data.draw(schemas(max_features=4))
    frame = data.draw(datasets(schema, max_rows=10))
    schema.validate(frame, target="required")


@settings(max_examples=40, deadline=None)
@given(neighbouring_pairs(schemas(max_features=3), relation="add_remove"))
def test_add_remove_pairs_differ_by_one_added_record(pair):
    d, d2 = pair
    assert len(d2) == len(d) + 1


@settings(max_examples=40, deadline=None)
@given(neighbouring_pairs(schemas(max_features=3, numeric=False), relation="replace_one"))
def test_replace_one_pairs_differ_in_at_most_one_row(pair):
    d, d2 = pair
    assert len(d2) == len(d)
    differing = (d.astype(str) != d2.astype(str)).any(axis=1).sum()
    assert differing <= 1


@settings(max_examples=60, deadline=None)
@given(entries())
def test_entries_are_chargeable(entry):
    led = Ledger(budget=100.0, dataset="x")
    assert led.root.can_charge(entry) or entry.delta > 0 or entry.epsilon == float("inf")


def test_bad_arguments_fail_at_construction():
    with pytest.raises(InvalidArgument, match="at least 1"):
        schemas(min_features=0)
    with pytest.raises(InvalidArgument, match="max_rows"):
        datasets(schemas(), min_rows=5, max_rows=2)
    with pytest.raises(InvalidArgument, match="max_epsilon"):
        entries(max_epsilon=0)
