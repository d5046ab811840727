"""Real OS processes against one ledger: no overspending, no lost charges.

Each worker is ``python -c`` (a fresh interpreter, as a user's second process
would be). Every scenario runs on a SQLite file in pytest's tmp_path on the real
disk (so fsync and WAL behave as in production) and on a real PostgreSQL server,
each ledger in its own PostgreSQL schema.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from privet.ledger import Guarantee, Ledger

pytestmark = pytest.mark.multiprocess

# A worker serves several scenarios, so that the interpreters start (and import
# privet) once per module: one JSON command a line on stdin, one result on stdout.
WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from privet.ledger import BudgetExceededError, Guarantee, Ledger

    for line in sys.stdin:
        cmd = json.loads(line)
        led = Ledger.open(cmd["path"], dataset="adult")
        parts = [s for s in led.iter_scopes() if s.label in ("a", "b")]
        print("ready", flush=True)
        while not os.path.exists(cmd["go"]):
            time.sleep(0.001)
        ids, rejected, unit, n = [], 0, 2.0 ** -8, cmd["n"]
        if cmd["mode"] == "plain":
            for i in range(n):
                try:
                    ids.append(led.root.charge(unit, mechanism="laplace", step=str(i)).id)
                except BudgetExceededError:
                    rejected += 1
        else:  # reservations of 8 units, each used in full across the tree
            for i in range(n // 8):
                try:
                    with led.reserve(Guarantee(8 * unit)):
                        for j in range(4):
                            ids.append(led.root.charge(unit, mechanism="root").id)
                        for j in range(4):
                            scope = parts[(i + j) % 2]
                            ids.append(scope.charge(2 * unit, mechanism="part").id)
                except BudgetExceededError:
                    rejected += 1
        led.close()
        print(json.dumps({"ids": ids, "rejected": rejected}), flush=True)
    """
)


@pytest.fixture(scope="module")
def workers():
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    yield procs
    for p in procs:
        p.stdin.close()
    for p in procs:
        p.wait(timeout=60)


def _run_workers(workers, path, modes, n, tmp_path):
    """Run one scenario on all workers at once; return their results."""
    go = tmp_path / "go"
    for p, mode in zip(workers, modes, strict=True):
        p.stdin.write(json.dumps({"path": str(path), "mode": mode, "n": n, "go": str(go)}) + "\n")
        p.stdin.flush()
    for p in workers:  # every worker has imported privet and opened the file
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    return [json.loads(p.stdout.readline()) for p in workers]


_SCHEMAS = itertools.count()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path):
    """A fresh ledger location: a SQLite file, or a new schema on a PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "budget.sqlite"
    server = request.getfixturevalue("postgres_server")
    return server.url("multiprocess", search_path=f"mp{os.getpid()}_{next(_SCHEMAS)}")


def _rows(where, sql="SELECT id, scope_id, record FROM charges"):
    if isinstance(where, str) and where.startswith("postgresql://"):
        import psycopg

        schema = where.rsplit("%3D", 1)[1]
        with psycopg.connect(where.split("?")[0]) as conn:
            conn.execute(f"SET search_path TO {schema}")
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    conn = sqlite3.connect(where)
    try:
        rows = conn.execute(sql).fetchall()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    return rows


def test_eight_processes_never_overspend(workers, where, tmp_path):
    path = where
    Ledger.open(path, dataset="adult", budget=Guarantee(1.0)).close()
    results = _run_workers(workers, path, ["plain"] * 8, 200, tmp_path)

    ids = [i for r in results for i in r["ids"]]
    rows = _rows(path)
    assert len(ids) == len(set(ids)) == len(rows) == 256  # 256 units fit, 1344 refused
    assert sum(r["rejected"] for r in results) == 8 * 200 - 256
    assert set(ids) == {row[0] for row in rows}
    led = Ledger.open(path, dataset="adult")
    assert led.spent() == Guarantee(1.0)
    assert math.fsum(json.loads(r[2])["entry"]["epsilon"] for r in rows) == 1.0


def test_processes_with_reservations_and_partitions_never_overspend(workers, where, tmp_path):
    path = where
    led = Ledger.open(path, dataset="adult", budget=Guarantee(1.0))
    a, b = led.root.partition(["a", "b"])
    results = _run_workers(workers, path, ["plain", "reserve"] * 4, 200, tmp_path)

    ids = [i for r in results for i in r["ids"]]
    rows = _rows(path)
    assert len(ids) == len(set(ids)) == len(rows)
    assert set(ids) == {row[0] for row in rows}
    # independent recomputation from the rows: root charges in sequence, parts in parallel
    eps = {"root": 0.0, a.id: 0.0, b.id: 0.0}
    for _, scope_id, record in rows:
        key = "root" if scope_id == led.root.id else scope_id
        eps[key] += json.loads(record)["entry"]["epsilon"]
    total = eps["root"] + max(eps[a.id], eps[b.id])
    assert total <= 1.0 + 1e-12
    assert led.spent().epsilon == pytest.approx(total, abs=1e-12)
    assert led.reserved() == Guarantee(0.0)
    assert led.spent().epsilon > 0.5  # the workers did compete for most of the budget


CRASHER = textwrap.dedent(
    """
    import sys
    from privet.ledger import Guarantee, Ledger

    led = Ledger.open(sys.argv[1], dataset="adult")
    with led.reserve(Guarantee(0.5)):
        while True:
            rec = led.root.charge(2.0 ** -14, mechanism="laplace")
            print(rec.id, flush=True)
    """
)


def test_killed_process_loses_no_committed_charge(where, monkeypatch):
    path = where
    postgres = isinstance(where, str) and where.startswith("postgresql://")
    if postgres:  # the module's server has just started: judge reservations at once
        from privet.ledger import postgres_store

        monkeypatch.setattr(postgres_store, "RESTART_GRACE", 0.0)
    Ledger.open(path, dataset="adult", budget=Guarantee(1.0)).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(path)], stdout=subprocess.PIPE, text=True
    )
    printed = []
    deadline = time.monotonic() + 60
    while len(printed) < 40 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        printed.append(int(line))
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)  # reaps it: its pid no longer exists
    complete = rest.splitlines() if rest.endswith("\n") else rest.splitlines()[:-1]
    printed += [int(x) for x in complete]  # a line cut by the kill was never printed
    assert proc.returncode == -signal.SIGKILL
    assert len(printed) >= 40

    stored = {row[0] for row in _rows(path)}  # includes PRAGMA integrity_check == ok
    assert set(printed) <= stored
    if postgres:  # its reservation lock goes when the server has ended its connection
        keeper = f"SELECT pid FROM pg_stat_activity WHERE application_name = 'privet-reservations-{proc.pid}'"
        deadline = time.monotonic() + 30
        while _rows(path, keeper) and time.monotonic() < deadline:
            time.sleep(0.05)

    led = Ledger.open(path, dataset="adult")
    assert led.reserved() == Guarantee(0.5)  # still open: only a writer closes it
    # the next writer closes it (SQLite: a dead pid on this host; PostgreSQL: no lock held)
    led.root.charge(2.0**-14, mechanism="after")
    assert led.reserved() == Guarantee(0.0)
    assert _rows(path, "SELECT status FROM reservations") == [("closed",)]
    # charged means released: the dead process's charges stay
    assert led.spent().epsilon == pytest.approx((len(stored) + 1) * 2.0**-14)
    assert led.remaining().epsilon == pytest.approx(1.0 - (len(stored) + 1) * 2.0**-14)
