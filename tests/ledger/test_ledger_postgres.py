"""What only a PostgreSQL ledger has: a server that can go away, other clients'
locks, rows edited through SQL, URLs with passwords, copies between stores, and
worker processes of scikit-learn reaching the same budget over the network.

The ledger semantics themselves are the contract suite (test_ledger_contract.py)
and the multiprocess tests, which run on both stores.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time

import pytest

from privet.errors import (
    InvalidParameterError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerUnavailableError,
)
from privet.ledger import Gaussian, Guarantee, Ledger, PlanNode, copy_ledger, list_datasets

pytestmark = pytest.mark.postgres
psycopg = pytest.importorskip("psycopg")

_SCHEMAS = itertools.count()


@pytest.fixture
def url(postgres_server):
    return postgres_server.url("faults", search_path=f"pg{os.getpid()}_{next(_SCHEMAS)}")


def _sql(url, statement, params=()):
    schema = url.rsplit("%3D", 1)[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else None


def test_a_refused_charge_and_a_busy_lock_store_nothing(url):
    led = Ledger.open(url, "adult", budget=1.0, timeout=0.3)
    led.root.charge(0.5, mechanism="laplace")
    # another client holds the dataset's write lock (as a slow writer would)
    key = f"privet/{url.rsplit('%3D', 1)[1]}/adult"
    with psycopg.connect(url.split("?")[0]) as other:
        other.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
        t0 = time.monotonic()
        with pytest.raises(LedgerBusyError, match="nothing was charged"):
            led.root.charge(0.1, mechanism="laplace")
        assert time.monotonic() - t0 < 5
    with pytest.raises(Exception, match="over its budget"):
        led.root.charge(0.6, mechanism="laplace")
    assert _sql(url, "SELECT count(*) FROM charges") == [(1,)]
    assert led.spent() == Guarantee(0.5)
    assert led.verify() == 2  # the dataset and the one charge: refusals wrote no event


def test_rows_edited_through_sql_are_detected(url):
    led = Ledger.open(url, "adult", budget=1.0)
    led.root.charge(0.5, mechanism="laplace")
    _sql(url, "UPDATE charges SET record = replace(record, '0.5', '0.05')")
    with pytest.raises(LedgerCorruptError, match=r"damaged|edited"):
        Ledger.open(url, "adult")
    with pytest.raises(LedgerCorruptError):
        led.verify()


def test_a_raised_budget_is_detected(url):
    Ledger.open(url, "adult", budget=1.0).root.charge(0.5, mechanism="laplace")
    _sql(url, "UPDATE datasets SET budget_epsilon = '100'")
    with pytest.raises(LedgerCorruptError):
        Ledger.open(url, "adult")


def test_an_unreachable_server_is_one_clear_error_without_the_password(postgres_server):
    bad = f"postgresql://alice:s3cret@127.0.0.1:{postgres_server.port + 1}/x"
    t0 = time.monotonic()
    with pytest.raises(LedgerUnavailableError, match="Cannot reach") as err:
        Ledger.open(bad, "adult", budget=1.0, timeout=2)
    assert "s3cret" not in str(err.value) and "alice:***@" in str(err.value)
    assert time.monotonic() - t0 < 15
    with pytest.raises(InvalidParameterError, match="not a valid PostgreSQL URL"):
        Ledger.open("postgresql://x@h/db?nonsense_option=1", "adult", budget=1.0)


def test_the_server_restarting_mid_charging_loses_and_doubles_nothing(postgres_server):
    url = postgres_server.url("restart", search_path=f"rs{os.getpid()}")
    # timeout=1: a charge waits at most 1 s for a connection, so a 3 s outage must show
    led = Ledger.open(url, "adult", budget=1000.0, timeout=1)
    returned, failed, ambiguous, other = [], [], [], []
    stop = threading.Event()

    def charge_forever():
        while not stop.is_set():
            try:
                returned.append(led.root.charge(0.001, mechanism="laplace").id)
            except LedgerUnavailableError as exc:
                (ambiguous if "may or may not" in str(exc) else failed).append(str(exc))
                time.sleep(0.05)
            except Exception as exc:  # anything else is a bug: report it, keep going
                other.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.05)

    worker = threading.Thread(target=charge_forever)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while not returned and time.monotonic() < deadline:
            time.sleep(0.05)
        before = len(returned)
        postgres_server.restart(down_for=3.0, mode="fast")
        # Counted from when the server is back: the charges made between `before` and
        # the server going down must not pass for charges made after the restart.
        back = len(returned)
        deadline = time.monotonic() + 60  # charging resumes once the pool reconnects
        while len(returned) <= back + 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        after_restart = len(returned)
    finally:
        stop.set()
        worker.join(timeout=60)
    assert other == []  # every failure was the one clear error
    assert before > 0 and after_restart > back + 5  # it charged before and after
    assert failed, "the server was down for 3 s: some charge must have failed clearly"
    assert all("Lost the ledger database" in m for m in failed + ambiguous)
    stored = {r[0] for r in _sql(url, "SELECT id FROM charges")}
    assert set(returned) <= stored  # no returned charge lost
    assert len(stored) <= len(returned) + len(ambiguous)  # none stored twice
    fresh = Ledger.open(url, "adult")
    fresh.verify()
    assert fresh.spent().epsilon == pytest.approx(0.001 * len(stored))
    assert led.spent() == fresh.spent()  # the first handle caught up after the outage


def test_copy_between_sqlite_and_postgres_keeps_the_hash_chain(url, tmp_path):
    src = tmp_path / "budget.sqlite"
    for name in ("adult", "heart"):
        led = Ledger.open(src, name, budget=Guarantee(2.0, 1e-6))
        a, b = led.root.partition(["a", "b"])
        with led.reserve(Guarantee(0.5), caller="fit"):
            a.charge(0.25, mechanism="laplace")
        b.charge(Guarantee(0.1, 1e-8), mechanism="gaussian")
        led.check_schema("f" * 64)
        led.close()
    copied = copy_ledger(src, url)
    assert [c.dataset for c in copied] == ["adult", "heart"]
    assert [d["name"] for d in list_datasets(url)] == ["adult", "heart"]
    for name in ("adult", "heart"):
        orig, copy = Ledger.open(src, name), Ledger.open(url, name)
        assert copy.spent() == orig.spent() and copy.reserved() == orig.reserved()
        assert copy.to_json() == orig.to_json()
        copy.root.charge(0.01, mechanism="after the copy")  # the copy's ids go on
    back = tmp_path / "back.sqlite"
    copy_ledger(url, back, dataset="adult")
    assert Ledger.open(back, "adult").spent() == Ledger.open(url, "adult").spent()
    with pytest.raises(InvalidParameterError, match="already holds dataset 'adult'"):
        copy_ledger(src, url, dataset="adult")


def test_a_format_2_schema_is_upgraded_and_a_reservations_cost_is_copied(url, tmp_path):
    """A schema as privet wrote it before format 3 (no reservations' cost column) is
    upgraded when opened and stays verifiable; a plan's reservation then stores its
    cost, and a copy to SQLite keeps it and the hash chain."""
    led = Ledger.open(url, "adult", budget=Guarantee(2.5, 1e-5))
    with led.reserve(Guarantee(0.5)):
        led.root.charge(0.25, mechanism="laplace")
    led.close()
    _sql(url, "ALTER TABLE reservations DROP COLUMN cost")
    _sql(url, "UPDATE meta SET value = '2' WHERE key = 'version'")

    led = Ledger.open(url, "adult")
    assert led.verify() == 4  # the dataset, the reservation, its charge, its closing
    assert _sql(url, "SELECT value FROM meta WHERE key = 'version'") == [("3",)]
    plan = PlanNode()
    for _ in range(100):
        plan.charge(Gaussian(sigma=25.0, sensitivity=1.0), mechanism="gaussian")
    with led.reserve(plan):
        led.charge_many(
            [(led.root, Gaussian(sigma=25.0, sensitivity=1.0))] * 100, mechanism="gaussian"
        )
    costs = [r[0] for r in _sql(url, "SELECT cost FROM reservations ORDER BY id")]
    assert costs[0] is None and json.loads(costs[1])["layout"]
    back = tmp_path / "back.sqlite"
    copy_ledger(url, back, dataset="adult")
    copy = Ledger.open(back, "adult")
    assert copy.to_json() == led.to_json() and copy.verify() == led.verify() == 106


def test_worker_processes_of_scikit_learn_charge_the_database(url):
    from sklearn.model_selection import cross_val_score

    from privet.data import load_dataset
    from privet.learners import DPID3Classifier

    data = load_dataset("car")
    led = Ledger.open(url, "car", budget=10.0)
    model = DPID3Classifier(epsilon=0.25, max_depth=2, schema=data.schema, ledger=led)
    cross_val_score(model, data.X.iloc[:600], data.y.iloc[:600], cv=3, n_jobs=2)
    assert led.spent().epsilon == pytest.approx(0.75)
    assert len({c.reservation for c in led.charges}) == 3


# ------------------------------------------------------ reservations of lost hosts
# Issue 37: a reservation's life was tied to a process id checked on its own host only,
# so a host that died left its reservation open on every other host, blocking a shared
# budget for good. Now the owner's connection holds a lock the server releases.

HOLDER = """
import socket, sys, time
socket.gethostname = lambda: "lost-host-37"  # another machine: its pid means nothing here
from privet.ledger import Guarantee, Ledger
led = Ledger.open(sys.argv[1], "adult")
with led.reserve(Guarantee(0.5), on_abandon=sys.argv[2]):
    led.root.charge(0.1, mechanism="laplace", caller="holder")
    print("ready", flush=True)
    sys.stdin.readline()  # the parent says when to go on
    try:
        led.root.charge(0.1, mechanism="laplace", caller="holder")
        print("charged", flush=True)
    except Exception as exc:
        print(type(exc).__name__, flush=True)
        print(exc, file=sys.stderr, flush=True)
    sys.stdin.readline()  # and when to close the reservation
print("done", flush=True)
"""


def _holder(url, on_abandon):
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, on_abandon],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _keeper_backends(url, pid):
    return _sql(
        url,
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
        (f"privet-reservations-{pid}",),
    )


@pytest.fixture
def no_grace(monkeypatch):
    """The test's server has just started: judge reservations at once."""
    from privet.ledger import postgres_store

    monkeypatch.setattr(postgres_store, "RESTART_GRACE", 0.0, raising=False)


def test_a_killed_host_s_reservation_is_charged_in_full_by_a_writer_elsewhere(url, no_grace):
    led = Ledger.open(url, "adult", budget=1.0)
    holder = _holder(url, "charge")
    try:
        assert led.remaining().epsilon == pytest.approx(0.5)  # 0.5 held by the holder
        led.root.charge(0.01, mechanism="laplace")  # it is alive: its reservation stays
        assert led.reserved() == Guarantee(0.5)
        holder.kill()  # SIGKILL: the host is gone, its process id means nothing here
        holder.wait(timeout=30)
    finally:
        holder.kill()
    led.root.charge(0.01, mechanism="laplace")  # the next writer closes it
    assert led.reserved() == Guarantee(0.0)
    abandoned = [c for c in led.charges if c.mechanism.startswith("abandoned reservation")]
    assert len(abandoned) == 1 and "lost-host-37" in abandoned[0].step
    assert led.spent().epsilon == pytest.approx(0.5 + 0.02)  # its 0.1 and its rest 0.4
    assert Ledger.open(url, "adult").verify() == led.verify()


def test_a_frozen_host_whose_server_connection_was_killed_mid_fit_loses_its_reservation(
    url, no_grace
):
    """The holder is frozen (SIGSTOP) and the server drops its connection (as it does for
    a host that vanished: TCP keepalives): its reservation is released by the next writer
    elsewhere, and its late charges, when it wakes up, are checked against the budget."""
    import signal

    led = Ledger.open(url, "adult", budget=1.0)
    holder = _holder(url, "release")
    try:
        (backend,) = _keeper_backends(url, holder.pid)
        os.kill(holder.pid, signal.SIGSTOP)
        _sql(url, "SELECT pg_terminate_backend(%s)", backend)
        deadline = time.monotonic() + 30
        while _keeper_backends(url, holder.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        led.root.charge(0.2, mechanism="laplace")
        assert led.reserved() == Guarantee(0.0)  # released: its 0.4 unused goes back
        led.root.charge(0.65, mechanism="laplace")  # room a dead reservation had held
        os.kill(holder.pid, signal.SIGCONT)
        out = holder.communicate("go\nclose\n", timeout=60)[0].split()
    finally:
        holder.kill()
    assert out == ["BudgetExceededError", "done"]  # 0.95 spent: no room for its 0.1
    assert led.spent().epsilon == pytest.approx(0.95)
    assert led.spent().fits_in(led.budget)


def test_a_live_holder_keeps_its_reservation_across_writers_and_a_server_restart(
    url, postgres_server, monkeypatch
):
    """A restart drops every lock: during RESTART_GRACE nobody judges, and the owner
    takes its lock again at its next write; then it is alive for everyone again."""
    from privet.ledger import postgres_store

    led = Ledger.open(url, "adult", budget=1.0)
    holder = _holder(url, "charge")
    try:
        for _ in range(3):
            led.root.charge(0.01, mechanism="laplace")
        assert led.reserved() == Guarantee(0.5)
        postgres_server.restart(down_for=0.5, mode="fast")
        for _ in range(20):  # the pool reconnects
            try:
                led.root.charge(0.01, mechanism="laplace")
                break
            except LedgerUnavailableError:
                time.sleep(0.2)
        assert led.reserved() == Guarantee(0.5)  # within the grace period: not judged
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "charged"  # it took its lock again
        monkeypatch.setattr(postgres_store, "RESTART_GRACE", 0.0, raising=False)
        led.root.charge(0.01, mechanism="laplace")
        assert led.reserved() == Guarantee(0.5)  # held again: still alive
        assert holder.communicate("close\n", timeout=60)[0].strip() == "done"
    finally:
        holder.kill()
    led.root.charge(0.01, mechanism="laplace")
    assert led.reserved() == Guarantee(0.0)
    assert not [c for c in led.charges if c.mechanism.startswith("abandoned")]
