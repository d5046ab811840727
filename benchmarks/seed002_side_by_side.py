"""Seed 002 side by side: privet's matrix random forest and the authors' code on the same splits.

The authors' side is run by ``benchmarks/seed002_authors.py --part accuracy`` (their code,
in a scratch venv; see that file). This script runs privet on the same rows and splits
(``train_test_split(range(N), test_size, random_state=s)``, s = 0, 1, 2) with the same
settings, and writes ``benchmarks/results/seed002_side_by_side.{csv,md,png}``:

``car``            h = 4, tau = 128, q = 1, eps 0.4-2, 345 test rows (the headline setting).
``adult_mrf``      Adult as the authors' published Fig. 2 Adult panel was made: their
                   preprocessing (8 multi-valued features, 45,222 rows), h = 6, tau = 16,
                   q = 1, eps 0.01-1 (mrf-public ``config.config_adult``, plotted from
                   ``temp/adult_id2.csv`` by ``pub-result.ipynb``).
``adult_caption``  The settings the paper's caption gives for Adult (h = 8, tau = 100,
                   q = 4, d_bar = 10) on their LIBSVM Adult (a1a + a1a_test, 123 binary
                   features), which the published panel was not made with.

Run::

    python benchmarks/seed002_side_by_side.py run [--datasets car adult_mrf adult_caption]
    python benchmarks/seed002_side_by_side.py report
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from seed002_common import EPS, RESULTS, SETTINGS, load
from sklearn.model_selection import train_test_split

from privet.learners import MatrixRandomForestClassifier

SCRATCH = Path(os.environ.get("SEED002_OUT", "/work/scratch/seed002/out"))
CASES = {  # dataset -> (loader name, settings, eps grid, test size, methods)
    "car": ("car", SETTINGS["car"], EPS["car"], 345, ["bt_opt", "bp_opt", "bt_lm", "dis_lm"]),
    "adult_mrf": (
        "adult_mrf", SETTINGS["adult_mrf"], EPS["adult_mrf"], 0.2,
        ["bt_opt", "bp_opt", "bt_lm", "dis_lm"],
    ),
    "adult_caption": (
        "adult_binary", SETTINGS["adult"], EPS["adult"], 0.2, ["bt_opt", "bp_opt"],
    ),
}  # fmt: skip
AUTHORS_NAME = {"adult_mrf": "adult"}  # seed002_authors.py's name for the same data
METHODS = {
    "bt_opt": dict(mode="batch_training", strategy="optimized"),
    "bp_opt": dict(mode="batch_prediction", strategy="optimized"),
    "bt_lm": dict(mode="batch_training", strategy="laplace"),
    "dis_lm": dict(mode="disjoint_training", strategy="laplace"),
}
LABELS = {
    "bt_opt": "DP batch train",
    "bp_opt": "DP batch pred.",
    "bt_lm": "batch train - LM",
    "dis_lm": "disjoint train - LM",
}
# The authors' own output for their published Adult panel (mrf-public temp/adult_id2.csv,
# mean of 5 runs on their split random_state=100): method -> accuracy at eps 0.01..1.
AUTHORS_ADULT_ID2 = {
    "bt_opt": [0.650, 0.746, 0.768, 0.811, 0.817],
    "bp_opt": [0.616, 0.738, 0.776, 0.815, 0.823],
    "bt_lm": [0.615, 0.718, 0.752, 0.800, 0.814],
    "dis_lm": [0.634, 0.713, 0.748, 0.799, 0.806],
}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def check_adult_codes(X: pd.DataFrame, y: np.ndarray) -> str:
    """Compare privet's reimplementation of the authors' Adult preprocessing with their codes."""
    f = SCRATCH / "authors_adult_codes.csv"
    if not f.exists():
        return "authors' Adult codes not found (run seed002_authors.py first): not compared"
    theirs = pd.read_csv(f)
    same = theirs.iloc[:, :-1].to_numpy().tolist() == X.to_numpy().tolist()
    same &= theirs.iloc[:, -1].to_numpy().tolist() == list(y)
    if not same:
        raise AssertionError("privet's adult_mrf differs from the authors' preprocessed Adult")
    return f"privet's adult_mrf equals the authors' preprocessed Adult ({len(y)} rows, row for row)"


def run(args: argparse.Namespace) -> None:
    rows = []
    out = RESULTS / "seed002_side_by_side_privet.csv"
    notes = []
    for name in args.datasets:
        loader, settings, eps_grid, test_size, methods = CASES[name]
        X, y, schema = load(loader)
        if name == "adult_mrf":
            notes.append(check_adult_codes(X, y))
            print(notes[-1], flush=True)
        for s in range(args.splits):
            tr, te = train_test_split(np.arange(len(y)), test_size=test_size, random_state=s)
            Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], np.asarray(y)[tr], np.asarray(y)[te]
            for eps in eps_grid:
                for method in (m for m in methods if m in args.methods):
                    for trial in range(args.trials):
                        c0 = _cpu()
                        m = MatrixRandomForestClassifier(
                            epsilon=eps, schema=schema, random_state=1000 * s + trial,
                            **METHODS[method], **settings,
                        ).fit(Xtr, ytr)  # fmt: skip
                        acc = float(np.mean(m.predict(Xte) == yte))
                        rows.append(
                            dict(
                                dataset=name, split=s, method=method, eps=eps, trial=trial,
                                accuracy=acc, cpu_s=_cpu() - c0,
                            )
                        )  # fmt: skip
            majority = float(np.mean(yte == pd.Series(ytr).mode()[0]))
            rows.append(dict(dataset=name, split=s, method="majority", eps=np.nan, trial=0,
                             accuracy=majority, cpu_s=0.0))  # fmt: skip
            print(name, "split", s, flush=True)
            _write_keeping_others(pd.DataFrame(rows), out, args.datasets)
    (RESULTS / "seed002_side_by_side_notes.txt").write_text("\n".join(notes) + "\n")


def _write_keeping_others(df: pd.DataFrame, out: Path, datasets: list[str]) -> None:
    """Write this run's rows, keeping an earlier run's rows of the datasets not run now."""
    if out.exists():
        old = pd.read_csv(out)
        df = pd.concat([old[~old["dataset"].isin(datasets)], df], ignore_index=True)
    df.to_csv(out, index=False)


def report() -> None:
    ours = pd.read_csv(RESULTS / "seed002_side_by_side_privet.csv")
    theirs_f = RESULTS / "seed002_authors_accuracy.csv"
    theirs = pd.read_csv(theirs_f) if theirs_f.exists() else ours.iloc[0:0]
    notes_f = RESULTS / "seed002_side_by_side_notes.txt"
    notes = notes_f.read_text().strip() if notes_f.exists() else ""
    names = [n for n in CASES if n in set(ours["dataset"])]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
    lines = [
        "# Seed 002 side by side: privet and the authors' code on the same splits",
        "",
        "Commands: `SEED002_MRF_DIR=... venv/bin/python benchmarks/seed002_authors.py --part "
        "accuracy` (the authors' code, mrf-public @ 176d5ac with HDMM @ 7a5079a and ektelo @ "
        "7629fbf, numpy 1.25 / scipy 1.9.3 / pandas 2.1 in a scratch venv), then "
        "`python benchmarks/seed002_side_by_side.py run` and `... report`. Splits: "
        "`train_test_split(range(N), test_size, random_state=s)`, s = 0..2, the same rows on "
        "both sides. Mean accuracy +- sd over splits x noise draws (authors: 2 noise draws "
        "on one forest per split; privet: one fit per split and draw).",
        "",
        notes,
        "",
        "| dataset | eps | method | privet | authors' code | n (privet / authors) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for ax, name in zip(axes[0], names, strict=True):
        o = ours[ours["dataset"] == name]
        t = theirs[theirs["dataset"] == AUTHORS_NAME.get(name, name)]
        for i, method in enumerate(m for m in LABELS if m in set(o["method"])):
            color = f"C{i}"
            go = o[o["method"] == method].groupby("eps")["accuracy"]
            ax.plot(go.mean().index, go.mean().values, "-o", color=color, ms=3,
                    label=f"privet: {LABELS[method]}")  # fmt: skip
            gt = t[t["method"] == method].groupby("eps")["accuracy"]
            if len(gt.mean()):
                ax.plot(gt.mean().index, gt.mean().values, "--s", color=color, ms=3, alpha=0.7,
                        label=f"authors' code: {LABELS[method]}")  # fmt: skip
            if name == "adult_mrf":
                ax.plot(EPS["adult"], AUTHORS_ADULT_ID2[method], "x", color=color, ms=6,
                        label=f"published (adult_id2.csv): {LABELS[method]}")  # fmt: skip
            for eps in sorted(set(o["eps"].dropna())):
                a = o[(o["method"] == method) & (o["eps"] == eps)]["accuracy"]
                b = t[(t["method"] == method) & (t["eps"] == eps)]["accuracy"]
                theirs_cell = f"{b.mean():.3f} +- {b.std():.3f}" if len(b) else "-"
                lines.append(
                    f"| {name} | {eps:g} | {method} | {a.mean():.3f} +- {a.std():.3f} | "
                    f"{theirs_cell} | {len(a)} / {len(b)} |"
                )
        maj = o[o["method"] == "majority"]["accuracy"].mean()
        ax.axhline(maj, color="k", ls=":", label="majority class")
        lines.append(f"| {name} | - | majority | {maj:.3f} | | |")
        ax.set_title(name)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("test accuracy")
    axes[0][-1].legend(fontsize=5, loc="lower right")
    fig.tight_layout()
    fig.savefig(RESULTS / "seed002_side_by_side.png", dpi=120)
    cpu = ours[ours["method"] != "majority"].groupby(["dataset", "method"])["cpu_s"].median()
    lines += ["", "privet CPU seconds per fit + predict (median):", ""]
    lines += ["| dataset | method | CPU s |", "|---|---|---:|"]
    lines += [f"| {d} | {m} | {v:.2f} |" for (d, m), v in cpu.items()]
    (RESULTS / "seed002_side_by_side.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("part", choices=["run", "report"])
    p.add_argument("--datasets", nargs="*", default=list(CASES))
    p.add_argument("--splits", type=int, default=3)
    p.add_argument("--trials", type=int, default=2)
    p.add_argument("--methods", nargs="*", default=list(METHODS), help="a subset of the methods")
    a = p.parse_args()
    RESULTS.mkdir(exist_ok=True)
    start = time.time()
    run(a) if a.part == "run" else report()
    print(f"{a.part}: {time.time() - start:.0f} s wall, {_cpu():.0f} s CPU")


if __name__ == "__main__":
    main()
