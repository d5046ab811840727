"""Run one peer system on the splits that ``learners.py`` wrote; print JSON rows.

This file is run by *another* Python (diffprivlib's, InterpretML's or the
Maddock et al. code's own virtual environment), so it imports nothing from
privet and only numpy, pandas, scikit-learn and the peer library itself.

Input (written by ``learners.py``): ``<dir>/<dataset>.npz`` with ``X`` (float,
numeric attributes as raw values, categorical ones as integer codes in schema
order), ``y`` (integer class codes), ``train_<k>`` / ``test_<k>`` (row indices
of split k), and ``<dir>/<dataset>.json`` with the public schema: for every
feature its kind, public bounds and, for categorical ones, the category names;
the class names.

Usage::

    python peer_worker.py DIR DATASET SYSTEM --eps 0.1 1 --splits 0 1 2 3 4 [--fbdt PATH]

SYSTEM is one of ``diffprivlib_dt``, ``diffprivlib_rf``, ``dpebm``, ``maddock_dptr``,
``sk_dt``, ``sk_rf``, ``sk_hgb`` (the ``sk_*`` ceilings ignore ``--eps``).
Prints one JSON list on the last line of stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import tracemalloc
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

DELTA = 1e-5


def auc_score(y: np.ndarray, proba: np.ndarray, n_classes: int) -> float:
    """Binary ROC AUC, or the macro one-vs-rest AUC over the classes present in ``y``."""
    if n_classes == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    aucs = [
        roc_auc_score(y == c, proba[:, c]) for c in range(n_classes) if 0 < (y == c).sum() < len(y)
    ]
    return float(np.mean(aucs))


def full_proba(model, proba: np.ndarray, n_classes: int) -> np.ndarray:
    """Probabilities in all ``n_classes`` columns (a split may miss a rare class)."""
    out = np.zeros((proba.shape[0], n_classes))
    for j, c in enumerate(np.asarray(model.classes_).astype(int)):
        out[:, c] = proba[:, j]
    return out


def make(system: str, eps: float, seed: int, meta: dict, fbdt: str | None):
    feats = meta["features"]
    k = len(meta["classes"])
    if system == "diffprivlib_dt":
        from diffprivlib.models import DecisionTreeClassifier

        bounds = ([f["lower"] for f in feats], [f["upper"] for f in feats])
        return DecisionTreeClassifier(
            epsilon=eps, bounds=bounds, classes=list(range(k)), random_state=seed
        )
    if system == "diffprivlib_rf":
        from diffprivlib.models import RandomForestClassifier

        bounds = ([f["lower"] for f in feats], [f["upper"] for f in feats])
        return RandomForestClassifier(
            epsilon=eps, bounds=bounds, classes=list(range(k)), random_state=seed, n_jobs=1
        )
    if system == "dpebm":
        from interpret.privacy import DPExplainableBoostingClassifier

        types = [f["categories"] if f["kind"] == "categorical" else "continuous" for f in feats]
        bounds = {f["name"]: (f["lower"], f["upper"]) for f in feats if f["kind"] == "numeric"}
        return DPExplainableBoostingClassifier(
            epsilon=eps,
            delta=DELTA,
            feature_names=[f["name"] for f in feats],
            feature_types=types,
            privacy_bounds=bounds or None,
            random_state=seed,
            n_jobs=1,
        )
    if system == "maddock_dptr":
        sys.path.insert(0, fbdt)
        from federated_gbdt.models.gbdt.private_gbdt import PrivateGBDT

        # The DP-TR setting of the authors' examples/adult_example.ipynb.
        return PrivateGBDT(
            num_trees=100,
            epsilon=eps,
            split_method="totally_random",
            sketch_type="uniform",
            dp_method="gaussian_cdp",
        )
    if system == "sk_dt":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(random_state=seed)
    if system == "sk_rf":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(random_state=seed, n_jobs=1)
    if system == "sk_hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        cats = [f["kind"] == "categorical" for f in feats]
        return HistGradientBoostingClassifier(
            random_state=seed, categorical_features=cats if any(cats) else None
        )
    raise SystemExit(f"unknown system {system!r}")


def frame_for(system: str, X: np.ndarray, meta: dict):
    """DP-EBM gets a frame with category names; everyone else the numeric matrix."""
    if system != "dpebm":
        return X
    cols = {}
    for j, f in enumerate(meta["features"]):
        if f["kind"] == "categorical":
            cols[f["name"]] = np.asarray(f["categories"], dtype=object)[X[:, j].astype(int)]
        else:
            cols[f["name"]] = X[:, j]
    return pd.DataFrame(cols)


def run_one(system, eps, seed, X, y, tr, te, meta, fbdt, measure_memory):
    k = len(meta["classes"])
    Xtr, Xte = frame_for(system, X[tr], meta), frame_for(system, X[te], meta)
    ytr, yte = y[tr], y[te]
    model = make(system, eps, seed, meta, fbdt)
    t0, c0 = time.perf_counter(), time.process_time()
    model.fit(Xtr, ytr)
    fit_s, fit_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    proba = model.predict_proba(Xte)
    pred_s = time.perf_counter() - t0
    if hasattr(model, "classes_"):
        proba = full_proba(model, np.asarray(proba), k)
    pred = np.argmax(proba, axis=1)
    peak = None
    if measure_memory:  # a second fit under tracemalloc (it slows the fit, so not timed)
        tracemalloc.start()
        make(system, eps, seed, meta, fbdt).fit(Xtr, ytr)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return {
        "accuracy": float(accuracy_score(yte, pred)),
        "auc": auc_score(yte, proba, k),
        "fit_s": fit_s,
        "fit_cpu_s": fit_cpu_s,
        "log_loss": float(log_loss(yte, np.clip(proba, 1e-15, 1), labels=list(range(k)))),
        "predict_s": pred_s,
        "peak_mib": peak,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("dataset")
    ap.add_argument("system")
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--splits", type=int, nargs="+", default=[0])
    ap.add_argument("--fbdt", default=None, help="checkout of federated-boosted-dp-trees")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    data = np.load(os.path.join(args.dir, f"{args.dataset}.npz"))
    with open(os.path.join(args.dir, f"{args.dataset}.json")) as fh:
        meta = json.load(fh)
    X, y = data["X"], data["y"]
    eps_list = [float("inf")] if args.system.startswith("sk_") else args.eps
    if args.system == "maddock_dptr":  # numba compiles on first use: warm up, untimed
        try:
            tr = data[f"train_{args.splits[0]}"][:500]
            make(args.system, 1.0, 0, meta, args.fbdt).fit(X[tr], y[tr])
        except Exception:
            pass
    rows = []
    for eps in eps_list:
        for i, s in enumerate(args.splits):
            row = {"system": args.system, "dataset": args.dataset, "epsilon": eps, "split": s}
            try:
                row.update(
                    run_one(
                        args.system,
                        eps,
                        s,
                        X,
                        y,
                        data[f"train_{s}"],
                        data[f"test_{s}"],
                        meta,
                        args.fbdt,
                        measure_memory=(i == 0),
                    )
                )
                row["error"] = ""
            except Exception as exc:  # recorded, not hidden: the table says why a cell is empty
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                traceback.print_exc(file=sys.stderr)
            rows.append(row)
            print(
                f"{args.system} {args.dataset} eps={eps} split={s} {row.get('auc')} {row['error'][:80]}",
                file=sys.stderr,
                flush=True,
            )
    versions = {}
    for mod in ("sklearn", "diffprivlib", "interpret", "numba"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            pass
    for r in rows:
        r["versions"] = json.dumps(versions)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
