"""Shared set-up of the seed 001 benchmarks: the paper's split and the 128 parties.

Sec. 6: 2/3 of each dataset for training, 1/3 for testing; the training rows
are dealt to 128 parties "such that the distribution of instances in parties
are similar" (here: stratified by class, dealt round-robin after a seeded
shuffle), and a tree is built over the union of k parties' data.
"""

from __future__ import annotations

import numpy as np

from privet.data import load_dataset

DATASETS = {"nursery": "nursery", "mfeat": "mfeat_fac"}
N_PARTIES = 128


def split(name: str, seed: int = 0):
    """(schema, X_train, y_train, owner, X_test, y_test); owner[r] in 0..127."""
    d = load_dataset(DATASETS[name])
    y = np.asarray(d.y)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(d.n_rows)
    cut = 2 * d.n_rows // 3
    tr, te = idx[:cut], idx[cut:]
    y_tr = y[tr]
    owner = np.empty(len(tr), dtype=np.int64)
    pos = 0
    for c in sorted(set(y_tr.tolist()), key=str):
        rows = np.flatnonzero(y_tr == c)
        owner[rows] = (pos + np.arange(rows.size)) % N_PARTIES
        pos += rows.size
    return (
        d.schema,
        d.X.iloc[tr].reset_index(drop=True),
        y_tr,
        owner,
        d.X.iloc[te].reset_index(drop=True),
        y[te],
    )


def load_average() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])
