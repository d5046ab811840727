"""The `privet` command: demo, ledger show, datasets, and its errors."""

from __future__ import annotations

import pytest

from privet.cli import main
from privet.ledger import Guarantee, Ledger


def test_demo_runs_end_to_end_and_leaves_a_ledger(tmp_path, capsys):
    path = tmp_path / "demo.sqlite"
    assert main(["demo", "--ledger", str(path), "--audit-trials", "20"]) == 0
    out = capsys.readouterr().out
    assert "Privacy plan" in out and "BudgetExceededError" in out
    # the DP tree's audit is white box (its released noisy values), the non-private one's black box
    assert "White box" in out and "releases) trainings" in out and "Black box" in out
    led = Ledger.open(path, dataset="car")
    assert led.spent() == Guarantee(1.0)  # the over-budget call charged nothing
    assert led.remaining() == Guarantee(1.0)


def test_ledger_show_prints_a_file_and_its_json(tmp_path, capsys):
    path = tmp_path / "l.sqlite"
    led = Ledger.open(path, dataset="adult", budget=Guarantee(1.0))
    led.root.charge(0.25, mechanism="laplace", caller="me", step="count")
    led.close()
    assert main(["ledger", "show", str(path)]) == 0
    assert "laplace" in capsys.readouterr().out
    assert main(["ledger", "show", str(path), "--json"]) == 0
    assert Ledger.from_json(capsys.readouterr().out).spent() == Guarantee(0.25)


def test_ledger_show_errors_are_privet_messages(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "missing.sqlite")]) == 1
    assert "No ledger file" in capsys.readouterr().err
    path = tmp_path / "l.sqlite"
    Ledger.open(path, dataset="adult", budget=Guarantee(1.0)).close()
    assert main(["ledger", "show", str(path), "--dataset", "heart"]) == 1
    assert "not in" in capsys.readouterr().err


def test_datasets_lists_the_shipped_schemas(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "car" in out and "tennis" in out


def test_ledger_verify_passes_an_intact_file_and_flags_a_raw_sql_edit(tmp_path, capsys):
    """Issue 11, item 9: `privet ledger verify` (a raw UPDATE of a budget is evident)."""
    import sqlite3

    from privet.cli import main
    from privet.ledger import Guarantee, Ledger

    path = tmp_path / "budget.sqlite"
    led = Ledger.open(path, dataset="car", budget=Guarantee(1.0))
    led.root.charge(Guarantee(0.25), mechanism="test", caller="test")
    led.close()
    assert main(["ledger", "verify", str(path)]) == 0
    assert "OK" in capsys.readouterr().out
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    table = next(t for t in tables if "budget" in t or "dataset" in t)
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    col = next(c for c in cols if "epsilon" in c)
    con.execute(f"UPDATE {table} SET {col} = 100")
    con.commit()
    con.close()
    assert main(["ledger", "verify", str(path)]) != 0


def test_demo_rejects_zero_audit_trials_before_charging(tmp_path, capsys):
    """Issue 11, item 5: `privet demo --audit-trials 0` charged before the argument was rejected."""
    from privet.cli import main

    path = tmp_path / "demo.sqlite"
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--audit-trials", "0", "--ledger", str(path)])
    assert exc.value.code == 2
    assert "whole number >= 1" in capsys.readouterr().err
    assert not path.exists()  # no ledger was even opened, so nothing was charged
