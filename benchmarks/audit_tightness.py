"""Benchmark: how close privet's white-box audits come to the epsilon the ledger proves.

For every DP learner at epsilon = 1 (delta = 1e-5 for the Gaussian one), on
neighbouring datasets built from the public schema of the bundled Car data
(no private row is read), :func:`privet.audits.audit_learner` with
``output="releases"`` trains the learner many times on each side of its
worst-case pair, replays every training on the other side, and reports

* the **proven** epsilon (read from the ledger of one fit at run time);
* the **rigorous** lower bound (Clopper-Pearson on a threshold event of the
  exact likelihood ratio of the recorded releases, 95% confidence);
* the **estimate** with its 95% interval (plug-in ratio of the top level set
  for pure DP, Gaussian-DP fit for the Gaussian learner);
* the **pair's** figure: the largest privacy loss the recorded transcripts
  allow by the mechanisms' laws (what any test on this pair can reach);
* the white-box **one-run** bound (Steinke, Nasr & Jagielski 2023) where the
  learner allows it;
* CPU seconds (the machine is shared: wall time is inflated by the others).

Each learner gets a CPU budget: a pilot of a few trainings measures the CPU
time per training (and its replay), and the number of trainings is what fits.

Then the learner bug zoo (every planted bug must FAIL, every twin PASS) and the
false-FAIL rate of 100 audits of correct learners at the confidence of the
claim (95%), and the before/after table against the black-box audit of main
(``--before``: the JSON that ``benchmarks/audit_learners.py`` wrote on main).

Outputs in ``benchmarks/results/``: ``audit_tightness.{md,csv,json,png}``,
``audit_learner_zoo.csv`` and ``audit_false_fail.csv``.

Run: ``flock /tmp/privet-heavy.lock python benchmarks/audit_tightness.py
[--cpu-budget 900] [--learners dp_id3,dp_gbt] [--skip-zoo] [--skip-false-fail]
[--quick] [--before PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import re
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from privet.audits import audit_learner, resolve_learner
from privet.audits.learners.audit import claimed_and_proven
from privet.audits.learners.whitebox import SELECTION_PENALTY, release_test, statistics_bound
from privet.audits.learners.worst_case import worst_case_pair
from privet.audits.zoo import LEARNER_ZOO, run_learner_zoo
from privet.data import load_dataset

RESULTS = Path(__file__).resolve().parent / "results"
CONFIDENCE = 0.95
EPSILON = 1.0
ALL_PHASES = "learners,zoo,protocols,false_fail"
#: Where the ledger's whole curve is set against the audit: the ledger proves epsilon(delta)
#: at every delta (its PLD accountant), and a pure-DP learner whose privacy loss is a sum
#: of many small terms reaches its pure epsilon only on transcripts too rare to observe,
#: while epsilon(delta) at these deltas is reached on events a few thousand trainings see.
#: Fixed once for every learner (not chosen per learner), before the composition-heavy
#: rows were measured.
PROFILE_DELTAS = (1e-3, 1e-2)

# (configuration, max_depth, CPU budget factor, why this configuration)
LEARNERS: list[tuple[str, int, float, str]] = [
    ("dp_extra_trees", 1, 1.0, "random splits, one Laplace histogram per tree"),
    ("dp_id3", 0, 0.4, "no split: all of epsilon in the leaf histogram"),
    ("dp_id3", 1, 1.0, "one exponential-mechanism split, Laplace leaves"),
    ("dp_id3", 3, 1.0, "the default depth: three splits and the leaves on a path"),
    ("partial_mpc_id3", 1, 1.0, "reference path of CDP+PMPC-ID3"),
    ("oblivious_id3", 1, 1.0, "sound ODP+FMPC-ID3 (hidden EM split), reference path"),
    ("oblivious_id3_exact", 1, 0.2, "paper-faithful ODP+FMPC-ID3: exact hidden split"),
    ("dp_forest", 1, 1.0, "5 trees on disjoint subsets"),
    ("dp_forest_poisson", 1, 1.3, "5 trees on secret Poisson subsamples (amplified)"),
    ("secure_sum_id3", 0, 0.4, "the root's summed class counts only"),
    ("secure_sum_id3", 1, 1.0, "distributed discrete Laplace on the summed counts"),
    ("federated_cart", 0, 0.4, "the leaf counts only (leaf_prop = 0.5 of epsilon)"),
    ("federated_cart", 1, 1.0, "gamma-DLPA histograms over 5 owners"),
    ("matrix_forest", 3, 1.0, "matrix mechanism on the leaf counts (16 trees)"),
    ("dp_gbt", 1, 1.3, "Gaussian leaf sums, 12 trees (Gaussian DP)"),
    ("dp_gbt:2", 1, 1.3, "Gaussian leaf sums, 2 trees: the same mu, cheaper trainings"),
    ("id3", 1, 0.05, "non-private baseline: releases nothing through the mechanisms"),
]


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _spec(name: str) -> Any:
    """A configuration, or ``dp_gbt:K``: DP boosting with K trees."""
    if name.startswith("dp_gbt:"):
        from privet.audits.learners import LearnerBuilder, LearnerSpec

        k = int(name.split(":")[1])
        return LearnerSpec(
            name=name,
            title=f"DPGradientBoostingClassifier(n_estimators={k})",
            build=LearnerBuilder("DPGradientBoostingClassifier", (("n_estimators", k),)),
        )
    return resolve_learner(name)


def _trials_for(name: str, depth: int, schema: Any, budget: float, cap: int) -> tuple[int, float]:
    """Trainings per side that fit in ``budget`` CPU seconds, from a 16-training pilot."""
    spec = _spec(name)
    est = spec.make(epsilon=EPSILON, max_depth=depth, schema=schema)
    pair = worst_case_pair(est, schema)
    pilot = release_test(
        spec,
        pair,
        epsilon=EPSILON,
        trials=8,
        confidence=CONFIDENCE,
        max_depth=depth,
        curve=False,
        n_jobs=1,
    )
    per_trial = pilot.cpu_seconds / max(1, 2 * pilot.n_trials + 1)
    if not pilot.measured and "nothing" in pilot.not_measured:
        return 8, per_trial
    n = int(budget / (2 * max(per_trial, 1e-4)))
    return max(16, min(cap, n)), per_trial


def proven_curve(name: str, depth: int, schema: Any) -> Any:
    """``delta -> epsilon``: what the ledger proves for the learner as a mechanism at
    ``delta``, the smallest epsilon of its privacy plan (what ``fit`` reserves), read
    from one fit on the audit's pair. Not that one fit's charges: a learner whose later
    steps depend on earlier noisy outputs charges less on some runs (secure-sum ID3 at
    depth 1 stops at the root on about one fit in eight; federated CART's charges vary
    from fit to fit), and the audit measures the learner over all its runs."""
    spec = _spec(name)
    est = spec.make(epsilon=EPSILON, max_depth=depth, schema=schema)
    pair = worst_case_pair(est, schema)
    fit = claimed_and_proven(
        spec, pair.X1, pair.y1, epsilon=EPSILON, max_depth=depth, schema=schema
    )
    if fit.plan is None:
        return lambda delta: float(fit.ledger.spent(delta=delta).epsilon)
    return lambda delta: float(fit.ledger.plan_cost(fit.plan, delta=delta).epsilon)


def profile(proven_at: Any, t0: np.ndarray, t1: np.ndarray) -> list[dict[str, float]]:
    """At each of :data:`PROFILE_DELTAS`: the ledger's epsilon(delta) for the learner
    (``proven_at``, from :func:`proven_curve`) and the rigorous bound of the hypothesis
    (epsilon, delta) from the trainings' statistics (the threshold chosen on a quarter
    of them at that delta, as the audit does at delta = 0)."""
    out = []
    for delta in PROFILE_DELTAS:
        proven = proven_at(delta)
        r = statistics_bound(
            t0,
            t1,
            delta=delta,
            confidence=CONFIDENCE,
            claimed_epsilon=proven,
            selection_fraction=0.25,
            selection_penalty=SELECTION_PENALTY,
            random_state=0,
        )
        out.append({"delta": delta, "proven": proven, "rigorous": float(r.epsilon_lower)})
    return out


#: Multiples of a row's trainings at which :func:`ceiling` estimates the best bound.
CEILING_FACTORS = (1, 2, 4, 8, 16)


def ceiling(t0: np.ndarray, t1: np.ndarray, factors=CEILING_FACTORS) -> list[dict[str, float]]:
    """The best bound a threshold test on the exact likelihood ratio could show at ``f``
    times these trainings (an estimate, not a bound): the privacy loss's law is read off
    these trainings, the threshold is the best one in hindsight (no quarter spent on
    choosing it) and each proportion sits at its expected count, Clopper-Pearson at the
    audit's confidence (Bonferroni over the two). Both directions of the test.

    Each direction's smaller probability is the importance-weighted one: for the exact
    ratio L = log p1/p0, P0[L >= t] = E1[exp(-L); L >= t], which is far less noisy in
    the tail than the count of side 0's rare events. The law is that of the trainings
    seen, so a factor far above 1 cannot see transcripts rarer than they were: the
    figure then shows what the *observed* tail allows.
    """
    from scipy.stats import beta

    level = 1.0 - (1.0 - CONFIDENCE) / 2.0
    out = []
    directions = []
    for hi, lo_sign in ((t1, 1.0), (t0, -1.0)):  # L >= t on side 1; -L >= t on side 0
        x = lo_sign * hi[np.isfinite(hi)]
        if x.size:
            directions.append(x)
    for f in factors:
        best = 0.0
        for x in directions:
            n = round(f * x.size)
            order = np.sort(x)[::-1]
            p_hi = np.arange(1, order.size + 1) / x.size  # P[X >= order[i]] on this side
            p_lo = np.cumsum(np.exp(-order)) / x.size  # the same event on the other side
            last = np.r_[order[1:] != order[:-1], True]  # one candidate per distinct value
            k_hi, k_lo = np.round(n * p_hi[last]), np.round(n * p_lo[last])
            good = k_hi > 0
            lower = beta.ppf(1 - level, k_hi[good], n - k_hi[good] + 1)
            upper = beta.ppf(level, k_lo[good] + 1, np.maximum(n - k_lo[good], 1))
            with np.errstate(divide="ignore", invalid="ignore"):
                e = np.log(lower / upper)
            if e.size and np.nanmax(e) > best:
                best = float(np.nanmax(e))
        out.append({"factor": f, "trainings": round(f * len(t1)), "bound": best})
    return out


def profile_of(dirs: str) -> None:
    """``--profile-of DIR,...``: add the profile to the rows of earlier runs from their
    saved statistics (one fit per row gives the ledger; nothing else is trained)."""
    schema = load_dataset("car").schema
    for d in dirs.split(","):
        out = Path(d)
        found = sorted(out.glob("audit_tightness*.json"))
        if len(found) != 1:
            raise SystemExit(f"--profile-of: expected one audit_tightness*.json in {d}")
        found = found[0]
        record = json.loads(found.read_text(encoding="utf-8"))
        for r in record["learners"]:
            stats = out / f"statistics_{r['learner']}@{r['max_depth']}.npz"
            if not stats.exists() or r.get("proven_delta"):
                continue
            z = np.load(stats)
            r["profile"] = profile(
                proven_curve(r["learner"], r["max_depth"], schema), z["t0"], z["t1"]
            )
            r["ceiling"] = ceiling(z["t0"], z["t1"])
            print(f"{r['learner']}@{r['max_depth']}: {r['profile']}", flush=True)
        found.write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}g}"


def run_learners(
    args: argparse.Namespace, schema: Any, rows: list[dict[str, Any]], write: Any
) -> list[dict[str, Any]]:
    chosen = args.learners.split(",") if args.learners else None
    for name, depth, factor, why in LEARNERS:
        if chosen and name not in chosen and f"{name}@{depth}" not in chosen:
            continue
        budget = args.cpu_budget * factor
        n, per_trial = _trials_for(name, depth, schema, budget, args.max_trials)
        print(
            f"{name} (depth {depth}): {per_trial * 1000:.1f} ms CPU per training + replay; "
            f"{n} trainings per side",
            flush=True,
        )
        c0, w0 = _cpu(), time.perf_counter()
        audit = audit_learner(
            _spec(name),
            schema,
            epsilon=EPSILON,
            trials=n,
            confidence=CONFIDENCE,
            max_depth=depth,
            output="releases",
            one_run=not (args.quick or args.no_one_run),
            n_jobs=1,
            random_state=0,
        )
        cpu, wall = _cpu() - c0, time.perf_counter() - w0
        best = audit.best_release_test or (audit.release_tests[0] if audit.release_tests else None)
        if best is not None and best.statistics is not None:
            # every training's statistic, so that the bound can be recomputed without
            # training again (not committed: see .gitignore)
            t0, t1 = best.statistics
            np.savez_compressed(Path(args.out) / f"statistics_{name}@{depth}.npz", t0=t0, t1=t1)
        pure = best is not None and best.statistics is not None and not audit.proven_delta
        proven = audit.proven_epsilon
        measured = audit.measured_epsilon
        row = {
            "learner": name,
            "title": audit.title,
            "max_depth": depth,
            "why": why,
            "proven_epsilon": proven,
            "proven_delta": audit.proven_delta,
            "claimed_epsilon": audit.claimed_epsilon,
            "rigorous": measured,
            "rigorous_over_proven": None
            if measured is None or not math.isfinite(proven)
            else measured / proven,
            "estimate": None if best is None else best.estimate,
            "estimate_low": None if best is None else best.estimate_interval[0],
            "estimate_high": None if best is None else best.estimate_interval[1],
            "estimate_method": None if best is None else best.estimate_method,
            "estimate_over_proven": None
            if best is None or not math.isfinite(proven) or not best.measured
            else best.estimate / proven,
            "pair_epsilon": None if best is None else best.pair_epsilon,
            "pair": None if best is None else best.pair,
            "one_run": None if audit.one_run is None else audit.one_run.epsilon_lower,
            "trials_per_side": None if best is None else best.n_trials,
            "outcomes": None if best is None else best.outcomes,
            "not_measured": "; ".join(
                t.not_measured for t in audit.release_tests if not t.measured
            ),
            "verdict": audit.verdict,
            "consistent": audit.consistent,
            "cpu_seconds": round(cpu, 1),
            "cpu_budget": budget,  # this audit's: --cpu-budget times its factor
            "budget_factor": factor,
            "wall_seconds": round(wall, 1),
            "curve": None if best is None else best.curve,
            "event": None if best is None or best.result is None else best.result.event,
            "profile": profile(proven_curve(name, depth, schema), *best.statistics)
            if pure
            else None,
            "ceiling": ceiling(*best.statistics) if pure else None,
        }
        rows.append(row)
        write()
        print("  " + audit.summary(), flush=True)
        print(f"  CPU {cpu:.0f} s, wall {wall:.0f} s", flush=True)
    return rows


def run_zoo(
    args: argparse.Namespace, schema: Any, out: list[dict[str, Any]], write: Any
) -> list[dict[str, Any]]:
    for name in LEARNER_ZOO:
        c0 = _cpu()
        trials = args.zoo_trials or (300 if args.quick else "benchmark")
        (r,) = run_learner_zoo([name], schema=schema, trials=trials, n_jobs=1)
        row = r.row()
        row["total_cpu_seconds"] = round(_cpu() - c0, 1)
        out.append(row)
        write()
        print(
            f"zoo {name}: caught {r.caught} (bug ≥ {_fmt(r.broken.measured_epsilon)} vs "
            f"proven {_fmt(r.broken.proven_epsilon)}), twin passes {r.correct_passed} "
            f"(≥ {_fmt(r.correct.measured_epsilon)})",
            flush=True,
        )
    return out


FALSE_FAIL_SUBJECTS = [
    ("zoo twin", "scaled_counts"),
    ("zoo twin", "same_rows_as_parts"),
    ("zoo twin", "uncharged_second_pass"),
    ("zoo twin", "private_tie_break"),
    ("learner", "dp_extra_trees"),
]


def run_false_fail(args: argparse.Namespace, schema: Any) -> list[dict[str, Any]]:
    """100 audits of correct learners at 95%: how often is a correct learner FAILed?"""
    rows = []
    n_audits = args.false_fail_audits or (20 if args.quick else 100)
    for i in range(n_audits):
        kind, name = FALSE_FAIL_SUBJECTS[i % len(FALSE_FAIL_SUBJECTS)]
        spec = LEARNER_ZOO[name].spec(True) if kind == "zoo twin" else resolve_learner(name)
        a = audit_learner(
            spec,
            schema,
            epsilon=EPSILON,
            trials=300,
            confidence=CONFIDENCE,
            max_depth=1,
            output="releases",
            one_run=False,
            curve=False,
            n_jobs=1,
            random_state=1000 + i,
        )
        m = a.measured_epsilon
        rows.append(
            {
                "audit": i,
                "subject": f"{kind}: {name}",
                "proven_epsilon": a.proven_epsilon,
                "rigorous": m,
                "false_fail": m is not None and m > a.proven_epsilon,
            }
        )
    fails = sum(r["false_fail"] for r in rows)
    print(f"false FAILs: {fails} of {len(rows)} audits of correct learners", flush=True)
    return rows


def run_protocols(args: argparse.Namespace, schema: Any) -> list[dict[str, Any]]:
    """The white-box audit through the MPC protocol: what 3 real parties open."""
    from privet.audits.learners import LearnerBuilder, LearnerSpec
    from privet.audits.learners.whitebox import protocol_release_test
    from privet.audits.learners.worst_case import count_pair

    rows = []
    for backend, depth in itertools.product(("mpyc",), args.protocol_depths):
        spec = LearnerSpec(
            name=f"secure_sum_id3 ({backend}, 3 parties)",
            title=f"SecureSumID3Classifier through {backend} (3 party processes over TCP)",
            build=LearnerBuilder(
                "SecureSumID3Classifier", (("backend", backend), ("n_parties", 3))
            ),
            path="mpc",
            slow=True,
        )
        n = 8 if args.quick else args.protocol_trials
        c0, w0 = _cpu(), time.perf_counter()
        r = protocol_release_test(
            spec,
            count_pair(schema),
            epsilon=EPSILON,
            trials=n,
            confidence=CONFIDENCE,
            max_depth=depth,
            n_jobs=args.protocol_jobs,
            time_limit=args.protocol_time_limit,
        )
        cpu, wall = _cpu() - c0, time.perf_counter() - w0
        rows.append(
            {
                "learner": spec.name,
                "max_depth": depth,
                "n_jobs": args.protocol_jobs,
                "time_limit": args.protocol_time_limit,
                "rigorous": r.epsilon_lower,
                "estimate": r.estimate,
                "estimate_low": r.estimate_interval[0],
                "estimate_high": r.estimate_interval[1],
                "pair_epsilon": r.pair_epsilon,
                "trials_per_side": r.n_trials,
                "outcomes": r.outcomes,
                "cpu_seconds": round(cpu, 1),
                "wall_seconds": round(wall, 1),
            }
        )
        print(
            f"protocol {spec.name} at depth {depth}: ≥ {_fmt(r.epsilon_lower)}, estimate {_fmt(r.estimate)}, "
            f"outcomes {r.outcomes}, wall {wall:.0f} s",
            flush=True,
        )
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(
                {
                    k: json.dumps(v) if isinstance(v, (dict, list, tuple)) else v
                    for k, v in r.items()
                }
            )


def _before(path: str | None) -> dict[str, dict[str, Any]]:
    """The black-box audit of main (benchmarks/audit_learners.py's JSON), by learner."""
    if not path or not os.path.exists(path):
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for a in data.get("learners", []):
        ests = []
        for t in a.get("tests", []):
            k1, n1, k0, n0 = t.get("k_d1"), t.get("n_d1"), t.get("k_d0"), t.get("n_d0")
            if t.get("more_likely_on") == "D":
                k1, n1, k0, n0 = k0, n0, k1, n1
            if k1 and n1 and n0:
                ests.append(math.inf if not k0 else math.log((k1 / n1) / (k0 / n0)))
        out[a["learner"]] = {
            "measured": a.get("measured_epsilon"),
            "estimate": max(ests) if ests else None,
            "seconds": a.get("seconds"),
            "proven": a.get("proven_epsilon"),
        }
    return out


def _figure(rows: list[dict[str, Any]], path: Path) -> None:
    from matplotlib.figure import Figure

    shown = [r for r in rows if r["rigorous"] is not None and math.isfinite(r["proven_epsilon"])]
    if not shown:
        return
    fig = Figure(figsize=(9, 0.45 * len(shown) + 1.5), layout="constrained")
    ax = fig.subplots()
    labels = [f"{r['learner']} (depth {r['max_depth']})" for r in shown]
    y = list(range(len(shown)))
    ax.barh(
        [v - 0.27 for v in y],
        [r["pair_epsilon"] or 0 for r in shown],
        height=0.26,
        color="0.75",
        label="the pair allows (laws)",
    )
    ax.barh(
        y,
        [r["estimate"] if r["estimate"] and math.isfinite(r["estimate"]) else 0 for r in shown],
        height=0.26,
        color="tab:blue",
        label="estimate",
    )
    ax.barh(
        [v + 0.27 for v in y],
        [r["rigorous"] for r in shown],
        height=0.26,
        color="tab:green",
        label="rigorous lower bound (95%)",
    )
    ax.scatter(
        [r["proven_epsilon"] for r in shown],
        y,
        marker="|",
        s=400,
        color="k",
        label="proven ε (ledger)",
    )
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("epsilon")
    ax.grid(True, axis="x", lw=0.3, alpha=0.5)
    fig.legend(fontsize=7, loc="outside upper center", ncols=4)
    fig.savefig(path, dpi=110)


def _reduced(args: argparse.Namespace) -> list[str]:
    """A paragraph saying how a run fell short of the goals' budgets, if it did."""
    short = []
    if args.quick:
        short.append("`--quick` (30 CPU s per audit, 300 trainings in the zoo, 20 audits)")
    if args.cpu_budget < 900:
        short.append(
            f"{args.cpu_budget:g} CPU s per audit (the goal allows 2,400: 20 min on 2 cores)"
        )
    if args.no_one_run:
        short.append("no one-run audits")
    if args.zoo_trials:
        short.append(f"{args.zoo_trials} trainings per side in the zoo (each entry's own count)")
    if args.protocol_trials < 100 and not args.skip_protocols:
        short.append(f"{args.protocol_trials} protocol runs per side (the default is 100)")
    if args.false_fail_audits and args.false_fail_audits < 100:
        short.append(f"{args.false_fail_audits} audits of correct learners (not 100)")
    if not short:
        return []
    return [
        "**A reduced run**: " + "; ".join(short) + ". Bounds from fewer trainings are "
        "lower; these figures do not test the issue's goals, they show what this budget "
        "reaches.",
        "",
    ]


def _command(args: argparse.Namespace) -> str:
    flags = []
    for k, v in vars(args).items():
        if v in (None, False) or k in ("before", "out", "merge"):
            continue
        if k == "phases" and v == ALL_PHASES:
            continue
        if isinstance(v, list):
            v = ",".join(map(str, v))
        flags.append(f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}"))
    return "python benchmarks/audit_tightness.py " + " ".join(flags)


def _section(title: str, text: str, columns: list[str]) -> list[str]:
    """A page section's lines: its heading, its text and its table's header."""
    return [
        "",
        f"## {title}",
        "",
        text,
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]


def _row_budget(r: dict[str, Any]) -> float | None:
    """The CPU budget of the row's audit: rows written before ``budget_factor`` was
    stored hold the run's ``--cpu-budget``, to be multiplied by the learner's factor."""
    b = r.get("cpu_budget")
    if b is None or "budget_factor" in r:
        return b
    factor = {(n, d): f for n, d, f, _ in LEARNERS}.get((r["learner"], r["max_depth"]), 1.0)
    return float(b) * factor


def _markdown(rows, zoo, false_fail, before, args, load, protocols=(), parts=()) -> str:
    if parts:  # a merged page: the runs it was made from, each with its own command
        made = [
            "Merged (`--merge`) from runs made side by side, one per core, each under its own "
            "command:",
            "",
            *[
                f"- `{p['command']}` (load average before it: {p['load']})"
                + "".join(f" {x}" for x in p.get("reduced", []) if x)
                for p in parts
            ],
            "",
            "Where two runs audited the same learner at the same depth, the later run's row "
            "is shown. Car's public schema (no private row read), epsilon = 1, 95% confidence, "
            "one process a run (`n_jobs=1`). The machine has 2 cores, so **CPU seconds** are "
            "the comparable figure; wall seconds are inflated when runs share the cores. The "
            "goal allows 20 minutes an audit on this 2-core machine, i.e. 2,400 CPU s with "
            "`n_jobs=2` (the trainings are independent); a row's budget (in brackets) is "
            "`--cpu-budget` times its learner's factor.",
            "",
        ]
    else:
        made = [
            f"Generated by `{_command(args)}` (under `flock /tmp/privet-heavy.lock`). Car's "
            "public schema (no private row read), epsilon = 1, 95% confidence, one process "
            f"(`n_jobs=1`). Load average before the run: {load}; the machine is shared "
            "(2 cores), so **CPU seconds** are the comparable figure, wall seconds are inflated.",
            "",
            *_reduced(args),
        ]
    lines = [
        "# White-box learner audits: rigorous bound, estimate and the proven epsilon",
        "",
        *made,
        "Proven: the ledger of one fit. Rigorous: Clopper-Pearson lower bound of a threshold "
        "event on the exact likelihood ratio of every recorded release. Estimate: plug-in ratio "
        "of the top level set (pure DP) or Gaussian-DP fit (Gaussian), with its 95% interval. "
        "Pair: the largest privacy loss the recorded transcripts allow by the mechanisms' laws "
        "(no test on this pair can measure more).",
        "",
        "| learner | depth | proven ε | rigorous ≥ | rigorous / proven | estimate [95%] | "
        "estimate / proven | the pair allows | one run ≥ | trainings / side | CPU s (budget) "
        "| wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        proven = _fmt(r["proven_epsilon"])
        if r["proven_delta"]:
            proven += f" (δ {r['proven_delta']:.0e})"
        est = (
            "—"
            if r["estimate"] is None
            else (f"{_fmt(r['estimate'])} [{_fmt(r['estimate_low'])}, {_fmt(r['estimate_high'])}]")
        )
        rig = (
            _fmt(r["rigorous"])
            if r["rigorous"] is not None
            else (f"not measured: {r['not_measured']}")
        )
        lines.append(
            f"| {r['learner']} | {r['max_depth']} | {proven} | {rig} | "
            f"{_fmt(r['rigorous_over_proven'], 2)} | {est} | {_fmt(r['estimate_over_proven'], 2)} | "
            f"{_fmt(r['pair_epsilon'])} | {_fmt(r['one_run'])} | {r['trials_per_side'] or '—'} | "
            f"{r['cpu_seconds']} ({_fmt(_row_budget(r), 4)}) | {r['wall_seconds']} |"
        )
    profiled = [r for r in rows if r.get("profile")]
    if profiled:
        deltas = [e["delta"] for e in profiled[0]["profile"]]
        lines += _section(
            "The ledger's whole curve: epsilon(delta) where the trainings can see it",
            "The ledger proves more than a pure epsilon: its PLD accountant gives the "
            "smallest epsilon(delta) at every delta, and a learner's release can be tight "
            "at one delta and not at another. A pure-DP learner whose privacy loss is a sum "
            "of many small terms (several counts a record moves, at small epsilon each) "
            "reaches its pure epsilon only when every term moves together, on transcripts "
            "far too rare for any number of trainings here; epsilon(delta) at the deltas "
            "below is reached on events a few thousand trainings see. Each cell: the "
            "ledger's epsilon(delta) for the learner (its plan's, not one fit's charges: a "
            "learner whose later steps depend on earlier noisy outputs charges less on some "
            "fits) / the rigorous bound of the hypothesis "
            "(epsilon, delta) from the same trainings' statistics (threshold chosen on a "
            "quarter of them at that delta) / their ratio. The deltas were fixed for what "
            "tens of thousands of trainings can see (an event's probability well above "
            "delta) after looking at two rows that already met the pure goal (secure-sum "
            "ID3 at the root, the disjoint forest) and before the others were measured. "
            "`--profile-of DIR` adds this to an earlier run's rows from its saved "
            "statistics.",
            ["learner", "depth", "pure: proven / rigorous"]
            + [f"δ = {d:g}: ledger ε(δ) / rigorous ≥ / ratio" for d in deltas],
        )
        for r in profiled:
            cells = [
                f"{_fmt(e['proven'])} / {_fmt(e['rigorous'])} / "
                f"**{_fmt(e['rigorous'] / e['proven'] if e['proven'] else None, 2)}**"
                for e in r["profile"]
            ]
            lines.append(
                f"| {r['learner']} | {r['max_depth']} | {_fmt(r['proven_epsilon'])} / "
                f"{_fmt(r['rigorous'])} | " + " | ".join(cells) + " |"
            )
    ceilinged = [r for r in rows if r.get("ceiling")]
    if ceilinged:
        factors = [c["factor"] for c in ceilinged[0]["ceiling"]]
        lines += _section(
            "How far more trainings would go (an estimate)",
            "For each row with saved statistics: the best bound a threshold test on the "
            "exact likelihood ratio would show with f times the row's trainings, estimated "
            "from those trainings (the privacy loss's law as observed, the best threshold "
            "in hindsight with no quarter spent on choosing it, each proportion at its "
            "expected count, Clopper-Pearson at 95%; the other side's probability of the "
            "event from the exact ratio, P0[L >= t] = E1[exp(-L); L >= t]). It is an "
            "estimate, not a bound, and a ceiling for this pair: the audit's own figure "
            "uses three quarters of the trainings and a threshold chosen on the fourth, so "
            "it sits near or below the 1x column (above it only by luck on the rare "
            "event). Far multiples cannot see transcripts rarer than those observed. The "
            "last columns: the multiple of the trainings at which the estimate first "
            "reaches 0.8 x proven, and the CPU that would take at the row's cost per "
            "training. `--profile-of DIR` adds this from saved statistics.",
            ["learner", "depth", "proven ε", "rigorous ≥ (trainings / side)"]
            + [f"{f}x" for f in factors]
            + ["0.8 x proven at", "CPU s for that"],
        )
        for r in ceilinged:
            target = 0.8 * r["proven_epsilon"]
            reach = next((c for c in r["ceiling"] if c["bound"] >= target), None)
            per = r["cpu_seconds"] / max(1, 2 * (r["trials_per_side"] or 1))
            lines.append(
                f"| {r['learner']} | {r['max_depth']} | {_fmt(r['proven_epsilon'])} | "
                f"{_fmt(r['rigorous'])} ({r['trials_per_side']}) | "
                + " | ".join(_fmt(c["bound"]) for c in r["ceiling"])
                + (
                    f" | {reach['factor']}x | {2 * reach['trainings'] * per:,.0f} |"
                    if reach
                    else f" | beyond {factors[-1]}x | — |"
                )
            )
    lines += [
        "",
        "Not audited here: `ldp_boosting` (seed 004) takes numeric features with public bounds "
        "and Car's are categorical; its local randomisers (piecewise, Duchi, randomised "
        "response) state no output law yet, so its white-box audit says *not measured*.",
    ]
    if before:
        lines += [
            "",
            "## Before (black-box audit of main) and after (white-box)",
            "",
            "Before: `benchmarks/audit_learners.py` on main (near-tie and lone-leaf pairs, "
            "predictions as outputs; its estimate is the plug-in ratio of its chosen event). "
            "After: this benchmark.",
            "",
            "| learner | proven ε | before: measured ≥ | before: estimate | before: s | "
            "after: rigorous ≥ | after: estimate | after: CPU s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            b = before.get(r["learner"], {})
            lines.append(
                f"| {r['learner']} (depth {r['max_depth']}) | {_fmt(r['proven_epsilon'])} | "
                f"{_fmt(b.get('measured'))} | {_fmt(b.get('estimate'))} | {b.get('seconds', '—')} | "
                f"{_fmt(r['rigorous'])} | {_fmt(r['estimate'])} | {r['cpu_seconds']} |"
            )
    if zoo:
        lines += [
            "",
            "## Learner bug zoo",
            "",
            "Every planted bug must FAIL (rigorous bound above the epsilon its own ledger "
            "proves, at 95%); every correct twin must PASS.",
            "",
            "| entry | planted bug | proven ε | bug: rigorous ≥ | caught | twin: rigorous ≥ | "
            "twin passes | CPU s (bug + twin) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for z in zoo:
            lines.append(
                f"| {z['entry']} | {z['bug']} | {_fmt(z['broken_proven_epsilon'])} | "
                f"{_fmt(z['broken_measured_epsilon'])} | {'yes' if z['caught'] else 'NO'} | "
                f"{_fmt(z['correct_measured_epsilon'])} | "
                f"{'yes' if z['correct_passed'] else 'NO'} | {z['total_cpu_seconds']} |"
            )
    if protocols:
        lines += [
            "",
            "## Through the MPC protocol (3 real parties)",
            "",
            "Each training runs secure-sum ID3's protocol: three MPyC party processes over TCP "
            "sum their noisy counts, and every party sees each level's sums opened. The audit "
            "takes what party 0 knows (the strongest adversary the proof covers: any single "
            "party): its own noise share and the opened sum less it, level by level. Those "
            "values are forced on the plaintext reference path of both datasets (the release "
            "recorder's replay), which gives the exact likelihood ratio of the protocol's "
            "transcript; a transcript the reference could not make would be counted as "
            "*replay diverged*. CPU seconds count the host only (the parties are other "
            "processes): the wall time is the figure here.",
            "",
            "| protocol | depth | rigorous ≥ | estimate [95%] | the pair allows | "
            "trainings / side | outcomes | trainings at once | time limit s | wall s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in protocols:
            lines.append(
                f"| {r['learner']} | {r['max_depth']} | {_fmt(r['rigorous'])} | "
                f"{_fmt(r['estimate'])} "
                f"[{_fmt(r['estimate_low'])}, {_fmt(r['estimate_high'])}] | "
                f"{_fmt(r['pair_epsilon'])} | {r['trials_per_side']} | {r['outcomes']} | "
                f"{r.get('n_jobs', 1)} | {'—' if r.get('time_limit') is None else r['time_limit']} | {r['wall_seconds']} |"
            )
    if false_fail:
        fails = sum(r["false_fail"] for r in false_fail)
        lines += [
            "",
            "## False FAILs",
            "",
            f"{len(false_fail)} audits of correct learners (300 trainings per side each, "
            f"rotating over {', '.join(sorted({r['subject'] for r in false_fail}))}), each at "
            f"95%: **{fails} FAILed** ({100 * fails / len(false_fail):.0f}%).",
        ]
    return "\n".join(lines) + "\n"


def _write_results(
    out: Path,
    stem: str,
    rows: list[dict[str, Any]],
    zoo: list[dict[str, Any]],
    ff: list[dict[str, Any]],
    protocols: list[dict[str, Any]],
    before: dict[str, Any],
    extra: dict[str, Any],
    md: str,
) -> None:
    """The CSVs, the JSON (with ``extra``: a run's command, or the parts merged), the page
    and the figure."""
    _write_csv(out / f"{stem}.csv", rows)
    _write_csv(out / "audit_learner_zoo.csv", zoo)
    _write_csv(out / "audit_false_fail.csv", ff)
    _write_csv(out / f"{stem}_protocols.csv", protocols)
    record = {"learners": rows, "zoo": zoo, "false_fail": ff, "protocols": protocols}
    record.update(before=before, **extra)
    (out / f"{stem}.json").write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
    (out / f"{stem}.md").write_text(md, encoding="utf-8")
    _figure(rows, out / f"{stem}.png")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu-budget", type=float, default=900.0, help="CPU seconds per audit")
    p.add_argument("--max-trials", type=int, default=20000, help="trainings per side at most")
    p.add_argument(
        "--learners", help="comma-separated subset: NAME (every depth) or NAME@DEPTH (one row)"
    )
    p.add_argument("--skip-zoo", action="store_true")
    p.add_argument("--skip-false-fail", action="store_true")
    p.add_argument("--skip-protocols", action="store_true", help="no MPC party processes")
    p.add_argument("--protocol-trials", type=int, default=100, help="protocol runs per side")
    p.add_argument(
        "--protocol-depths",
        type=lambda v: [int(d) for d in v.split(",")],
        default=[1],
        help="comma-separated tree depths of the protocol audit (default 1)",
    )
    p.add_argument(
        "--protocol-jobs",
        type=int,
        default=1,
        help="protocol trainings run at once (each starts its own 3 parties; default 1)",
    )
    p.add_argument(
        "--protocol-time-limit",
        type=float,
        help="seconds of wall time for each protocol audit: no batch of trainings is used after "
        "it (batches running then are dropped), and the bound is what the trainings done by "
        "then measure (default: no limit)",
    )
    p.add_argument("--quick", action="store_true", help="small budgets, for a smoke run")
    p.add_argument("--no-one-run", action="store_true", help="skip the one-run audits")
    p.add_argument(
        "--zoo-trials", type=int, help="trainings per side in the zoo (default: each entry's)"
    )
    p.add_argument("--false-fail-audits", type=int, help="audits of correct learners (default 100)")
    p.add_argument("--before", help="JSON of benchmarks/audit_learners.py on main")
    p.add_argument("--out", default=str(RESULTS), help="results directory")
    p.add_argument(
        "--phases",
        default=ALL_PHASES,
        help=f"comma-separated phases to run (default {ALL_PHASES}); two runs with different "
        "phases or learners can share the two cores, then --merge joins their pages",
    )
    p.add_argument(
        "--merge",
        help="comma-separated results directories of earlier runs (or of an earlier merged "
        "page, to add runs to it): write one page from them (nothing is run)",
    )
    p.add_argument(
        "--profile-of",
        help="comma-separated results directories of earlier runs: add the ledger's "
        "epsilon(delta) and the bound at PROFILE_DELTAS to their rows from the saved "
        "statistics (one fit per row), then --merge as usual",
    )
    args = p.parse_args()
    if args.profile_of:
        profile_of(args.profile_of)
        return
    if args.merge:
        merge(args)
        return
    phases = set(args.phases.split(","))
    unknown = phases - set(ALL_PHASES.split(","))
    if unknown:
        p.error(f"unknown phases {sorted(unknown)}; choose from {ALL_PHASES}")
    if args.quick:
        args.cpu_budget = min(args.cpu_budget, 30.0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    schema = load_dataset("car").schema
    stem = "audit_tightness" if not args.learners else "audit_tightness_subset"
    if args.learners and args.out != str(RESULTS):
        stem = "audit_tightness"  # a part of a run to --merge, in its own directory
    rows: list[dict[str, Any]] = []
    zoo: list[dict[str, Any]] = []
    ff: list[dict[str, Any]] = []
    protocols: list[dict[str, Any]] = []
    before = _before(args.before)

    def write() -> None:  # after every phase: a run stopped midway leaves what it measured
        extra = {"command": _command(args), "load": load, "reduced": _reduced(args)}
        md = _markdown(rows, zoo, ff, before, args, load, protocols)
        _write_results(out, stem, rows, zoo, ff, protocols, before, extra, md)

    if "learners" in phases:
        run_learners(args, schema, rows, write)  # each writes the results after every row
    if "zoo" in phases and not (args.skip_zoo or args.learners):
        run_zoo(args, schema, zoo, write)
    if "protocols" in phases and not args.skip_protocols:
        protocols += run_protocols(args, schema)
        write()
    if "false_fail" in phases and not (args.skip_false_fail or args.learners):
        ff += run_false_fail(args, schema)
        write()
    write()
    print(f"wrote {out / stem}.*")


def merge(args: argparse.Namespace) -> None:
    """One results page from the JSON of runs made side by side (``--merge A,B``)."""
    parts = []
    for d in args.merge.split(","):
        found = sorted(Path(d).glob("audit_tightness*.json"))
        if not found:
            raise SystemExit(f"--merge: no audit_tightness*.json in {d}")
        parts += [json.loads(f.read_text(encoding="utf-8")) for f in found]
    order = {(n, d): i for i, (n, d, *_rest) in enumerate(LEARNERS)}
    latest: dict[tuple[str, Any], dict] = {}  # a later part's row replaces an earlier one
    for p in parts:
        budget = re.search(r"--cpu-budget ([0-9.]+)", p.get("command") or "")
        for r in p["learners"]:
            r.setdefault("cpu_budget", float(budget.group(1)) if budget else None)
            latest[(r["learner"], r["max_depth"])] = r
    rows = sorted(
        latest.values(), key=lambda r: order.get((r["learner"], r["max_depth"]), len(order))
    )
    # the zoo and the false FAILs: a later part's phase replaces an earlier part's whole
    # phase (its rows are one experiment)
    zoo = next((p["zoo"] for p in reversed(parts) if p["zoo"]), [])
    ff = next((p["false_fail"] for p in reversed(parts) if p["false_fail"]), [])
    # the protocol audits: one row per (protocol, depth), a later part's row replacing one
    protocol_rows: dict[tuple[str, Any], dict] = {}
    for p in parts:
        for r in p["protocols"]:
            protocol_rows[(r["learner"], r["max_depth"])] = r
    protocols = sorted(protocol_rows.values(), key=lambda r: (r["learner"], r["max_depth"]))
    before = next((p["before"] for p in parts if p.get("before")), {})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "audit_tightness"
    # a directory may hold an earlier merged page: its runs are listed, not the page
    runs = [
        run
        for p in parts
        for run in (
            p["parts"] if "parts" in p else [{k: p.get(k) for k in ("command", "load", "reduced")}]
        )
    ]
    extra = {"parts": runs}
    md = _markdown(rows, zoo, ff, before, args, "", protocols, parts=runs)
    _write_results(out, stem, rows, zoo, ff, protocols, before, extra, md)
    print(f"wrote {out / stem}.* from {len(parts)} runs")


if __name__ == "__main__":
    main()
