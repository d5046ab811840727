"""DPGradientBoostingClassifier on the small bundled datasets (Heart, Titanic).

Five stratified 80/20 splits (seeds 0-4) per dataset and epsilon; on each split
DPGBT (defaults, delta 1e-5), DPID3Classifier depth 3 (pure epsilon-DP),
DP-EBM (``--ebm-python``, its own venv, as in ``dpgbt_adult.py``),
HistGradientBoosting on the schema codes (non-private) and the majority rate.
German credit is not bundled with privet or its data directory, so it is not
run here.

Run::

    python benchmarks/dpgbt_small.py --ebm-python /tmp/ebmenv/bin/python

Writes ``benchmarks/results/dpgbt_small.{csv,md}``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

from privet.data import load_dataset
from privet.learners import DPGradientBoostingClassifier, DPID3Classifier

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
EPS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
DELTA = 1e-5


def _adult_bench():
    spec = importlib.util.spec_from_file_location("dpgbt_adult", HERE / "dpgbt_adult.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ebm-python", default=None)
    args = ap.parse_args(argv)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    rows = []
    for name in ("heart", "titanic"):
        ds = load_dataset(name)
        schema = ds.schema
        pos = schema.classes[1]
        for split in range(5):
            itr, ite = train_test_split(
                np.arange(ds.n_rows), test_size=0.2, random_state=split, stratify=ds.y
            )
            Xtr, ytr = ds.X.iloc[itr], ds.y.iloc[itr]
            Xte, yte = ds.X.iloc[ite], ds.y.iloc[ite]
            y_pos = (yte == pos).to_numpy()

            def score(model, Xte=Xte, y_pos=y_pos, pos=pos):
                p = model.predict_proba(Xte)[:, list(model.classes_).index(pos)]
                return {
                    "auc": roc_auc_score(y_pos, p),
                    "accuracy": accuracy_score(y_pos, model.predict(Xte) == pos),
                }

            for eps in EPS:
                m = DPGradientBoostingClassifier(
                    epsilon=eps, delta=DELTA, schema=schema, random_state=split
                )
                rows.append(
                    {"dataset": name, "method": "DPGBT", "epsilon": eps, "split": split}
                    | score(m.fit(Xtr, ytr))
                )
                m = DPID3Classifier(epsilon=eps, max_depth=3, schema=schema)
                rows.append(
                    {"dataset": name, "method": "DPID3 depth 3", "epsilon": eps, "split": split}
                    | score(m.fit(Xtr, ytr))
                )
            codes_tr, codes_te = schema.encode(Xtr), schema.encode(Xte)
            hgb = HistGradientBoostingClassifier(
                categorical_features=list(range(schema.n_features)), random_state=0
            ).fit(codes_tr, (ytr == pos).to_numpy())
            p = hgb.predict_proba(codes_te)[:, 1]
            rows.append(
                {
                    "dataset": name,
                    "method": "HGB schema bins (non-private)",
                    "epsilon": np.inf,
                    "split": split,
                    "auc": roc_auc_score(y_pos, p),
                    "accuracy": accuracy_score(y_pos, p > 0.5),
                }
            )
            rows.append(
                {
                    "dataset": name,
                    "method": "majority rate",
                    "epsilon": np.inf,
                    "split": split,
                    "auc": 0.5,
                    "accuracy": max(y_pos.mean(), 1 - y_pos.mean()),
                }
            )
            if args.ebm_python:
                tr = SimpleNamespace(X=Xtr, y=ytr, schema=schema)
                te = SimpleNamespace(X=Xte, y=yte, schema=schema)
                for r in _adult_bench().run_ebm(args.ebm_python, tr, te, EPS, [split]):
                    r.pop("seed")
                    rows.append({"dataset": name, "split": split, **r})
        print(f"{name}: done", flush=True)
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "dpgbt_small.csv", index=False)
    g = (
        df.groupby(["dataset", "method", "epsilon"], sort=False)
        .agg(
            auc=("auc", "mean"),
            auc_std=("auc", "std"),
            accuracy=("accuracy", "mean"),
            acc_std=("accuracy", "std"),
        )
        .reset_index()
    )
    lines = [
        "# DPGradientBoostingClassifier on Heart and Titanic",
        "",
        "Generated by `python benchmarks/dpgbt_small.py --ebm-python /tmp/ebmenv/bin/python`. "
        "Mean ± std over 5 stratified 80/20 splits; delta = 1e-5 for the Gaussian learners. "
        f"Shared 2-core machine (load average {load}).",
        "",
        "| dataset | method | ε | ROC AUC | accuracy |",
        "|---|---|---|---|---|",
    ]
    for r in g.itertuples():
        eps = "∞" if np.isinf(r.epsilon) else f"{r.epsilon:g}"
        lines.append(
            f"| {r.dataset} | {r.method} | {eps} | {r.auc:.3f} ± {r.auc_std:.3f} | "
            f"{r.accuracy:.3f} ± {r.acc_std:.3f} |"
        )
    (RESULTS / "dpgbt_small.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
