"""Seed 003 (Gubler): federated DP CART, reproduced with privet's FederatedDPTreeClassifier.

Three experiments, each bounded and single-process (the machine is shared):

``sim``   Sec. 4 / Figs. 3-5: Gaussian-mixture data (5 components per class,
          covariance rho^|i-j|, means +-(i/5)), n in {100, 250, 1000},
          p in {10, 25, 50}, max_depth in {5, 10}, rho in {0.3, 0.9}, K = 5,
          min_samples_leaf = num_bins = 10, leaf_prop 0.5, bounds_prop 0.25,
          eps from 0.1 to 10: plain (Alg. 5) vs budget-saving (Alg. 6) vs a
          local tree (one party's data) vs a centralised tree (scikit-learn
          CART, Gini, same depth and min_samples_leaf). Reference path
          (vectorised numpy), called through the same control flow the
          estimator uses, without a ledger (the accounting is tested in
          tests/learners/federated_cart). Public bounds: the paper's code bins
          between the data's min and max, which is not private; privet clips every
          feature to the public range [-4, 4] (each owner clips its own rows) and
          bins that range.
``real``  Adult (UCI train/test), Heart and Titanic dealt to K = 5 owners,
          eps in {0.1, 0.5, 1, 2, 5}, next to the majority-class rate and
          DPID3Classifier at the same eps.
``noise`` The budget-saving tree with the sound integer noise shares (default)
          and with the paper's float shares, same splits, side by side.
``cost``  Protocol cost with real party processes: wall time and bytes per
          party for K in {3, 5, 10, 20} on Adult, depth 5.

Usage: python benchmarks/seed003_federated_cart.py sim --reps 10 --budget 1500
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RESULTS = Path(__file__).parent / "results"
EPS_SIM = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
BOUND = 4.0


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (wall time is inflated on a shared machine)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:  # pragma: no cover
        return "?"


# ---------------------------------------------------------------- Sec. 4 data
def mixture(n: int, p: int, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sec. 4.1.1: n/2 rows per class, 5 equal-weight components, Sigma_ij = rho^|i-j|."""
    idx = np.arange(p)
    cov = rho ** np.abs(idx[:, None] - idx[None, :])
    L = np.linalg.cholesky(cov)
    half = n // 2
    comp = rng.integers(1, 6, size=2 * half)
    sign = np.repeat([1.0, -1.0], half)  # class 0: +i/5, class 1: -i/5
    X = (sign * comp / 5.0)[:, None] + rng.standard_normal((2 * half, p)) @ L.T
    y = np.repeat([0, 1], half)
    perm = rng.permutation(2 * half)
    return X[perm], y[perm]


def binned(X: np.ndarray, bins: int = 10) -> np.ndarray:
    Xc = np.clip(X, -BOUND, BOUND)
    return np.clip(np.floor((Xc + BOUND) / (2 * BOUND) * bins), 0, bins - 1).astype(np.int64)


def sim(args: argparse.Namespace) -> None:
    from sklearn.tree import DecisionTreeClassifier

    from privet.learners.federated_cart.grower import CartParams, PartyRows, grow
    from privet.learners.federated_cart.reference import ReferenceOps

    K = 5
    grid = [(n, p, d, rho) for n in args.n for rho in args.rho for p in args.p for d in (5, 10)]
    rows = []
    start, cpu0 = time.time(), _cpu_seconds()
    load0 = _loadavg()
    reps_done = args.rep_start
    for rep in range(args.rep_start, args.rep_start + args.reps):
        if time.time() - start > args.budget:
            break
        for n, p, d, rho in grid:
            rng = np.random.default_rng([args.seed, rep, n, p, d, int(rho * 10)])
            X, y = mixture(n, p, rho, rng)
            Xt, yt = mixture(n, p, rho, rng)
            Z, Zt = binned(X), binned(Xt)
            parts = np.array_split(np.arange(len(y)), K)  # X is shuffled: random owners
            data = PartyRows([Z[g] for g in parts], [y[g] for g in parts])
            common = {"n": n, "p": p, "max_depth": d, "rho": rho, "rep": rep}
            for name, Xfit, yfit in (("local", X[parts[0]], y[parts[0]]), ("central", X, y)):
                clf = DecisionTreeClassifier(max_depth=d, min_samples_leaf=10, random_state=rep)
                acc = float((clf.fit(Xfit, yfit).predict(Xt) == yt).mean())
                for eps in EPS_SIM:
                    rows.append({**common, "method": name, "epsilon": eps, "accuracy": acc})
            variants = [("plain", False, "sound"), ("budget_saving", True, "sound")]
            if args.paper_bounds:
                variants = [("budget_saving_paper_bounds", True, "paper")]
            for eps in EPS_SIM:
                for label, saving, accounting in variants:
                    params = CartParams(
                        parties=K,
                        n_classes=2,
                        n_bins=(10,) * p,
                        epsilon=eps,
                        max_depth=d,
                        min_samples_leaf=10,
                        leaf_prop=0.5,
                        budget_saving=saving,
                        bounds_prop=0.25,
                        bounds_accounting=accounting,
                    )
                    # the sum of the K shares drawn at once, all of a node's histograms in
                    # one request: the same distribution as the estimator's reference path
                    # (tests/learners/federated_cart/test_reference.py), ~10x less CPU
                    tree = grow(params, data, ReferenceOps(K, aggregate=True), prefetch=True)
                    acc = float((tree.leaf_values(Zt).argmax(axis=1) == yt).mean())
                    rows.append(
                        {
                            **common,
                            "method": label,
                            "epsilon": eps,
                            "accuracy": acc,
                        }
                    )
        reps_done = rep + 1  # an index: the count is fixed below
        print(f"rep {rep} done at {time.time() - start:.0f}s", flush=True)
    df = pd.DataFrame(rows)
    df = df[df["rep"] < reps_done]
    reps_done -= args.rep_start
    RESULTS.mkdir(exist_ok=True)
    tag = "_".join(str(n) for n in args.n) + ("_paper_bounds" if args.paper_bounds else "")
    if args.rep_start:
        tag += f"_from{args.rep_start}"
    df.to_csv(RESULTS / f"seed003_sim_n{tag}.csv", index=False)
    meta = (
        f"n={tag}: {reps_done} repetitions per point (paper: 50), {time.time() - start:.0f} s "
        f"wall / {_cpu_seconds() - cpu0:.0f} s CPU, "
        f"load average {load0} at start / {_loadavg()} at end on a 2-core machine shared "
        "with other agents"
    )
    (RESULTS / f"seed003_sim_n{tag}_meta.txt").write_text(meta + "\n")
    print(meta)


def sim_report() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = sorted(RESULTS.glob("seed003_sim_n*.csv"))
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    meta = "; ".join(f.read_text().strip() for f in sorted(RESULTS.glob("seed003_sim_n*_meta.txt")))
    mean = df.groupby(["n", "rho", "p", "max_depth", "method", "epsilon"])["accuracy"].mean()
    sd = df.groupby(["n", "rho", "p", "max_depth", "method", "epsilon"])["accuracy"].std()
    reps_of = df.groupby("n")["rep"].nunique()
    colors = {
        "plain": "tab:blue",
        "budget_saving": "tab:orange",
        "local": "tab:green",
        "central": "tab:red",
        "budget_saving_paper_bounds": "tab:purple",
    }
    fig_of = {250: "fig3", 1000: "fig4", 100: "fig5"}
    table = []
    for n in sorted(df["n"].unique()):
        fig, axes = plt.subplots(4, 3, figsize=(13, 14), sharex=True)
        for r, (rho, d) in enumerate([(0.9, 5), (0.9, 10), (0.3, 5), (0.3, 10)]):
            for c, p in enumerate((10, 25, 50)):
                ax = axes[r, c]
                for m in (
                    "plain",
                    "budget_saving",
                    "budget_saving_paper_bounds",
                    "local",
                    "central",
                ):
                    try:
                        s = mean.loc[(n, rho, p, d, m)]
                        e = sd.loc[(n, rho, p, d, m)] / np.sqrt(reps_of[n])
                    except KeyError:
                        continue
                    ax.plot(s.index, s.values, label=m, color=colors[m])
                    ax.fill_between(
                        s.index, s - 1.96 * e, s + 1.96 * e, color=colors[m], alpha=0.15
                    )
                ax.set_xscale("log")
                ax.set_title(f"rho={rho}, p={p}, max_depth={d}", fontsize=9)
                if r == 3:
                    ax.set_xlabel("epsilon")
                if c == 0:
                    ax.set_ylabel("test accuracy")
                # crossing: smallest eps from which budget-saving stays above local
                try:
                    bs = mean.loc[(n, rho, p, d, "budget_saving")]
                    loc = float(mean.loc[(n, rho, p, d, "local")].iloc[0])
                except KeyError:
                    continue
                above = bs.values > loc
                cross = None
                for i in range(len(above)):
                    if above[i:].all():
                        cross = float(bs.index[i])
                        break
                gain = float((bs - mean.loc[(n, rho, p, d, "plain")]).mean())
                # paired by repetition (same data): budget saving - local, 95% interval
                cell = df[(df.n == n) & (df.rho == rho) & (df.p == p) & (df.max_depth == d)]
                wide = cell.pivot_table(
                    index=["rep", "epsilon"], columns="method", values="accuracy"
                )
                diff = (wide["budget_saving"] - wide["local"]).groupby(level="epsilon")
                low = diff.mean() - 1.96 * diff.std() / np.sqrt(diff.count())
                sure = None
                for i in range(len(low)):
                    if (low.values[i:] > 0).all():
                        sure = float(low.index[i])
                        break
                d10 = diff.get_group(max(EPS_SIM))
                half = 1.96 * d10.std() / np.sqrt(d10.count())
                table.append(
                    {
                        "diff_local@10": float(d10.mean()),
                        "diff_local@10_half": float(half),
                        "crossing_eps_95": sure,
                        "n": int(n),
                        "rho": rho,
                        "p": int(p),
                        "max_depth": int(d),
                        "saving_minus_plain": gain,
                        "local": loc,
                        "budget_saving@10": float(bs.iloc[-1]),
                        "plain@10": float(mean.loc[(n, rho, p, d, "plain")].iloc[-1]),
                        "crossing_eps": cross,
                    }
                )
        axes[0, 0].legend(fontsize=8)
        fig.suptitle(
            f"seed 003 Sec. 4, n={n}, K=5, mean of {reps_of[n]} runs (95% CI band); "
            f"paper: {fig_of.get(int(n), '')}"
        )
        fig.tight_layout()
        fig.savefig(RESULTS / f"seed003_{fig_of.get(int(n), n)}_n{n}.png", dpi=90)
        plt.close(fig)
    t = pd.DataFrame(table)
    t.to_csv(RESULTS / "seed003_crossing.csv", index=False)
    lines = [
        "# Seed 003: where the budget-saving tree overtakes the local tree",
        "",
        "Noise: the law of the default integer shares (the K shares' sum is a discrete "
        "Laplace), drawn with privet's exact vectorised sampler "
        "(`ReferenceOps(aggregate=True)`). Repetitions per n: "
        + ", ".join(f"n={k}: {v}" for k, v in reps_of.items())
        + " (paper: 50).",
        "",
        meta + ".",
        "",
        "crossing_eps: the smallest epsilon of the grid "
        f"{EPS_SIM} from which the mean accuracy of the budget-saving tree stays above "
        "the local tree's (none: never within the grid). Paper (Sec. 4.2): \"after a "
        'certain privacy budget (usually between 0 and 2)"; for n = 100 "between 2 '
        'and 5"; with 50 features sometimes later or never.',
        "",
        "saving - plain: mean over the epsilon grid of the budget-saving tree's accuracy "
        "minus the plain tree's (paper: budget saving \"consistently yields higher "
        'accuracies", more so with more features and depth).',
        "",
        "budget-saving - local @10: the mean paired difference at epsilon 10 (same data, "
        "same repetition) with its 95% interval. crossing eps (95%): the smallest epsilon "
        "of the grid from which the lower end of that interval stays above 0 (none: never).",
        "",
        "| n | rho | p | max_depth | local acc | plain acc @10 | budget-saving acc @10 | saving - plain | crossing eps | budget-saving - local @10 | crossing eps (95%) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in t.iterrows():
        cross = "none" if pd.isna(r["crossing_eps"]) else f"{r['crossing_eps']:g}"
        sure = "none" if pd.isna(r["crossing_eps_95"]) else f"{r['crossing_eps_95']:g}"
        lines.append(
            f"| {int(r['n'])} | {r['rho']} | {int(r['p'])} | {int(r['max_depth'])} | {r['local']:.3f} | "
            f"{r['plain@10']:.3f} | {r['budget_saving@10']:.3f} | "
            f"{r['saving_minus_plain']:+.3f} | {cross} | "
            f"{r['diff_local@10']:+.3f} ± {r['diff_local@10_half']:.3f} | {sure} |"
        )
    share = t["crossing_eps"].le(2.0).mean()
    share95 = t["crossing_eps_95"].le(2.0).mean()
    ever95 = t["crossing_eps_95"].notna().mean()
    pos = (t["saving_minus_plain"] > 0).mean()
    by_p = t.groupby("p")["saving_minus_plain"].mean()
    lines += [
        "",
        f"Share of settings with crossing eps <= 2: {share:.0%} (at 95%: {share95:.0%}; "
        f"crossing at 95% anywhere in the grid: {ever95:.0%}). Share where budget saving "
        f"beats plain on average: {pos:.0%}; mean gain by p: "
        + ", ".join(f"p={k}: {v:+.3f}" for k, v in by_p.items())
        + ".",
    ]
    (RESULTS / "seed003_sim.md").write_text("\n".join(lines) + "\n")
    df.groupby(["n", "rho", "p", "max_depth", "method", "epsilon"])["accuracy"].agg(
        ["mean", "std", "count"]
    ).reset_index().to_csv(RESULTS / "seed003_sim_summary.csv", index=False)
    print("\n".join(lines))


# ---------------------------------------------------------------- real data
def real_splits(names: tuple[str, ...], reps: int, adult_reps: int):  # type: ignore[no-untyped-def]
    """(name, rep, data, X_train, y_train, X_test, y_test): Adult on its UCI train/test
    split (``adult_reps`` runs), the others on random 70/30 splits seeded by ``rep``."""
    from privet.data import load_dataset

    for name in names:
        data = load_dataset(name)
        test = load_dataset("adult_test") if name == "adult" else None
        for rep in range(adult_reps if name == "adult" else reps):
            if test is not None:
                yield name, rep, data, data.X, data.y, test.X, test.y
                continue
            perm = np.random.default_rng([7, rep]).permutation(data.n_rows)
            tr, te = perm[: int(0.7 * data.n_rows)], perm[int(0.7 * data.n_rows) :]
            yield (
                name,
                rep,
                data,
                data.X.iloc[tr],
                data.y.iloc[tr],
                data.X.iloc[te],
                data.y.iloc[te],
            )


def scored(clf: Any, X_test: Any, y_test: Any, **fields: Any) -> dict[str, Any]:
    """One result row: ``fields`` and the test accuracy of the fitted ``clf``."""
    return {**fields, "accuracy": float((clf.predict(X_test) == y_test.to_numpy()).mean())}


def saved(rows: list[dict[str, Any]], name: str) -> pd.DataFrame:
    """The rows as a frame, written to ``benchmarks/results/<name>``."""
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / name, index=False)
    return df


def real(args: argparse.Namespace) -> None:
    import json

    from privet.learners import DPID3Classifier, FederatedDPTreeClassifier

    eps_grid = [0.1, 0.5, 1.0, 2.0, 5.0]
    tuned_file = RESULTS / TUNED_FILE
    tuned = json.loads(tuned_file.read_text()) if tuned_file.exists() else None
    methods = ["budget_saving", "plain", "dp_id3"] + (["tuned"] if tuned else [])
    rows = []
    start, cpu0, load0 = time.time(), _cpu_seconds(), _loadavg()
    names = tuple(args.datasets)  # default: the slowest (Adult) last, so a cut-short run
    # keeps the others
    for name, rep, data, Xtr, ytr, Xte, yte in real_splits(
        names, args.reps, max(1, args.reps // 2)
    ):
        majority = float(yte.value_counts(normalize=True).max())
        for eps in eps_grid:
            for method in methods:
                if method == "dp_id3":
                    clf = DPID3Classifier(epsilon=eps, max_depth=5, schema=data.schema)
                    clf.fit(Xtr, ytr)
                else:
                    settings = (
                        tuned
                        if method == "tuned"
                        else {"max_depth": 5, "budget_saving": method == "budget_saving"}
                    )
                    clf = FederatedDPTreeClassifier(
                        epsilon=eps, schema=data.schema, n_parties=5, random_state=rep,
                        **settings,
                    ).fit(Xtr, ytr)  # fmt: skip
                rows.append(
                    scored(clf, Xte, yte, dataset=name, rep=rep, epsilon=eps, method=method)
                    | {"majority": majority, "spent": clf.privacy_spent_.epsilon}
                )
        print(name, rep, f"{time.time() - start:.0f}s", flush=True)
        saved(rows, "seed003_real.csv")  # after every repetition, so a cut-short run is kept
    run_note = (
        f"{time.time() - start:.0f} s wall / {_cpu_seconds() - cpu0:.0f} s CPU, load "
        f"average {load0} at start / {_loadavg()} at end (2 shared cores)."
    )
    real_report(args.reps, tuned, run_note)


def real_report(reps: int, tuned: dict[str, Any] | None, run_note: str) -> None:
    """``seed003_real.md`` from ``seed003_real.csv`` (also from a run that was cut short)."""
    df = pd.read_csv(RESULTS / "seed003_real.csv")
    g = df.groupby(["dataset", "method", "epsilon"])["accuracy"]
    mean = g.mean().unstack("method")
    se = (g.std() / np.sqrt(g.count())).unstack("method")
    maj = df.groupby("dataset")["majority"].mean()
    nrep = df.groupby("dataset")["rep"].nunique()
    cols = [m for m in ("plain", "budget_saving", "tuned", "dp_id3") if m in mean.columns]
    head = {
        "plain": "federated plain (paper's settings)",
        "budget_saving": "federated budget-saving (paper's settings)",
        "tuned": "federated, settings chosen on other data",
        "dp_id3": "DPID3",
    }
    lines = [
        "# Seed 003 on real data: K = 5 owners, num_bins 10, min_samples_leaf 10",
        "",
        f"Command: `python benchmarks/seed003_federated_cart.py real --reps {reps}`. "
        "Mean test accuracy (standard error); repetitions: "
        + ", ".join(f"{k} {int(v)}" for k, v in nrep.items())
        + " (Adult: the UCI train/test split, repetitions redraw the noise and the deal; "
        "Heart, Titanic: random 70/30 splits). Paper's settings: max_depth 5, leaf_prop 0.5, "
        "bounds_prop 0.25, one-hot categories. "
        + (
            f"Chosen on other data (`seed003_tuning.md`, eight UCI datasets, never these "
            f"three): {tuned}. "
            if tuned
            else ""
        )
        + "DPID3Classifier (seed 000's central DP ID3, depth 5) at the same epsilon on the "
        "pooled data. The paper has no real-data experiment. All noise: the default integer "
        f"shares. {run_note}",
        "",
        "| dataset | eps | majority | " + " | ".join(head[c] for c in cols) + " |",
        "|---|---:|---:|" + "---:|" * len(cols),
    ]
    for (ds, eps), r in mean.iterrows():
        cells = [f"{r[c]:.3f} ({se.loc[(ds, eps), c]:.3f})" for c in cols]
        lines.append(f"| {ds} | {eps:g} | {maj[ds]:.3f} | " + " | ".join(cells) + " |")
    paired = df[df["epsilon"] == 1.0].pivot_table(
        index=["dataset", "rep"], columns="method", values="accuracy"
    )
    lines += [
        "",
        "## Epsilon 1: the federated tree against DPID3 (goal: within 0.02)",
        "",
        "Paired by repetition (same split and epsilon); mean difference federated - DPID3 "
        "with a 95% interval (normal approximation).",
        "",
        "| dataset | " + " | ".join(f"{head[c]} - DPID3" for c in cols if c != "dp_id3") + " |",
        "|---|" + "---:|" * (len(cols) - 1),
    ]
    for ds, sub in paired.groupby(level="dataset"):
        cells = []
        for c in cols:
            if c == "dp_id3":
                continue
            d = sub[c] - sub["dp_id3"]
            half = 1.96 * d.std() / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            cells.append(f"{d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]")
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    (RESULTS / "seed003_real.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- tuning (no peeking)
TUNING_DATASETS = (
    "car", "nursery", "mushroom", "balance_scale", "spect", "krkpa7", "tic_tac_toe",
    "house_votes",
)  # fmt: skip
TUNING_GRID = {
    "categorical": ["onehot", "ordinal"],
    "max_depth": [4, 5],
    "leaf_prop": [0.2, 0.35, 0.5],
}
TUNED_FILE = "seed003_tuned.json"


def tune(args: argparse.Namespace) -> None:
    """Choose the federated tree's settings at eps = 1 on datasets the real-data table does
    not report (the UCI sets above, random 70/30 splits), never on Adult, Heart or Titanic."""
    import itertools
    import json

    from privet.data import load_dataset
    from privet.learners import DPID3Classifier, FederatedDPTreeClassifier

    rows = []
    start, cpu0, load0 = time.time(), _cpu_seconds(), _loadavg()
    grid = [
        dict(zip(TUNING_GRID, v, strict=True)) for v in itertools.product(*TUNING_GRID.values())
    ]
    for name in TUNING_DATASETS:
        data = load_dataset(name)
        for rep in range(args.reps):
            perm = np.random.default_rng([11, rep]).permutation(data.n_rows)
            tr, te = perm[: int(0.7 * data.n_rows)], perm[int(0.7 * data.n_rows) :]
            Xtr, ytr, Xte, yte = data.X.iloc[tr], data.y.iloc[tr], data.X.iloc[te], data.y.iloc[te]
            ref = DPID3Classifier(epsilon=args.epsilon, max_depth=5, schema=data.schema)
            rows.append(
                scored(ref.fit(Xtr, ytr), Xte, yte, dataset=name, rep=rep, setting="dp_id3")
            )
            for g in grid:
                clf = FederatedDPTreeClassifier(
                    epsilon=args.epsilon, schema=data.schema, n_parties=5, **g
                ).fit(Xtr, ytr)
                rows.append(scored(clf, Xte, yte, dataset=name, rep=rep, setting=json.dumps(g)))
        print(name, f"{time.time() - start:.0f}s", flush=True)
    df = saved(rows, "seed003_tuning.csv")
    mean = df.groupby(["setting", "dataset"])["accuracy"].mean().unstack("dataset")
    score = mean.drop(index="dp_id3").mean(axis=1).sort_values(ascending=False)
    best = json.loads(score.index[0])
    (RESULTS / TUNED_FILE).write_text(json.dumps(best) + "\n")
    lines = [
        "# Seed 003: settings of the federated tree chosen on other data (no peeking)",
        "",
        f"Command: `python benchmarks/seed003_federated_cart.py tune --reps {args.reps}`. "
        f"Budget-saving tree, K = 5, epsilon = {args.epsilon}, bounds_prop 0.25, num_bins 10, "
        "min_samples_leaf 10 (the paper's); grid: "
        + ", ".join(f"{k} in {v}" for k, v in TUNING_GRID.items())
        + f". Datasets: {', '.join(TUNING_DATASETS)} (none of them in the real-data table), "
        f"{args.reps} random 70/30 splits each. Chosen: the highest mean test accuracy over "
        f"the datasets. {time.time() - start:.0f} s wall / {_cpu_seconds() - cpu0:.0f} s CPU, "
        f"load average {load0} at start / {_loadavg()} at end.",
        "",
        f"**Chosen: {best}** (written to `benchmarks/results/{TUNED_FILE}`, read by `real`).",
        "",
        "| setting | mean | " + " | ".join(mean.columns) + " |",
        "|---|---:|" + "---:|" * len(mean.columns),
    ]
    for setting in ["dp_id3", *score.index]:
        m = mean.loc[setting]
        avg = m.mean()
        lines.append(
            f"| {setting} | {avg:.3f} | " + " | ".join(f"{v:.3f}" for v in m.values) + " |"
        )
    (RESULTS / "seed003_tuning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- protocol cost
def cost(args: argparse.Namespace) -> None:
    from privet.data import load_dataset
    from privet.learners import FederatedDPTreeClassifier

    data = load_dataset("adult")
    rows = []
    for K in args.parties:
        for saving in (False, True):
            load0 = _loadavg()
            t = time.time()
            clf = FederatedDPTreeClassifier(
                epsilon=1.0,
                max_depth=5,
                schema=data.schema,
                n_parties=K,
                budget_saving=saving,
                backend="protocol",
                random_state=0,
                protocol_timeout=300,
            ).fit(data.X, data.y)
            wall = time.time() - t
            st = clf.protocol_stats_.parties
            rows.append(
                {
                    "parties": K,
                    "budget_saving": saving,
                    "fit_wall_s": wall,
                    "program_s_max": max(p.seconds for p in st),
                    "sums": len(clf.releases_),
                    "bytes_sent_aggregator": st[0].bytes_sent,
                    "bytes_received_aggregator": st[0].bytes_received,
                    "bytes_sent_owner_mean": float(np.mean([p.bytes_sent for p in st[1:]])),
                    "bytes_received_owner_mean": float(np.mean([p.bytes_received for p in st[1:]])),
                    "loadavg": load0,
                }
            )
            print(rows[-1], flush=True)
            RESULTS.mkdir(exist_ok=True)
            pd.DataFrame(rows).to_csv(RESULTS / "seed003_cost.csv", index=False)
    cost_report()


def cost_report() -> None:
    df = pd.read_csv(RESULTS / "seed003_cost.csv")
    lines = [
        "# Seed 003 protocol cost: Adult (32,561 rows, 47 tree features), depth 5, eps 1",
        "",
        "Real party processes on one host (privet.mpc launcher, MPyC TCP channels), one "
        "run per point; fit wall time includes starting the K processes. Bytes are MPyC "
        "message bytes per party. The machine has 2 cores shared with other agents "
        "(load average at the start of each run in the last column).",
        "",
        "| K | Alg. | sums | fit wall (s) | party program (s, max) | aggregator sent / received (kB) | owner sent / received (kB, mean) | load |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in df.iterrows():
        alg = "6 (saving)" if r["budget_saving"] else "5 (plain)"
        lines.append(
            f"| {r['parties']} | {alg} | {r['sums']} | {r['fit_wall_s']:.1f} | "
            f"{r['program_s_max']:.1f} | {r['bytes_sent_aggregator'] / 1e3:.0f} / "
            f"{r['bytes_received_aggregator'] / 1e3:.0f} | {r['bytes_sent_owner_mean'] / 1e3:.0f} / "
            f"{r['bytes_received_owner_mean'] / 1e3:.0f} | {r['loadavg']} |"
        )
    (RESULTS / "seed003_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- collusion
def collusion(args: argparse.Namespace) -> None:
    from privet.data import load_dataset
    from privet.learners import FederatedDPTreeClassifier
    from privet.learners.federated_cart import collusion_table

    K, delta = 5, 1e-6
    floats = collusion_table(K, scale=1.0, delta=delta)
    ints = collusion_table(K, scale=1.0, discrete=True)
    data = load_dataset("heart")
    t, cpu0 = time.time(), _cpu_seconds()
    clf = FederatedDPTreeClassifier(
        epsilon=1.0, max_depth=3, schema=data.schema, n_parties=K, random_state=0
    ).fit(data.X, data.y)
    tree = clf.collusion_report(delta=delta)
    lines = [
        f"# Seed 003: what t colluding owners of K = {K} still face",
        "",
        "Command: `python benchmarks/seed003_federated_cart.py collusion`. One gamma DLPA sum "
        "at outsider epsilon = sensitivity/scale = 1, with the paper's float Gamma shares "
        "(its ideal continuous analysis: privet.mechanisms.collusion_guarantee; delta = "
        f"{delta:g} where no pure epsilon exists) and with privet's default integer Polya "
        "shares (privet.mechanisms.polya); and a whole tree fitted with the default integer "
        "shares (Heart, K = 5, epsilon = 1, max_depth 3, budget saving), replayed into a "
        "ledger whose entries carry the colluders' guarantee. The paper does not analyse "
        "collusion. The whole-tree column has no float counterpart: privet proves nothing "
        "for float shares (their releases are charged NonPrivate). "
        f"({time.time() - t:.0f} s wall / {_cpu_seconds() - cpu0:.0f} s CPU)",
        "",
        "| colluders t | one sum, float shares: pure eps | one sum, float shares: (eps, delta) "
        "| one sum, integer shares (default): pure eps | whole tree, integer shares: eps |",
        "|---:|---:|---:|---:|---:|",
    ]
    for a, c, b in zip(floats, ints, tree, strict=True):
        lines.append(
            f"| {a['colluders']} | {a['pure_epsilon']:.3g} | ({a['epsilon']:.3g}, {a['delta']:g}) "
            f"| {c['pure_epsilon']:.3g} | {b['epsilon']:.3g}"
            + ("" if b["delta"] == 0 else f" (delta {b['delta']:.2g})")
            + " |"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "seed003_collusion.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- integer vs float noise
def noise(args: argparse.Namespace) -> None:
    """The sound integer shares (default) against the paper's float shares, side by side:
    accuracy and fit time of the budget-saving tree on the same splits."""
    from privet.learners import FederatedDPTreeClassifier
    from privet.ledger import Guarantee, Ledger

    eps_grid = [0.1, 0.5, 1.0, 2.0, 5.0]
    rows = []
    start, load0 = time.time(), _loadavg()
    names = ("heart", "titanic", "adult")
    for name, rep, data, Xtr, ytr, Xte, yte in real_splits(
        names, args.reps, max(1, args.reps // 5)
    ):
        for eps in eps_grid:
            for kind in ("discrete", "paper"):
                ledger = Ledger(budget=Guarantee.unbounded()) if kind == "paper" else None
                t0 = time.perf_counter()
                clf = FederatedDPTreeClassifier(
                    epsilon=eps, max_depth=5, schema=data.schema, noise=kind, ledger=ledger
                ).fit(Xtr, ytr)
                seconds = time.perf_counter() - t0
                rows.append(
                    scored(clf, Xte, yte, dataset=name, rep=rep, epsilon=eps, noise=kind)
                    | {"fit_seconds": seconds, "proven_epsilon": clf.privacy_spent_.epsilon}
                )
        print(name, rep, f"{time.time() - start:.0f}s", flush=True)
    df = saved(rows, "seed003_noise.csv")
    acc = df.groupby(["dataset", "epsilon", "noise"])["accuracy"].mean().unstack("noise")
    sec = df.groupby(["dataset", "noise"])["fit_seconds"].median().unstack("noise")
    nrep = df.groupby("dataset")["rep"].nunique()
    lines = [
        "# Seed 003: the sound integer noise shares against the paper's float shares",
        "",
        "Budget-saving federated tree, K = 5 owners, max_depth 5, num_bins 10; the same "
        "splits for both noises (Adult: UCI train/test; Heart, Titanic: random 70/30). "
        "Repetitions: "
        + ", ".join(f"{k} {int(v)}" for k, v in nrep.items())
        + ". `discrete` (default): integer Polya shares, the sum a discrete Laplace, bounds "
        "on a 1/16 grid, epsilon proven. `paper`: float Gamma shares, no proven guarantee "
        "(charged NonPrivate, the ideal epsilon recorded as the paper's claim). "
        f"{time.time() - start:.0f} s, load average {load0} at start / {_loadavg()} at end "
        "(2 cores shared with other agents).",
        "",
        "| dataset | eps | accuracy, discrete (proven) | accuracy, paper's floats (claimed) |",
        "|---|---:|---:|---:|",
    ]
    paired = df.pivot_table(
        index=["dataset", "epsilon", "rep"], columns="noise", values="accuracy"
    ).reset_index()
    paired["d"] = paired["discrete"] - paired["paper"]
    diff = paired.groupby(["dataset", "epsilon"])["d"].agg(["mean", "std", "count"])
    lines[-2] += " discrete - paper: mean (standard error) |"
    lines[-1] += "---:|"
    for (ds, eps), r in acc.iterrows():
        d = diff.loc[(ds, eps)]
        se = d["std"] / np.sqrt(d["count"]) if d["count"] > 1 else float("nan")
        lines.append(
            f"| {ds} | {eps:g} | {r['discrete']:.3f} | {r['paper']:.3f} | "
            f"{d['mean']:+.3f} ({se:.3f}) |"
        )
    lines += ["", f"Mean paired difference over all cells: {paired['d'].mean():+.4f}."]
    lines += ["", "Median fit time (s, reference path, all epsilons):", ""]
    lines += ["| dataset | discrete | paper's floats |", "|---|---:|---:|"]
    for ds, r in sec.iterrows():
        lines.append(f"| {ds} | {r['discrete']:.2f} | {r['paper']:.2f} |")
    (RESULTS / "seed003_noise.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sim")
    s.add_argument("--reps", type=int, default=50)
    s.add_argument("--budget", type=float, default=1800.0, help="seconds; stop after a rep")
    s.add_argument("--seed", type=int, default=3)
    s.add_argument("--rep-start", type=int, default=0, help="first repetition index")
    s.add_argument("--n", type=int, nargs="+", default=[250, 100, 1000])
    s.add_argument("--p", type=int, nargs="+", default=[10, 25, 50])
    s.add_argument("--rho", type=float, nargs="+", default=[0.9, 0.3])
    s.add_argument(
        "--paper-bounds",
        action="store_true",
        help="only the budget-saving tree with the paper's per-feature bound noise",
    )
    sub.add_parser("sim-report")
    r = sub.add_parser("real")
    r.add_argument("--reps", type=int, default=5)
    r.add_argument("--datasets", nargs="+", default=["heart", "titanic", "adult"])
    rr = sub.add_parser("real-report", help="the table from a (possibly cut-short) real run")
    rr.add_argument("--reps", type=int, default=5, help="the --reps the run was started with")
    rr.add_argument("--note", default="", help="what to say about the run (time, if cut short)")
    sub.add_parser("collusion")
    tu = sub.add_parser("tune")
    tu.add_argument("--reps", type=int, default=4)
    tu.add_argument("--epsilon", type=float, default=1.0)
    nz = sub.add_parser("noise")
    nz.add_argument("--reps", type=int, default=5)
    sub.add_parser("cost-report")
    c = sub.add_parser("cost")
    c.add_argument("--parties", type=int, nargs="+", default=[3, 5, 10, 20])
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.cmd == "sim":
        sim(args)
    elif args.cmd == "sim-report":
        sim_report()
    elif args.cmd == "collusion":
        collusion(args)
    elif args.cmd == "cost-report":
        cost_report()
    elif args.cmd == "real":
        real(args)
    elif args.cmd == "real-report":
        import json

        tuned_file = RESULTS / TUNED_FILE
        tuned = json.loads(tuned_file.read_text()) if tuned_file.exists() else None
        real_report(args.reps, tuned, args.note)
    elif args.cmd == "noise":
        noise(args)
    elif args.cmd == "tune":
        tune(args)
    else:
        cost(args)


if __name__ == "__main__":
    main()
