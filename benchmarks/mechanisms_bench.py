"""Speed of privet's samplers and quality of the matrix mechanism's strategies.

Writes ``benchmarks/results/mechanisms.csv`` (long format: benchmark, item,
metric, value, unit) and ``benchmarks/results/mechanisms.md``.

* Samplers: samples per second for 10^6 draws of each sampler (one call, one
  charge, on an unbounded ledger), wall clock and CPU time (the machine may be
  shared; CPU time is the steadier number). Selections (exponential mechanism,
  report-noisy-max) draw one noise value per candidate; they are run over 10
  candidates and reported per noise draw and per selection.
* Matrix mechanism (seed 002): decision-path workloads T of 16, 64 and 128
  random multi-way trees of depth 4 on the Car schema (6 attributes with
  domains 4, 4, 4, 3, 3, 3 read from /work/shared/data/id3/car.csv; n = 1728
  cells), strategies optimised explicitly (OPT_p on T^T T) and in Kronecker form
  (OPT_x), their optimisation time, and the error ratios against the identity
  strategy and the workload itself (A = T); plus one release on the Car data
  at epsilon = 2 with its empirical squared error.

Run: ``python benchmarks/mechanisms_bench.py [--draws 1000000] [--quick]``.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    DuchiMechanism,
    DuchiMultiMechanism,
    LocalLaplace,
    MatrixMechanism,
    PiecewiseMechanism,
    PiecewiseMultiMechanism,
    RandomisedResponse,
    decision_path_workload,
    make_discrete_laplace,
    make_exponential,
    make_gamma_dlpa,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    make_report_noisy_max,
    optimize_strategy,
)

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
CAR = Path("/work/shared/data/id3/car.csv")

Row = dict[str, Any]


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def sampler_rows(draws: int) -> list[Row]:
    central = Ledger(Guarantee.unbounded(), dataset="bench")
    local = Ledger(Guarantee.unbounded(), relation="replace_one", dataset="bench")
    zeros = np.zeros(draws)
    izeros = np.zeros(draws, dtype=np.int64)
    cands = 10
    sel_rows = max(1, draws // cands)
    utilities = np.tile(np.arange(cands, dtype=float), (sel_rows, 1))
    d = 10
    cases: list[tuple[str, Callable[[], Any], int, str]] = [
        ("laplace (float, OpenDP)", lambda: make_laplace(1.0)(zeros, scope=central), draws, ""),
        (
            "discrete laplace (OpenDP)",
            lambda: make_discrete_laplace(1.0)(izeros, scope=central),
            draws,
            "",
        ),
        (
            "gaussian (float, OpenDP)",
            lambda: make_gaussian(rho=0.5)(zeros, scope=central),
            draws,
            "",
        ),
        (
            "discrete gaussian (OpenDP)",
            lambda: make_gaussian(rho=0.5, discrete=True)(izeros, scope=central),
            draws,
            "",
        ),
        (
            "noisy histogram (discrete laplace)",
            lambda: make_noisy_histogram(1.0)(izeros.reshape(-1, 4), scope=central),
            draws,
            "",
        ),
        (
            "exponential mechanism (gumbel RNM, OpenDP)",
            lambda: make_exponential(1.0)(utilities, scope=central, disjoint_rows=True),
            sel_rows * cands,
            f"{sel_rows} selections over {cands} candidates",
        ),
        (
            "report-noisy-max (exponential noise, OpenDP)",
            lambda: make_report_noisy_max(1.0)(utilities, scope=central, disjoint_rows=True),
            sel_rows * cands,
            f"{sel_rows} selections over {cands} candidates",
        ),
        (
            "gamma DLPA (K=5, numpy)",
            lambda: make_gamma_dlpa(1.0, parties=5, colluders=1)(
                np.zeros((5, draws // 5)), scope=central
            ),
            draws,
            "draws = party shares (2 Gamma each); sums = draws / 5",
        ),
        (
            "piecewise (numpy)",
            lambda: PiecewiseMechanism(epsilon=1.0)(zeros, scope=local),
            draws,
            "",
        ),
        (
            f"piecewise d={d} (numpy)",
            lambda: PiecewiseMultiMechanism(epsilon=5.0, dimension=d)(
                zeros.reshape(-1, d), scope=local
            ),
            draws,
            "draws = record attributes",
        ),
        ("duchi (numpy)", lambda: DuchiMechanism(epsilon=1.0)(zeros, scope=local), draws, ""),
        (
            f"duchi d={d} (numpy)",
            lambda: DuchiMultiMechanism(epsilon=1.0, dimension=d)(
                zeros.reshape(-1, d), scope=local
            ),
            draws,
            "draws = record attributes",
        ),
        (
            "local laplace (OpenDP)",
            lambda: LocalLaplace(epsilon=1.0)(zeros, scope=local),
            draws,
            "",
        ),
        (
            "randomised response k=4 (numpy)",
            lambda: RandomisedResponse(epsilon=1.0, categories=4)(izeros % 4, scope=local),
            draws,
            "",
        ),
    ]
    rows: list[Row] = []
    for name, fn, count, note in cases:
        wall, cpu = _timed(fn)
        print(f"{name:48s} {count / wall:>14,.0f}/s wall {count / max(cpu, 1e-9):>14,.0f}/s cpu")
        rows += [
            _row("sampler", name, "draws", count, "", note),
            _row("sampler", name, "samples_per_s_wall", count / wall, "1/s", note),
            _row("sampler", name, "samples_per_s_cpu", count / max(cpu, 1e-9), "1/s", note),
        ]
        if "selections" in note:
            rows.append(
                _row("sampler", name, "selections_per_s_wall", sel_rows / wall, "1/s", note)
            )
    return rows


def _row(benchmark: str, item: str, metric: str, value: float, unit: str, note: str = "") -> Row:
    return {
        "benchmark": benchmark,
        "item": item,
        "metric": metric,
        "value": value,
        "unit": unit,
        "note": note,
    }


def car_schema() -> tuple[tuple[int, ...], np.ndarray]:
    """Domain sizes of the 6 features and the data matrix D (cells x classes) of car.csv."""
    lines = CAR.read_text().strip().splitlines()
    records = [line.split(",") for line in lines[1:]]
    cols = list(zip(*records, strict=True))
    levels = [sorted(set(c)) for c in cols]
    domain = tuple(len(lv) for lv in levels[:-1])
    index = [{v: i for i, v in enumerate(lv)} for lv in levels]
    codes = np.array([[index[j][r[j]] for j in range(len(r))] for r in records])
    cells = np.ravel_multi_index(tuple(codes[:, :-1].T), domain)
    data = np.zeros((math.prod(domain), len(levels[-1])))
    np.add.at(data, (cells, codes[:, -1]), 1.0)
    return domain, data


def matrix_rows(trees: list[int], quick: bool) -> list[Row]:
    domain, data = car_schema()
    print(
        f"Car: {int(data.sum())} rows, domain {domain} = {math.prod(domain)} cells, "
        f"{data.shape[1]} classes"
    )
    rows: list[Row] = []
    for tau in trees:
        t = decision_path_workload(domain, tau, 4, random_state=tau)
        item = f"{tau} trees (depth 4, {t.shape[0]} paths)"
        # context: the SVD lower bound over all strategies (Li & Miklau 2012),
        # (sum_i sqrt(lambda_i(T^T T)))^2 / n, and the per-tree Laplace baseline
        # of seed 002 (TD + Lap(tau/eps): tau^2 per path)
        eig = np.clip(np.linalg.eigvalsh(t.gram()), 0.0, None)
        rows += [
            _row("matrix", item, "sq_error_svd_bound", float(np.sqrt(eig).sum() ** 2 / t.n), ""),
            _row("matrix", item, "sq_error_per_tree_laplace", float(tau**2 * t.shape[0]), ""),
        ]
        for method, kwargs in (
            ("kronecker", {}),
            ("explicit", {"p": 16, "maxiter": 30 if quick else 100}),
        ):
            start, cpu = time.perf_counter(), time.process_time()
            res = optimize_strategy(t, method=method, random_state=0, **kwargs)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            e = res.errors
            print(
                f"{item:36s} {method:9s} opt {res.seconds:7.1f}s  err opt {e['optimised']:.4g} "
                f"id {e['identity']:.4g} W {e['workload']:.4g} chosen {res.chosen}"
            )
            label = f"{item} / {method}"
            rows += [
                _row("matrix", label, "optimisation_s_wall", res.seconds, "s"),
                _row("matrix", label, "total_s_cpu", cpu, "s", "optimisation + baselines"),
                _row(
                    "matrix",
                    label,
                    "sq_error_optimised",
                    e["optimised"],
                    "",
                    "||A||_1^2 ||WA+||_F^2",
                ),
                _row("matrix", label, "sq_error_identity", e["identity"], ""),
                _row("matrix", label, "sq_error_workload", e["workload"], ""),
                _row(
                    "matrix", label, "ratio_optimised_identity", e["optimised"] / e["identity"], ""
                ),
                _row(
                    "matrix", label, "ratio_optimised_workload", e["optimised"] / e["workload"], ""
                ),
                _row(
                    "matrix", label, "ratio_chosen_identity", res.ratio("identity"), "", res.chosen
                ),
                _row("matrix", label, "chosen", 0.0, "", res.chosen),
            ]
        # one release at eps = 2 on the Car data with the chosen (Kronecker) strategy
        res = optimize_strategy(t, method="kronecker", random_state=0)
        mech = MatrixMechanism(workload=t, strategy=res.strategy, epsilon=2.0)
        led = Ledger(Guarantee(2.0), dataset="car")
        wall, _ = _timed(lambda m=mech, lg=led: m(data, scope=lg))
        answers = mech(data, scope=Ledger(Guarantee(2.0), dataset="car2"))
        sq = float(((answers - t.matmul(data)) ** 2).sum())
        rows += [
            _row("matrix", f"{item} / release", "release_s_wall", wall, "s", "eps=2, D 1728x4"),
            _row("matrix", f"{item} / release", "expected_sq_error", mech.expected_error(4), ""),
            _row("matrix", f"{item} / release", "observed_sq_error", sq, "", "one draw"),
        ]
    return rows


def write(rows: list[Row]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "mechanisms.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    md = ["# Mechanisms benchmark", "", "Generated by `benchmarks/mechanisms_bench.py`.", ""]
    md += [
        "## Samplers",
        "",
        "| sampler | draws | samples/s (wall) | samples/s (CPU) | note |",
        "|---|---:|---:|---:|---|",
    ]
    samplers: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["benchmark"] == "sampler":
            samplers.setdefault(r["item"], {"note": r["note"]})[r["metric"]] = r["value"]
    for name, m in samplers.items():
        md.append(
            f"| {name} | {int(m['draws']):,} | {m['samples_per_s_wall']:,.0f} | "
            f"{m['samples_per_s_cpu']:,.0f} | {m['note']} |"
        )
    md += [
        "",
        "## Matrix mechanism on Car decision paths",
        "",
        "Squared error ||A||_1^2 ||W A^+||_F^2 (Err_eps = 2/eps^2 times it, per class column).",
        "",
        "| workload / method | opt. time (s) | optimised | identity | workload (A=T) | "
        "opt/identity | opt/workload | chosen |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    mats: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["benchmark"] == "matrix":
            entry = mats.setdefault(r["item"], {})
            entry[r["metric"]] = r["value"]
            if r["metric"] == "chosen":
                entry["chosen_name"] = r["note"]
    for name, m in mats.items():
        if "sq_error_optimised" not in m:
            continue
        md.append(
            f"| {name} | {m['optimisation_s_wall']:.2f} | {m['sq_error_optimised']:.4g} | "
            f"{m['sq_error_identity']:.4g} | {m['sq_error_workload']:.4g} | "
            f"{m['ratio_optimised_identity']:.3f} | {m['ratio_optimised_workload']:.4f} | "
            f"{m['chosen_name']} |"
        )
    md += [
        "",
        "Context: the SVD lower bound over every strategy, and seed 002's baseline "
        "TD + Lap(tau/eps) (squared error tau^2 per path).",
        "",
        "| workload | SVD bound | bound/identity | per-tree Laplace | identity/per-tree |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, m in mats.items():
        if "sq_error_svd_bound" in m:
            ident = mats[f"{name} / kronecker"]["sq_error_identity"]
            md.append(
                f"| {name} | {m['sq_error_svd_bound']:.4g} | {m['sq_error_svd_bound'] / ident:.3f} | "
                f"{m['sq_error_per_tree_laplace']:.4g} | "
                f"{ident / m['sq_error_per_tree_laplace']:.5f} |"
            )
    md += ["", "| release (eps=2, Car D) | time (s) | expected sq. error | observed (one draw) |"]
    md += ["|---|---:|---:|---:|"]
    for name, m in mats.items():
        if "release_s_wall" in m:
            md.append(
                f"| {name} | {m['release_s_wall']:.2f} | {m['expected_sq_error']:.4g} | "
                f"{m['observed_sq_error']:.4g} |"
            )
    (RESULTS / "mechanisms.md").write_text("\n".join(md) + "\n")
    print(f"wrote {RESULTS / 'mechanisms.csv'} and {RESULTS / 'mechanisms.md'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="fewer draws and iterations")
    parser.add_argument("--trees", type=int, nargs="*", default=[16, 64, 128])
    args = parser.parse_args()
    draws = 100_000 if args.quick else args.draws
    rows = sampler_rows(draws) + matrix_rows(args.trees, args.quick)
    write(rows)


if __name__ == "__main__":
    main()
