"""MPCID3Classifier: ID3 (max operator) on secret shares, equal to ID3Classifier, charged as NonPrivate."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import privet.learners._protocols.host as host
from _processes import launch_killing
from privet.errors import BudgetExceededError, InvalidParameterError, MPCError
from privet.learners import ID3Classifier
from privet.learners.mpc_id3 import MPCID3Classifier
from privet.ledger import Guarantee, Ledger, NonPrivate
from privet.mpc import MPCPartyError


class Exploding:
    def __getattr__(self, name):
        raise AssertionError("data was read before the budget check")


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_local_backend_equals_id3_max(car, depth):
    ref = ID3Classifier(max_depth=depth, criterion="max", schema=car.schema).fit(car.X, car.y)
    m = MPCID3Classifier(max_depth=depth, schema=car.schema, backend="local").fit(car.X, car.y)
    assert m.tree_.same_structure(ref.tree_)
    leaves = ref.tree_.feature < 0
    np.testing.assert_array_equal(
        m.tree_.value[leaves].argmax(1), ref.tree_.value[leaves].argmax(1)
    )
    np.testing.assert_array_equal(m.predict(car.X), ref.predict(car.X))
    assert m.mpc_stats_.bytes_sent == 0 and m.mpc_stats_.seconds > 0


def test_openings_are_charged_as_nonprivate_per_node(tennis):
    led = Ledger(budget=Guarantee.unbounded(), dataset="tennis")
    m = MPCID3Classifier(max_depth=3, schema=tennis.schema, backend="local", ledger=led)
    m.fit(tennis.X, tennis.y)
    assert all(isinstance(c.entry, NonPrivate) for c in led.charges)
    internal = int(np.sum(m.tree_.feature >= 0))
    leaves = m.tree_.n_leaves
    mechanisms = [c.mechanism for c in led.charges]
    assert mechanisms.count("opened in the clear: split attribute") == internal
    assert mechanisms.count("opened in the clear: leaf label") == leaves
    assert math.isinf(m.privacy_spent_.epsilon) and math.isinf(led.spent().epsilon)
    assert {r["entry"] for r in m.mpc_reveals_} == {"NonPrivate"}


def test_no_ledger_records_the_openings_on_an_unbounded_one(tennis):
    m = MPCID3Classifier(max_depth=2, schema=tennis.schema, backend="local").fit(tennis.X, tennis.y)
    assert not m.ledger_.budget.is_finite and len(m.ledger_.charges) > 0


@pytest.mark.parametrize("where", ["ledger", "scope"])
def test_a_finite_budget_is_refused_before_the_data_is_read(tennis, where):
    led = Ledger(budget=Guarantee(10.0))
    target = led if where == "ledger" else led.root.partition(2)[0]
    m = MPCID3Classifier(schema=tennis.schema, backend="local", ledger=target)
    with pytest.raises(BudgetExceededError, match=r"no DP guarantee.*unbounded"):
        m.fit(Exploding(), Exploding())
    assert led.charges == [] and not hasattr(m, "tree_")


def test_parameters_are_validated(tennis):
    with pytest.raises(InvalidParameterError, match="backend"):
        MPCID3Classifier(schema=tennis.schema, backend="cloud").fit(tennis.X, tennis.y)
    with pytest.raises(InvalidParameterError, match="parties"):
        MPCID3Classifier(schema=tennis.schema, parties=0).fit(tennis.X, tennis.y)
    plan = MPCID3Classifier().privacy_plan()
    assert math.isinf(Ledger(budget=Guarantee.unbounded()).plan_cost(plan).epsilon)


@pytest.mark.mpc
def test_three_parties_equal_id3_and_report_traffic(tennis):
    m = MPCID3Classifier(max_depth=4, schema=tennis.schema, backend="mpc", parties=3)
    m.fit(tennis.X, tennis.y)
    ref = ID3Classifier(max_depth=4, schema=tennis.schema).fit(tennis.X, tennis.y)
    assert m.tree_.same_structure(ref.tree_)
    np.testing.assert_array_equal(m.predict(tennis.X), ref.predict(tennis.X))
    stats = m.mpc_stats_
    assert len(stats.parties) == 3
    assert all(p.bytes_sent > 0 and p.bytes_received > 0 for p in stats.parties)
    assert stats.message_batches > 0


@pytest.mark.mpc
def test_a_killed_party_makes_fit_fail_cleanly(car, monkeypatch):
    """Party 1 is killed once all parties are connected: fit raises MPCError, charges nothing."""

    monkeypatch.setattr(host, "launch", launch_killing(1))
    led = Ledger(budget=Guarantee.unbounded())
    m = MPCID3Classifier(max_depth=6, schema=car.schema, backend="mpc", ledger=led, timeout=20)
    started = time.monotonic()
    with pytest.raises(MPCError) as info:
        m.fit(car.X, car.y)
    assert isinstance(info.value, MPCPartyError)
    assert info.value.culprits == (1,) and info.value.kind == "died"
    assert "party 1" in str(info.value)
    assert time.monotonic() - started < 60
    assert led.charges == [] and not hasattr(m, "tree_")
