"""Seed 001, Tables 1-2: time to build one full ID3 tree vs the number of parties.

Every party is a real OS process (``backend="shamir"``: the paper's Shamir
summation with the Sec. 4.3 verification, over MPyC's TCP runtime on
localhost); the tree is built over the union of k of the 128 parties' data
(as in Fig. 2). Records wall time, rounds, counts summed, bytes sent per
party, and the largest resident memory of a party.

Usage: python benchmarks/seed001_timing.py nursery 2 4 8 16 32 [--budget SECONDS]
Appends to benchmarks/results/seed001_timing.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from seed001_common import load_average, split

from privet.learners import SecureSumID3Classifier

OUT = Path(__file__).parent / "results" / "seed001_timing.csv"
FIELDS = [
    "dataset",
    "parties",
    "max_depth",
    "backend",
    "seconds",
    "rounds",
    "counts_summed",
    "tree_nodes",
    "mean_bytes_sent_per_party",
    "max_party_rss_mb",
    "sum_party_rss_mb",
    "accuracy",
    "loadavg",
]


def run(name: str, k: int, backend: str, max_depth: int | None = None) -> dict:
    schema, X, y, owner, Xte, yte = split(name)
    mask = owner < k
    est = SecureSumID3Classifier(schema=schema, backend=backend, max_depth=max_depth, timeout=600.0)
    load = load_average()
    t0 = time.perf_counter()
    est.fit(X[mask].reset_index(drop=True), y[mask], parties=owner[mask])
    seconds = time.perf_counter() - t0
    parties = est.run_stats_.parties
    rss = [r.get("max_rss_kb", 0) / 1024 for r in est.party_results_]
    return {
        "dataset": name,
        "parties": k,
        "max_depth": "" if max_depth is None else max_depth,
        "backend": backend,
        "seconds": round(seconds, 2),
        "rounds": est.rounds_,
        "counts_summed": est.party_results_[0]["counts_summed"],
        "tree_nodes": est.tree_.node_count,
        "mean_bytes_sent_per_party": int(np.mean([p.bytes_sent for p in parties])),
        "max_party_rss_mb": round(max(rss), 1),
        "sum_party_rss_mb": round(sum(rss), 1),
        "accuracy": round(float((est.predict(Xte) == yte).mean()), 4),
        "loadavg": load,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", choices=["nursery", "mfeat"])
    ap.add_argument("parties", type=int, nargs="+")
    ap.add_argument("--max-depth", type=int, default=None, help="cut the tree (default: full)")
    ap.add_argument("--backend", default="shamir", choices=["shamir", "mpyc"])
    ap.add_argument(
        "--budget", type=float, default=600.0, help="stop before a run predicted to exceed it"
    )
    ap.add_argument("--out", type=Path, default=OUT, help="CSV to append to")
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    new = not args.out.exists()
    last = None
    with args.out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        for k in args.parties:
            if last is not None and last[1] * 4 * (k / last[0]) ** 2 / 4 > args.budget:
                print(f"skip k={k}: predicted {last[1] * (k / last[0]) ** 2:.0f} s > budget")
                continue
            row = run(args.dataset, k, args.backend, args.max_depth)
            writer.writerow(row)
            fh.flush()
            print(row, flush=True)
            last = (k, row["seconds"])


if __name__ == "__main__":
    main()
