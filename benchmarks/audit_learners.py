"""Benchmark: claimed vs proven vs measured epsilon of every learner, and the bug zoo.

For every learner registered in :data:`privet.audits.learners.LEARNERS`
(the plaintext reference paths, and the MPyC protocol paths at small sizes) on
the bundled Car dataset at epsilon = 1:

* **claimed** — the paper's guarantee (``privacy_claim_``), none for the
  non-private baselines;
* **proven** — what privet's ledger computes for one fit (``privacy_spent_``);
* **measured**, three ways, all through :func:`~privet.audits.learners.audit_learner`
  (what ``privet audit`` and a user run), with this benchmark's number of trainings:
  - many trainings: :func:`~privet.audits.learners.learner_dp_test` on the
    near-tie pair (depth-1 trees, four probe queries) and the lone-leaf pair
    (depth 3, the canary as probe), the bound with its confidence (95% overall,
    Bonferroni over the two tests);
  - one run (Steinke, Nasr & Jagielski 2023): 864 mislabelled canaries, each in
    the single training with probability 1/2, full-depth trees;
  - membership inference: the held-out epsilon lower bound of the best of the
    loss, shadow-model, LiRA and RMIA attacks (600 records, 8 shadow models).

LDP boosting (seed 004) takes numeric features only, so it is not audited on Car;
the report's notes say so.

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
import os
import time
from pathlib import Path
from typing import Any

from privet.audits.learners import LEARNERS, LearnerAudit, audit_learner
from privet.audits.report import write_report
from privet.audits.zoo import run_zoo
from privet.data import load_dataset

RESULTS = Path(__file__).resolve().parent / "results"
CONFIDENCE = 0.95
EPSILON = 1.0

# Trainings per dataset: (near-tie, lone-leaf). Forests train 5 trees each (the
# matrix forest 16, with its hyperparameter search); the protocol paths launch MPyC
# parties for every training and prediction.
BUDGET = {
    "id3": (400, 400),
    "dp_id3": (1000, 400),
    "partial_mpc_id3": (1000, 400),
    "oblivious_id3_exact": (1000, 400),
    "oblivious_id3": (1000, 400),
    "dp_forest": (300, 150),
    "dp_forest_poisson": (300, 150),
    "dp_extra_trees": (300, 150),
    "dp_gbt": (400, 200),
    "secure_sum_id3": (1000, 400),
    "matrix_forest": (60, 60),
    "federated_cart": (300, 150),
    "oblivious_id3_exact_local": (100, 0),
    "oblivious_id3_exact_mpc": (24, 0),
    "mpc_id3": (20, 0),
    "oblivious_id3_mpc": (0, 0),  # the sound protocol: skipped by default (see --mpc-sound)
}

# Learners the Car audit cannot run, and why (they are named in the report's notes).
NOT_ON_CAR = {
    "ldp_boosting": "takes numeric features with public bounds (seed 004, Sec. 3.1), and "
    "Car's attributes are categorical",
}


def _progress(stage: str, done: int, total: int) -> None:
    if done == 0:
        print(f"  {stage} ...", flush=True)


def audit_one(name: str, ds: Any, args: argparse.Namespace) -> LearnerAudit | None:
    """:func:`privet.audits.learners.audit_learner` with this benchmark's trainings."""
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
    trials = {"near_tie": near, **({"lone_leaf": lone} if lone else {})}
    reference = spec.path == "reference"  # one run and MIA train at full size
    audit = audit_learner(
        spec,
        ds,
        epsilon=EPSILON,
        trials=trials,
        confidence=CONFIDENCE,
        pairs=tuple(trials),
        max_depth=1 if spec.slow else 3,  # the protocol paths: depth-1 trees (near-tie)
        selection_fraction=0.25 if spec.slow else 0.5,
        curve=not spec.slow,
        one_run=reference,
        one_run_m=86 if args.quick else None,
        mia=reference,
        mia_shadows=4 if args.quick else 8,
        mia_rows=200 if args.quick else 600,
        random_state=0,
        progress=_progress,
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
        if name in NOT_ON_CAR:
            print(f"{name}: not audited on Car: it {NOT_ON_CAR[name]}", flush=True)
            continue
        print(f"{name} ...", flush=True)
        a = audit_one(name, ds, args)
        if a is not None:
            audits.append(a)
    notes = (
        f"Car (1728 records), epsilon = {EPSILON:g}, {CONFIDENCE:.0%} confidence per learner "
        f"(Bonferroni over its many-trainings tests). Load average before the run: {load:.1f} "
        "on 2 cores. Generated by benchmarks/audit_learners.py, which calls "
        "privet.audits.learners.audit_learner for each learner."
    )
    skipped = [f"{k}, which {v}" for k, v in NOT_ON_CAR.items() if k in names]
    if skipped:
        notes += " Not audited here: " + "; ".join(skipped) + "."
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
