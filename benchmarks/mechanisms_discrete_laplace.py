"""Speed of the exact vectorised discrete Laplace sampler against OpenDP's, same run.

Both draw the same law (the discrete Laplace on the integers, or on OpenDP's grid
2^k for floats; tests/mechanisms/test_discrete_laplace.py checks the vectorised
one against the exact probability mass function). For each size and scale the
CPU time of one call is measured ``REPEATS`` times (median), for

* ``opendp``: :func:`privet.mechanisms._opendp.laplace_int` /
  ``laplace_float`` (OpenDP's exact sampler, OS CSPRNG per coin);
* ``vectorised``: :func:`privet.mechanisms._opendp.laplace_int_vectorised` /
  ``laplace_float_vectorised`` (privet.mechanisms._discrete_laplace).

Run: ``python benchmarks/mechanisms_discrete_laplace.py`` (about two CPU minutes);
writes ``benchmarks/results/mechanisms_discrete_laplace.{csv,md,png}``.
"""

from __future__ import annotations

import csv
import functools
import statistics
import time
from pathlib import Path

import numpy as np

from privet.mechanisms import _opendp

OUT = Path(__file__).parent / "results"
SIZES = (1_000, 10_000, 100_000, 1_000_000)
SCALES = (1.0, 16.666666666666668, 1000.0)
REPEATS = 3


def _cpu(fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(REPEATS):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def main() -> None:
    rows = []
    for kind in ("int", "float"):
        for scale in SCALES:
            for n in SIZES:
                if kind == "int":
                    zeros = np.zeros(n, dtype=np.int64)
                    ref = functools.partial(_opendp.laplace_int, zeros, scale)
                    new = functools.partial(_opendp.laplace_int_vectorised, zeros, scale)
                else:
                    zeros = np.zeros(n)
                    ref = functools.partial(_opendp.laplace_float, zeros, scale, 1.0)
                    new = functools.partial(_opendp.laplace_float_vectorised, zeros, scale, 1.0)
                t_ref, t_new = _cpu(ref), _cpu(new)
                rows.append(
                    {
                        "kind": kind,
                        "scale": scale,
                        "n": n,
                        "opendp_cpu_s": t_ref,
                        "vectorised_cpu_s": t_new,
                        "opendp_values_per_s": n / t_ref,
                        "vectorised_values_per_s": n / t_new,
                        "speedup": t_ref / t_new,
                    }
                )
                print(rows[-1], flush=True)
    OUT.mkdir(exist_ok=True)
    with open(OUT / "mechanisms_discrete_laplace.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# Exact discrete Laplace: the vectorised sampler against OpenDP's, same run",
        "",
        "Command: `python benchmarks/mechanisms_discrete_laplace.py`. CPU seconds of one call "
        f"(median of {REPEATS}), zeros as input; `int`: the integers, `float`: OpenDP's grid "
        "2^k at sensitivity 1 (the same k for both). Same law on both sides "
        "(tests/mechanisms/test_discrete_laplace.py). The vectorised sampler serves the "
        "local Laplace randomiser and seed 003's simulations; central releases keep OpenDP. "
        "A speedup near 1 means the vectorised call handed over to OpenDP: on the float grid "
        "the grid scale is scale / 2^k with n 2^k <= 2^-30, and from 2^53 on the vectorised "
        "sampler declines (an output beyond 64 bits would no longer be negligible). "
        "LocalLaplace takes the grid of one record (`block=`), so its grid scale does not grow "
        "with the number of owners.",
        "",
        "| kind | scale | n | OpenDP values/s | vectorised values/s | speedup |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['scale']:.4g} | {r['n']:,} | {r['opendp_values_per_s']:,.0f} "
            f"| {r['vectorised_values_per_s']:,.0f} | {r['speedup']:.1f}x |"
        )
    (OUT / "mechanisms_discrete_laplace.md").write_text("\n".join(lines) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, kind in zip(axes, ("int", "float"), strict=True):
        for scale in SCALES:
            sub = [r for r in rows if r["kind"] == kind and r["scale"] == scale]
            ns = [r["n"] for r in sub]
            ax.plot(
                ns,
                [r["vectorised_values_per_s"] for r in sub],
                "o-",
                label=f"vectorised, scale {scale:.3g}",
            )
            ax.plot(
                ns,
                [r["opendp_values_per_s"] for r in sub],
                "x--",
                label=f"OpenDP, scale {scale:.3g}",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("values per call")
        ax.set_title(f"discrete Laplace, {kind}")
    axes[0].set_ylabel("values per CPU second")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "mechanisms_discrete_laplace.png", dpi=90)


if __name__ == "__main__":
    main()
