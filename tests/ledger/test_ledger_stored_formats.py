"""Stored ledgers never change meaning: files and documents written before the
split of the ledger package (format 1, no hash chain, entries tagged by class name
only) load with the same state, and the ledger reaches the mechanisms' entries
without importing the layer above it.

``data/ledger_v1.sqlite`` and ``data/ledger_v1.json`` were written by privet at
commit 32c913c (datasets ``car``: a partition, a subsample, a reservation and four
charges including the mechanisms' ``NoisyMax``; ``heart``: one charge).
"""

from __future__ import annotations

import ast
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import privet.ledger
from privet.errors import UnsupportedEntryError
from privet.ledger import Entry, Gaussian, Guarantee, Ledger, PlanNode

DATA = Path(__file__).parent / "data"


def _without_module(charge: dict) -> dict:
    charge = json.loads(json.dumps(charge))
    charge["entry"].pop("module", None)
    return charge


@pytest.fixture
def v1_file(tmp_path):
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "ledger_v1.sqlite", path)
    return path


def test_a_format_1_file_opens_with_the_same_state_and_is_upgraded(v1_file):
    old = json.loads((DATA / "ledger_v1.json").read_text())
    led = Ledger.open(v1_file, "car")
    assert led.budget == Guarantee(2.0, 1e-6)
    assert [_without_module(c.to_dict()) for c in led.charges] == old["charges"]
    assert led.spent() == Ledger.from_json((DATA / "ledger_v1.json").read_text()).spent()
    assert led.reserved() == Guarantee(0.0)
    assert led.verify() == 1 + 2 + 1 + 4 + 1  # dataset, groups, reserve, charges, close
    heart = Ledger.open(v1_file, "heart")
    assert heart.spent() == Guarantee(0.5) and heart.relation.value == "replace_one"
    # the upgraded file keeps working and stays verifiable
    led.root.charge(0.125, mechanism="after upgrade")
    led.close()
    again = Ledger.open(v1_file, "car")
    assert len(again.charges) == 5 and again.verify() == 10


def test_a_format_2_file_opens_with_the_same_state_and_gains_the_reservations_costs(tmp_path):
    """``data/ledger_v2.sqlite`` and ``.json`` were written at 503c019 (dataset ``car``:
    a partition, a reservation of 0.5 in one part, a plan of three Gaussians reserved and
    charged, a charge in the other part). The file opens with the same state, is upgraded
    to format 3, stays verifiable, and a reservation made now stores its plan's cost."""
    path = tmp_path / "v2.sqlite"
    shutil.copy(DATA / "ledger_v2.sqlite", path)
    old = Ledger.from_json((DATA / "ledger_v2.json").read_text())
    led = Ledger.open(path, "car")
    assert led.spent_bound() == old.spent_bound() and led.budget == Guarantee(3.0, 1e-5)
    assert [c.to_dict() for c in led.charges] == [c.to_dict() for c in old.charges]
    assert led.verify() == 11
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == ("3",)
    assert [r[0] for r in conn.execute("SELECT cost FROM reservations")] == [None, None]
    conn.close()
    plan = PlanNode()
    plan.charge(Gaussian(sigma=5.0, sensitivity=1.0), mechanism="gaussian")
    with led.reserve(plan):
        led.root.charge(Gaussian(sigma=5.0, sensitivity=1.0), mechanism="gaussian")
    spent = led.spent()
    led.close()
    again = Ledger.open(path, "car")
    assert again.verify() == 14 and again.spent() == spent
    conn = sqlite3.connect(path)
    stored = [r[0] for r in conn.execute("SELECT cost FROM reservations ORDER BY id")]
    conn.close()
    assert stored[:2] == [None, None] and json.loads(stored[2])["layout"]


def test_a_format_1_json_document_loads_with_the_same_state():
    text = (DATA / "ledger_v1.json").read_text()
    led = Ledger.from_json(text)
    old = json.loads(text)
    assert [_without_module(c.to_dict()) for c in led.charges] == old["charges"]
    again = Ledger.from_json(led.to_json())
    assert again.spent() == led.spent() and again.to_json() == led.to_json()


def test_mechanism_entries_load_without_the_ledger_importing_the_mechanisms(tmp_path):
    """In a fresh interpreter, reading a stored NoisyMax imports privet.mechanisms.entries
    through the stored tag, and importing privet.ledger alone does not import it."""
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "ledger_v1.sqlite", path)
    code = textwrap.dedent(
        f"""
        import sys
        import privet.ledger
        assert not any(m.startswith("privet.mechanisms") for m in sys.modules), "eager import"
        led = privet.ledger.Ledger.open({str(path)!r}, "car")
        kinds = [type(c.entry).__name__ for c in led.charges]
        assert "NoisyMax" in kinds, kinds
        assert type(led.charges[1].entry).__module__ == "privet.mechanisms.entries"
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_new_entries_carry_their_module_and_foreign_modules_are_never_imported():
    from privet.mechanisms.entries import NoisyMax

    d = NoisyMax(epsilon=0.5, sensitivity=1.0).to_dict()
    assert d["module"] == "privet.mechanisms.entries" and d["type"] == "NoisyMax"
    assert Entry.from_dict(d) == NoisyMax(epsilon=0.5, sensitivity=1.0)
    with pytest.raises(UnsupportedEntryError, match="Unknown ledger entry type"):
        Entry.from_dict({"type": "Evil", "module": "os", "epsilon": 1.0})
    assert "Evil" not in str(sys.modules.get("os"))


def test_no_module_of_the_ledger_imports_an_upper_layer():
    upper = (
        "privet.mechanisms",
        "privet.mpc",
        "privet.learners",
        "privet.audits",
        "privet.testing",
        "privet.cli",
    )
    folder = Path(privet.ledger.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(upper), f"{path.name} imports {name}"
