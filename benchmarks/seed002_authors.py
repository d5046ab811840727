"""Run the seed-002 authors' code (mrf-public) on privet's splits: accuracy and a small fixture.

This script is **not** run with privet's environment and imports nothing from privet. It
drives the authors' own modules (A. Tajima, ``arisa77/mrf-public`` @ 176d5ac, with its
pinned submodules HDMM @ 7a5079a and ektelo @ 7629fbf), which are kept in a scratch folder
outside this repository and never committed:

    SEED002_MRF_DIR=/work/scratch/seed002/mrf-public   # mrf/, data/, external-code/{hdmm,ektelo}
    python3.11 -m venv venv && venv/bin/pip install "numpy<2" "pandas<2.2" "scipy<1.14" \\
        "scikit-learn<1.6" joblib    # the authors pin numpy 1.17 / pandas 0.25 / Python 3.7;
                                     # numpy 1.26 and pandas 2.1 run their code unchanged
    venv/bin/python benchmarks/seed002_authors.py --part fixture | accuracy

Data the authors' code reads but their snapshot lacks (files over 4 MiB): ``data/adult/
adult.csv`` and ``data/adult-binary/adult-binary.csv``. ``--part data`` writes both into
``SEED002_MRF_DIR`` from public sources: the UCI Adult files (adult.data then adult.test,
48,842 rows, in the Kaggle layout their loader expects: ``educational-num``, ``gender``, no
trailing dot on the label) and the LIBSVM a1a + a1a_test files of their own repository
(123 binary columns ``0..122`` and ``class`` in {-1, 1}).

Splits: ``sklearn.model_selection.train_test_split(range(N), test_size, random_state=s)``
on the rows in file order, the same call privet's side (``seed002_side_by_side.py``) makes
on the same rows; the authors' discretised Adult is written to ``SEED002_OUT`` so that the
privet side can check that its own preprocessing gives the same codes, row for row.

Parts:

``fixture``   Small cases on Car (the authors' random trees, their leaf counts, their
              weighted and hard votes on 20 test queries, their KronPIdentity strategy
              optimised for T with its sensitivity and HDMM's expected error, and the
              identity's). Written to ``tests/learners/matrix_forest/data/
              mrf_public_small_cases.json``; the test there rebuilds the same trees in
              privet and checks every number.
``accuracy``  Car (h = 4, tau = 128, eps 0.4-2), Adult as the authors' Fig. 2 Adult panel
              was made (their ``config_adult``/``adult_id2.csv``: 8 multi-valued features,
              h = 6, tau = 16, q = 1, eps 0.01-1) and Adult with the caption's settings on
              their LIBSVM Adult (h = 8, tau = 100, q = 4, d_bar = 10): accuracies per split
              and noise draw, to ``benchmarks/results/seed002_authors_accuracy.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

MRF = Path(os.environ.get("SEED002_MRF_DIR", "/work/scratch/seed002/mrf-public"))
OUT = Path(os.environ.get("SEED002_OUT", "/work/scratch/seed002/out"))
SHARED = Path(os.environ.get("PRIVET_SHARED", "/work/shared")) / "data"
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FIXTURE = HERE.parent / "tests" / "learners" / "matrix_forest" / "data"
UCI_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "educational-num", "marital-status",
    "occupation", "relationship", "race", "gender", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


def _authors() -> None:
    """Put the authors' modules on the path; their code uses paths relative to mrf/exp."""
    os.chdir(MRF / "mrf" / "exp")
    sys.path[:0] = ["../src", "."]
    import init  # noqa: F401  (adds ../../external-code/{ektelo,hdmm/src})


def make_data() -> None:
    frames = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        df = pd.read_csv(
            SHARED / name, header=None, names=UCI_COLUMNS, skipinitialspace=True, skiprows=skip
        )
        df = df.dropna(how="all")
        df["income"] = df["income"].str.rstrip(".")
        frames.append(df)
    adult = pd.concat(frames, ignore_index=True)
    (MRF / "data" / "adult").mkdir(parents=True, exist_ok=True)
    adult.to_csv(MRF / "data" / "adult" / "adult.csv", index=False)
    rows, labels = [], []
    for f in ("a1a.txt", "a1a_test.txt"):
        for line in (MRF / "data" / "adult-binary" / "original" / f).read_text().splitlines():
            parts = line.split()
            labels.append(int(parts[0]))
            rows.append([int(p.split(":")[0]) - 1 for p in parts[1:]])
    x = np.zeros((len(rows), 123), dtype=np.int64)
    for i, idx in enumerate(rows):
        x[i, idx] = 1
    binary = pd.DataFrame(x, columns=[str(j) for j in range(123)])
    binary["class"] = labels
    binary.to_csv(MRF / "data" / "adult-binary" / "adult-binary.csv", index=False)
    print("adult.csv", adult.shape, "adult-binary.csv", binary.shape)


def _split(dataset, s: int, test_size):  # type: ignore[no-untyped-def]
    from dataset import Dataset

    tr, te = train_test_split(np.arange(dataset.df.shape[0]), test_size=test_size, random_state=s)
    return (
        Dataset(dataset.df.iloc[tr], dataset.schema),
        Dataset(dataset.df.iloc[te], dataset.schema),
    )


# ----------------------------------------------------------------------------- fixture
def fixture() -> None:
    _authors()
    import benchmark
    from dp_random_forest import DPExtraTrees
    from hdmm import error, workload
    from random_forest import ExtraTrees

    car = benchmark.car_dataset()
    train, test = _split(car, 0, 0.2)
    queries = test.df.iloc[:20]
    cases = []
    for tau, depth, seed in ((4, 2, 11), (16, 3, 12)):
        np.random.seed(seed)  # noqa: NPY002 (HDMM seeds its templates from the global state)
        model = ExtraTrees(car.schema, depth, tau, random_state=seed, n_jobs=1)
        model.fit(train)
        paths = model.get_paths()  # per tree, per leaf: per attribute a 0/1 vector
        counts = model.get_leaf_counts()
        weighted = model.predict(_dataset(queries, car.schema), voting="weight", return_votes=True)
        hard = model.predict(_dataset(queries, car.schema), voting="hard", return_votes=True)
        W = DPExtraTrees.get_workload(paths).explicit_matrix()
        A = DPExtraTrees.optimize(W, car.schema.shape[:-1]).explicit_matrix()
        factors = [np.asarray(f.dense_matrix()).tolist() for f in A.matrices]
        ident = workload.Identity(W.shape[1])
        cases.append(
            {
                "trees": tau,
                "depth": depth,
                "seed": seed,
                "paths": [[[list(map(int, v)) for v in leaf] for leaf in tree] for tree in paths],
                "leaf_counts": np.asarray(counts).astype(int).tolist(),
                "queries": queries.iloc[:, :-1].to_numpy().astype(int).tolist(),
                "weighted_votes": np.asarray(weighted).astype(int).tolist(),
                "hard_votes": np.asarray(hard).astype(int).tolist(),
                "strategy_factors": factors,
                "strategy_sensitivity": float(A.sensitivity()),
                "strategy_squared_error": float(error.expected_error(W, A)),
                "identity_squared_error": float(error.expected_error(W, ident)),
            }
        )
        print(tau, depth, cases[-1]["strategy_squared_error"], cases[-1]["identity_squared_error"])
    out = {
        "how": (
            "benchmarks/seed002_authors.py --part fixture: the authors' code (mrf-public "
            "@ 176d5ac, HDMM @ 7a5079a, ektelo @ 7629fbf) on privet's Car (the same rows as "
            "their data/car/car.csv), split train_test_split(range(1728), test_size=0.2, "
            "random_state=0); ExtraTrees(schema, depth, trees, random_state=seed, n_jobs=1).fit(train) (their code needs n_jobs: without it the fitted trees are not kept); "
            "queries: the first 20 test rows; strategy: DPExtraTrees.optimize (KronPIdentity, "
            "p = 1 per attribute, HDMM's BestTemplate of Identity/Total/PIdentity) after "
            "np.random.seed(seed); errors: hdmm.error.expected_error(W, A) at its default "
            "eps = sqrt(2), i.e. ||A||_1^2 ||W A^+||_F^2."
        ),
        "attributes": list(car.schema.attrnames[:-1]),
        "domain": [int(n) for n in car.schema.shape[:-1]],
        "classes": int(car.schema.shape[-1]),
        "cases": cases,
    }
    FIXTURE.mkdir(parents=True, exist_ok=True)
    (FIXTURE / "mrf_public_small_cases.json").write_text(json.dumps(out, indent=1))


def _dataset(df, schema):  # type: ignore[no-untyped-def]
    from dataset import Dataset

    return Dataset(df, schema)


# ----------------------------------------------------------------------------- accuracy
def _train_rows(method, eps_list, depth, tau, schema, train, test, trials):  # type: ignore[no-untyped-def]
    import private_training

    params = {
        "targetname": schema.attrnames[-1], "bootstrap": False, "depth": depth,
        "n_estimators": tau, "eps": eps_list, "n_trials": trials, "n_jobs": 1,
        "alg": "ID3", "voting": "hard", "optimize": method == "optimize",
        "disjoint": method == "disjoint", "method": method, "random_state": None,
    }  # fmt: skip
    preds = private_training.run(params, schema, train, test)
    return private_training.get_accuracy(test, preds)


def _batch_prediction_rows(eps_list, depth, tau, schema, train, test, trials):  # type: ignore[no-untyped-def]
    import private_inference

    params = {
        "targetname": schema.attrnames[-1], "depth": depth, "n_estimators": tau,
        "eps": eps_list, "n_trials": trials, "n_jobs": 1, "alg": "ID3",
        "random_state": None, "method": "batch",
    }  # fmt: skip
    forest = private_inference.get_forest_structure(schema, depth, tau)
    df = private_inference.experiment_batch(params, [train, test], forest)
    return df


def _high_dim_rows(kind, eps_list, depth, tau, q, d_bar, schema, train, test, trials):  # type: ignore[no-untyped-def]
    import high_dimension

    params = {
        "targetname": schema.attrnames[-1], "depth": depth, "n_estimators": tau // q,
        "n_ensembles": q, "max_nfeatures": d_bar, "eps": eps_list, "n_trials": trials,
        "n_jobs": 1, "alg": "ID3", "random_state": None, "voting": "weight",
    }  # fmt: skip
    vschema = train.schema.random_feature_subspace(d_bar, n_sets=q)
    run = high_dimension.run_batchtrain if kind == "train" else high_dimension.run_batchpred
    preds = run(params, vschema, train, test)
    return high_dimension.get_accuracy(test, preds)


def accuracy(args: argparse.Namespace) -> None:
    _authors()
    import benchmark

    rows: list[dict] = []
    out = RESULTS / "seed002_authors_accuracy.csv"
    settings = {
        "car": (benchmark.car_dataset, [0.4, 0.6, 0.8, 1.0, 2.0], 4, 128, 1, None, 345),
        "adult": (benchmark.adult_dataset, [0.01, 0.05, 0.1, 0.5, 1.0], 6, 16, 1, None, 0.2),
        "adult_caption": (
            benchmark.adult_binary_dataset, [0.01, 0.05, 0.1, 0.5, 1.0], 8, 100, 4, 10, 0.2,
        ),
    }  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        load, eps_list, depth, tau, q, d_bar, test_size = settings[name]
        data = load()
        if name == "adult":  # for the privet side's check of its own preprocessing
            data.df.to_csv(OUT / "authors_adult_codes.csv", index=False)
        for s in range(args.splits):
            train, test = _split(data, s, test_size)
            t0 = time.process_time()
            common = {"dataset": name, "split": s, "n_test": test.df.shape[0]}
            if q == 1:
                for method, tag in (("optimize", "bt_opt"), ("original", "bt_lm"), ("disjoint", "dis_lm")):  # fmt: skip
                    if tag not in args.methods:
                        continue
                    for eps, trial, acc in _train_rows(
                        method, eps_list, depth, tau, data.schema, train, test, args.trials
                    ):
                        rows.append({**common, "method": tag, "eps": eps, "trial": trial, "accuracy": acc})  # fmt: skip
                df = pd.DataFrame(columns=["optimize", "eps", "run", "acc"])
                if "bp_opt" in args.methods:
                    df = _batch_prediction_rows(eps_list, depth, tau, data.schema, train, test, args.trials)  # fmt: skip
                for r in df.itertuples():
                    tag = "bp_opt" if r.optimize else "bp_lm"
                    rows.append({**common, "method": tag, "eps": r.eps, "trial": r.run, "accuracy": r.acc})  # fmt: skip
            else:
                for kind, tag in (("train", "bt_opt"), ("pred", "bp_opt")):
                    for eps, trial, acc in _high_dim_rows(
                        kind, eps_list, depth, tau, q, d_bar, data.schema, train, test, args.trials
                    ):
                        rows.append({**common, "method": tag, "eps": eps, "trial": trial, "accuracy": acc})  # fmt: skip
            y_tr = train.df.iloc[:, -1].to_numpy()
            y_te = test.df.iloc[:, -1].to_numpy()
            majority = float(np.mean(y_te == pd.Series(y_tr).mode()[0]))
            rows.append({**common, "method": "majority", "eps": np.nan, "trial": 0, "accuracy": majority})  # fmt: skip
            print(name, "split", s, f"{time.process_time() - t0:.0f} s CPU", flush=True)
            frame = pd.DataFrame(rows)
            if out.exists():  # keep an earlier run's rows of the datasets not run now
                old = pd.read_csv(out)
                frame = pd.concat([old[~old["dataset"].isin(args.datasets)], frame])
            frame.to_csv(out, index=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--part", required=True, choices=["data", "fixture", "accuracy"])
    p.add_argument("--datasets", nargs="*", default=["car", "adult", "adult_caption"])
    p.add_argument("--splits", type=int, default=3)
    p.add_argument(
        "--methods", nargs="*", default=["bt_opt", "bt_lm", "dis_lm", "bp_opt"],
        help="q = 1 only; bp_opt also gives bp_lm (their experiment_batch runs both)",
    )  # fmt: skip
    p.add_argument("--trials", type=int, default=2)
    a = p.parse_args()
    {"data": make_data, "fixture": fixture, "accuracy": lambda: accuracy(a)}[a.part]()


if __name__ == "__main__":
    main()
