"""The scaling work (issue 20) changes how the MPC trees compute, never what they open or charge.

``data/mpc_openings_tennis.json`` holds, for MPC-ID3, CDP+PMPC (discrete noise)
and sound ODP+FMPC (discrete noise) on tennis with 3 parties, what the
protocols opened (label, shape and paying entry of every opening, in order),
the opened values under public testing noise (the tree, or the reconstructed
secret model), and the ledger charges of a production fit, recorded with the
code *before* that work (commit 215b542; see ``mpc_openings_record.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mpc_openings_record import record  # noqa: E402

pytestmark = pytest.mark.mpc


def test_openings_values_and_charges_match_the_record_made_before_the_scaling_work():
    before = json.loads((HERE / "data" / "mpc_openings_tennis.json").read_text())
    now = json.loads(json.dumps(record(), sort_keys=True))
    assert sorted(now) == sorted(before)
    for system in before:
        assert now[system]["reveals"] == before[system]["reveals"], system
        for key in ("nodes", "model"):
            if key in before[system]:
                assert now[system][key] == before[system][key], (system, key)
        charges_now, charges_before = now[system]["charges"], before[system]["charges"]
        assert now[system]["spent"] == pytest.approx(before[system]["spent"], rel=1e-9), system
        if system == "partial_mpc_id3":  # leaves follow the noisy splits: compare the kinds
            kinds_now = {(c["mechanism"], c["entry"], c["epsilon"]) for c in charges_now}
            kinds_before = {(c["mechanism"], c["entry"], c["epsilon"]) for c in charges_before}
            assert kinds_now == kinds_before
            continue
        assert len(charges_now) == len(charges_before), system
        for a, b in zip(charges_now, charges_before, strict=True):
            assert {k: a[k] for k in a if k not in ("epsilon", "delta")} == {
                k: b[k] for k in b if k not in ("epsilon", "delta")
            }, system
            assert a["epsilon"] == pytest.approx(b["epsilon"], rel=1e-12), system
            assert a["delta"] == pytest.approx(b["delta"], rel=1e-9, abs=0.0), system
