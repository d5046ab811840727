"""DPGradientBoostingClassifier beyond Adult: eight public datasets, five budgets, one run.

Issue 34. Datasets (all public, read at run time; nothing is downloaded):

* from privet's loaders (``../shared/data`` and the bundled Car): Adult (UCI
  train/test split), Mushroom, Titanic, Heart (Cleveland), Nursery (5 classes), Car
  (4 classes);
* shipped inside scikit-learn: Breast cancer Wisconsin (diagnostic; 30 numeric
  features, public bounds: the minimum and maximum printed in the dataset's own
  documentation, ``load_breast_cancer().DESCR``, widened by 5%; 8 equal-width bins)
  and Digits (8x8 images, 10 classes, pixel values 0-16, 4 equal-width bins).

None of them was used to choose DPGBT's defaults (see docs/dp_boosting.md: they were
chosen on KRKPA7, Tic-tac-toe, House votes, SPECT, Balance scale, Mfeat Fourier and
morphological, a noise-only synthetic set, and Adult's *training* file split in two;
never on Adult's test file or any other dataset here).

Splits: Adult's UCI train/test split (3 seeds); the others 3 stratified 80/20 splits, 10
on the small ones (Titanic, Heart, Breast cancer; ``--small-splits``), whose cells vary
most. The goals table gives 95% intervals of the paired per-split differences (DPGBT
minus the majority class, minus DP-EBM), corrected for overlapping splits.
Epsilon 0.05, 0.1, 0.5, 1, 2 (delta 1e-5 for the Gaussian learners). Methods:

* ``privet DPGBT``: DPGradientBoostingClassifier at its defaults;
* ``privet DPID3``, ``privet DP random forest``, ``privet DP extra trees`` at their
  defaults;
* ``DP-EBM``: InterpretML's DPExplainableBoostingClassifier (binary targets only),
  run by ``benchmarks/peers/peer_worker.py`` in its own virtual environment
  (``--ebm-python``) with the schema's bounds and categories;
* ``HGB (non-private)``: scikit-learn's HistGradientBoostingClassifier on the same
  raw values; ``majority class`` (the training part's majority, scored on the test part).

Metrics: accuracy, ROC AUC (macro one-vs-rest over the classes present for more than
two classes), log loss, fit wall time and fit CPU time (``time.process_time`` of the
fitting process; the machine is shared, so CPU time is the comparable one).

Run (about 15 CPU-minutes)::

    python -m venv /work/scratch/issue34/ebm && /work/scratch/issue34/ebm/bin/pip install "interpret==0.7.8" pandas
    flock /tmp/privet-heavy.lock python benchmarks/dpgbt_suite.py --ebm-python /work/scratch/issue34/ebm/bin/python

Writes ``benchmarks/results/dpgbt_suite.{csv,md,png}``.
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # a shared 2-core machine: no thread storms

import re
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import StratifiedShuffleSplit

from privet.data import Categorical, Numeric, Schema, load_dataset
from privet.learners import (
    DPExtraTreesClassifier,
    DPGradientBoostingClassifier,
    DPID3Classifier,
    DPRandomForestClassifier,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATASETS = ["adult", "mushroom", "titanic", "heart", "breast_cancer", "nursery", "car", "digits"]
EPS = [0.05, 0.1, 0.5, 1.0, 2.0]
DELTA = 1e-5
N_SPLITS = 3
SMALL = ("titanic", "heart", "breast_cancer")
"""Datasets small enough to run more splits on (``--small-splits``): their cells vary most."""
SMALL_SPLITS = 10
TEST_SIZE = 0.2


def n_splits(name: str) -> int:
    return SMALL_SPLITS if name in SMALL else N_SPLITS


# ----------------------------------------------------------------------------- data
def _breast_cancer() -> tuple[pd.DataFrame, Schema]:
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer()
    # the documentation's "Summary Statistics" table: "radius (mean):  6.981  28.11"
    ranges = {}
    for name, kind, lo, hi in re.findall(
        r"^([a-z ]+) \((mean|standard error|worst)\):\s+([\d.]+)\s+([\d.]+)\s*$",
        d.DESCR,
        flags=re.M,
    ):
        prefix = {"mean": "mean {}", "standard error": "{} error", "worst": "worst {}"}[kind]
        ranges[prefix.format(name.strip())] = (float(lo), float(hi))
    attrs = []
    for f in d.feature_names:
        lo, hi = ranges[str(f)]
        pad = 0.05 * (hi - lo)
        attrs.append(Numeric.equal_width(str(f), max(0.0, lo - pad), hi + pad, 8))
    target = Categorical("diagnosis", [str(c) for c in d.target_names])
    frame = pd.DataFrame(d.data, columns=[str(f) for f in d.feature_names])
    frame["diagnosis"] = np.asarray(d.target_names)[d.target].astype(str)
    return frame, Schema(tuple(attrs), target, "scikit-learn load_breast_cancer (UCI WDBC)")


def _digits() -> tuple[pd.DataFrame, Schema]:
    from sklearn.datasets import load_digits

    d = load_digits()
    names = [f"pixel_{i}" for i in range(d.data.shape[1])]
    attrs = tuple(Numeric.equal_width(n, 0.0, 16.0, 4) for n in names)
    target = Categorical("digit", [str(i) for i in range(10)])
    frame = pd.DataFrame(d.data, columns=names)
    frame["digit"] = d.target.astype(str)
    return frame, Schema(attrs, target, "scikit-learn load_digits (UCI optical digits, test part)")


def load(name: str) -> tuple[pd.DataFrame, Schema, list[tuple[np.ndarray, np.ndarray]]]:
    """(The first splits of a larger ``n_splits`` are the splits of a smaller one.)"""
    """``(frame, schema, splits)``: rows with the target column, public schema, index pairs."""
    if name == "adult":
        tr, te = load_dataset("adult"), load_dataset("adult_test")
        frame = pd.concat([tr.frame, te.frame], ignore_index=True)
        split = (np.arange(tr.n_rows), np.arange(tr.n_rows, len(frame)))
        return frame, tr.schema, [split] * n_splits(name)
    if name == "breast_cancer":
        frame, schema = _breast_cancer()
    elif name == "digits":
        frame, schema = _digits()
    else:
        ds = load_dataset(name)
        frame, schema = ds.frame, ds.schema
    y = schema.encode_target(frame[schema.target.name])
    sss = StratifiedShuffleSplit(n_splits=n_splits(name), test_size=TEST_SIZE, random_state=0)
    return frame, schema, list(sss.split(np.zeros(len(y)), y))


def peer_matrix(frame: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, np.ndarray, dict]:
    """The peers' numeric matrix (codes for categories, raw numbers), classes, metadata."""
    codes = schema.encode(frame[list(schema.feature_names)])
    cols, feats = [], []
    for j, a in enumerate(schema.attributes):
        if isinstance(a, Categorical):
            cols.append(codes[:, j].astype(float))
            feats.append({"name": a.name, "kind": "categorical", "lower": 0.0,
                          "upper": float(len(a.categories) - 1),
                          "categories": [str(c) for c in a.categories]})  # fmt: skip
        else:
            cols.append(frame[a.name].to_numpy(dtype=float))
            feats.append({"name": a.name, "kind": "numeric", "lower": a.lower, "upper": a.upper})
    y = np.asarray(schema.encode_target(frame[schema.target.name]), dtype=int)
    return np.column_stack(cols), y, {"features": feats, "classes": list(map(str, schema.classes))}


# ----------------------------------------------------------------------------- metrics
def metrics(y: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    k = proba.shape[1]
    proba = np.clip(proba, 1e-15, 1.0)
    proba = proba / proba.sum(axis=1, keepdims=True)
    if k == 2:
        auc = roc_auc_score(y, proba[:, 1])
    else:
        auc = np.mean(
            [roc_auc_score(y == c, proba[:, c]) for c in range(k) if 0 < (y == c).sum() < len(y)]
        )
    return {
        "accuracy": float(np.mean(np.argmax(proba, axis=1) == y)),
        "auc": float(auc),
        "log_loss": float(log_loss(y, proba, labels=list(range(k)))),
    }


# ----------------------------------------------------------------------------- privet
PRIVET_ONLY: list[str] = []
"""``--methods``: the privet methods to run (empty: all)."""


def privet_methods(schema: Schema) -> dict:
    return {
        "privet DPGBT": lambda e, s: DPGradientBoostingClassifier(
            epsilon=e, delta=DELTA, schema=schema, random_state=s
        ),
        "privet DPID3": lambda e, s: DPID3Classifier(epsilon=e, schema=schema, random_state=s),
        "privet DP random forest": lambda e, s: DPRandomForestClassifier(
            epsilon=e, schema=schema, random_state=s
        ),
        "privet DP extra trees": lambda e, s: DPExtraTreesClassifier(
            epsilon=e, schema=schema, random_state=s
        ),
    }


def run_privet(name, frame, schema, splits, eps_list) -> list[dict]:
    warnings.simplefilter("ignore")
    feats = list(schema.feature_names)
    y_all = np.asarray(schema.encode_target(frame[schema.target.name]), dtype=int)
    k = len(schema.classes)
    rows = []
    for method, make in privet_methods(schema).items():
        if PRIVET_ONLY and method not in PRIVET_ONLY:
            continue
        for eps in eps_list:
            for i, (tr, te) in enumerate(splits):
                row = {"dataset": name, "method": method, "epsilon": eps, "split": i}
                try:
                    model = make(eps, i)
                    t0, c0 = time.perf_counter(), time.process_time()
                    model.fit(frame.iloc[tr][feats], frame.iloc[tr][schema.target.name])
                    row["fit_s"] = time.perf_counter() - t0
                    row["fit_cpu_s"] = time.process_time() - c0
                    proba = np.asarray(model.predict_proba(frame.iloc[te][feats]))
                    full = np.zeros((len(te), k))
                    for j, c in enumerate(model.classes_):
                        full[:, schema.classes.index(c)] = proba[:, j]
                    row.update(metrics(y_all[te], full))
                    row["proven_epsilon"] = float(model.privacy_spent_.epsilon)
                    row["error"] = ""
                except Exception as exc:  # recorded, not hidden
                    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                rows.append(row)
            done = [r for r in rows if r["method"] == method and r["epsilon"] == eps]
            print(f"  {name} {method} eps={eps}: acc {np.nanmean([r.get('accuracy', np.nan) for r in done]):.3f} "
                  f"auc {np.nanmean([r.get('auc', np.nan) for r in done]):.3f} {done[-1]['error'][:80]}",
                  flush=True)  # fmt: skip
    return rows


def majority_rows(name, frame, schema, splits) -> list[dict]:
    y = np.asarray(schema.encode_target(frame[schema.target.name]), dtype=int)
    k = len(schema.classes)
    rows = []
    for i, (tr, te) in enumerate(splits):
        freq = np.bincount(y[tr], minlength=k) / len(tr)
        proba = np.tile(freq, (len(te), 1))  # the training prior: accuracy of its majority
        rows.append({"dataset": name, "method": "majority class", "epsilon": np.inf, "split": i,
                     **metrics(y[te], proba), "fit_s": 0.0, "fit_cpu_s": 0.0, "error": ""})  # fmt: skip
    return rows


# ----------------------------------------------------------------------------- peers
def run_peer(python, system, tmp, name, eps_list, label) -> list[dict]:
    cmd = [python, str(HERE / "peers" / "peer_worker.py"), tmp, name, system, "--eps"]
    cmd += [str(e) for e in eps_list] + ["--splits", *map(str, range(n_splits(name)))]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=7200)
    if out.returncode != 0 or not out.stdout.strip():
        return [{"dataset": name, "method": label, "error": f"worker failed: {out.stderr[-300:]}"}]
    rows = []
    for r in json.loads(out.stdout.strip().splitlines()[-1]):
        r = {k: v for k, v in r.items() if k not in ("system", "versions", "peak_mib", "predict_s")}
        r["method"] = label
        r["epsilon"] = float(r["epsilon"])
        rows.append(r)
    print(f"  {name} {label}: {len(rows)} rows", flush=True)
    return rows


# ----------------------------------------------------------------------------- report
def summarise(df: pd.DataFrame) -> pd.DataFrame:
    ok = df[df.error.fillna("") == ""]
    return (
        ok.groupby(["dataset", "method", "epsilon"], sort=False)
        .agg(
            accuracy=("accuracy", "mean"),
            acc_sd=("accuracy", "std"),
            auc=("auc", "mean"),
            auc_sd=("auc", "std"),
            log_loss=("log_loss", "mean"),
            fit_s=("fit_s", "mean"),
            fit_cpu_s=("fit_cpu_s", "mean"),
            runs=("accuracy", "size"),
        )
        .reset_index()
    )


def interval(values: np.ndarray, resampled: bool) -> tuple[float, float, float]:
    """``(mean, low, high)``: a 95% t-interval for the expected value of per-split figures.

    Random 80/20 splits share training rows, so their figures are correlated and the
    plain t-interval is too narrow; ``resampled`` applies Nadeau & Bengio's (2003)
    correction, variance ``(1/J + n_test/n_train) s^2`` in place of ``s^2 / J``. Adult's
    cells repeat one split (only the learners' randomness varies): plain t-interval.
    """
    from scipy import stats

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return (float(v.mean()) if len(v) else float("nan")), float("nan"), float("nan")
    factor = 1.0 / len(v) + (TEST_SIZE / (1.0 - TEST_SIZE) if resampled else 0.0)
    half = stats.t.ppf(0.975, len(v) - 1) * float(np.std(v, ddof=1)) * np.sqrt(factor)
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def _fmt(m: float, lo: float, hi: float) -> str:
    return f"{m:+.3f}" if not np.isfinite(lo) else f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def goals(
    df: pd.DataFrame, summary: pd.DataFrame, datasets: list[str], eps_list: list[float]
) -> tuple[list[str], dict]:
    s = summary.set_index(["dataset", "method", "epsilon"])
    ok = df[df.error.fillna("") == ""]

    def per_split(d, method, e, metric="accuracy"):
        rows = ok[(ok.dataset == d) & (ok.method == method) & (ok.epsilon == e)]
        return rows.set_index("split")[metric]

    lines = [
        "| dataset | ε | splits | DPGBT acc | majority | acc − maj [95%] | DP-EBM acc | acc − EBM [95%] | DPGBT AUC | DP-EBM AUC | AUC − EBM | CPU s DPGBT / EBM |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    misses = {"majority": [], "ebm_acc": [], "time": []}
    auc_diffs = []
    for d in datasets:
        maj = s.loc[(d, "majority class", np.inf)]
        maj_split = per_split(d, "majority class", np.inf)
        for e in eps_list:
            if (d, "privet DPGBT", e) not in s.index:
                continue
            g = s.loc[(d, "privet DPGBT", e)]
            g_split = per_split(d, "privet DPGBT", e)
            ebm = s.loc[(d, "DP-EBM", e)] if (d, "DP-EBM", e) in s.index else None
            diff = (g_split - maj_split.reindex(g_split.index)).to_numpy()
            gap, lo, hi = interval(diff, d != "adult")
            if gap < -0.005:
                sure = " (whole interval below)" if hi < -0.005 else ""
                misses["majority"].append(f"{d} ε={e:g} ({_fmt(gap, lo, hi)}{sure})")
            cells = [d, f"{e:g}", str(len(g_split)), f"{g.accuracy:.3f}", f"{maj.accuracy:.3f}",
                     _fmt(gap, lo, hi)]  # fmt: skip
            if ebm is not None:
                e_split = per_split(d, "DP-EBM", e)
                both = g_split.index.intersection(e_split.index)
                da, dlo, dhi = interval((g_split[both] - e_split[both]).to_numpy(), d != "adult")
                du = g.auc - ebm.auc
                auc_diffs.append(du)
                if da < -0.005:
                    sure = " (whole interval below)" if dhi < -0.005 else ""
                    misses["ebm_acc"].append(f"{d} ε={e:g} ({_fmt(da, dlo, dhi)}{sure})")
                ratio = g.fit_cpu_s / ebm.fit_cpu_s if ebm.fit_cpu_s > 0 else np.nan
                if ratio > 2:
                    misses["time"].append(f"{d} ε={e:g} ({ratio:.2f}x)")
                cells += [f"{ebm.accuracy:.3f}", _fmt(da, dlo, dhi), f"{g.auc:.3f}", f"{ebm.auc:.3f}",
                          f"{du:+.3f}", f"{g.fit_cpu_s:.2f} / {ebm.fit_cpu_s:.2f}"]  # fmt: skip
            else:
                cells += ["—", "—", f"{g.auc:.3f}", "—", "—", f"{g.fit_cpu_s:.2f} / —"]
            lines.append("| " + " | ".join(cells) + " |")
    misses["mean_auc_diff"] = float(np.mean(auc_diffs)) if auc_diffs else float("nan")
    return lines, misses


def markdown(df, summary, datasets, eps_list, meta) -> str:
    lines = [
        "# DPGradientBoostingClassifier on eight public datasets (issue 34)",
        "",
        "Command:",
        "",
        "```",
        meta["command"],
        "```",
        "",
        f"One run: {meta['wall_min']:.1f} min wall, {meta['cpu_min']:.1f} min CPU (this process and "
        f"its children), on a shared 2-core machine (load average {meta['load_start']} at the start, "
        f"{meta['load_end']} at the end), so wall times are inflated; compare CPU times. "
        f"{N_SPLITS} splits per cell (Adult: the UCI train/test split, {N_SPLITS} seeds; the others "
        f"stratified 80/20), {SMALL_SPLITS} on {', '.join(SMALL)} (the first {N_SPLITS} are the "
        f"{N_SPLITS}-split run's); delta = 1e-5 for the Gaussian learners. "
        "Intervals: 95% t-intervals over the splits of the paired per-split difference, with "
        "Nadeau & Bengio's correction for overlapping random splits (Adult: plain t, one split); "
        "a goal is missed where the mean misses it, and the interval says how sure that is. DP-EBM: "
        f"{meta['ebm']}. DPGBT runs at its defaults, chosen on other data (docs/dp_boosting.md), "
        "so no tuning cost applies.",
        "",
        meta.get("subset", ""),
        "",
        "## Goals (DPGBT at its defaults)",
        "",
    ]
    table, misses = goals(df, summary, datasets, eps_list)
    adult = summary[
        (summary.dataset == "adult") & (summary.method == "privet DPGBT") & (summary.epsilon == 0.1)
    ]
    lines += [
        f"- accuracy >= majority - 0.005: {'met everywhere' if not misses['majority'] else 'missed at ' + ', '.join(misses['majority'])}",
        f"- accuracy >= DP-EBM's - 0.005 (binary): {'met everywhere' if not misses['ebm_acc'] else 'missed at ' + ', '.join(misses['ebm_acc'])}",
        f"- mean AUC - DP-EBM's (binary cells) = {misses['mean_auc_diff']:+.4f} (goal >= +0.01)",
        f"- Adult at ε = 0.1: AUC {adult.auc.iloc[0]:.4f} (goal >= 0.89)" if len(adult) else "- Adult not run",
        f"- fit CPU time <= 2x DP-EBM's: {'met everywhere' if not misses['time'] else 'missed at ' + ', '.join(misses['time'])}",
        "",
        *table,
        "",
        "## Every method (mean ± sd over the splits)",
        "",
        "| dataset | method | ε | accuracy | ROC AUC | log loss | fit CPU s | fit wall s | runs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in summary.itertuples():
        eps = "—" if np.isinf(r.epsilon) else f"{r.epsilon:g}"
        sd = lambda v: "" if pd.isna(v) else f" ± {v:.3f}"  # noqa: E731
        lines.append(
            f"| {r.dataset} | {r.method} | {eps} | {r.accuracy:.3f}{sd(r.acc_sd)} | "
            f"{r.auc:.3f}{sd(r.auc_sd)} | {r.log_loss:.3f} | {r.fit_cpu_s:.2f} | {r.fit_s:.2f} | {r.runs} |"
        )
    errors = df[df.error.fillna("") != ""]
    if len(errors):
        lines += ["", "## Errors (cells left out of the means)", ""]
        lines += [f"- {r.dataset} {r.method} ε={r.epsilon}: {r.error}" for r in errors.itertuples()]
    return "\n".join(lines) + "\n"


def plot(summary: pd.DataFrame, datasets: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(datasets), figsize=(3 * len(datasets), 6), squeeze=False)
    for j, d in enumerate(datasets):
        sub = summary[summary.dataset == d]
        for i, metric in enumerate(("accuracy", "auc")):
            ax = axes[i, j]
            for method, grp in sub[np.isfinite(sub.epsilon)].groupby("method", sort=False):
                ax.plot(grp.epsilon, grp[metric], marker="o", ms=3, label=method)
            for r in sub[~np.isfinite(sub.epsilon)].itertuples():
                if metric == "accuracy" or r.method != "majority class":
                    ax.axhline(getattr(r, metric), ls="--", lw=1, color="grey")
            ax.set_xscale("log")
            ax.set_title(d if i == 0 else "", fontsize=9)
            ax.set_ylabel(metric if j == 0 else "")
            ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    global N_SPLITS, SMALL_SPLITS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ebm-python", default=None, help="python of a venv with interpret 0.7.8")
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--eps", type=float, nargs="+", default=EPS)
    ap.add_argument("--out", default="dpgbt_suite")
    ap.add_argument("--splits", type=int, default=N_SPLITS, help="splits (Adult: seeds) per cell")
    ap.add_argument(
        "--small-splits",
        type=int,
        default=SMALL_SPLITS,
        help=f"splits per cell on the small datasets ({', '.join(SMALL)})",
    )
    ap.add_argument(
        "--methods", nargs="+", default=None, help="privet methods to run (default: all four)"
    )
    args = ap.parse_args(argv)
    N_SPLITS, SMALL_SPLITS = args.splits, args.small_splits
    if args.methods is not None:
        PRIVET_ONLY[:] = args.methods
    load_start = " ".join(open("/proc/loadavg").read().split()[:3])
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            frame, schema, splits = load(name)
            print(f"{name}: {len(frame)} rows, {len(schema.classes)} classes", flush=True)
            X, y, meta = peer_matrix(frame, schema)
            np.savez(Path(tmp) / f"{name}.npz", X=X, y=y,
                     **{f"train_{i}": tr for i, (tr, _) in enumerate(splits)},
                     **{f"test_{i}": te for i, (_, te) in enumerate(splits)})  # fmt: skip
            (Path(tmp) / f"{name}.json").write_text(json.dumps(meta))
            rows += majority_rows(name, frame, schema, splits)
            rows += run_privet(name, frame, schema, splits, args.eps)
            rows += run_peer(sys.executable, "sk_hgb", tmp, name, [1.0], "HGB (non-private)")
            if args.ebm_python and len(schema.classes) == 2:
                rows += run_peer(args.ebm_python, "dpebm", tmp, name, args.eps, "DP-EBM")
    df = pd.DataFrame(rows)
    df.loc[df.method == "HGB (non-private)", "epsilon"] = np.inf
    summary = summarise(df)
    ru_self, ru_kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    cpu = ru_self.ru_utime + ru_self.ru_stime + ru_kids.ru_utime + ru_kids.ru_stime
    ebm = "not run (no --ebm-python)"
    if args.ebm_python:
        ver = subprocess.run([args.ebm_python, "-c", "import interpret; print(interpret.__version__)"],
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
        ebm = f"interpret {ver}, DPExplainableBoostingClassifier with the schema's bounds, binary targets only"
    cmd = "flock /tmp/privet-heavy.lock python benchmarks/dpgbt_suite.py" + (
        f" --ebm-python {args.ebm_python}" if args.ebm_python else ""
    )
    if args.datasets != DATASETS:
        cmd += " --datasets " + " ".join(args.datasets)
    if args.eps != EPS:
        cmd += " --eps " + " ".join(f"{e:g}" for e in args.eps)
    if args.splits != 3:
        cmd += f" --splits {args.splits}"
    if args.small_splits != 10:
        cmd += f" --small-splits {args.small_splits}"
    if args.methods is not None:
        cmd += " --methods " + " ".join(f"'{m}'" for m in args.methods)
    meta = {"command": cmd, "wall_min": (time.perf_counter() - t0) / 60, "cpu_min": cpu / 60,
            "load_start": load_start, "load_end": " ".join(open("/proc/loadavg").read().split()[:3]),
            "ebm": ebm}  # fmt: skip
    if (
        args.methods is not None
        or args.splits != 3
        or args.small_splits != 10
        or args.datasets != DATASETS
        or args.eps != EPS
    ):
        meta["subset"] = (
            "**A subset of the full suite** (the command above; the full run is the command "
            "without options): privet methods run: "
            + ", ".join(args.methods or list(privet_methods(None)))
            + f"; {N_SPLITS} splits ({SMALL_SPLITS} on {', '.join(SMALL)}); datasets: {', '.join(args.datasets)}; "
            + f"epsilon: {', '.join(f'{e:g}' for e in args.eps)}."
        )
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    (RESULTS / f"{args.out}.md").write_text(markdown(df, summary, args.datasets, args.eps, meta))
    plot(summary, args.datasets, RESULTS / f"{args.out}.png")
    print((RESULTS / f"{args.out}.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
