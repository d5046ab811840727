"""Benchmark: claimed vs proven vs measured epsilon of every learner, and the bug zoo.

For every learner registered in :data:`privet.audits.learners.LEARNERS`
(the plaintext reference paths, and the MPyC protocol paths at small sizes) on
the bundled Car dataset at epsilon = 1:

* **claimed** — the paper's guarantee (``privacy_claim_``), none for the
  non-private baselines;
* **proven** — what privet's ledger computes for one fit (``privacy_spent_``);
* **measured**, three ways:
  - many trainings: :func:`~privet.audits.learners.learner_dp_test` on the
    near-tie pair (depth-1 trees, four probe queries) and the lone-leaf pair
    (depth 2, the canary as probe), the bound with its confidence (95% overall,
    Bonferroni over the two tests);
  - one run (Steinke, Nasr & Jagielski 2023): 864 mislabelled canaries, each in
    the single training with probability 1/2, full-depth trees;
  - membership inference: the held-out epsilon lower bound of the best of the
    loss, shadow-model, LiRA and RMIA attacks (600 records, 8 shadow models).

Then the bug zoo at its benchmark trial counts (:func:`privet.audits.zoo.run_zoo`).

Outputs in ``benchmarks/results/``: ``audit_learners.{md,csv,json,html}`` and
``audit_zoo.{md,csv,json,html}``.

Run: ``python benchmarks/audit_learners.py [--quick] [--skip-mpc] [--skip-zoo]``.
The full run takes 7 to 12 minutes on a loaded 2-core machine, a third of it in
the 3-party protocol runs (about 5 s per training plus prediction).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from privet.audits.learners import (
    LEARNERS,
    LearnerAudit,
    claimed_and_proven,
    learner_dp_test,
    learner_mia,
    learner_one_run,
    lone_leaf_pair,
    near_tie_pair,
)
from privet.audits.report import write_report
from privet.audits.zoo import run_zoo
from privet.data import load_dataset

RESULTS = Path(__file__).resolve().parent / "results"
CONFIDENCE = 0.95
EPSILON = 1.0

# Trainings per dataset: (near-tie, lone-leaf). Forests train 5 trees each;
# the protocol paths launch MPyC parties for every training and prediction.
BUDGET = {
    "id3": (400, 400),
    "dp_id3": (1000, 400),
    "partial_mpc_id3": (1000, 400),
    "oblivious_id3_exact": (1000, 400),
    "oblivious_id3": (1000, 400),
    "dp_forest": (300, 150),
    "dp_forest_poisson": (300, 150),
    "dp_extra_trees": (300, 150),
    "oblivious_id3_exact_local": (100, 0),
    "oblivious_id3_exact_mpc": (24, 0),
    "mpc_id3": (20, 0),
    "oblivious_id3_mpc": (0, 0),  # the sound protocol: skipped by default (see --mpc-sound)
}


def audit_one(name: str, ds: Any, args: argparse.Namespace) -> LearnerAudit | None:
    spec = LEARNERS[name]
    near, lone = BUDGET.get(name, (200, 100))
    if args.quick:
        near, lone = max(4, near // 10), (max(4, lone // 10) if lone else 0)
    if spec.slow and args.skip_mpc:
        return None
    if name == "oblivious_id3_mpc":
        if not args.mpc_sound:
            return None
        near = 8
    t0 = time.perf_counter()
    tie = near_tie_pair(ds.schema)
    pairs = [(tie, near)]
    if lone:
        pairs.append((lone_leaf_pair(ds, max_rows=300, random_state=0), lone))
    per_test = 1 - (1 - CONFIDENCE) / len(pairs)
    # Claimed and proven from one fit (on the small pair for the protocol paths).
    X, y = (tie.X1, tie.y1) if spec.slow else (ds.X, ds.y)
    claimed, source, proven, proven_delta, ledger = claimed_and_proven(
        spec, X, y, epsilon=EPSILON, max_depth=1 if spec.slow else 3, schema=ds.schema
    )
    tests = []
    for pair, trials in pairs:
        depth = pair.max_depth or 2
        print(f"  {name}: {pair.kind}, {trials} trainings per dataset, depth {depth}", flush=True)
        tests.append(
            learner_dp_test(
                spec,
                pair,
                epsilon=EPSILON,
                trials=trials,
                confidence=per_test,
                max_depth=depth,
                claimed_epsilon=claimed if claimed is not None else math.inf,
                selection_fraction=0.25 if spec.slow else 0.5,
                curve=not spec.slow,
                random_state=0,
            )
        )
    one = mia = None
    if spec.path == "reference":  # one run and MIA train at full size: reference paths only
        print(f"  {name}: one run", flush=True)
        one = learner_one_run(
            spec,
            ds,
            epsilon=EPSILON,
            confidence=CONFIDENCE,
            m=86 if args.quick else None,
            claimed_epsilon=claimed if claimed is not None else math.inf,
            random_state=0,
        )
        print(f"  {name}: membership inference", flush=True)
        mia = learner_mia(
            spec,
            ds,
            epsilon=EPSILON,
            max_depth=3,
            confidence=CONFIDENCE,
            n_shadows=4 if args.quick else 8,
            rows=200 if args.quick else 600,
            random_state=0,
        )
    audit = LearnerAudit(
        learner=name,
        title=spec.title,
        dataset=ds.name,
        epsilon=EPSILON,
        max_depth=3,
        claimed_epsilon=claimed,
        claim_source=source,
        proven_epsilon=proven,
        proven_delta=proven_delta,
        confidence=CONFIDENCE,
        tests=tuple(tests),
        one_run=one,
        mia=mia,
        ledger=ledger,
        wall_time=time.perf_counter() - t0,
    )
    print("  " + audit.summary(), flush=True)
    return audit


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    fields: list[str] = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the trainings")
    parser.add_argument("--skip-mpc", action="store_true", help="reference paths only")
    parser.add_argument(
        "--mpc-sound", action="store_true", help="also the sound 3-party protocol (8 runs)"
    )
    parser.add_argument("--skip-zoo", action="store_true", help="learners only")
    parser.add_argument("--learners", help="comma-separated subset of the learners")
    args = parser.parse_args()
    started = time.perf_counter()
    load = os.getloadavg()[0]
    ds = load_dataset("car")
    RESULTS.mkdir(parents=True, exist_ok=True)
    names = args.learners.split(",") if args.learners else list(LEARNERS)
    audits = []
    for name in names:
        print(f"{name} ...", flush=True)
        a = audit_one(name, ds, args)
        if a is not None:
            audits.append(a)
    notes = (
        f"Car (1728 records), epsilon = {EPSILON:g}, {CONFIDENCE:.0%} confidence per learner "
        f"(Bonferroni over its many-trainings tests). Load average before the run: {load:.1f} "
        "on 2 cores. Generated by benchmarks/audit_learners.py."
    )
    files = write_report(
        RESULTS,
        title="privet audit: claimed vs proven vs measured epsilon of every learner",
        name="audit_learners",
        learners=audits,
        notes=notes,
    )
    _write_csv(RESULTS / "audit_learners.csv", [a.row() for a in audits])
    print(f"wrote {', '.join(str(f) for f in files)} and audit_learners.csv", flush=True)

    if not args.skip_zoo:
        print("bug zoo ...", flush=True)
        zoo = run_zoo(
            confidence=CONFIDENCE,
            trials=2_000 if args.quick else "benchmark",
            random_state=0,
            progress=lambda n, w: print(f"  {n} ({w})", flush=True),
        )
        files = write_report(
            RESULTS,
            title="privet bug zoo: broken mechanisms and their correct counterparts",
            name="audit_zoo",
            zoo=zoo,
            notes=f"{CONFIDENCE:.0%} confidence per test; benchmark trial counts.",
        )
        _write_csv(RESULTS / "audit_zoo.csv", [r.row() for r in zoo])
        for r in zoo:
            row = r.row()
            print(
                f"  {row['entry']:<26} claimed {row['claimed_epsilon']:<5g} broken "
                f"{row['broken_epsilon_lower']:.3f} {row['broken_verdict']}  correct "
                f"{row['correct_epsilon_lower']:.3f} {row['correct_verdict']}  "
                f"({row['trials']:,} trials, {row['seconds']:.0f} s)",
                flush=True,
            )
        print(f"wrote {', '.join(str(f) for f in files)} and audit_zoo.csv", flush=True)
    summary = {
        "seconds": round(time.perf_counter() - started, 1),
        "load_avg_1min_before": round(load, 2),
        "learners": [a.learner for a in audits],
    }
    (RESULTS / "audit_run.json").write_text(json.dumps(summary, indent=2))
    print(f"done in {summary['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
