"""Every script in ``examples/`` runs to the end on small data, within a time limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, *args: str, timeout: float = 180) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=EXAMPLES.parent,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_every_example_has_a_test():
    tested = {
        "two_hospitals_federated_tree.py",
        "three_server_oblivious_tree.py",
        "audit_my_mechanism.py",
        "shared_budget.py",
    }
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_two_hospitals_federated_tree():
    from privet.data import find_data_file
    from privet.errors import DataNotFoundError

    try:
        find_data_file("processed.cleveland.data")
    except DataNotFoundError:
        pytest.skip("needs ../shared/data (Cleveland heart data)")
    out = run_example("two_hospitals_federated_tree.py")
    assert "The ledger proves: ε=1" in out and "Held-out accuracy" in out


def test_three_server_oblivious_tree_local():
    out = run_example("three_server_oblivious_tree.py", "--backend", "local")
    assert "tree_ in the clear: None" in out and "Oblivious prediction" in out


@pytest.mark.mpc
def test_three_server_oblivious_tree_over_tcp():
    out = run_example("three_server_oblivious_tree.py", "--backend", "mpc", timeout=240)
    assert "Trained by 3 parties" in out and "shares per party: 3" in out


def test_audit_my_mechanism_catches_the_unclipped_mean():
    out = run_example("audit_my_mechanism.py", "--trials", "2000")
    assert "noisy_mean: no violation found" in out
    assert "unclipped_mean FAILED" in out


@pytest.mark.multiprocess
def test_shared_budget_lets_two_of_three_scripts_train(tmp_path):
    out = run_example("shared_budget.py", "--ledger", str(tmp_path / "b.sqlite"))
    assert out.count("trained with epsilon=0.4") == 2 and "refused" in out
    assert "remaining ε=0.2" in out
