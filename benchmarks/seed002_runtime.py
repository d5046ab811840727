"""Seed 002, Table 1: runtime split into optimisation, training, prediction; peak memory.

Adult, Heart and Mushroom with the settings of Fig. 2, epsilon = 1, one 80/20
split. Each configuration runs in its own process so that its peak resident
memory (ru_maxrss) is its own. "Non-DP" is the same random forest with exact
leaf counts (privet's reference path), the paper's non-private comparison.
Tree building is excluded, as in the paper (it is data independent).

Run::

    python benchmarks/seed002_runtime.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from seed002_common import RESULTS, SETTINGS, load
from sklearn.model_selection import train_test_split

from privet.learners import MatrixRandomForestClassifier
from privet.learners.matrix_forest.reference import leaf_counts, leaf_index, weighted_votes

PAPER = {  # Table 1 (seconds): optimisation, training, prediction
    ("adult", "DP Train."): (255.7, 12.84, 30.09),
    ("adult", "DP Pred."): (58.58, 12.88, 29.63),
    ("adult", "Non-DP"): (None, 13.20, 29.24),
    ("heart", "DP Train."): (0.60, 1.05, 0.52),
    ("heart", "DP Pred."): (0.79, 0.82, 0.57),
    ("heart", "Non-DP"): (None, 0.72, 0.36),
    ("mushroom", "DP Train."): (16.24, 12.22, 10.17),
    ("mushroom", "DP Pred."): (24.68, 11.97, 10.07),
    ("mushroom", "Non-DP"): (None, 13.09, 9.82),
}


def one(name: str, method: str) -> dict:
    X, y, schema = load(name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    settings = SETTINGS[name]
    if method == "Non-DP":
        m = MatrixRandomForestClassifier(epsilon=1.0, schema=schema, random_state=0, **settings)
        from privet.learners.matrix_forest.trees import build_forest

        forest = build_forest(
            schema.domain_sizes,
            n_trees=settings["n_trees"],
            max_depth=settings["max_depth"],
            n_ensembles=settings["n_ensembles"],
            max_features=settings["max_features"] or schema.n_features,
            rng=np.random.default_rng(0),
        )
        t = time.perf_counter()
        codes, yc = schema.encode(Xtr), schema.encode_target(ytr)
        counts = [
            leaf_counts(e, leaf_index(e, codes[:, list(e.features)]), yc, schema.n_classes)
            for e in forest
        ]
        train = time.perf_counter() - t
        t = time.perf_counter()
        q = schema.encode(Xte)
        votes = sum(
            weighted_votes(c, leaf_index(e, q[:, list(e.features)]))
            for e, c in zip(forest, counts, strict=True)
        )
        pred = time.perf_counter() - t
        acc = float(np.mean(votes.argmax(axis=1) == schema.encode_target(yte)))
        opt = None
        del m
    else:
        mode = "batch_training" if method == "DP Train." else "batch_prediction"
        m = MatrixRandomForestClassifier(
            mode=mode, epsilon=1.0, schema=schema, random_state=0, **settings
        )
        m.fit(Xtr, ytr)
        t = time.perf_counter()
        acc = float(np.mean(m.predict(Xte) == np.asarray(yte)))
        total_pred = time.perf_counter() - t
        if mode == "batch_training":
            opt, train, pred = m.timings_["optimisation"], m.timings_["training"], total_pred
        else:  # the strategy for W = Q T^T T is optimised inside predict
            opt, train = m.timings_["optimisation"], m.timings_["training"]
            pred = total_pred - opt
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return dict(
        dataset=name,
        method=method,
        optimisation=opt,
        training=train,
        prediction=pred,
        accuracy=acc,
        peak_rss_mb=rss_mb,
        n_test=len(Xte),
    )


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(one(sys.argv[1], sys.argv[2])))
        return
    print("load average at start:", open("/proc/loadavg").read().strip(), flush=True)
    rows = []
    for name in ["heart", "mushroom", "adult"]:
        for method in ["DP Train.", "DP Pred.", "Non-DP"]:
            out = subprocess.run(
                [sys.executable, __file__, name, method],
                capture_output=True,
                text=True,
                check=True,
                cwd=Path(__file__).parent,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            p = PAPER[(name, method)]
            row.update(paper_optimisation=p[0], paper_training=p[1], paper_prediction=p[2])
            rows.append(row)
            print(row, flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "seed002_table1.csv", index=False)
    print(df.to_string())
    print("load average at end:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
