"""A many-trainings audit serially, on the local process pool and on a Dask cluster.

Run from the repository root::

    python benchmarks/audit_dask.py            # up to 2,000 trainings per backend
    python benchmarks/audit_dask.py --quick    # up to 200

Writes ``benchmarks/results/audit_dask.{csv,md,png}``.

The audit is :func:`privet.audits.learner_dp_test` of ``DPID3Classifier``
(epsilon = 1, OpenDP noise) on Car's near-tie pair: ``trials`` trainings on each
of the two neighbouring datasets (2,000 trainings at ``trials=1000``). The same
audit runs (a) serially (``n_jobs=1``), (b) on joblib's local process pool
(``n_jobs=2``, loky) and (c) on a ``dask.distributed.LocalCluster`` with 2
worker processes (``scheduler=``), for a growing number of trainings, so that
the fixed cost of each backend and its cost per training can be read off.

This machine has 2 cores: a cluster cannot beat the local pool here; the point
of (c) is that the same call runs on a real cluster's workers unchanged, and
what it costs in overhead. The load average is recorded with the figures.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from distributed import LocalCluster

from privet.audits import LEARNERS, learner_dp_test, near_tie_pair
from privet.data import load_dataset

RESULTS = Path(__file__).resolve().parent / "results"


def run(pair, trials: int, **where) -> float:
    t0 = time.perf_counter()
    res = learner_dp_test(
        LEARNERS["dp_id3"], pair, epsilon=1.0, trials=trials, confidence=0.95, curve=False,
        random_state=0, **where,
    ).result  # fmt: skip
    assert res.n_trials == trials
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [25, 50, 100] if args.quick else [100, 250, 500, 1000]
    pair = near_tie_pair(load_dataset("car").schema)
    load = open("/proc/loadavg").read().split()[:3]
    rows = []
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        backends = {
            "serial (n_jobs=1)": {"n_jobs": 1},
            "local pool (loky, n_jobs=2)": {"n_jobs": 2},
            "Dask LocalCluster (2 workers)": {"scheduler": cluster.scheduler_address},
        }
        for where in backends.values():  # start the pools and the client before timing
            run(pair, 8, **where)
        for trials in sizes:
            for name, where in backends.items():
                seconds = min(run(pair, trials, **where) for _ in range(2))
                rows.append({"backend": name, "trainings": 2 * trials, "seconds": seconds})
                print(rows[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "audit_dask.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["backend", "trainings", "seconds"])
        w.writeheader()
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    lines = [
        "# A many-trainings audit: serial, local pool, Dask cluster",
        "",
        f"`python benchmarks/audit_dask.py{' --quick' if args.quick else ''}`: "
        "`learner_dp_test(DPID3Classifier, near-tie pair of Car, epsilon=1)`, "
        f"{os.cpu_count()} cores, load average at start {' '.join(load)} (shared machine).",
        "",
        "| backend | " + " | ".join(f"{2 * t} trainings (s)" for t in sizes)
        + " | fixed cost (s) | ms per training |",
        "|---" * (len(sizes) + 3) + "|",
    ]  # fmt: skip
    for name in backends:
        pts = [(r["trainings"], r["seconds"]) for r in rows if r["backend"] == name]
        x, y = np.array(pts).T
        slope, intercept = np.polyfit(x, y, 1)
        ax.plot(x, y, marker="o", label=name)
        lines.append(
            f"| {name} | " + " | ".join(f"{s:.1f}" for s in y)
            + f" | {intercept:.1f} | {1000 * slope:.1f} |"
        )  # fmt: skip
    lines += [
        "",
        "Each time is the better of two runs, after one warm-up run per backend (pool "
        "and client started). Fixed cost and cost per training: a least-squares line "
        "through the points.",
        "",
        "![audit wall time](audit_dask.png)",
    ]
    ax.set_xlabel("trainings")
    ax.set_ylabel("wall time (s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "audit_dask.png", dpi=120)
    (RESULTS / "audit_dask.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
