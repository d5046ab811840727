"""Record what the three seed-000 MPC protocols open and charge on a small case (tennis).

Used by ``test_mpc_openings_unchanged.py``: the stored record
``data/mpc_openings_tennis.json`` was made with the protocols *before* the
scaling work of issue 20 (commit 215b542) by running this module as a script
(``python tests/learners/mpc_openings_record.py OUT.json``); the test runs the
same cases now and requires the same openings (label, shape, paying entry, in
order), the same opened values (public testing noise, so that the values are
reproducible) and the same ledger charges (production noise: the same list
where the tree's shape is fixed, MPC-ID3 and ODP+FMPC; for CDP+PMPC, whose
number of leaves depends on the noisy splits, the same total and the same kinds
of charge).

Regenerated for issue 32 (monotone report-noisy-max, the learners' default under
add/remove): see ``test_mpc_openings_unchanged.py`` for exactly what changed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

SEED = 7


_CHARGE_FIELDS = ("mechanism", "step", "caller", "epsilon", "delta", "entry")
"""The fields of a charge the record keeps (of the rows ``privet ledger history`` prints)."""


def _charges(ledger: Any) -> list[dict[str, Any]]:
    """Every charge of ``ledger``, oldest first, with the fields of :data:`_CHARGE_FIELDS`."""
    return [{k: row[k] for k in _CHARGE_FIELDS} for row in ledger.charge_rows()]


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return round(float(x), 6)
    return x


def tree_runs(codes: Any, y: Any, sizes: Any, u: int, **kw: Any) -> dict[str, Any]:
    """MPC-ID3 (depth 3) and CDP+PMPC (depth 2, public testing noise): openings and nodes."""
    from privet.learners._protocols.numbers import SecureNumbers
    from privet.learners._protocols.testing import allow_testing_noise
    from privet.learners.mpc_id3.host import run_mpc_id3
    from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3

    out: dict[str, Any] = {}
    run = run_mpc_id3(codes, y, sizes, u, depth=3, **kw)
    out["mpc_id3"] = {"reveals": _plain(list(run.reveals)), "nodes": _plain(run.nodes)}
    with allow_testing_noise():
        run = run_partial_mpc_id3(
            codes,
            y,
            sizes,
            u,
            depth=2,
            epsilon=0.5,
            numbers=SecureNumbers(mpc_noise="discrete", bit_length=32),
            _testing_noise=SEED,
            **kw,
        )
    out["partial_mpc_id3"] = {"reveals": _plain(list(run.reveals)), "nodes": _plain(run.nodes)}
    return out


def record() -> dict[str, Any]:
    from privet.data import load_dataset
    from privet.learners import (
        MPCID3Classifier,
        ObliviousID3Classifier,
        PartialMPCID3Classifier,
    )
    from privet.learners._protocols.numbers import SecureNumbers
    from privet.learners._protocols.testing import allow_testing_noise
    from privet.learners.oblivious_id3.host import run_oblivious_id3
    from privet.ledger import Guarantee, Ledger

    ds = load_dataset("tennis")
    codes, y = ds.codes()
    sizes, u = ds.schema.domain_sizes, ds.schema.n_classes
    kw = {"backend": "mpc", "parties": 3, "timeout": 120.0}
    out: dict[str, Any] = {}

    out.update(tree_runs(codes, y, sizes, u, **kw))
    with allow_testing_noise():
        model = run_oblivious_id3(
            codes,
            y,
            sizes,
            u,
            depth=2,
            split="exponential",
            split_epsilon=0.25,
            leaf_epsilon=0.75,
            numbers=SecureNumbers(mpc_noise="discrete", bit_length=32),
            _testing_noise=SEED,
            **kw,
        )
        opened = model.reconstruct()
        out["oblivious_id3"] = {
            "reveals": _plain(list(model.reveals)),
            "model": _plain({"indicators": opened["indicators"], "leaves": opened["leaves"]}),
        }
    for name, cls, params in (
        ("mpc_id3", MPCID3Classifier, {"max_depth": 3}),
        ("partial_mpc_id3", PartialMPCID3Classifier, {"epsilon": 1.0, "max_depth": 2}),
        (
            "oblivious_id3",
            ObliviousID3Classifier,
            {"epsilon": 1.0, "max_depth": 2, "split": "exponential"},
        ),
    ):
        budget = Guarantee.unbounded() if cls is MPCID3Classifier else Guarantee(10.0, 1e-6)
        led = Ledger(budget=budget)
        cls(schema=ds.schema, ledger=led, backend="mpc", parties=3, **params).fit(ds.X, ds.y)
        out[name]["charges"] = _charges(led)
        spent = led.spent()
        out[name]["spent"] = [float(spent.epsilon), float(spent.delta)]
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "w") as fh:
        json.dump(record(), fh, indent=1, sort_keys=True)
