"""Benchmark: how fast does privet's DP test certify the Laplace mechanism?

Counting query, sensitivity 1, neighbours ``d0 = 0`` and ``d1 = 1``, OpenDP's
vectorised discrete Laplace (``make_laplace`` on integers, scale ``1 / epsilon``)
at epsilon 0.1 and 1. Two experiments per epsilon, 95% confidence, 2 workers:

1. **Curve**: ``dp_test`` with a fixed budget of 10^4 ... 10^7 trials per input
   (10% of them for event selection), reporting the lower bound and wall time.
2. **Certification**: the budget is 10^7 trials per input, but after selecting
   the event on 3 x 10^5 pilot trials the test plans the estimation size needed
   to reach ``0.97 * epsilon`` with 90% power (``target_epsilon``) and stops
   there. The target of the project: bound >= 0.97 epsilon, <= 10^7 trials per
   input, < 5 minutes, sampler included.

Reference: DP-Sniper (Bichsel et al., IEEE S&P 2021) reports 0.0976 for Laplace
at epsilon 0.1 with about 2 x 10^8 samples.

Writes ``benchmarks/results/dptest_laplace.csv`` and ``dptest_laplace.png``.
Run: ``python benchmarks/dptest_bench.py [--quick] [--n-jobs 2]``.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np

from privet.audits import dp_test

RESULTS = Path(__file__).resolve().parent / "results"
CONFIDENCE = 0.95
TARGET_FRACTION = 0.97
DPSNIPER = {"epsilon": 0.1, "trials": 2e8, "epsilon_lower": 0.0976}


def laplace_count(true_count: int, size: int, scale: float) -> np.ndarray:
    """OpenDP's discrete Laplace on a count, ``size`` draws (built per call: picklable)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    meas = dp.m.make_laplace(*space, scale=scale)
    return np.asarray(meas([int(true_count)] * size), dtype=np.int64)


class Mechanism:
    """Picklable callable ``mech(data, size=n)`` for a given Laplace scale."""

    def __init__(self, epsilon: float) -> None:
        self.scale = 1.0 / epsilon

    def __call__(self, data: int, size: int) -> np.ndarray:
        return laplace_count(data, size, self.scale)


def run(
    epsilon: float, trials: int, n_jobs: int, mode: str, selection_fraction: float
) -> dict[str, object]:
    load = os.getloadavg()[0]
    kwargs: dict[str, object] = {}
    if mode == "certify":
        kwargs = {"target_epsilon": TARGET_FRACTION * epsilon, "power": 0.9}
    result = dp_test(
        Mechanism(epsilon),
        0,
        1,
        epsilon=epsilon,
        trials=trials,
        confidence=CONFIDENCE,
        n_jobs=n_jobs,
        selection_fraction=selection_fraction,
        random_state=0,
        **kwargs,
    )
    row = {
        "epsilon": epsilon,
        "mode": mode,
        "trials_budget": trials,
        "trials_used": result.n_trials,
        "n_selection": result.n_selection,
        "n_estimation": result.n_estimation,
        "epsilon_lower": round(result.epsilon_lower, 6),
        "ratio": round(result.epsilon_lower / epsilon, 5),
        "epsilon_estimate": round(result.epsilon_estimate, 6),
        "event": f"{result.event} ({result.more_likely_on})",
        "wall_time_s": round(result.wall_time or float("nan"), 2),
        "samples_per_s": round(2 * result.n_trials / (result.wall_time or float("nan"))),
        "n_jobs": n_jobs,
        "confidence": CONFIDENCE,
        "load_avg_1min_before": round(load, 2),
    }
    print(
        f"eps={epsilon:<4} {mode:<8} budget={trials:>10,} used={result.n_trials:>10,} "
        f"eps_lb={result.epsilon_lower:.5f} ({row['ratio']:.4f} eps) "
        f"time={row['wall_time_s']:>6} s  event: {row['event']}",
        flush=True,
    )
    return row


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = {0.1: "tab:blue", 1.0: "tab:orange"}
    for eps, colour in colours.items():
        curve = [r for r in rows if r["epsilon"] == eps and r["mode"] == "curve"]
        cert = [r for r in rows if r["epsilon"] == eps and r["mode"] == "certify"]
        x = [r["trials_used"] for r in curve]
        ax1.plot(x, [r["ratio"] for r in curve], "o-", color=colour, label=f"eps = {eps}")
        ax2.plot(x, [r["wall_time_s"] for r in curve], "o-", color=colour, label=f"eps = {eps}")
        for r in cert:
            ax1.plot(
                r["trials_used"],
                r["ratio"],
                "*",
                ms=14,
                color=colour,
                label=f"eps = {eps}, planned (target 0.97)",
            )
            ax2.plot(r["trials_used"], r["wall_time_s"], "*", ms=14, color=colour)
    ax1.plot(
        DPSNIPER["trials"],
        DPSNIPER["epsilon_lower"] / DPSNIPER["epsilon"],
        "kx",
        ms=9,
        label="DP-Sniper, eps = 0.1 (reported)",
    )
    ax1.axhline(TARGET_FRACTION, color="grey", ls="--", lw=1, label="target 0.97")
    ax1.axhline(1.0, color="black", lw=0.8)
    ax1.set_xscale("log")
    ax1.set_ylim(0.0, 1.05)
    ax1.set_xlabel("trials per input (selection + estimation)")
    ax1.set_ylabel("epsilon lower bound / true epsilon")
    ax1.set_title("Laplace counting query, 95% confidence")
    ax1.legend(fontsize=8, loc="lower right")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.axhline(300, color="grey", ls="--", lw=1, label="5 minutes")
    ax2.set_xlabel("trials per input")
    ax2.set_ylabel("wall time [s] (OpenDP sampling included)")
    ax2.set_title("Wall time, 2 joblib workers")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="curve up to 10^6 only")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    top = 6 if args.quick else 7
    budgets = sorted({int(f * 10**k) for k in range(4, top + 1) for f in (1, 3)} - {3 * 10**top})
    rows: list[dict[str, object]] = []
    started = time.perf_counter()
    for eps in (0.1, 1.0):
        rows.append(run(eps, 10**top, args.n_jobs, "certify", 3e5 / 10**top))
        for n in budgets:
            rows.append(run(eps, n, args.n_jobs, "curve", 0.1))
    RESULTS.mkdir(parents=True, exist_ok=True)
    csv_path = RESULTS / "dptest_laplace.csv"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, RESULTS / "dptest_laplace.png")
    print(f"wrote {csv_path} and dptest_laplace.png in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
