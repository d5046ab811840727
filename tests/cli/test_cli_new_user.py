"""What a new user tripped on with their own CSV (issue 33), each as the user's shell sees it."""

from __future__ import annotations

import os
import pty
import sqlite3
import subprocess
import sys

import numpy as np

from privet.ledger import Guarantee, Ledger

TRAIN = ["train", "--learner", "dpid3", "--data", "car.csv", "--schema", "car"]
TRAIN += ["--target", "class", "--ledger", "budget.sqlite", "--seed", "0"]


def _datasets(privet) -> list[str]:  # type: ignore[no-untyped-def]
    path = privet.dir / "budget.sqlite"
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM datasets ORDER BY name")]


def _shuffled_copy(privet, name: str) -> None:  # type: ignore[no-untyped-def]
    header, *rows = (privet.dir / "car.csv").read_text().splitlines()
    order = np.random.default_rng(0).permutation(len(rows))
    (privet.dir / name).write_text("\n".join([header, *(rows[i] for i in order)]) + "\n")


# ---------------------------------------------------------------- item 1
def test_the_same_rows_under_another_dataset_name_are_refused_naming_the_first(privet):
    first = privet(*TRAIN, "--epsilon", "0.5", "--budget", "0.6", "--yes")
    assert first.code == 0, first.err
    over = privet(*TRAIN, "--epsilon", "0.5", "--yes", "--out", "m2")
    assert over.code == 3 and "Nothing was charged" in over.err
    # the refusal no longer leads round the budget
    assert "another dataset" in over.err and "use another dataset" not in over.err
    assert "new dataset" not in over.err

    _shuffled_copy(privet, "again.csv")  # the same rows, in another order and file
    again = [a if a != "car.csv" else "again.csv" for a in TRAIN]
    res = privet(*again, "--dataset", "car_again", "--epsilon", "0.5", "--budget", "1", "--yes")
    assert res.code == 4, res.err
    assert "already charged to dataset 'car'" in res.err and "Nothing was charged" in res.err
    assert res.out == ""  # refused before the plan, and nothing written
    assert _datasets(privet) == ["car"]


# ---------------------------------------------------------------- item 2
def test_a_call_that_fails_writes_no_budget(privet):
    bad = privet(*TRAIN, "--epsilon", "-1", "--budget", "2", "--budget-delta", "1e-5", "--yes")
    assert bad.code == 2 and "--epsilon" in bad.err
    assert _datasets(privet) == []
    ok = privet(*TRAIN, "--epsilon", "0.5", "--budget", "2", "--yes")  # delta 0 this time
    assert ok.code == 0, ok.err
    with Ledger.open(privet.dir / "budget.sqlite", "car") as led:
        assert led.budget == Guarantee(2.0) and led.spent() == Guarantee(0.5)


def test_a_declined_confirmation_writes_no_budget(privet):
    master, slave = pty.openpty()  # a terminal on standard input: the prompt is asked
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "privet", *TRAIN, "--epsilon", "0.5", "--budget", "2"],
            cwd=privet.dir,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            text=True,
        )
        os.write(master, b"n\n")
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 2 and "Not confirmed" in err, err
    assert _datasets(privet) == []


def test_ledger_init_writes_a_budget_on_purpose(privet):
    res = privet("ledger", "init", "budget.sqlite", "--dataset", "car", "--budget", "2")
    assert res.code == 0 and "lifetime budget ε=2" in res.out
    same = privet("ledger", "init", "budget.sqlite", "--dataset", "car", "--budget", "2")
    assert same.code == 0 and "already" in same.out
    other = privet("ledger", "init", "budget.sqlite", "--dataset", "car", "--budget", "3")
    assert other.code == 2 and "cannot be changed" in other.err
    ok = privet(*TRAIN, "--epsilon", "0.5", "--yes")  # no --budget needed any more
    assert ok.code == 0, ok.err
