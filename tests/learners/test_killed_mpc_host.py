"""Issue 11, item 2, end to end: SIGKILL the host of a real MPC fit.

The host process fits ``PartialMPCID3Classifier(backend="mpc")`` on Car with a
SQLite ledger and real MPyC party processes. Once its reservation is in the
file and its parties are running, it is killed with SIGKILL. Then (a) every
party process stops by itself (its host is gone), and (b) the next writer of
the ledger finds the reservation stale and charges it in full, because the
parties may already have opened the DP values: the ledger ends at the plan's
full cost, never at what the host had charged before it died.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from _processes import alive
from privet.ledger import Guarantee, Ledger

pytestmark = pytest.mark.mpc

HOST = textwrap.dedent(
    """
    import sys
    from privet.data import load_dataset
    from privet.learners import PartialMPCID3Classifier
    from privet.ledger import Ledger

    car = load_dataset("car")
    led = Ledger.open(sys.argv[1], dataset="car")
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=4, schema=car.schema, ledger=led, backend="mpc", parties=3,
        timeout=60,
    )
    model.fit(car.X, car.y)
    print("finished", flush=True)
    """
)


def _parties_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout
    return [
        int(line.split()[0])
        for line in out.splitlines()[1:]
        if "privet.mpc.party" in line and line.split()[1] == str(pid)
    ]


def test_sigkill_of_an_mpc_fits_host_stops_its_parties_and_charges_the_plan(tmp_path):
    from privet.data import load_dataset
    from privet.learners import PartialMPCID3Classifier

    path = tmp_path / "budget.sqlite"
    Ledger.open(path, dataset="car", budget=Guarantee(10.0, 1e-6)).close()
    car = load_dataset("car")
    plan_cost = Ledger(budget=Guarantee(10.0, 1e-6)).plan_cost(
        PartialMPCID3Classifier(
            epsilon=1.0, max_depth=4, schema=car.schema, backend="mpc", parties=3
        ).privacy_plan()
    )

    host = subprocess.Popen([sys.executable, "-c", HOST, str(path)], stdout=subprocess.PIPE)
    parties: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the reservation is made, the parties run
            conn = sqlite3.connect(path)
            reserved = conn.execute("SELECT count(*) FROM reservations").fetchone()[0]
            conn.close()
            parties = _parties_of(host.pid)
            if reserved and len(parties) == 3:
                break
            assert host.poll() is None, "the fit ended before it could be killed"
            time.sleep(0.05)
        assert len(parties) == 3, "the parties never started"
        time.sleep(1.0)  # the protocol is under way
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=30)
    finally:
        host.kill()

    deadline = time.monotonic() + 90  # the parties notice their host is gone
    while any(alive(p) for p in parties) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in parties), "party processes outlived their host"

    led = Ledger.open(path, dataset="car")
    before = led.spent().epsilon
    led.root.charge(Guarantee(0.125), mechanism="next fit", caller="other")  # the next writer
    after = led.spent().epsilon
    assert after == pytest.approx(plan_cost.epsilon + 0.125, rel=1e-9)
    assert before <= plan_cost.epsilon + 1e-12  # the host had not charged it all itself
    assert any(c.mechanism.startswith("abandoned reservation") for c in led.charges)
    assert led.verify() > 0
