"""Issue 11, ledger items 5, 7, 8, 10, 11 and the ledger's bad-input cases: each
test failed on main (32c913c) and passes now."""

from __future__ import annotations

import _thread
import contextlib
import math
import pickle
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from privet.data import Categorical, Numeric, Schema, load_dataset
from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    LedgerBusyError,
    LedgerCorruptError,
    PrivetError,
    SchemaError,
)
from privet.ledger import Guarantee, Ledger


def _unchanged(led, before):
    assert (led.spent(), len(led.charges), led.reserved()) == before


def _state(led):
    return led.spent(), len(led.charges), led.reserved()


# ------------------------------------------------------------------ item 5
def test_run_validates_the_data_against_the_measurement_before_charging():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    meas = dp.t.make_sum(
        dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()
    ) >> dp.m.then_laplace(1.0)
    led = Ledger(budget=5.0)
    before = _state(led)
    for bad in ("ab", None, [1, 2], {"a": 1}, [5.0]):
        with pytest.raises(InvalidParameterError, match=r"input domain.*Nothing was charged"):
            led.root.run(meas, bad, 1)
        _unchanged(led, before)
    assert isinstance(led.root.run(meas, [0.5, 0.25], 1), float)
    assert led.spent().epsilon == pytest.approx(1.0)


# ------------------------------------------------------------------ item 7
_HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()  # held until the test says so (or closes the pipe)
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def _lock_held(path):
    """Another process holds the ledger file's write lock until the block ends.

    Released by the test, not after a fixed time, so that a slow machine cannot
    let the waiting charge through early.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        proc.stdin.close()  # the holder reads EOF and rolls back
        proc.wait(timeout=30)


def _can_write_now(path):
    conn = sqlite3.connect(path, timeout=1.0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def test_ctrl_c_while_waiting_for_the_lock_leaves_no_transaction_open(sqlite_path):
    # Ctrl-C is Python's default SIGINT handler here, whatever an earlier test in this
    # worker (a party launcher, a cluster) left installed: interrupt_main() does nothing
    # when SIGINT is ignored, and the wait would then run into its 30 s timeout.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    led = Ledger.open(sqlite_path, "car", budget=1.0, timeout=30.0)
    try:
        _wait_interrupted(led, sqlite_path)
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_interrupted(led, sqlite_path):
    with _lock_held(sqlite_path):
        timer = threading.Timer(0.3, _thread.interrupt_main)
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                led.root.charge(0.25, mechanism="m")
            waited = time.monotonic() - start
        finally:
            timer.cancel()
    # Ctrl-C ends the wait long before the 30 s timeout (0.3 s on an idle machine)
    assert waited < 10.0, f"Ctrl-C took {waited:.1f} s to interrupt the wait"
    assert not led._store._conn.in_transaction
    _can_write_now(sqlite_path)  # nobody is locked out by the interrupted process
    assert led.spent() == Guarantee(0.0)
    led.root.charge(0.25, mechanism="m")
    assert Ledger.open(sqlite_path, "car").spent() == Guarantee(0.25)


def test_ctrl_c_inside_the_transaction_rolls_it_back(sqlite_path, monkeypatch):
    led = Ledger.open(sqlite_path, "car", budget=1.0)
    led.root.charge(0.125, mechanism="before")
    real = led._store.append

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)  # the row is written, then Ctrl-C before the commit
        raise KeyboardInterrupt

    monkeypatch.setattr(led._store, "append", interrupted)
    with pytest.raises(KeyboardInterrupt):
        led.root.charge(0.25, mechanism="m")
    monkeypatch.undo()
    assert not led._store._conn.in_transaction
    _can_write_now(sqlite_path)
    assert led.spent() == Guarantee(0.125) and len(led.charges) == 1
    assert Ledger.open(sqlite_path, "car").spent() == Guarantee(0.125)
    led.root.charge(0.25, mechanism="m")
    assert led.verify() == 3


# ------------------------------------------------------------------ item 8
@pytest.mark.parametrize("path", ["", ":memory:", "  ", "file::memory:?cache=shared"])
def test_open_refuses_a_non_persistent_path(path):
    with pytest.raises(
        InvalidParameterError, match=r"Ledger\.open needs the path of a ledger file"
    ):
        Ledger.open(path, "car", budget=1.0)


# ----------------------------------------------------------------- item 10
@pytest.mark.parametrize("budget", [float("inf"), Guarantee(math.inf), np.inf])
def test_an_implicit_infinite_budget_is_refused(budget, sqlite_path):
    with pytest.raises(InvalidParameterError, match=r"Guarantee\.unbounded\(\)"):
        Ledger(budget=budget)
    with pytest.raises(InvalidParameterError, match=r"Guarantee\.unbounded\(\)"):
        Ledger.open(sqlite_path, "car", budget=budget)


def test_the_explicit_unbounded_budget_still_works_and_survives_copies(sqlite_path):
    led = Ledger(budget=Guarantee.unbounded())
    led.root.charge(1e6, mechanism="m")
    assert pickle.loads(pickle.dumps(Guarantee.unbounded())).is_unbounded
    assert Ledger.from_json(led.to_json()).budget.is_unbounded
    Ledger.open(sqlite_path, "u", budget=Guarantee.unbounded()).close()
    assert Ledger.open(sqlite_path, "u").budget.is_unbounded


@pytest.mark.parametrize(
    ("budget", "charge"), [(1e-12, 2e-12), (0.0, 1e-12), (0.0, 5e-324), (1.0, 1.0 + 1e-8)]
)
def test_the_tolerance_is_relative_and_never_lets_a_small_budget_overspend(budget, charge):
    led = Ledger(budget=budget)
    with pytest.raises(BudgetExceededError):
        led.root.charge(charge, mechanism="m")
    assert led.spent() == Guarantee(0.0)


def test_exact_splits_of_a_budget_still_fit():
    led = Ledger(budget=1.0)
    for _ in range(10):
        led.root.charge(0.1, mechanism="m")  # sums to 0.9999999999999999
    zero = Ledger(budget=0.0)
    zero.root.charge(0.0, mechanism="free")


def test_a_short_timeout_is_a_privet_error_not_a_raw_sqlite_error(sqlite_path):
    led = Ledger.open(sqlite_path, "car", budget=1.0, timeout=0.2)
    with _lock_held(sqlite_path):
        start = time.monotonic()
        with pytest.raises(LedgerBusyError, match="timeout"):
            led.root.charge(0.25, mechanism="m")
        assert time.monotonic() - start < 10.0  # the 0.2 s timeout, not a hang
        with pytest.raises(LedgerBusyError):
            Ledger.open(sqlite_path, "other", budget=1.0, timeout=0.1)
    assert led.spent() == Guarantee(0.0)
    assert not led._store._conn.in_transaction


# ----------------------------------------------------------------- item 11
@pytest.fixture(scope="module")
def schemas():
    return load_dataset("car").schema, load_dataset("heart").schema


def test_a_dataset_records_its_schema_and_refuses_another(sqlite_path, schemas):
    car, heart = schemas
    led = Ledger.open(sqlite_path, "car", budget=1.0, schema=car)
    assert led.schema_fingerprint == car.fingerprint()
    led.root.check_schema(car)  # same schema: fine
    with pytest.raises(SchemaError, match="another dataset"):
        led.root.check_schema(heart)
    with pytest.raises(SchemaError, match="another dataset"):
        Ledger.open(sqlite_path, "car", schema=heart)
    led.close()
    again = Ledger.open(sqlite_path, "car")
    assert again.schema_fingerprint == car.fingerprint() and again.verify() == 2
    mem = Ledger(budget=1.0, dataset="car")
    mem.check_schema(car)
    with pytest.raises(SchemaError):
        mem.check_schema(heart)
    assert Ledger.from_json(mem.to_json()).schema_fingerprint == car.fingerprint()


def test_the_fingerprint_is_the_public_schema_not_its_description():
    a = Schema([Numeric("age", 0, 100)], Categorical("y", ["no", "yes"]), description="one")
    b = Schema([Numeric("age", 0, 100)], Categorical("y", ["no", "yes"]), description="two")
    c = Schema([Numeric("age", 0, 120)], Categorical("y", ["no", "yes"]))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_dataset_names_are_normalised_and_case_twins_refused(sqlite_path):
    led = Ledger.open(sqlite_path, "car", budget=1.0)
    led.root.charge(0.75, mechanism="m")
    spaced = Ledger.open(sqlite_path, " car \n")
    assert spaced.dataset == "car" and spaced.spent() == Guarantee(0.75)
    with pytest.raises(BudgetExceededError):
        Ledger.open(sqlite_path, "car ", budget=1.0).root.charge(0.5, mechanism="m")
    with pytest.raises(InvalidParameterError, match="differs only by case"):
        Ledger.open(sqlite_path, "Car", budget=1.0)
    assert Ledger(budget=1.0, dataset="  adult ").dataset == "adult"
    for bad in ("", "   ", None, 3):
        with pytest.raises(InvalidParameterError):
            Ledger.open(sqlite_path, bad, budget=1.0)


# ------------------------------------------------------------- bad input
def test_partition_of_a_string_is_refused_not_split():
    led = Ledger(budget=1.0)
    for bad in ("ab", b"ab"):
        with pytest.raises(InvalidParameterError, match="a string is one label"):
            led.root.partition(bad)
    assert [s.label for s in led.iter_scopes()] == ["dataset"]


def test_a_claim_must_be_a_claim_object():
    led = Ledger(budget=1.0)
    with pytest.raises(InvalidParameterError, match=r"claim must be a privet\.ledger\.Claim"):
        led.root.charge(0.25, mechanism="m", claim="paper")
    assert led.charges == []
    Ledger.from_json(led.to_json())  # still serialisable


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "privet-ledger"}',
        '{"format": "privet-ledger", "version": 1, "dataset": "d"}',
        '{"format": "privet-ledger", "version": 1, "dataset": "d", "budget": {"epsilon": 1, '
        '"delta": 0}, "relation": "add_remove", "groups": [], "reservations": [], '
        '"charges": [{"id": 1}]}',
        '{"format": "privet-ledger", "version": 1, "dataset": "d", "budget": {"epsilon": 1, '
        '"delta": 0}, "relation": "add_remove", "groups": [{"id": 1, "parent": 99, '
        '"kind": "partition", "stable": false, "rate": 1, "method": "", "members": []}], '
        '"reservations": [], "charges": []}',
        '{"format": "privet-ledger", "version": 1, "dataset": "d", "budget": {"epsilon": "x", '
        '"delta": 0}, "relation": "add_remove", "groups": [], "reservations": [], "charges": []}',
        '{"format": "privet-ledger", "version": 1, "dataset": "d", "budget": {"epsilon": "inf", '
        '"delta": 0.5}, "relation": "add_remove", "groups": [], "reservations": [], '
        '"charges": []}',
        "[1, 2]",
        "not json",
    ],
)
def test_from_json_on_a_malformed_document_raises_a_privet_error(text):
    with pytest.raises(PrivetError):
        Ledger.from_json(text)


@pytest.mark.parametrize("eps", [1e308, math.nan, -1.0, math.inf, "1"])
def test_absurd_epsilons_are_privet_errors_and_charge_nothing(eps):
    led = Ledger(budget=Guarantee(2.0, 1e-6))
    before = _state(led)
    with pytest.raises(InvalidParameterError):
        led.root.charge(eps, mechanism="m")
    with pytest.raises(InvalidParameterError):
        led.reserve(eps)
    with pytest.raises((InvalidParameterError, LedgerCorruptError)):
        Ledger(budget=eps)
    _unchanged(led, before)


_ABANDONING_HOST = """
import os, sys, time
from privet.ledger import Guarantee, Ledger
led = Ledger.open(sys.argv[1], dataset="adult", budget=Guarantee(2.0))
res = led.reserve(Guarantee(1.0), caller="MPC fit", on_abandon=sys.argv[2])
with res:
    led.root.charge(Guarantee(0.25), mechanism="opened split", caller="MPC fit")
    print("charged", flush=True)
    time.sleep(600)
"""


@pytest.mark.multiprocess
@pytest.mark.parametrize(("mode", "spent"), [("charge", 1.0), ("release", 0.25)])
def test_a_killed_hosts_reservation_is_charged_in_full_when_it_asked(tmp_path, mode, spent):
    """Issue 11, item 2: SIGKILL of the host of an MPC fit left the ledger at what it had
    charged while its parties opened everything. A reservation made with
    on_abandon="charge" is found stale by the next writer and its unused rest charged."""
    import signal
    import subprocess
    import sys

    from privet.ledger import Guarantee, Ledger

    path = tmp_path / "budget.sqlite"
    host = subprocess.Popen(
        [sys.executable, "-c", _ABANDONING_HOST, str(path), mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout.readline().strip() == "charged"
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=30)
    finally:
        host.kill()
    led = Ledger.open(path, dataset="adult")
    led.root.charge(Guarantee(0.125), mechanism="next fit", caller="other")  # a writer: finds it
    assert led.spent().epsilon == pytest.approx(spent + 0.125)
    if mode == "charge":
        assert any(c.mechanism.startswith("abandoned reservation") for c in led.charges)
    assert led.verify() > 0
