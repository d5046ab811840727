"""BENCHMARK (not a test): runtime and traffic of seed 000's MPC protocols (its Fig. 5).

Three real MPyC parties as separate processes over TCP on localhost
(:func:`privet.mpc.launch`, Shamir threshold 1), each party a data owner of a
third of the training rows (80 % of the data, fixed shuffle), privacy budget
epsilon = 1 as in the paper's Fig. 5:

* ``mpc_id3``: MPC-ID3 (max operator, no DP, tree opened);
* ``pmpc_laplace`` / ``pmpc_em``: CDP+PMPC-ID3 (Alg. 7-10), EM splits opened,
  Laplace (Alg. 9) or exponential-mechanism (Alg. 10) leaves, epsilon / (h + 1)
  per query, 32-bit fixed point;
* ``odp_laplace`` / ``odp_em``: ODP+FMPC-ID3 (Alg. 1), the paper's exact hidden
  splits, leaves at the full epsilon, 32-bit fixed point; inference is the
  oblivious prediction (Alg. 4) of the 20 % test rows by party 0 (the querier).
  ``odp_sound``: the sound variant (exponential-mechanism hidden splits at
  0.25 epsilon / h, Laplace leaves at 0.75 epsilon).
* ``pmpc_discrete``, ``odp_sound_discrete``: the same protocols with the
  exact discrete samplers of :mod:`privet.mpc.discrete` (report-noisy-max
  splits, discrete Laplace leaves), the MPC learners' default and the only
  MPC noise with a proven guarantee; side by side with the fixed-point
  Algorithms 12-13 in the same run.

for depths 2-5 on Titanic and Heart. The opened trees of ``mpc_id3`` and
``pmpc_*`` are public, so their inference is a plaintext traversal (no MPC, no
traffic; its time is reported). Configurations run cheapest first (all
depth-2 runs, then depth 3, ...); one whose predicted time (from the previous
depth, times the growth in nodes) exceeds what is left of ``--budget-minutes``
is skipped and listed as such.

Then MPC-ID3 on Car (1,728 rows, 6 attributes) next to MPyC's own
``demos/np_id3gini.py`` (ID3 with the Gini index and a 5 % minimum-size
stopping rule, secure integers of 95 bits, tree opened), run unchanged from a
fetched copy of lschoe/mpyc (``--mpyc-repo``, a git directory; the demo and
its data file are extracted to a temporary directory, never into this
repository) with ``-M3``. Its numbers are MPyC's own log line of party 0
("elapsed time", from ``mpc.start()`` to ``mpc.shutdown()``, and "bytes sent").

Results: ``benchmarks/results/seed000_mpc.csv`` (one row per protocol,
dataset, depth, phase), ``seed000_mpc_car.csv``, ``seed000_mpc.md`` and
``seed000_mpc.png`` (runtime and traffic against depth, as Fig. 5).

Traffic is MPyC message bytes (12-byte header + payload). ``mb_received`` is
the mean per party of what it received (the paper's "network traffic");
``total_mb_sent`` sums all parties; ``batches`` is the largest per-party
number of communication steps (an upper bound on rounds). ``seconds`` is the
longest party's program time (connected to done), ``wall_seconds`` the
launcher's time including process start-up, imports and connecting.

Usage::

    python benchmarks/seed000_mpc_bench.py [--budget-minutes 20] [--quick]

Timings depend on the machine and its load (the load average at the start
is recorded); this script asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privet.data import load_dataset
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners.mpc_id3.host import run_mpc_id3
from privet.learners.oblivious_id3.host import run_oblivious_id3, run_oblivious_predict
from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3
from privet.mpc import MPCPartyError

RESULTS = Path(__file__).resolve().parent / "results"
EPSILON = 1.0
DEFAULT_MPYC_REPO = "/work/.mirror/lschoe+mpyc/repo"

PROTOCOLS = (
    "mpc_id3",
    "pmpc_laplace",
    "pmpc_em",
    "pmpc_discrete",
    "odp_laplace",
    "odp_em",
    "odp_sound",
    "odp_sound_discrete",
)
LABELS = {
    "mpc_id3": "MPC-ID3",
    "pmpc_laplace": "CDP+PMPC (Laplace leaves)",
    "pmpc_em": "CDP+PMPC (EM leaves)",
    "pmpc_discrete": "CDP+PMPC discrete (noisy-max splits, discrete Laplace leaves)",
    "odp_laplace": "ODP+FMPC (Laplace leaves)",
    "odp_em": "ODP+FMPC (EM leaves)",
    "odp_sound": "ODP+FMPC sound (EM splits)",
    "odp_sound_discrete": "ODP+FMPC sound discrete (noisy-max splits, discrete Laplace leaves)",
}
COLORS = dict(zip(PROTOCOLS, ("C0", "C1", "C2", "C6", "C3", "C4", "C5", "C7"), strict=True))


@dataclass
class Config:
    protocol: str
    dataset: str
    depth: int
    predicted: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)

    def status_rows(self, status: str) -> list[dict[str, Any]]:
        """The train and inference rows of a configuration that has no measurement, saying why."""
        return [
            {
                "protocol": self.protocol,
                "dataset": self.dataset,
                "depth": self.depth,
                "phase": phase,
                "status": status,
            }
            for phase in ("train", "inference")
        ]


def split_data(
    name: str, seed: int = 0
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ds = load_dataset(name)
    codes, y = ds.codes()
    order = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    return ds.schema, codes[train], y[train], codes[test], y[test]


def stats_row(stats: Any) -> dict[str, Any]:
    parties = stats.parties
    return {
        "seconds": round(stats.seconds, 3),
        "connect_seconds": round(max(p.connect_seconds for p in parties), 3),
        "wall_seconds": round(stats.elapsed_seconds, 3),
        "mb_received": round(float(np.mean([p.bytes_received for p in parties])) / 1e6, 4),
        "total_mb_sent": round(stats.bytes_sent / 1e6, 4),
        "party0_mb_sent": round(parties[0].bytes_sent / 1e6, 4),
        "batches": stats.message_batches,
    }


def predict_tree(tree: Any, codes: np.ndarray) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    labels = np.argmax(tree.leaf_values(codes), axis=1)
    return labels, time.perf_counter() - t0


def run_config(cfg: Config, data: dict[str, Any], timeout: float, run_timeout: float) -> None:
    schema, Xtr, ytr, Xte, yte = data[cfg.dataset]
    sizes, u, h = schema.domain_sizes, schema.n_classes, min(cfg.depth, schema.n_features)
    base = {
        "protocol": cfg.protocol,
        "dataset": cfg.dataset,
        "depth": h,
        "n_train": len(ytr),
        "n_test": len(yte),
    }
    kw = {"backend": "mpc", "parties": 3, "timeout": timeout, "run_timeout": run_timeout}
    if cfg.protocol in ("mpc_id3", "pmpc_laplace", "pmpc_em", "pmpc_discrete"):
        if cfg.protocol == "mpc_id3":
            run = run_mpc_id3(Xtr, ytr, sizes, u, depth=h, **kw)
        else:
            leaf = "exponential" if cfg.protocol == "pmpc_em" else "laplace"
            noise = "discrete" if cfg.protocol == "pmpc_discrete" else "fixed_point"
            run = run_partial_mpc_id3(
                Xtr,
                ytr,
                sizes,
                u,
                depth=h,
                epsilon=EPSILON / (h + 1),
                leaf=leaf,
                numbers=SecureNumbers(mpc_noise=noise),
                **kw,
            )
        tree = run.tree(sizes, u)
        labels, seconds = predict_tree(tree, Xte)
        accuracy = float(np.mean(labels == yte))
        cfg.rows.append(
            {
                **base,
                "phase": "train",
                **stats_row(run.stats),
                "nodes": tree.node_count,
                "accuracy": round(accuracy, 4),
                "note": "tree opened",
            }
        )
        cfg.rows.append(
            {
                **base,
                "phase": "inference",
                "seconds": round(seconds, 4),
                "connect_seconds": 0,
                "wall_seconds": round(seconds, 4),
                "mb_received": 0,
                "total_mb_sent": 0,
                "party0_mb_sent": 0,
                "batches": 0,
                "nodes": tree.node_count,
                "accuracy": round(accuracy, 4),
                "note": "public tree: plaintext traversal, no MPC",
            }
        )
        return
    params: dict[str, Any] = {"depth": h, "leaf_epsilon": EPSILON, "split": "exact"}
    if cfg.protocol == "odp_em":
        params["leaf"] = "exponential"
    if cfg.protocol in ("odp_sound", "odp_sound_discrete"):
        params.update(
            split="exponential",
            split_epsilon=0.25 * EPSILON / max(h, 1),
            leaf_epsilon=0.75 * EPSILON,
        )
    if cfg.protocol == "odp_sound_discrete":
        params["numbers"] = SecureNumbers(mpc_noise="discrete")
    model = run_oblivious_id3(Xtr, ytr, sizes, u, **params, **kw)
    w = schema.max_domain_size
    nodes = sum(w**level for level in range(h + 1))
    cfg.rows.append(
        {
            **base,
            "phase": "train",
            **stats_row(model.stats),
            "nodes": nodes,
            "accuracy": "",
            "note": f"complete {w}-ary tree, secret",
        }
    )
    pred = run_oblivious_predict(
        model, Xte, sizes, querier=0, backend="mpc", timeout=timeout, run_timeout=run_timeout
    )
    accuracy = float(np.mean(pred.labels == yte))
    cfg.rows[-1]["accuracy"] = round(accuracy, 4)
    cfg.rows.append(
        {
            **base,
            "phase": "inference",
            **stats_row(pred.stats),
            "nodes": nodes,
            "accuracy": round(accuracy, 4),
            "note": f"Alg. 4 on {len(yte)} secret queries, querier only learns labels",
        }
    )


def median_rows(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Median time over repeated runs of one configuration (traffic from the first run)."""
    out = []
    for i, row in enumerate(runs[0]):
        times = [run[i]["seconds"] for run in runs]
        out.append(
            {
                **row,
                "seconds": round(float(np.median(times)), 4),
                "wall_seconds": round(
                    float(np.median([run[i]["wall_seconds"] for run in runs])), 3
                ),
                "seconds_min": min(times),
                "seconds_max": max(times),
                "repeats": len(runs),
            }
        )
    return out


def growth(cfg: Config, schema: Any) -> float:
    """Rough factor by which one more level multiplies the cost."""
    if cfg.protocol.startswith("odp"):
        return float(schema.max_domain_size)
    if cfg.protocol.startswith("pmpc"):
        return float(np.mean(schema.domain_sizes))
    return 2.0


# ------------------------------------------------------------------ np_id3gini


def run_np_id3gini(repo: str, timeout: float) -> dict[str, Any]:
    """Run MPyC's demos/np_id3gini.py -i2 (Car) -M3 from a fetched copy; parse its log."""
    if not Path(repo).exists():
        return {"status": f"not run: no MPyC repository at {repo} (pass --mpyc-repo)"}
    with tempfile.TemporaryDirectory(prefix="np_id3gini-") as tmp:
        data_dir = Path(tmp) / "data" / "id3"
        data_dir.mkdir(parents=True)
        for src, dst in (
            ("demos/np_id3gini.py", Path(tmp) / "np_id3gini.py"),
            ("demos/data/id3/car.csv", data_dir / "car.csv"),
        ):
            blob = subprocess.run(
                ["git", "--git-dir", repo, "show", f"HEAD:{src}"],
                capture_output=True,
                check=False,
            )
            if blob.returncode != 0:
                return {"status": f"not run: git show {src} failed: {blob.stderr.decode()[:200]}"}
            dst.write_bytes(blob.stdout)
        commit = subprocess.run(
            ["git", "--git-dir", repo, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        t0 = time.perf_counter()
        try:
            out = subprocess.run(
                [sys.executable, "np_id3gini.py", "-i2", "-M3", "--no-pretty-tree"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"status": f"not run to the end: exceeded {timeout} s"}
        wall = time.perf_counter() - t0
    text = out.stdout + out.stderr
    stop = re.search(r"elapsed time: (\d+):(\d+):([\d.]+)\|bytes sent: (\d+)", text)
    shape = re.search(r"Decision tree of depth (\d+) and size (\d+)", text)
    if out.returncode != 0 or stop is None or shape is None:
        return {"status": f"failed (exit {out.returncode}): {text[-400:]}"}
    h, m, s = int(stop.group(1)), int(stop.group(2)), float(stop.group(3))
    return {
        "status": "ok",
        "commit": commit,
        "seconds": round(3600 * h + 60 * m + s, 3),
        "party0_mb_sent": round(int(stop.group(4)) / 1e6, 4),
        "wall_seconds": round(wall, 3),
        "depth": int(shape.group(1)),
        "nodes": int(shape.group(2)),
    }


def car_comparison(repo: str, timeout: float, run_timeout: float) -> list[dict[str, Any]]:
    ds = load_dataset("car")
    codes, y = ds.codes()
    s = ds.schema
    rows = []
    demo = run_np_id3gini(repo, run_timeout)
    print("np_id3gini:", demo)
    rows.append(
        {
            "implementation": "MPyC demos/np_id3gini.py -i2 -M3 (Gini, stop < 5 % rows, SecInt95)",
            "depth": demo.get("depth", ""),
            "nodes": demo.get("nodes", ""),
            "seconds": demo.get("seconds", ""),
            "party0_mb_sent": demo.get("party0_mb_sent", ""),
            "batches": "",
            "wall_seconds": demo.get("wall_seconds", ""),
            "note": demo["status"]
            + (f" (lschoe/mpyc@{demo['commit']})" if "commit" in demo else ""),
        }
    )
    for depth in (3, 6):
        run = run_mpc_id3(
            codes,
            y,
            s.domain_sizes,
            s.n_classes,
            depth=depth,
            backend="mpc",
            timeout=timeout,
            run_timeout=run_timeout,
        )
        tree = run.tree(s.domain_sizes, s.n_classes)
        st = stats_row(run.stats)
        rows.append(
            {
                "implementation": f"privet MPC-ID3 max_depth={depth} (max operator, pure stop, SecInt auto)",
                "depth": tree.max_depth,
                "nodes": tree.node_count,
                "seconds": round(st["seconds"] + st["connect_seconds"], 3),
                "party0_mb_sent": st["party0_mb_sent"],
                "batches": st["batches"],
                "wall_seconds": st["wall_seconds"],
                "note": "seconds = connect + program, to compare with MPyC's start-to-shutdown",
            }
        )
        print(rows[-1])
    return rows


# ------------------------------------------------------------------ output


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def plot(rows: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG")
        return False
    datasets = sorted({r["dataset"] for r in rows})
    fig, axes = plt.subplots(len(datasets), 3, figsize=(15, 4.2 * len(datasets)), squeeze=False)
    for i, name in enumerate(datasets):
        for j, (phase, metric, title) in enumerate(
            (
                ("train", "seconds", "training time (s)"),
                ("train", "mb_received", "training traffic, MB received per party"),
                ("inference", "seconds", "oblivious inference (Alg. 4) time (s), 20 % test rows"),
            )
        ):
            ax = axes[i][j]
            for protocol in PROTOCOLS:
                if phase == "inference" and not protocol.startswith("odp"):
                    continue  # public trees: plaintext inference, nothing to plot
                pts = sorted(
                    (r["depth"], r[metric])
                    for r in rows
                    if r["dataset"] == name
                    and r["protocol"] == protocol
                    and r["phase"] == phase
                    and r.get("status", "ok") == "ok"
                )
                if pts:
                    ax.plot(
                        *zip(*pts, strict=True),
                        marker="o",
                        color=COLORS[protocol],
                        label=LABELS[protocol],
                    )
            ax.set_yscale("log")
            ax.set_xlabel("max depth")
            ax.set_title(f"{name}: {title}")
            ax.set_xticks([2, 3, 4, 5])
            ax.grid(True, alpha=0.3)
        axes[i][0].legend(fontsize=8)
    fig.suptitle("seed 000 Fig. 5 with privet's protocols: 3 local MPyC parties, epsilon = 1")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def markdown(rows: list[dict[str, Any]], car: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    out = ["# Seed 000, Fig. 5: runtime and traffic of the MPC protocols (privet)", ""]
    out += [f"- {k}: {v}" for k, v in meta.items()]
    out += [
        "",
        "3 parties. Cells: `s` = longest party's program time (the median of 3 runs when "
        "a run took under 12 s), `MB` = mean MB received per party, `b` = message batches "
        "(an upper bound on rounds). The trees of MPC-ID3 and CDP+PMPC are public: their "
        "inference is a plaintext traversal. ODP+FMPC inference is Alg. 4 on the 20 % test "
        "rows, secret-shared by party 0 (the querier), who alone learns the labels.",
        "",
    ]
    for name in sorted({r["dataset"] for r in rows}):
        out += [
            f"## {name}",
            "",
            "| protocol | phase | " + " | ".join(f"depth {d}" for d in (2, 3, 4, 5)) + " |",
            "|---|---|" + "---|" * 4,
        ]
        for protocol in PROTOCOLS:
            for phase in ("train", "inference"):
                cells = []
                for d in (2, 3, 4, 5):
                    hit = [
                        r
                        for r in rows
                        if r["dataset"] == name
                        and r["protocol"] == protocol
                        and r["depth"] == d
                        and r["phase"] == phase
                    ]
                    if not hit:
                        cells.append("–")
                    elif hit[0].get("status", "ok") != "ok":
                        cells.append(hit[0]["status"])
                    elif phase == "inference" and not protocol.startswith("odp"):
                        cells.append(f"{hit[0]['seconds'] * 1e3:.1f} ms, local")
                    else:
                        r = hit[0]
                        cells.append(
                            f"{r['seconds']:.1f} s, {r['mb_received']:.1f} MB, {r['batches']} b"
                        )
                if any(c != "–" for c in cells):
                    out.append(f"| {LABELS[protocol]} | {phase} | " + " | ".join(cells) + " |")
        out.append("")
    out += [
        "## Car: privet MPC-ID3 next to MPyC's np_id3gini demo",
        "",
        "| implementation | depth | nodes | seconds | party 0 MB sent | batches | wall s | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in car:
        out.append(
            "| "
            + " | ".join(
                str(r[k])
                for k in (
                    "implementation",
                    "depth",
                    "nodes",
                    "seconds",
                    "party0_mb_sent",
                    "batches",
                    "wall_seconds",
                    "note",
                )
            )
            + " |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-minutes", type=float, default=20.0)
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3, 4, 5])
    parser.add_argument("--datasets", nargs="+", default=["titanic", "heart"])
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    parser.add_argument(
        "--mpyc-repo", default=os.environ.get("PRIVET_MPYC_REPO", DEFAULT_MPYC_REPO)
    )
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--repeats", type=int, default=3, help="runs of a cheap configuration")
    parser.add_argument(
        "--repeat-below", type=float, default=12.0, help="seconds under which a run is repeated"
    )
    parser.add_argument("--quick", action="store_true", help="depth 2 only, no Car comparison")
    parser.add_argument("--out", default="seed000_mpc")
    args = parser.parse_args()
    depths = [2] if args.quick else args.depths
    started = time.monotonic()
    budget = 60.0 * args.budget_minutes
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load average at start": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "parties": "3 local processes, TCP, Shamir threshold 1 (MPyC 0.11, gmpy2)",
        "epsilon": EPSILON,
        "budget": f"{args.budget_minutes} min",
    }
    data = {name: split_data(name) for name in args.datasets}
    car_rows: list[dict[str, Any]] = []
    if not args.quick:  # the Car comparison first: it is the cheapest and always wanted
        car_rows = car_comparison(args.mpyc_repo, args.timeout, run_timeout=600)
    # cheapest depth first; within a depth the paper's main comparison first
    priority = (
        "mpc_id3",
        "pmpc_laplace",
        "pmpc_discrete",
        "odp_laplace",
        "pmpc_em",
        "odp_em",
        "odp_sound",
        "odp_sound_discrete",
    )
    ordered = [p for p in priority if p in args.protocols]
    configs = [Config(p, d, h) for h in depths for p in ordered for d in args.datasets]
    done: dict[tuple[str, str, int], float] = {}
    rows: list[dict[str, Any]] = []
    for cfg in configs:
        schema = data[cfg.dataset][0]
        previous = done.get((cfg.protocol, cfg.dataset, cfg.depth - 1))
        cfg.predicted = 0.0 if previous is None else previous * growth(cfg, schema)
        left = budget - (time.monotonic() - started)
        skipped = (cfg.protocol, cfg.dataset, cfg.depth - 1) not in done and cfg.depth > min(depths)
        if skipped or cfg.predicted > left:
            why = (
                "skipped: shallower run skipped"
                if skipped
                else (f"skipped: predicted {cfg.predicted:.0f} s > {left:.0f} s left of the budget")
            )
            print(cfg.protocol, cfg.dataset, cfg.depth, why)
            rows.extend(cfg.status_rows(why))
            continue
        t0 = time.monotonic()
        try:
            run_config(cfg, data, args.timeout, run_timeout=max(60.0, left))
            first = time.monotonic() - t0
            if first < args.repeat_below and args.repeats > 1:
                runs = [cfg.rows]
                for _ in range(args.repeats - 1):
                    cfg.rows = []
                    run_config(cfg, data, args.timeout, run_timeout=max(60.0, left))
                    runs.append(cfg.rows)
                cfg.rows = median_rows(runs)
        except Exception as exc:  # an MPC failure is a result here, not a crash
            if isinstance(exc, MPCPartyError) and exc.kind == "timeout":
                why = f"stopped: exceeded the {left:.0f} s left of the time budget"
            else:
                why = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            print(cfg.protocol, cfg.dataset, cfg.depth, why)
            rows.extend(cfg.status_rows(why))
            continue
        done[(cfg.protocol, cfg.dataset, cfg.depth)] = first
        for r in cfg.rows:
            r["status"] = "ok"
            print(
                {
                    k: r[k]
                    for k in (
                        "protocol",
                        "dataset",
                        "depth",
                        "phase",
                        "seconds",
                        "mb_received",
                        "batches",
                        "accuracy",
                    )
                }
            )
        rows += cfg.rows
    meta["total benchmark time"] = f"{(time.monotonic() - started) / 60:.1f} min"
    RESULTS.mkdir(exist_ok=True)
    write_csv(RESULTS / f"{args.out}.csv", rows)
    if car_rows:
        write_csv(RESULTS / f"{args.out}_car.csv", car_rows)
    has_png = plot([r for r in rows if r.get("status") == "ok"], RESULTS / f"{args.out}.png")
    text = markdown(rows, car_rows, meta)
    if has_png:
        text += f"\n![runtime and traffic vs depth]({args.out}.png)\n"
    (RESULTS / f"{args.out}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
