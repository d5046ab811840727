"""BENCHMARK (not a test): the seed-000 MPC trees at real sizes (issue 20), on Adult.

Three real MPyC parties as local processes over TCP (:func:`privet.mpc.launch`,
Shamir threshold 1), each a data owner of a third of the training rows (the
first n rows of a fixed shuffle of Adult's 32,561 training rows), epsilon = 1:

* ``mpc_id3``: MPC-ID3 (max operator, no DP, the tree opened);
* ``pmpc``: CDP+PMPC-ID3 with the proven discrete noise (report-noisy-max
  splits, discrete Laplace leaves, epsilon / (h + 1) per query);
* ``odp``: sound ODP+FMPC-ID3 with discrete noise (noisy-max hidden splits at
  0.25 epsilon / h, discrete Laplace leaves at 0.75 epsilon), the secret tree;
* ``predict``: Alg. 4, oblivious prediction of 10,000 secret queries (Adult's
  test rows) against a secret-shared ODP tree.

``shared`` is the paper's data path (every owner secret-shares its one-hot
rows, App. C.1; node membership as secret partition vectors); ``owners`` is
:class:`~privet.learners._protocols.common.OwnerTables` (the trees whose splits
are opened: each owner counts its own rows of the public paths and inputs the
tables; the same values are opened).

Each cell runs once (the machine is shared, 2 cores, 3 other agents: the load
average is recorded per run). Measured per run: wall time (launch to results),
the longest party's program time, each party's CPU time (user + system of the
process, from ``benchmarks/mpc_scale_party.py``; less sensitive to the load
than wall time), MPyC message bytes sent per party, message batches (an upper
bound on rounds), peak resident memory. A cell whose predicted time (from the
cell before it, times the growth in rows or nodes) exceeds what is left of
``--budget-minutes`` is not run and is listed as skipped; the results file then
gives a fitted extrapolation, marked as such.

Accuracy on Adult's test part (16,281 rows) next to the reference path:
MPC-ID3 against the plaintext ``ID3Classifier(criterion="max")`` (the same tree
is expected), CDP+PMPC against ``PartialMPCID3Classifier(backend="reference")``
(mean and spread over 5 seeds).

Usage::

    python benchmarks/seed000_mpc_scale.py [--budget-minutes 40] [--only mpc_id3,pmpc]
    python benchmarks/seed000_mpc_scale.py --profile pmpc --rows 1000 --depth 5

Results: ``benchmarks/results/seed000_mpc_scale.csv``, ``seed000_mpc_scale.png``
(the markdown ``seed000_mpc_scale.md`` is written by hand from these, with the
profiles). This script asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import io
import pstats
import time
from pathlib import Path
from typing import Any

import numpy as np

from privet.data import load_dataset
from privet.learners._protocols.host import _tree_run, run_program
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.programs import choose_bit_length

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WRAPPER = f"{HERE / 'mpc_scale_party.py'}:profiled"
EPSILON = 1.0
#: The sound samplers (exact discrete noise on shares); the bit length is sized per run.
DISCRETE = SecureNumbers(mpc_noise="discrete")
ROWS = (1000, 4000, 16000, 32561)
DEPTHS = (3, 4, 5, 6)
FIELDS = (
    "system", "variant", "rows", "depth", "status", "wall_s", "program_s", "cpu_s_max",
    "cpu_s_mean", "mb_sent_per_party", "batches", "peak_rss_mb", "nodes", "accuracy",
    "reference_accuracy", "load_before", "load_after",
)  # fmt: skip


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def adult(n: int) -> tuple[Any, np.ndarray, np.ndarray]:
    ds = load_dataset("adult")
    codes, y = ds.codes()
    order = np.random.default_rng(0).permutation(len(y))[:n]
    return ds, codes[order], y[order]


def program_args(system: str, n: int, depth: int, variant: str) -> tuple[str, dict[str, Any]]:
    ds = load_dataset("adult")
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    if system == "mpc_id3":
        args: dict[str, Any] = {"sizes": sizes, "n_classes": u, "depth": depth, "bit_length": None}
        target = "privet.learners.mpc_id3.program:train_mpc_id3"
    elif system == "pmpc":
        eps = EPSILON / (depth + 1)
        bits = choose_bit_length(n, DISCRETE, split_epsilon=eps, leaf_epsilon=eps, leaf="laplace")
        args = {"sizes": sizes, "n_classes": u, "depth": depth, "epsilon": eps,
                "leaf": "laplace", **DISCRETE.replace(bit_length=bits).args()}  # fmt: skip
        target = "privet.learners.partial_mpc_id3.program:train_partial_mpc_id3"
    else:
        se, le = 0.25 * EPSILON / depth, 0.75 * EPSILON
        bits = choose_bit_length(
            n, DISCRETE, split_epsilon=se, leaf_epsilon=le, leaf="laplace", oblivious=True
        )  # fmt: skip
        args = {"sizes": sizes, "n_classes": u, "depth": depth, "split": "exponential",
                "split_epsilon": se, "leaf_epsilon": le,
                **DISCRETE.replace(bit_length=bits).args()}  # fmt: skip
        target = "privet.learners.oblivious_id3.program:train_oblivious_id3"
    if variant == "owners":
        args["owner_tables"] = True
    if variant == "sorted":
        args["sorted_table"] = True
    return target, args


def run_cell(
    system: str, n: int, depth: int, variant: str, *, profile: str | None = None,
    run_timeout: float = 3600.0,
) -> tuple[dict[str, Any], Any]:  # fmt: skip
    ds, codes, y = adult(n)
    target, args = program_args(system, n, depth, variant)
    before = loadavg()
    t0 = time.perf_counter()
    result = run_program(
        WRAPPER, {**args, "program": target, "profile_out": profile}, codes, y,
        timeout=600.0, run_timeout=run_timeout,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    stats = result.stats
    cpu = [float(r["cpu_seconds"]) for r in result.results]
    row = {
        "system": system, "variant": variant, "rows": n, "depth": depth, "status": "measured",
        "wall_s": round(wall, 2), "program_s": round(stats.seconds, 2),
        "cpu_s_max": round(max(cpu), 2), "cpu_s_mean": round(float(np.mean(cpu)), 2),
        "mb_sent_per_party": round(float(np.mean([p.bytes_sent for p in stats.parties])) / 1e6, 2),
        "batches": stats.message_batches,
        "peak_rss_mb": round(max(float(r["peak_rss_mb"]) for r in result.results)),
        "load_before": before, "load_after": loadavg(),
    }  # fmt: skip
    extra = None
    if system in ("mpc_id3", "pmpc"):
        run = _tree_run(result, args)
        tree = run.tree(ds.schema.domain_sizes, ds.schema.n_classes)
        row["nodes"] = tree.node_count
        test = load_dataset("adult_test")
        tcodes, ty = test.codes()
        row["accuracy"] = round(float(np.mean(np.argmax(tree.leaf_values(tcodes), 1) == ty)), 4)
        extra = tree
    else:
        w = ds.schema.max_domain_size
        row["nodes"] = sum(w**level for level in range(depth + 1))
        extra = result
    return row, extra


def reference_accuracy(system: str, n: int, depth: int) -> str:
    from privet.learners import ID3Classifier, PartialMPCID3Classifier
    from privet.ledger import Guarantee, Ledger

    ds = load_dataset("adult")
    order = np.random.default_rng(0).permutation(len(ds.y))[:n]
    X, y = ds.X.iloc[order], np.asarray(ds.y)[order]
    test = load_dataset("adult_test")
    if system == "mpc_id3":
        model = ID3Classifier(max_depth=depth, criterion="max", schema=ds.schema).fit(X, y)
        return f"{np.mean(model.predict(test.X) == np.asarray(test.y)):.4f}"
    accs = []
    for seed in range(5):
        model = PartialMPCID3Classifier(
            epsilon=EPSILON, max_depth=depth, schema=ds.schema, random_state=seed,
            noise="discrete",  # the distribution of the MPC path (report-noisy-max, discrete Laplace)
            ledger=Ledger(budget=Guarantee(10.0, 1e-6)),
        ).fit(X, y)  # fmt: skip
        accs.append(np.mean(model.predict(test.X) == np.asarray(test.y)))
    return f"{np.mean(accs):.4f} ± {np.std(accs):.4f}"


def run_predict(n_queries: int, depth: int, train_rows: int) -> dict[str, Any]:
    """Train an ODP tree (sound, discrete) on ``train_rows`` rows, then Alg. 4 on test rows."""
    from privet.learners.oblivious_id3.host import run_oblivious_id3, run_oblivious_predict

    ds, codes, y = adult(train_rows)
    test = load_dataset("adult_test")
    tcodes, ty = test.codes()
    tcodes, ty = tcodes[:n_queries], ty[:n_queries]
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    se, le = 0.25 * EPSILON / depth, 0.75 * EPSILON
    bits = choose_bit_length(
        train_rows, DISCRETE, split_epsilon=se, leaf_epsilon=le, leaf="laplace", oblivious=True
    )  # fmt: skip
    model = run_oblivious_id3(
        codes, y, sizes, u, depth=depth, split="exponential", split_epsilon=se, leaf_epsilon=le,
        numbers=DISCRETE.replace(bit_length=bits), timeout=600.0, run_timeout=3600.0,
    )  # fmt: skip
    before = loadavg()
    t0 = time.perf_counter()
    pred = run_oblivious_predict(model, tcodes, sizes, querier=0, timeout=600.0, run_timeout=3600.0)
    wall = time.perf_counter() - t0
    w = ds.schema.max_domain_size
    return {
        "system": "predict", "variant": f"{n_queries} queries", "rows": train_rows,
        "depth": depth, "status": "measured", "wall_s": round(wall, 2),
        "program_s": round(pred.stats.seconds, 2),
        "mb_sent_per_party": round(
            float(np.mean([p.bytes_sent for p in pred.stats.parties])) / 1e6, 2
        ),
        "batches": pred.stats.message_batches,
        "nodes": sum(w**level for level in range(depth + 1)),
        "accuracy": round(float(np.mean(pred.labels == ty)), 4),
        "load_before": before, "load_after": loadavg(),
    }  # fmt: skip


def reference_accuracy_odp(n: int, depth: int, seeds: int = 5) -> str:
    """Mean and spread of the sound ODP+FMPC reference path (discrete noise) over ``seeds`` fits."""
    from privet.learners import ObliviousID3Classifier
    from privet.ledger import Guarantee, Ledger

    ds = load_dataset("adult")
    order = np.random.default_rng(0).permutation(len(ds.y))[:n]
    X, y = ds.X.iloc[order], np.asarray(ds.y)[order]
    test = load_dataset("adult_test")
    accs = []
    for _ in range(seeds):
        model = ObliviousID3Classifier(
            epsilon=EPSILON, max_depth=depth, split="exponential", noise="discrete",
            schema=ds.schema, ledger=Ledger(budget=Guarantee(10.0, 1e-6)),
        ).fit(X, y)  # fmt: skip
        accs.append(np.mean(model.predict(test.X) == np.asarray(test.y)))
    return f"{np.mean(accs):.4f} ± {np.std(accs):.4f}"


def run_odp_predict(n: int, depth: int, n_queries: int) -> list[dict[str, Any]]:
    """Sound ODP+FMPC on the sorted table (per-party CPU), then oblivious prediction of test rows."""
    from privet.learners.oblivious_id3.host import SharedModel, run_oblivious_predict

    row, result = run_cell("odp", n, depth, "sorted", run_timeout=6000)
    ds = load_dataset("adult")
    _, args = program_args("odp", n, depth, "sorted")
    model = SharedModel(
        shares=tuple(r["shares"] for r in result.results),
        reveals=tuple(result.results[0]["reveals"]), stats=result.stats, params=dict(args),
    )  # fmt: skip
    test = load_dataset("adult_test")
    tcodes, ty = test.codes()
    tcodes, ty = tcodes[:n_queries], ty[:n_queries]
    before = loadavg()
    t0 = time.perf_counter()
    pred = run_oblivious_predict(
        model, tcodes, ds.schema.domain_sizes, querier=0, timeout=600.0, run_timeout=6000.0
    )
    wall = time.perf_counter() - t0
    row["accuracy"] = round(float(np.mean(pred.labels == ty)), 4)
    w = ds.schema.max_domain_size
    predict = {
        "system": "predict", "variant": f"sorted, {n_queries} queries", "rows": n,
        "depth": depth, "status": "measured", "wall_s": round(wall, 2),
        "program_s": round(pred.stats.seconds, 2),
        "mb_sent_per_party": round(
            float(np.mean([p.bytes_sent for p in pred.stats.parties])) / 1e6, 2
        ),
        "batches": pred.stats.message_batches,
        "nodes": sum(w**level for level in range(depth + 1)),
        "accuracy": row["accuracy"], "load_before": before, "load_after": loadavg(),
    }  # fmt: skip
    return [row, predict]


#: The rows of the issue-35 table (all of Adult, depth 5, 3 parties, outsourced rows):
#: ``python benchmarks/seed000_mpc_scale.py --row NAME [--repeats R]``.
ISSUE35_ROWS = ("pmpc", "odp_predict")


def run_issue35_row(name: str, repeats: int, out: Path) -> None:
    """One row of the issue-35 table, appended to ``out`` (CSV)."""
    rows: list[dict[str, Any]] = []
    for _ in range(repeats):
        if name == "pmpc":
            row, _ = run_cell("pmpc", 32561, 5, "sorted", run_timeout=6000)
            rows.append(row)
        else:
            rows.extend(run_odp_predict(32561, 5, 10_000))
        print(rows[-1], flush=True)
    if rows:
        first = next(r for r in rows if r["system"] != "predict")
        first["reference_accuracy"] = (
            reference_accuracy("pmpc", 32561, 5)
            if name == "pmpc"
            else reference_accuracy_odp(32561, 5)
        )
    exists = out.exists()
    with open(out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        if not exists:
            writer.writeheader()
        for row in rows:
            writer.writerow(row)


def plot_issue35(series: Path, before: Path, path: Path) -> None:
    """CPU seconds of the busiest party against rows: the sorted table (issue 35) and before."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def read(p: Path) -> list[dict[str, str]]:
        if not p.exists():
            return []
        with open(p, newline="") as fh:
            return [r for r in csv.DictReader(fh) if r.get("status") == "measured"]

    now, old = read(series), read(before)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    curves = {}
    for r in now:
        if r["system"] == "predict":
            continue
        curves.setdefault((r["system"], "sorted table", int(r["depth"])), []).append(r)
    for r in old:
        if r["system"] in ("pmpc", "odp") and r["variant"].startswith("shared"):
            curves.setdefault((r["system"], "partition vectors", int(r["depth"])), []).append(r)
    for (system, how, depth), rs in sorted(curves.items()):
        pts = sorted((int(r["rows"]), float(r["cpu_s_max"])) for r in rs)
        style = "o-" if how == "sorted table" else "s--"
        name = "CDP+PMPC" if system == "pmpc" else "ODP+FMPC"
        ax.loglog(
            [p[0] for p in pts], [p[1] for p in pts], style, label=f"{name} depth {depth}, {how}"
        )
    # CDP+PMPC depth 5 on partition vectors, measured for issue 20 (this page, before the
    # owner tables): 1,000 rows, 99 CPU-s per party; larger sizes were not run.
    ax.loglog([1000], [99.0], "s", color="black", label="CDP+PMPC depth 5, partition vectors")
    ax.set_xlabel("training rows (Adult), outsourced to 3 servers")
    ax.set_ylabel("CPU seconds, busiest party")
    ax.set_title("seed 000 in the paper's setting: sorted table vs partition vectors")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def growth_exponent(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y on log x (y ~ x**k)."""
    if len(xs) < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def measured_series(
    rows: list[dict[str, Any]], group: str, x: str
) -> dict[tuple[str, str, int], list[tuple[int, float]]]:
    """The measured training runs as curves: per (system, variant, row[group]), the points
    (row[x], busiest party's CPU seconds), sorted by x."""
    series: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    for r in rows:
        if r.get("status") != "measured" or r["system"] == "predict":
            continue
        series.setdefault((r["system"], r["variant"], int(r[group])), []).append(
            (int(r[x]), float(r["cpu_s_max"]))
        )
    for pts in series.values():
        pts.sort()
    return series


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["axes.prop_cycle"] = plt.cycler(color=plt.get_cmap("tab20").colors)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for (system, variant, depth), pts in sorted(measured_series(rows, "depth", "rows").items()):
        label = f"{system} {variant} depth {depth}"
        axes[0].loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    axes[0].set_xlabel("training rows (Adult)")
    axes[0].set_ylabel("CPU seconds, busiest party")
    axes[0].set_title("cost against rows (3 parties)")
    axes[0].legend(fontsize=6)
    for (system, variant, n), pts in sorted(measured_series(rows, "rows", "nodes").items()):
        if len(pts) < 2:
            continue
        axes[1].loglog(
            [p[0] for p in pts], [p[1] for p in pts], "s--", label=f"{system} {variant} {n} rows"
        )
    axes[1].set_xlabel("tree nodes")
    axes[1].set_ylabel("CPU seconds, busiest party")
    axes[1].set_title("cost against nodes")
    axes[1].legend(fontsize=6)
    fig.suptitle("privet seed-000 MPC trees on Adult (2-core machine shared with 3 agents)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget-minutes", type=float, default=40.0)
    parser.add_argument("--only", default="mpc_id3,pmpc,odp,predict")
    parser.add_argument("--variants", default="owners,shared")
    parser.add_argument("--rows", type=int, nargs="*", default=list(ROWS))
    parser.add_argument("--depths", type=int, nargs="*", default=list(DEPTHS))
    parser.add_argument("--profile", default=None, help="system to profile (party 0, cProfile)")
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--variant", default="shared")
    parser.add_argument("--out", default=str(RESULTS / "seed000_mpc_scale.csv"))
    parser.add_argument("--cell", default=None, help="SYSTEM,VARIANT,ROWS,DEPTH: one run, kept")
    parser.add_argument("--row", choices=ISSUE35_ROWS, default=None, help="one issue-35 row")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--plot-issue35", action="store_true", help="the issue-35 plot")
    parser.add_argument(
        "--noise-costs", type=int, default=0, help="CPU and bytes per party of N noise values"
    )
    ns = parser.parse_args()

    if ns.plot_issue35:
        plot_issue35(
            RESULTS / "seed000_mpc_scale_issue35.csv",
            RESULTS / "seed000_mpc_scale.csv",
            RESULTS / "seed000_mpc_scale_issue35.png",
        )
        return
    if ns.noise_costs:
        from privet.mpc import launch

        run = launch(
            f"{HERE / 'mpc_scale_party.py'}:noise_costs", {"values": ns.noise_costs, "scale": 6.0},
            parties=3, timeout=600.0, run_timeout=3600.0,
        )  # fmt: skip
        for i, r in enumerate(run.results):
            print(f"party {i}:", r)
        return

    if ns.cell:
        system, variant, n, depth = ns.cell.split(",")
        row, _ = run_cell(system, int(n), int(depth), variant, run_timeout=6000)
        print(row, flush=True)
        out = RESULTS / "seed000_mpc_scale_issue35.csv"
        exists = out.exists()
        with open(out, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
            if not exists:
                writer.writeheader()
            writer.writerow(row)
        return
    if ns.row:
        out = Path(ns.out)
        if out == RESULTS / "seed000_mpc_scale.csv":
            out = RESULTS / "seed000_mpc_scale_issue35.csv"
        run_issue35_row(ns.row, ns.repeats, out)
        return

    if ns.profile:
        prof = f"/tmp/privet_{ns.profile}_{ns.rows[0]}_{ns.depth}.prof"
        row, _ = run_cell(ns.profile, ns.rows[0], ns.depth, ns.variant, profile=prof)
        print(row)
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.sort_stats("cumulative").print_stats(40)
        stats.sort_stats("tottime").print_stats(25)
        print(out.getvalue())
        return

    deadline = time.monotonic() + 60 * ns.budget_minutes
    systems = ns.only.split(",")
    variants = ns.variants.split(",")
    rows: list[dict[str, Any]] = []
    out = Path(ns.out)
    for system in systems:
        if system == "predict":
            continue
        for variant in variants:
            if system == "odp" and variant == "owners":
                continue  # the secret tree's paths are secret: no owner tables
            last: dict[int, float] = {}
            for depth in ns.depths:
                prev_wall, prev_n = None, 1
                for n in ns.rows:
                    left = deadline - time.monotonic()
                    guess = None
                    if prev_wall is not None:  # owner tables: the rows hardly matter
                        guess = prev_wall * (1.5 if variant == "owners" else n / prev_n)
                    elif depth - 1 in last:
                        guess = last[depth - 1] * 5.0
                    base = {"system": system, "variant": variant, "rows": n, "depth": depth}
                    if guess is not None and guess > left:
                        rows.append({**base, "status": f"skipped: predicted {guess:.0f} s > "
                                     f"{max(left, 0):.0f} s left"})  # fmt: skip
                        print(rows[-1], flush=True)
                        continue
                    try:
                        row, _ = run_cell(system, n, depth, variant, run_timeout=max(60, left))
                    except Exception as exc:
                        rows.append({**base, "status": f"failed: {type(exc).__name__}"})
                        print(rows[-1], exc, flush=True)
                        break
                    if system != "odp" and n == max(ns.rows):
                        row["reference_accuracy"] = reference_accuracy(system, n, depth)
                    rows.append(row)
                    print(row, flush=True)
                    write_csv(rows, out)
                    prev_wall, prev_n = row["wall_s"], n
                    last[depth] = row["wall_s"] if n == ns.rows[0] else last.get(depth, 0)
    if "predict" in systems:
        try:
            rows.append(run_predict(10_000, 3, 1000))
        except Exception as exc:
            rows.append({"system": "predict", "status": f"failed: {type(exc).__name__}: {exc}"})
        print(rows[-1], flush=True)
    write_csv(rows, out)
    plot(rows, out.with_suffix(".png"))
    for system in systems:
        for variant in variants:
            pts = [r for r in rows if r.get("system") == system and r.get("variant") == variant
                   and r.get("status") == "measured"]  # fmt: skip
            for depth in ns.depths:
                sel = [r for r in pts if r["depth"] == depth]
                k = growth_exponent([r["rows"] for r in sel], [r["cpu_s_max"] for r in sel])
                if sel:
                    print(f"{system} {variant} depth {depth}: CPU ~ rows^{k:.2f}")


if __name__ == "__main__":
    main()
