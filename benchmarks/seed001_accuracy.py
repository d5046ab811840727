"""Seed 001, Fig. 2: test accuracy vs the number k of collaborating parties.

Nursery and Mfeat (``mfeat_fac``, 216 profile correlations in 5 public bins),
2/3 train and 1/3 test, the training rows dealt to 128 parties with similar
class distributions; a tree over the union of k parties' data, k = 1, 2, 4,
..., 128. The exact protocol (the paper's) and the DP variant at eps in
{0.5, 1, 2} run on the reference path (the same counts as the party
protocol; the same noise law). k = 1 is one party alone (no summation):
the mean over 8 different parties, as the paper's "alone" figure.

Writes benchmarks/results/seed001_accuracy.{csv,png,md}.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from seed001_common import N_PARTIES, load_average, split

from privet.learners import SecureSumID3Classifier
from privet.learners.secure_sum_id3.estimator import _to_tree
from privet.learners.secure_sum_id3.reference import grow_reference

RESULTS = Path(__file__).parent / "results"
KS = [1, 2, 4, 8, 16, 32, 64, 128]
EPSILONS = [0.5, 1.0, 2.0]
REPS = 3
PAPER = {  # Sec. 6 text: alone and all 128 parties (Fig. 2 read only at its ends)
    "nursery": {1: 0.713, 128: 0.957},
    "mfeat": {1: 0.406, 128: 0.88},
}


def accuracy(schema, X, y, owner, Xte, yte, k, epsilon, rng) -> float:
    est = SecureSumID3Classifier(schema=schema, epsilon=epsilon)
    if k >= 2:
        mask = owner < k
        est.fit(X[mask].reset_index(drop=True), y[mask], parties=owner[mask])
        return float((est.predict(Xte) == yte).mean())
    # one party alone: Alg. 3 on its own rows, nothing to sum (noise: the party's own)
    entries = est._level_entries(schema)
    accs = []
    for party in range(8):
        mask = owner == party
        codes = schema.encode(X[mask])
        ys = schema.encode_target(y[mask])
        arrays = grow_reference(
            [codes],
            [ys],
            schema.domain_sizes,
            schema.n_classes,
            est._depth(schema),
            scales=None if epsilon is None else [e.scale for e in entries],
            rng=rng,
        )
        tree = _to_tree(arrays, schema.n_classes)
        pred = np.asarray(schema.classes, dtype=object)[
            np.argmax(tree.leaf_values(schema.encode(Xte)), axis=1)
        ]
        accs.append(float(np.mean(pred == yte)))
    return float(np.mean(accs))


def main() -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rows = []
    load = load_average()
    t0 = time.perf_counter()
    for name in ("nursery", "mfeat"):
        schema, X, y, owner, Xte, yte = split(name)
        majority = float(np.mean(yte == max(set(y.tolist()), key=y.tolist().count)))
        for k in KS:
            row = {"dataset": name, "k": k, "majority": round(majority, 4)}
            row["exact"] = round(accuracy(schema, X, y, owner, Xte, yte, k, None, rng), 4)
            for eps in EPSILONS:
                accs = [accuracy(schema, X, y, owner, Xte, yte, k, eps, rng) for _ in range(REPS)]
                row[f"dp_{eps:g}"] = round(float(np.mean(accs)), 4)
            row["paper"] = PAPER[name].get(k, "")
            rows.append(row)
            print(row, flush=True)
    seconds = time.perf_counter() - t0
    fields = list(rows[0])
    with (RESULTS / "seed001_accuracy.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    _plot(rows)
    _markdown(rows, seconds, load)


def _plot(rows) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, name in zip(axes, ("nursery", "mfeat"), strict=True):
        sub = [r for r in rows if r["dataset"] == name]
        ks = [r["k"] for r in sub]
        ax.plot(ks, [r["exact"] for r in sub], "o-", label="exact protocol (privet)")
        for eps in EPSILONS:
            ax.plot(ks, [r[f"dp_{eps:g}"] for r in sub], ".--", label=f"DP variant eps={eps:g}")
        ax.plot(ks, [r["majority"] for r in sub], ":", color="grey", label="majority class")
        pk = sorted(PAPER[name])
        ax.plot(pk, [PAPER[name][k] for k in pk], "k*", ms=12, label="paper (Sec. 6 text)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("collaborating parties k (of 128)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test accuracy")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(RESULTS / "seed001_accuracy.png", dpi=120)


def _markdown(rows, seconds, load) -> None:
    lines = [
        "# Seed 001, Fig. 2: accuracy vs collaborating parties",
        "",
        f"Reference path (same counts as the {N_PARTIES}-party protocol); DP rows are the "
        f"mean of {REPS} runs (k = 1: mean over 8 single parties). Run time {seconds:.0f} s, "
        f"load average at start {load} on the shared 2-core machine.",
        "",
        "| dataset | k | paper | exact (privet) | DP eps=0.5 | DP eps=1 | DP eps=2 | majority |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['k']} | {r['paper']} | {r['exact']} | {r['dp_0.5']} | "
            f"{r['dp_1']} | {r['dp_2']} | {r['majority']} |"
        )
    (RESULTS / "seed001_accuracy.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
