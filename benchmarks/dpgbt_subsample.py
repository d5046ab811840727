"""Does row subsampling pay for DPGradientBoostingClassifier under the PLD accountant?

With ``subsample < 1`` every tree is grown on a Poisson sample of the rows, and the
ledger prices the tree as a subsampled Gaussian: since issue 31 with its PLD
accountant (``privet.ledger.pld``: amplification of the whole dominating pair, Zhu,
Dong & Wang 2022, Thm. 11), before with its RDP accountant. The same (epsilon, delta)
then buys less noise per leaf, while each tree sees fewer rows. This benchmark
measures both sides on Adult (train 32,561 rows, test 16,281), at epsilon 1 and 0.1,
delta 1e-5, the default number of trees, subsample 1, 0.5 and 0.25, 3 seeds:

* ``sigma``: the noise per leaf the calibration gives (the smallest whose whole plan
  ``Ledger.plan_cost`` proves within the budget);
* ``plan epsilon at sigma(1)``: ``Ledger.plan_cost`` of the subsampled plan at the
  noise of the plan without subsampling, i.e. what the amplification saves at equal
  noise;
* test ROC AUC and accuracy (mean, sd over seeds), the ledger's bound after the fit and
  the accountant that gave it, fit CPU seconds.

Run::

    python benchmarks/dpgbt_subsample.py

Writes ``benchmarks/results/dpgbt_subsample.csv``, ``.md`` and ``.png``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import resource
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, roc_auc_score

from privet.data import load_dataset
from privet.learners import DPGradientBoostingClassifier
from privet.ledger import Guarantee, Ledger

RESULTS = Path(__file__).resolve().parent / "results"
EPS = (1.0, 0.1)
DELTA = 1e-5
RATES = (1.0, 0.5, 0.25)
SEEDS = range(3)


def plan_cost_at(model: DPGradientBoostingClassifier, schema, sigma: float, ledger) -> float:
    """``ledger.plan_cost`` of ``model``'s plan with the noise per leaf set to ``sigma``."""
    shapes = model._shapes(schema)
    n_out = 1 if schema.n_classes == 2 else schema.n_classes
    return ledger.plan_cost(model._plan(sigma, shapes, schema.domain_sizes, n_out)).epsilon


def run() -> pd.DataFrame:
    train, test = load_dataset("adult"), load_dataset("adult_test")
    positive = train.schema.classes[1]
    y_test = (np.asarray(test.y) == positive).astype(int)
    rows = []
    for eps in EPS:
        whole_sigma: dict[int, float] = {}
        for rate in RATES:
            for seed in SEEDS:
                ledger = Ledger(budget=Guarantee(eps, DELTA), dataset="adult")
                model = DPGradientBoostingClassifier(
                    epsilon=eps,
                    delta=DELTA,
                    subsample=rate,
                    schema=train.schema,
                    ledger=ledger,
                    random_state=seed,
                )
                planned = ledger.plan_cost(model.privacy_plan()).epsilon
                t0, c0 = time.perf_counter(), time.process_time()
                model.fit(train.X, train.y)
                fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
                if rate == 1.0:
                    whole_sigma[seed] = model.sigma_
                at_whole = plan_cost_at(model, train.schema, whole_sigma[seed], ledger)
                proba = model.predict_proba(test.X)[:, list(model.classes_).index(positive)]
                bound = ledger.spent_bound()
                rows.append(
                    dict(
                        epsilon=eps,
                        trees=model.n_estimators_,
                        subsample=rate,
                        seed=seed,
                        sigma=model.sigma_,
                        plan_epsilon=planned,
                        plan_epsilon_at_sigma1=at_whole,
                        auc=roc_auc_score(y_test, proba),
                        accuracy=accuracy_score(test.y, model.predict(test.X)),
                        proven_epsilon=bound.guarantee.epsilon,
                        proven_delta=bound.guarantee.delta,
                        accountant=bound.method,
                        fit_s=fit_s,
                        fit_cpu_s=fit_cpu,
                    )
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["epsilon", "trees", "subsample"], sort=False)
    return g.agg(
        sigma=("sigma", "mean"),
        plan_epsilon=("plan_epsilon", "max"),
        at_sigma1=("plan_epsilon_at_sigma1", "mean"),
        auc=("auc", "mean"),
        auc_std=("auc", "std"),
        accuracy=("accuracy", "mean"),
        proven_epsilon=("proven_epsilon", "max"),
        accountant=("accountant", "first"),
        fit_cpu_s=("fit_cpu_s", "mean"),
    ).reset_index()


def write(df: pd.DataFrame, load: str, cpu_s: float, wall_s: float) -> None:
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "dpgbt_subsample.csv", index=False)
    s = summarise(df)
    lines = [
        "# DP boosted trees on Adult: row subsampling priced by the ledger's PLD accountant",
        "",
        "```",
        "python benchmarks/dpgbt_subsample.py",
        "```",
        "",
        f"One run: {wall_s / 60:.1f} min wall, {cpu_s / 60:.1f} min CPU, on a shared 2-core "
        f"machine (load average `{load}` at the start), so compare CPU times. Mean over "
        f"{len(SEEDS)} seeds (`random_state` for the tree shapes; noise and Poisson samples "
        f"are never seeded); delta {DELTA:g}; DPGBT's defaults otherwise (class counts for "
        "the base score on all rows, then the trees). `sigma` is the noise per leaf the "
        "calibration gives; `plan eps` is `Ledger.plan_cost` of the plan the fit reserved; "
        "`plan eps at sigma(1)` is `Ledger.plan_cost` of the subsampled plan with the noise "
        "per leaf of the plan without subsampling (what the amplification saves at equal "
        "noise); `proven` is `ledger.spent_bound()` after the fit and its accountant.",
        "",
        "| epsilon | trees | subsample | sigma | plan eps | plan eps at sigma(1) | test AUC | ± "
        "| accuracy | proven epsilon | accountant | fit CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in s.itertuples():
        lines.append(
            f"| {r.epsilon:g} | {r.trees} | {r.subsample:g} | {r.sigma:.3g} | "
            f"{r.plan_epsilon:.4g} | {r.at_sigma1:.4g} | {r.auc:.4f} | {r.auc_std:.4f} | "
            f"{r.accuracy:.4f} | {r.proven_epsilon:.4g} | {r.accountant} | {r.fit_cpu_s:.2f} |"
        )
    (RESULTS / "dpgbt_subsample.md").write_text("\n".join(lines) + "\n")
    fig, axes = plt.subplots(1, len(EPS), figsize=(5 * len(EPS), 3.6), sharey=False)
    for ax, eps in zip(np.atleast_1d(axes), EPS, strict=True):
        part = s[s.epsilon == eps]
        ax.errorbar(part.subsample, part.auc, yerr=part.auc_std, marker="o")
        ax.set_xscale("log")
        ax.set_xlabel("Poisson subsample rate per tree")
        ax.set_ylabel("test ROC AUC")
        ax.set_title(f"Adult, epsilon = {eps:g}, delta = {DELTA:g}")
    fig.tight_layout()
    fig.savefig(RESULTS / "dpgbt_subsample.png", dpi=110)


def main() -> None:
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    t0 = time.perf_counter()
    df = run()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    write(df, load, ru.ru_utime + ru.ru_stime, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
