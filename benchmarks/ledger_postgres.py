"""One budget, many processes: PostgreSQL and SQLite ledgers under concurrent charging.

Run from the repository root (PostgreSQL server binaries must be installed;
the benchmark starts its own throw-away server, data on the real disk)::

    python benchmarks/ledger_postgres.py             # 8 and 32 processes x 200 charges
    python benchmarks/ledger_postgres.py --quick     # 4 processes x 20 charges

Writes ``benchmarks/results/ledger_postgres.{csv,md,png}``.

What is measured
----------------
* **Concurrency.** N processes (fresh interpreters) each try 200 charges of
  2^-10 against one budget of epsilon = 1 (room for exactly 1,024): the total
  spent never above the budget, every successful charge stored exactly once
  (the ids the processes got back equal the stored rows), and charges per
  second (attempts, refusals included, over the wall time), for PostgreSQL and
  for a SQLite file on the same disk, side by side.
* **Faults.** (a) The server is stopped (``pg_ctl -m fast``) for 2 s and
  restarted while 8 processes charge: every charge a process got back is
  stored, none twice, every failure a ``LedgerUnavailableError``. (b) A client
  is killed with SIGKILL while charging: every charge it printed is stored, its
  transaction never half-applied, the next writer proceeds at once.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import psycopg

from privet.ledger import Guarantee, Ledger
from privet.testing.postgres import TemporaryPostgres

RESULTS = Path(__file__).resolve().parent / "results"
UNIT = 2.0**-10

WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from privet.errors import BudgetExceededError, LedgerUnavailableError
    from privet.ledger import Ledger

    where, go, n, unit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    led = Ledger.open(where, dataset="adult", timeout=120)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    ids, refused, lost, unknown = [], 0, 0, 0
    for i in range(n):
        try:
            ids.append(led.root.charge(unit, mechanism="laplace").id)
        except BudgetExceededError:
            refused += 1
        except LedgerUnavailableError as exc:
            if "may or may not" in str(exc):
                unknown += 1
            else:
                lost += 1
            time.sleep(0.05)
    print(json.dumps({"ids": ids, "refused": refused, "lost": lost, "unknown": unknown}),
          flush=True)
    """
)


def stored_ids(where: str) -> list[int]:
    if where.startswith("postgresql://"):
        with psycopg.connect(where) as conn:
            conn.execute("SET search_path TO privet")
            return [r[0] for r in conn.execute("SELECT id FROM charges")]
    import sqlite3

    conn = sqlite3.connect(where)
    try:
        return [r[0] for r in conn.execute("SELECT id FROM charges")]
    finally:
        conn.close()


def run_workers(where: str, n_procs: int, n_charges: int, *, during=None) -> dict:
    """Start n_procs workers, release them together, return the combined result."""
    go = Path(tempfile.mkdtemp()) / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, where, str(go), str(n_charges), str(UNIT)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(n_procs)
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    t0 = time.perf_counter()
    go.touch()
    if during is not None:
        during()
    results = [json.loads(p.stdout.readline()) for p in procs]
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.wait(timeout=60)
    ids = [i for r in results for i in r["ids"]]
    stored = stored_ids(where)
    led = Ledger.open(where, dataset="adult")
    led.verify()
    return {
        "processes": n_procs,
        "attempts": n_procs * n_charges,
        "succeeded": len(ids),
        "refused": sum(r["refused"] for r in results),
        "unavailable": sum(r["lost"] for r in results),
        "outcome_unknown": sum(r["unknown"] for r in results),
        "stored": len(stored),
        "returned_all_stored": set(ids) <= set(stored),
        "stored_twice": len(stored) - len(set(stored)),
        "stored_not_returned": len(set(stored) - set(ids)),
        "spent": led.spent().epsilon,
        "within_budget": led.spent().fits_in(led.budget),
        "seconds": elapsed,
        "attempts_per_s": n_procs * n_charges / elapsed,
    }


def kill_test(where: str) -> dict:
    crasher = textwrap.dedent(
        """
        import sys
        from privet.ledger import Ledger
        led = Ledger.open(sys.argv[1], dataset="adult")
        while True:
            print(led.root.charge(2.0 ** -20, mechanism="laplace").id, flush=True)
        """
    )
    Ledger.open(where, dataset="adult", budget=Guarantee(1.0)).close()
    proc = subprocess.Popen([sys.executable, "-c", crasher, where], stdout=subprocess.PIPE, text=True)
    printed = []
    while len(printed) < 200:
        printed.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    printed += [int(x) for x in rest.splitlines()[:-1] if x.strip()]
    t0 = time.perf_counter()
    led = Ledger.open(where, dataset="adult", timeout=30)
    led.root.charge(2.0**-20, mechanism="after the kill")
    next_writer = time.perf_counter() - t0
    stored = stored_ids(where)
    led.verify()
    return {
        "printed": len(printed),
        "stored": len(stored) - 1,
        "printed_all_stored": set(printed) <= set(stored),
        "next_writer_s": next_writer,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    procs = [4] if args.quick else [8, 32]
    n = 20 if args.quick else 200
    RESULTS.mkdir(exist_ok=True)
    rows, faults = [], []
    load = open("/proc/loadavg").read().split()[:3]
    with TemporaryPostgres(ram_disk=False) as pg, tempfile.TemporaryDirectory(dir=".") as tmp:
        for k in procs:
            for store in ("postgresql", "sqlite"):
                where = pg.url(f"bench{k}") if store == "postgresql" else f"{tmp}/b{k}.sqlite"
                Ledger.open(where, dataset="adult", budget=Guarantee(1.0)).close()
                r = {"store": store, **run_workers(where, k, n)}
                print(r)
                rows.append(r)
        # (a) the server stopped and restarted while 8 processes charge
        where = pg.url("restart")
        Ledger.open(where, dataset="adult", budget=Guarantee(1e6)).close()

        def outage() -> None:
            time.sleep(1.0)
            pg.restart(down_for=2.0, mode="fast")

        r = run_workers(where, 4 if args.quick else 8, 5 * n, during=outage)
        faults.append({"fault": "server stopped 2 s and restarted", **r})
        print(faults[-1])
        # (b) a client killed with SIGKILL while charging
        for store in ("postgresql", "sqlite"):
            where = pg.url("kill") if store == "postgresql" else f"{tmp}/kill.sqlite"
            faults.append({"fault": f"client SIGKILL ({store})", **kill_test(where)})
            print(faults[-1])
    write(rows, faults, load, n)


def write(rows: list[dict], faults: list[dict], load: list[str], n: int) -> None:
    with open(RESULTS / "ledger_postgres.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for store in ("postgresql", "sqlite"):
        pts = [(r["processes"], r["attempts_per_s"]) for r in rows if r["store"] == store]
        ax.plot(*zip(*pts, strict=True), marker="o", label=store)
    ax.set_xlabel("concurrent processes")
    ax.set_ylabel("charge attempts per second")
    ax.set_title("One budget, many processes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "ledger_postgres.png", dpi=120)
    lines = [
        "# One budget, many processes: PostgreSQL and SQLite",
        "",
        f"`python benchmarks/ledger_postgres.py`, {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average at start {' '.join(load)} (the machine was "
        "shared with other work: rates are lower bounds). Each process tries "
        f"{n} charges of 2^-10 against epsilon = 1 (room for 1,024). PostgreSQL 15 on the "
        "same machine, data on the real disk, fsync and synchronous commit on; SQLite in "
        "WAL mode with synchronous=FULL on the same disk.",
        "",
        "| store | processes | attempts | succeeded | refused | stored | every returned "
        "charge stored | stored twice | spent (budget 1) | seconds | attempts/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['store']} | {r['processes']} | {r['attempts']} | {r['succeeded']} | "
            f"{r['refused']} | {r['stored']} | {r['returned_all_stored']} | "
            f"{r['stored_twice']} | {r['spent']:.6g} | {r['seconds']:.1f} | "
            f"{r['attempts_per_s']:.0f} |"
        )
    lines += ["", "![rates](ledger_postgres.png)", "", "## Faults", ""]
    for f_ in faults:
        lines.append(f"- **{f_['fault']}**: " + ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in f_.items() if k != "fault"
        ))  # fmt: skip
    (RESULTS / "ledger_postgres.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
