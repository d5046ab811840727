"""Seed 002: the paper's Adult settings with d_bar = 10 on privet's 12-attribute Adult.

privet's Adult (UCI adult.data for training, adult.test for testing; 12 attributes on
public bins: 4 x 5 x 7 x 5 x 7 x 6 x 5 x 2 x 4 x 3 x 5 x 6 cells) with the caption's
settings h = 8, tau = 100, q = 4, d_bar = 10: every ensemble's sub-domain has 2.2 to
17.6 million cells, above the 2^22 cells privet used to refuse. T, W and the strategies
stay implicit (Kronecker / product-query forms); D and the noise are dense over the
cells. Each configuration runs in its own process (its peak resident memory is its own);
CPU seconds next to wall seconds, the machine being shared.

Run (heavy: 5-15 CPU minutes per fit)::

    flock /tmp/privet-heavy.lock python benchmarks/seed002_dbar10.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd
from seed002_common import RESULTS

CONFIGS = [
    dict(mode="batch_training", max_features=10),
    dict(mode="batch_prediction", max_features=10),
    dict(mode="batch_training", max_features=8),
]


def one(cfg: dict) -> dict:
    from privet.data import load_dataset
    from privet.learners import MatrixRandomForestClassifier

    train, test = load_dataset("adult"), load_dataset("adult_test")
    c0, w0 = time.process_time(), time.perf_counter()
    m = MatrixRandomForestClassifier(
        epsilon=1.0, n_trees=100, max_depth=8, n_ensembles=4, schema=train.schema,
        random_state=0, strategy="optimized", **cfg,
    ).fit(train.X, train.y)  # fmt: skip
    acc = float(np.mean(m.predict(test.X) == test.y.to_numpy()))
    majority = float(test.y.value_counts(normalize=True).max())
    return {
        **cfg,
        "cells_per_ensemble": [e.n_cells for e in m.ensembles_],
        "leaves_per_ensemble": [e.n_leaves for e in m.ensembles_],
        "strategies": [s.get("chosen") for s in m.strategies_],
        "accuracy": acc,
        "majority": majority,
        "timings_s": {k: round(v, 1) for k, v in m.timings_.items()},
        "cpu_s": time.process_time() - c0,
        "wall_s": time.perf_counter() - w0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "spent_epsilon": m.ledger_.spent().epsilon,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(one(json.loads(sys.argv[2]))))
        return
    rows = []
    for cfg in CONFIGS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", json.dumps(cfg)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
        write(rows)  # after every configuration, so a cut-short run keeps what it measured


def write(rows: list[dict]) -> None:
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "seed002_dbar10.csv", index=False)
    load = open("/proc/loadavg").read().split()[0]
    lines = [
        "# Seed 002: d_bar = 10 on privet's Adult (h = 8, tau = 100, q = 4, eps = 1)",
        "",
        "Command: `flock /tmp/privet-heavy.lock python benchmarks/seed002_dbar10.py`; one "
        f"process per row; load average {load} at the end (2 shared cores, so wall > CPU).",
        "",
        "| mode | d_bar | cells per ensemble (millions) | leaves per ensemble (millions) "
        "| strategy | accuracy (majority) | optimisation / training / prediction s "
        "| CPU s | wall s | peak RSS MB |",
        "|---|---:|---|---|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        t = r["timings_s"]
        lines.append(
            f"| {r['mode']} | {r['max_features']} | "
            + ", ".join(f"{c / 1e6:.1f}" for c in r["cells_per_ensemble"])
            + " | "
            + ", ".join(f"{c / 1e6:.1f}" for c in r["leaves_per_ensemble"])
            + f" | {', '.join(sorted(set(map(str, r['strategies']))))} | {r['accuracy']:.3f} "
            f"({r['majority']:.3f}) | {t['optimisation']} / {t['training']} / {t['prediction']} "
            f"| {r['cpu_s']:.0f} | {r['wall_s']:.0f} | {r['peak_rss_mb']:.0f} |"
        )
    (RESULTS / "seed002_dbar10.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
