"""Audits on a real dask.distributed LocalCluster (2 worker processes).

The trainings of an audit fan out through joblib's Dask backend when the audit
is given ``scheduler=``: seeded results equal those of one process, a ledger
file passed in is charged by the workers themselves (they reopen it), an
in-memory ledger is refused on the workers, a worker killed in the middle of an
audit costs nothing but time (Dask retries its tasks), and an unreachable
scheduler is one clear error before any training.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import _seeded_learner
import numpy as np
import pytest
from _seeded_learner import COIN

from privet.audits import dp_test, learner_dp_test
from privet.errors import InvalidParameterError, LedgerNotShareableError
from privet.ledger import Guarantee, Ledger

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
pytestmark = pytest.mark.dask

# The workers cannot import the test modules: send their functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])
cloudpickle.register_pickle_by_value(_seeded_learner)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as c:
        yield c


def seeded_laplace(x, size, random_state=None):
    return np.random.default_rng(random_state).laplace(x, 0.5, size)


def slow_seeded_laplace(x, size, random_state=None):
    time.sleep(0.05)
    return np.random.default_rng(random_state).laplace(x, 0.5, size)


KW = dict(epsilon=1.0, trials=20_000, confidence=0.95, random_state=3)


def test_seeded_dp_test_on_the_cluster_equals_one_process(cluster):
    one = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=1, **KW)
    on_cluster = dp_test(seeded_laplace, 0.0, 1.0, scheduler=cluster.scheduler_address, **KW)
    assert (on_cluster.k_d0, on_cluster.k_d1, on_cluster.event) == (one.k_d0, one.k_d1, one.event)
    assert on_cluster.epsilon_lower == one.epsilon_lower
    assert one.verdict == "FAIL"  # scale 0.5 is 2-DP: the test has power here


def test_the_trainings_ran_on_the_workers(cluster):
    def where(x, size, random_state=None):
        return np.full(size, float(os.getpid()))

    out = dp_test(
        where, 0.0, 1.0, epsilon=1.0, trials=2000, confidence=0.9, random_state=0,
        statistic=lambda v: v, scheduler=cluster,
    )  # fmt: skip
    assert out.n_trials == 2000  # every trial ran and was counted
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        worker_pids = set(client.run(os.getpid).values())
    finally:
        client.close()
    assert os.getpid() not in worker_pids and len(worker_pids) == 2


def test_learner_tests_on_the_cluster(cluster):
    from privet.audits import LEARNERS, near_tie_pair
    from privet.data import load_dataset

    pair = near_tie_pair(load_dataset("car").schema)
    kw = dict(epsilon=1.0, trials=40, confidence=0.9, curve=False, random_state=5)
    coin = COIN
    one = learner_dp_test(coin, pair, n_jobs=1, **kw).result
    other = learner_dp_test(coin, pair, scheduler=cluster.scheduler_address, **kw).result
    assert (other.k_d0, other.k_d1, other.event) == (one.k_d0, one.k_d1, one.event)
    assert 0 < one.k_d0 < one.n_d0 or 0 < one.k_d1 < one.n_d1  # not one seed repeated
    # a real DP learner trains on the workers, every training counted
    real = learner_dp_test(LEARNERS["dp_id3"], pair, scheduler=cluster, **kw).result
    assert real.n_trials == real.n_selection + real.n_estimation == 40
    assert real.n_d0 == real.n_d1 == real.n_estimation


def test_workers_charge_the_shared_ledger_file_and_refuse_a_memory_ledger(cluster, tmp_path):
    led = Ledger.open(tmp_path / "audit.sqlite", "canary", budget=Guarantee(100.0))
    calls = []

    def charged(x, size, random_state=None, ledger=led):
        ledger.root.charge(0.01, mechanism="audit batch")  # on the worker: the file
        return np.random.default_rng(random_state).laplace(x, 2.0, size)

    out = dp_test(
        charged, 0.0, 1.0, epsilon=1.0, trials=4000, confidence=0.9, random_state=1,
        batch_size=500, scheduler=cluster.scheduler_address,
    )  # fmt: skip
    batches = 2 * 4000 // 500
    assert out.n_trials == 4000
    assert len(led.charges) == batches  # every worker's charge is in the one file
    assert led.spent().epsilon == pytest.approx(0.01 * batches)
    assert calls == []  # nothing ran in this process

    mem = Ledger(budget=Guarantee(100.0))

    def charged_in_memory(x, size, random_state=None, ledger=mem):
        ledger.root.charge(0.01, mechanism="audit batch")
        return np.zeros(size)

    with pytest.raises(LedgerNotShareableError, match="ledger file"):
        dp_test(
            charged_in_memory, 0.0, 1.0, epsilon=1.0, trials=1000, confidence=0.9,
            random_state=1, scheduler=cluster.scheduler_address,
        )  # fmt: skip
    assert mem.spent() == Guarantee(0.0)


def test_a_worker_killed_mid_audit_changes_nothing_but_time(cluster):
    kw = dict(epsilon=1.0, trials=20_000, confidence=0.95, random_state=7, batch_size=250)
    one = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=1, **kw)
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    victim = next(iter(client.run(os.getpid).values()))
    result = {}

    def run():
        result["r"] = dp_test(
            slow_seeded_laplace, 0.0, 1.0, scheduler=cluster.scheduler_address, **kw
        )

    t = threading.Thread(target=run)
    t.start()
    time.sleep(1.5)  # some batches are done, others are running or queued
    os.kill(victim, signal.SIGKILL)
    t.join(timeout=300)
    client.close()
    r = result["r"]
    assert r.n_trials == one.n_trials == 20_000  # no bound from fewer trainings
    assert (r.k_d0, r.k_d1, r.event, r.epsilon_lower) == (
        one.k_d0, one.k_d1, one.event, one.epsilon_lower,
    )  # fmt: skip


def test_an_unreachable_scheduler_or_both_settings_are_refused_before_training():
    calls = []

    def mech(x, size):
        calls.append(size)
        return np.zeros(size)

    t0 = time.monotonic()
    with pytest.raises(InvalidParameterError, match="Cannot reach the Dask scheduler"):
        dp_test(mech, 0.0, 1.0, epsilon=1.0, trials=100, confidence=0.9,
                scheduler="tcp://127.0.0.1:1")  # fmt: skip
    assert time.monotonic() - t0 < 60
    with pytest.raises(InvalidParameterError, match="not both"):
        dp_test(mech, 0.0, 1.0, epsilon=1.0, trials=100, confidence=0.9,
                scheduler="tcp://127.0.0.1:1", backend="loky")  # fmt: skip
    with pytest.raises(InvalidParameterError, match="scheduler= is a Dask"):
        dp_test(mech, 0.0, 1.0, epsilon=1.0, trials=100, confidence=0.9, scheduler=42)
    assert calls == []


def test_privet_audit_dp_runs_on_the_cluster_from_the_command_line(cluster, tmp_path):
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "privet", "audit", "dp", "--mechanism", "laplace_half_scale",
         "--which", "broken", "--trials", "20000", "--seed", "3", "--json",
         "--out", str(tmp_path), "--scheduler", cluster.scheduler_address],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr  # 1: the broken mechanism FAILs, as it should
    (entry,) = json.loads(out.stdout)["zoo"]
    assert entry["broken"]["n_trials"] == 20000  # every trial ran on the cluster and counted
    # true epsilon 2 against a claim of 1: 20,000 trials catch it (bound 1.87 in one process)
    assert entry["broken_verdict"] == "FAIL" and entry["broken_epsilon_lower"] > 1.0
