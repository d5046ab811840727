"""The memory store keeps events as canonical JSON and packs committed chunks of
``MemoryStore.CHUNK`` events with zlib: tests with chunks of three events, so that packing,
a rollback across a chunk boundary and the rebuild of the hash chain all run (from an
independent review of the ledger's memory work)."""

from __future__ import annotations

import pytest

from privet.errors import BudgetExceededError
from privet.ledger import Guarantee, Ledger, PureDP
from privet.ledger.store import MemoryStore


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(MemoryStore, "CHUNK", 3)


def _ledger(n: int = 40) -> Ledger:
    led = Ledger(budget=Guarantee(1e3, 1e-5))
    parts = led.root.partition(2)
    for i in range(n):
        scope = parts[i % 2] if i % 3 else led.root.subsample(0.1)
        # a caller name with separators the packed lines must survive
        scope.charge(PureDP(epsilon=0.01 * (1 + i % 4)), mechanism="m", caller="a\tb\nc\u2028")
    return led


def test_packed_events_read_back_as_one_verified_chain(small_chunks):
    led = _ledger()
    store = led._store
    assert len(store._chunks) >= 10 and len(store._tail) < 3
    events = store.events_after(-1)
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[-1].hash == store.head()
    assert led.verify()
    assert [c.caller for c in led.charges][-1] == "a\tb\nc\u2028"
    again = Ledger.from_json(led.to_json())
    assert again.spent() == led.spent()
    assert again.spent(delta=1e-5) == led.spent(delta=1e-5)


def test_a_write_failing_inside_a_batch_leaves_the_store_as_it_was(small_chunks, monkeypatch):
    led = _ledger()
    store = led._store
    spent = led.spent(delta=1e-5)
    before = (len(store.events_after(-1)), store.head(), dict(store._next), len(led.charges))
    write, calls = store._write_rows, {"charge": 0}

    def failing(kind, payload):
        if kind == "charge":
            calls["charge"] += 1
            if calls["charge"] == 2:
                raise OSError("disk full (simulated)")
        return write(kind, payload)

    monkeypatch.setattr(store, "_write_rows", failing)
    with pytest.raises(Exception, match="disk full"):
        led.charge_many([(led.root, PureDP(epsilon=e)) for e in (0.01, 0.02, 0.03)], mechanism="m")
    monkeypatch.setattr(store, "_write_rows", write)
    after = (len(store.events_after(-1)), store.head(), dict(store._next), len(led.charges))
    assert after == before
    assert led.spent(delta=1e-5) == spent and led.verify()
    record = led.root.charge(PureDP(epsilon=0.01), mechanism="m")
    assert record.id == before[3] + 1
    with pytest.raises(BudgetExceededError):
        led.root.charge(PureDP(epsilon=1e4), mechanism="m")
    assert len(led.charges) == before[3] + 1
