"""BENCHMARK (not a test): cost of privet's MPC runtime layer with real local parties.

Runs three workloads with m real MPyC parties (default 3, threshold 1) as
separate processes talking over TCP on localhost (:func:`privet.mpc.launch`):

a. ``secure_sum``: secure sum of 10^5 integers, horizontally split over the parties;
b. ``laplace``: secure Laplace (seed 000, Alg. 12) on 1,000 summed counts, opened;
c. ``exponential``: secure exponential mechanism (Alg. 13) over 16 candidates, index opened;

and measures, in process with one party, the fixed-point error of the secure
log2/ln/exp against numpy (inputs quantised to the type's grid).

Results go to ``benchmarks/results/mpc_runtime.csv`` in long format, one row
per (workload, party, metric): party program wall time, connect time, MPyC
message bytes sent/received, messages, message batches (an upper bound on
communication rounds; see :class:`privet.mpc.PartyStats`), the launcher's
elapsed time, and whether the opened result was right.

Usage::

    python benchmarks/mpc_runtime_bench.py [--parties 3] [--bit-length 32] [--quick]

Timings depend on the machine and its load; this script asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import time
from pathlib import Path

import numpy as np

from privet.mpc import launch

RESULTS = Path(__file__).resolve().parent / "results" / "mpc_runtime.csv"


def _rows_for_run(workload: str, bit_length: int, run, correct: bool) -> list[dict]:
    rows = []
    for p in run.stats.parties:
        for metric in (
            "seconds",
            "connect_seconds",
            "bytes_sent",
            "bytes_received",
            "messages_sent",
            "message_batches",
        ):
            rows.append(
                {
                    "workload": workload,
                    "bit_length": bit_length,
                    "party": p.party,
                    "metric": metric,
                    "value": getattr(p, metric),
                }
            )
    for metric, value in (
        ("elapsed_seconds", run.stats.elapsed_seconds),
        ("max_party_seconds", run.stats.seconds),
        ("total_bytes_sent", run.stats.bytes_sent),
        ("correct", int(correct)),
    ):
        rows.append(
            {
                "workload": workload,
                "bit_length": bit_length,
                "party": "all",
                "metric": metric,
                "value": value,
            }
        )
    return rows


def run_workloads(
    parties: int, bit_length: int, quick: bool, mpyc_options: list[str]
) -> list[dict]:
    rows: list[dict] = []
    n_sum = 10_000 if quick else 100_000
    n_counts = 100 if quick else 1_000

    run = launch(
        "privet.mpc.programs:secure_sum",
        {"n": n_sum, "bit_length": max(bit_length, 32)},
        parties=parties,
        timeout=300,
        mpyc_options=mpyc_options,
    )
    r = run.results[0]
    rows += _rows_for_run(f"secure_sum_n{n_sum}", bit_length, run, r["sum"] == r["expected"])
    print(f"secure sum of {n_sum}: {run.stats.seconds:.2f} s, {run.stats.bytes_sent} bytes")

    run = launch(
        "privet.mpc.programs:laplace_counts",
        {"n_counts": n_counts, "epsilon": 1.0, "bit_length": bit_length},
        parties=parties,
        timeout=300,
        mpyc_options=mpyc_options,
    )
    r = run.results[0]
    deviation = np.abs(np.asarray(r["noisy"]) - r["true"])
    ok = bool(np.all(deviation < 40)) and all(
        np.array_equal(x["noisy"], r["noisy"]) for x in run.results
    )
    rows += _rows_for_run(f"laplace_n{n_counts}", bit_length, run, ok)
    print(f"secure Laplace on {n_counts}: {run.stats.seconds:.2f} s, {run.stats.bytes_sent} bytes")

    run = launch(
        "privet.mpc.programs:exponential_choice",
        {"n_candidates": 16, "epsilon": 1.0, "bit_length": bit_length},
        parties=parties,
        timeout=300,
        mpyc_options=mpyc_options,
    )
    idx = [x["index"] for x in run.results]
    ok = len(set(idx)) == 1 and 0 <= idx[0] < 16
    rows += _rows_for_run("exponential_d16", bit_length, run, ok)
    print(f"secure EM over 16: {run.stats.seconds:.2f} s, {run.stats.bytes_sent} bytes")
    return rows


def fixed_point_errors(bit_length: int) -> list[dict]:
    """Max |secure - numpy| in ulps for log2, ln, exp (one party, in process)."""
    from privet.mpc import fixedpoint as fx
    from privet.mpc import get_runtime

    mpc = get_runtime()
    sectype = fx.secfxp_type(bit_length)
    f = sectype.frac_length

    def q(a: np.ndarray) -> np.ndarray:
        return np.round(a * 2**f) / 2**f

    x = q(np.exp2(np.linspace(-f + 1, bit_length - f - 2, 4001)))
    e = q(np.linspace(-(f + 2) * np.log(2), 0, 4001))
    log2 = mpc.run(mpc.output(fx.secure_log2(sectype.array(x))))
    ln = mpc.run(mpc.output(fx.secure_ln(sectype.array(x))))
    exp = mpc.run(mpc.output(fx.secure_exp(sectype.array(e))))
    ulp = 2.0**-f
    rows = []
    for name, err in (
        ("log2", np.abs(log2 - np.log2(x))),
        ("ln", np.abs(ln - np.log(x))),
        ("exp", np.abs(exp - np.exp(e))),
    ):
        for metric, value in (("max_abs_error", err.max()), ("max_error_ulp", err.max() / ulp)):
            rows.append(
                {
                    "workload": f"fixedpoint_{name}",
                    "bit_length": bit_length,
                    "party": 0,
                    "metric": metric,
                    "value": float(value),
                }
            )
        print(
            f"{name} (l={bit_length}, f={f}): max error {err.max():.3g} = {err.max() / ulp:.2f} ulp"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, default=3)
    parser.add_argument("--bit-length", type=int, default=32)
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--mpyc-option",
        action="append",
        default=[],
        help="extra MPyC option for the parties, e.g. --mpyc-option=--no-prss (repeatable)",
    )
    parser.add_argument("--append", action="store_true", help="append to the CSV")
    ns = parser.parse_args()
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = run_workloads(ns.parties, ns.bit_length, ns.quick, ns.mpyc_option)
    for bl in sorted({32, 50, ns.bit_length}):
        rows += fixed_point_errors(bl)
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    new_file = not (ns.append and ns.out.exists())
    with open(ns.out, "a" if ns.append else "w", newline="") as fh:
        writer = csv.DictWriter(
            fh,
            fieldnames=[
                "run",
                "machine",
                "load_average",
                "mpyc_options",
                "parties",
                "workload",
                "bit_length",
                "party",
                "metric",
                "value",
            ],
        )
        if new_file:
            writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    "run": started,
                    "machine": platform.node(),
                    "load_average": round(load, 2),
                    "mpyc_options": " ".join(ns.mpyc_option),
                    "parties": ns.parties,
                    **row,
                }
            )
    print(f"wrote {len(rows)} rows to {ns.out}")


if __name__ == "__main__":
    main()
