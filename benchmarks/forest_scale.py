"""How DP tree and forest training grows with trees and rows, next to scikit-learn.

Run from the repository root::

    python benchmarks/forest_scale.py            # up to 10,000 trees and 1,000,000 rows
    python benchmarks/forest_scale.py --quick    # up to 1,000 trees and 100,000 rows

Writes ``benchmarks/results/forest_scale.{csv,md,png}``.

Two sweeps, each learner next to scikit-learn's non-private counterpart on the
same rows in the same run (scikit-learn gets the same integer codes privet's
trees split on, ``max_depth=5``, ``n_jobs=1``):

* **trees**: Adult's 32,561 training rows, depth 5, ``DPExtraTreesClassifier``
  and ``DPRandomForestClassifier`` (disjoint subsets, epsilon = 1 per tree,
  the forest costs epsilon = 1) for a growing number of trees, against
  ``ExtraTreesClassifier`` / ``RandomForestClassifier``. Accuracy on Adult's
  test rows where prediction is cheap enough to measure.
* **rows**: Adult's training rows resampled with replacement to 32k ... 1M rows,
  ``DPID3Classifier`` (depth 5) and a 100-tree ``DPExtraTreesClassifier``
  against ``DecisionTreeClassifier`` / a 100-tree ``ExtraTreesClassifier``.

Every fit charges an in-memory ledger (the ledger's work is part of the time).
Wall times on this 2-core machine; the load average is recorded.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from privet.data import load_dataset
from privet.learners import DPExtraTreesClassifier, DPID3Classifier, DPRandomForestClassifier
from privet.ledger import Guarantee, Ledger

RESULTS = Path(__file__).resolve().parent / "results"
FIELDS = ["sweep", "learner", "trees", "rows", "fit_s", "charges", "accuracy", "load"]


def _load() -> str:
    return open("/proc/loadavg").read().split()[0]


def _codes(model, X) -> np.ndarray:
    return model._encode_X(model.schema_, X)


def fit_privet(make, X, y, schema):
    led = Ledger(budget=Guarantee(1e6))
    model = make(schema, led)
    t0 = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - t0, len(led.charges)


def fit_sklearn(model, codes, y):
    t0 = time.perf_counter()
    model.fit(codes, y)
    return model, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    trees_et = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]
    trees_rf = [10, 30] if args.quick else [10, 30, 100]
    row_sizes = [32_561, 100_000] if args.quick else [32_561, 100_000, 300_000, 1_000_000]

    train, test = load_dataset("adult"), load_dataset("adult_test")
    schema = train.schema
    rows: list[dict] = []

    def record(**kw) -> None:
        kw.setdefault("accuracy", "")
        kw["load"] = _load()
        rows.append(kw)
        print({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in kw.items()}, flush=True)

    # -- trees ------------------------------------------------------------------
    probe = DPID3Classifier(max_depth=1, schema=schema, ledger=Ledger(budget=1.0))
    probe.fit(train.X.iloc[:200], train.y.iloc[:200])
    codes_train, codes_test = _codes(probe, train.X), _codes(probe, test.X)
    y_train, y_test = train.y.to_numpy(), test.y.to_numpy()
    for name, dp_cls, sk_cls, sizes in (
        ("extra trees", DPExtraTreesClassifier, ExtraTreesClassifier, trees_et),
        ("random forest", DPRandomForestClassifier, RandomForestClassifier, trees_rf),
    ):
        for k in sizes:
            model, secs, charges = fit_privet(
                lambda s, led, k=k, dp_cls=dp_cls: dp_cls(
                    n_estimators=k, epsilon=1.0, max_depth=5, schema=s, ledger=led, random_state=0
                ),
                train.X, train.y, schema,
            )  # fmt: skip
            acc = float(np.mean(model.predict(test.X) == y_test)) if k <= 1000 else ""
            record(sweep="trees", learner=f"privet {name}", trees=k, rows=len(y_train),
                   fit_s=secs, charges=charges, accuracy=acc)  # fmt: skip
            del model
            sk, secs = fit_sklearn(sk_cls(n_estimators=k, max_depth=5, n_jobs=1, random_state=0),
                                   codes_train, y_train)  # fmt: skip
            acc = float(np.mean(sk.predict(codes_test) == y_test)) if k <= 1000 else ""
            record(sweep="trees", learner=f"scikit-learn {name}", trees=k, rows=len(y_train),
                   fit_s=secs, charges=0, accuracy=acc)  # fmt: skip
            del sk

    # -- rows -------------------------------------------------------------------
    rng = np.random.default_rng(0)
    for n in row_sizes:
        idx = rng.integers(0, len(y_train), size=n)
        X, y = train.X.iloc[idx].reset_index(drop=True), train.y.iloc[idx].reset_index(drop=True)
        codes = codes_train[idx]
        for name, make, sk_name, sk in (
            ("DP-ID3 depth 5",
             lambda s, led: DPID3Classifier(epsilon=1.0, max_depth=5, schema=s, ledger=led),
             "decision tree depth 5", DecisionTreeClassifier(max_depth=5, random_state=0)),
            ("extra trees x100",
             lambda s, led: DPExtraTreesClassifier(n_estimators=100, epsilon=1.0, max_depth=5,
                                                   schema=s, ledger=led, random_state=0),
             "extra trees x100",
             ExtraTreesClassifier(n_estimators=100, max_depth=5, n_jobs=1, random_state=0)),
        ):  # fmt: skip
            model, secs, charges = fit_privet(make, X, y, schema)
            acc = float(np.mean(model.predict(test.X) == y_test))
            record(sweep="rows", learner=f"privet {name}", trees=getattr(model, "n_estimators", 1),
                   rows=n, fit_s=secs, charges=charges, accuracy=acc)  # fmt: skip
            fitted, secs = fit_sklearn(sk, codes, y.to_numpy())
            acc = float(np.mean(fitted.predict(codes_test) == y_test))
            record(sweep="rows", learner=f"scikit-learn {sk_name}",
                   trees=getattr(fitted, "n_estimators", 1), rows=n, fit_s=secs, charges=0,
                   accuracy=acc)  # fmt: skip

    write(rows, args.quick)


def write(rows: list[dict], quick: bool) -> None:
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "forest_scale.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, sweep, xkey, xlabel in (
        (axes[0], "trees", "trees", "trees (Adult, 32,561 rows, depth 5)"),
        (axes[1], "rows", "rows", "rows (Adult resampled)"),
    ):
        for learner in dict.fromkeys(r["learner"] for r in rows if r["sweep"] == sweep):
            pts = [r for r in rows if r["sweep"] == sweep and r["learner"] == learner]
            style = "--" if learner.startswith("scikit") else "-"
            ax.loglog([r[xkey] for r in pts], [r["fit_s"] for r in pts], style, marker="o",
                      label=learner)  # fmt: skip
        ax.set_xlabel(xlabel)
        ax.set_ylabel("fit time (s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("privet DP trees and forests (solid) vs scikit-learn non-private (dashed)")
    fig.tight_layout()
    fig.savefig(RESULTS / "forest_scale.png", dpi=110)

    def fit_exponent(learner: str, sweep: str, key: str) -> str:
        pts = [r for r in rows if r["learner"] == learner and r["sweep"] == sweep]
        if len(pts) < 2:
            return ""
        x = np.log([r[key] for r in pts])
        t = np.log([r["fit_s"] for r in pts])
        return f"{np.polyfit(x, t, 1)[0]:.2f}"

    lines = [
        "# DP trees and forests: time against trees and rows",
        "",
        "`python benchmarks/forest_scale.py" + (" --quick" if quick else "") + "` on this 2-core "
        "machine (load average per row). privet charges an in-memory ledger on every fit; "
        "scikit-learn's non-private trees run on the same integer codes in the same run "
        "(`max_depth=5`, `n_jobs=1`). Accuracy on Adult's test rows.",
        "",
        "| sweep | learner | trees | rows | fit (s) | charges | accuracy | load |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        acc = f"{r['accuracy']:.4f}" if isinstance(r["accuracy"], float) else "-"
        lines.append(
            f"| {r['sweep']} | {r['learner']} | {r['trees']:,} | {r['rows']:,} | "
            f"{r['fit_s']:.2f} | {r['charges']:,} | {acc} | {r['load']} |"
        )
    lines += ["", "Fitted growth exponents (time ~ x^b):", ""]
    for learner in dict.fromkeys(r["learner"] for r in rows):
        for sweep, key in (("trees", "trees"), ("rows", "rows")):
            b = fit_exponent(learner, sweep, key)
            if b:
                lines.append(f"- {learner}, against {key}: b = {b}")
    lines += ["", *NOTES]
    (RESULTS / "forest_scale.md").write_text("\n".join(lines) + "\n")


NOTES = [
    "Notes:",
    "",
    "- *privet random forest* is `DPRandomForestClassifier` with its default trees, seed "
    "000's ODP+FMPC-ID3 (the sound variant: hidden exponential-mechanism splits, Laplace "
    "leaves) grown on plaintext. Each is a *complete* tree over the real branches of the "
    "attributes it picks: about 3,300 nodes and 2,700 leaves at depth 5 on Adult, against "
    "at most 63 nodes in scikit-learn's binary tree. Every node's selection and every "
    "leaf's counts are drawn with OpenDP's exact samplers: about 700 noisy-max calls "
    "(about 60 µs each) and 5,400 exact discrete Laplace values (about 6 µs each) per "
    "tree: about two thirds of its time (the samplers timed alone, outside this benchmark).",
    "- Charges: under add/remove neighbours a tree level's selections, and a tree's "
    "leaves, are one ledger charge each in the tree's scope (one record changes one node "
    "per level); extra trees have a data-independent structure and one leaf histogram "
    "per tree. The ledger proves the same epsilon as a charge per node would.",
    "- Disjoint subsets: with k trees each tree sees about n / k rows, so the forests' "
    "time hardly depends on the rows; scikit-learn's grows linearly with them.",
]


if __name__ == "__main__":
    main()
