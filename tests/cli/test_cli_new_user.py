"""What a new user tripped on with their own CSV (issue 33), each as the user's shell sees it."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pty
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from privet.ledger import Guarantee, Ledger, gdp_to_epsilon

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
    assert _datasets(privet) == []  # the refused call wrote no budget
    assert bad.code == 2 and "--epsilon" in bad.err
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


def _in_terminal(privet, *args: str, answer: bytes = b"") -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """``privet *args`` with a terminal on standard input and output (what a user sees)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "privet", *args],
        cwd=privet.dir,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    if answer:
        os.write(master, answer)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


GBT = ["train", "--learner", "dpgbt", "--data", "car.csv", "--schema", "car", "--target"]
GBT += ["class", "--ledger", "budget.sqlite", "--budget", "2", "--budget-delta", "1e-5"]


@pytest.fixture
def boosted(privet):  # type: ignore[no-untyped-def]
    """A DP boosted model (Gaussian leaves) charged to dataset 'car' of budget.sqlite."""
    res = privet(*GBT, "--epsilon", "1", "--yes")
    assert res.code == 0, res.err
    return privet, res


# ---------------------------------------------------------------- item 4
def test_history_and_csv_show_each_gaussian_charge_at_the_budgets_delta(boosted):
    privet, _ = boosted
    history = privet("ledger", "history", "budget.sqlite")
    assert history.code == 0 and "∞" not in history.out
    assert "σ=" in history.out and "μ=" in history.out and "δ=1e-05" in history.out
    rows = privet("ledger", "history", "budget.sqlite", "--json").json()
    export = privet("ledger", "export", "budget.sqlite", "--format", "csv").out
    read = list(csv.DictReader(io.StringIO(export)))
    assert len(read) == len(rows) > 10
    for r in read:
        assert r["entry"] == "Gaussian" and r["accountant"] == "gdp"
        eps, sigma, mu = float(r["epsilon"]), float(r["sigma"]), float(r["mu"])
        assert math.isfinite(eps) and float(r["delta"]) == float(r["at_delta"]) == 1e-5
        sensitivity = json.loads(r["parameters"])["sensitivity"]
        assert math.isclose(mu, sensitivity / sigma)
        # the per-charge figure is the ledger's own, at the budget's delta
        assert math.isclose(eps, gdp_to_epsilon(mu, 1e-5), rel_tol=1e-9)


# ---------------------------------------------------------------- item 5
def test_ledger_show_collapses_a_boosted_model_and_never_cuts_piped_lines(boosted):
    privet, _ = boosted
    short = privet("ledger", "show", "budget.sqlite")
    full = privet("ledger", "show", "budget.sqlite", "--all")
    assert short.code == full.code == 0
    assert len(short.out.splitlines()) <= 12 < 60 < len(full.out.splitlines())
    assert "partitions like this one" in short.out
    # piped output is whole: the charge lines end with their caller and step
    charge_lines = [line for line in full.out.splitlines() if "gaussian" in line]
    leaves = [line for line in charge_lines if ": tree " in line]
    assert leaves and all(line.endswith("leaf (G, H)]") for line in leaves)
    assert all(line.endswith("]") for line in charge_lines)  # the base score's counts too
    assert max(map(len, charge_lines)) > 80
    shallow = privet("ledger", "show", "budget.sqlite", "--depth", "0")
    assert "deeper scopes not shown" in shallow.out and len(shallow.out.splitlines()) <= 5


# ---------------------------------------------------------------- item 6
def test_train_ends_with_one_line_about_the_ledger_in_a_terminal(privet):
    code, screen = _in_terminal(privet, *GBT, "--epsilon", "1", answer=b"y\n")
    assert code == 0, screen
    assert "partition into" not in screen and "gaussian" not in screen  # no tree
    last = [line for line in screen.splitlines() if line.strip()][-1]
    assert "left" in screen and "privet ledger show budget.sqlite --dataset car" in screen, last


# ---------------------------------------------------------------- item 7
def test_a_bad_option_names_the_flag_and_violations_are_counted_from_the_top(privet):
    bad = privet(*TRAIN, "--epsilon", "-1", "--budget", "1", "--yes")
    assert bad.code == 2 and bad.err.startswith("privet: UsageError: --epsilon must be")
    assert "parameter" not in bad.err and "call fit again" not in bad.err
    depth = privet(*TRAIN, "--epsilon", "1", "--max-depth", "-2", "--budget", "1", "--yes")
    assert depth.code == 2 and "--max-depth must be" in depth.err

    header, *rows = (privet.dir / "car.csv").read_text().splitlines()
    cells = [r.split(",") for r in rows]
    cells[4][0] = "free"  # row 5, first column
    (privet.dir / "one.csv").write_text("\n".join([header, *map(",".join, cells)]) + "\n")
    cells[2][-1] = "maybe"  # row 3, last column
    (privet.dir / "two.csv").write_text("\n".join([header, *map(",".join, cells)]) + "\n")
    base = [*TRAIN[:-4], "--epsilon", "1"]
    one = privet(*[a if a != "car.csv" else "one.csv" for a in base])
    assert one.code == 4 and "1 violation;" in one.err and "row 5, column 'buying'" in one.err
    two = privet(*[a if a != "car.csv" else "two.csv" for a in base])
    assert two.code == 4 and "2 violations;" in two.err and "row 3, column 'class'" in two.err
    listed = privet("schema", "check", "two.csv", "car")
    assert [line.split("\t")[0] for line in listed.out.splitlines()[2:]] == ["3", "5"]


# ---------------------------------------------------------------- item 8
def test_a_gaussian_learner_without_a_delta_is_told_first_how_to_give_one(privet):
    no_delta = [*GBT[: GBT.index("--budget-delta")], "--epsilon", "1", "--yes"]
    res = privet(*no_delta)
    assert res.code == 2 and res.out == ""
    assert "needs a delta > 0" in res.err and "--budget-delta 1e-05" in res.err
    assert _datasets(privet) == []
    # a dataset whose budget has delta 0 for life: refused, with a pure-DP learner as the fix
    assert privet(*TRAIN, "--epsilon", "0.5", "--budget", "2", "--yes").code == 0
    stuck = privet(*[a for a in no_delta if a not in ("--budget", "2")])
    assert stuck.code == 3 and stuck.out == "" and "pure-DP learner" in stuck.err
    # without a ledger file the call's own ledger has the learner's delta: a finite plan
    own = privet(*GBT[: GBT.index("--ledger")], "--epsilon", "1", "--out", "own")
    assert own.code == 0 and "the ledger proves: ε=1, δ=1e-05" in own.out, own.out


# ---------------------------------------------------------------- item 10
def test_schema_check_validates_the_schema_file_itself_first(privet):
    doc = json.loads(privet("schema", "infer", "car.csv", "--target", "class").out)
    assert privet("schema", "check", "car.csv", "car").code == 0
    (privet.dir / "good.json").write_text(json.dumps(doc))
    alone = privet("schema", "check", "good.json")
    assert alone.code == 0 and "a valid privet schema (6 attributes" in alone.out
    doc["attributes"][0]["categories"] += doc["attributes"][0]["categories"][:1]
    doc["attributes"][1]["bins"] = [3]  # cut points on a categorical attribute
    doc["target"]["categories"] = doc["target"]["categories"][:1]
    (privet.dir / "bad.json").write_text(json.dumps(doc))
    res = privet("schema", "check", "car.csv", "bad.json")
    assert res.code == 4 and "The data was not read" in res.err
    places = [line.split("\t")[0] for line in res.out.splitlines()[2:]]
    assert places == ["attributes[0].categories", "attributes[1]", "target.categories"]
    as_json = privet("schema", "check", "bad.json", "--json")
    assert as_json.code == 4 and len(as_json.json()["schema_problems"]) == 3
    train = privet(*TRAIN[:-4], "--schema", "bad.json", "--epsilon", "1")
    assert (
        train.code == 4
        and "3 problems" in train.err
        and "privet schema check bad.json" in train.err
    )


# ---------------------------------------------------------------- item 13
def test_a_forest_shows_a_progress_bar_in_a_terminal_and_nothing_when_piped(privet):
    forest = [*TRAIN[:-4], "--learner", "dpforest", "--epsilon", "1"]
    forest += ["--option", "n_estimators=20", "--out", "forest"]
    code, screen = _in_terminal(privet, *forest)
    assert code == 0, screen
    assert "trees" in screen and "20/20" in screen and "━" in screen  # steps done of the total
    piped = privet(*forest)
    assert piped.code == 0 and "20/20" not in piped.out + piped.err and "━" not in piped.out


# ---------------------------------------------------------------- item 11
def test_a_score_says_plainly_when_the_majority_class_is_not_beaten():
    from privet.cli._scores import Score

    truth = np.array(["good"] * 675 + ["bad"] * 325)
    poor = Score.of(np.where(np.arange(1000) < 665, truth, "x"), truth)
    assert (poor.accuracy, poor.majority_class, poor.majority_rate) == (0.665, "good", 0.675)
    lines = poor.lines("Held-out accuracy", "exact")
    assert "always answering 'good'" in lines[0] and "0.675" in lines[0]
    assert len(lines) == 2 and lines[1].startswith("Warning: this model does not beat")
    good = Score.of(truth, truth)
    assert good.beats_majority and len(good.lines("x", "y")) == 1


def test_train_and_predict_print_the_majority_class_rate_beside_the_accuracy(privet):
    res = privet(*TRAIN[:-4], "--epsilon", "1", "--test-size", "0.3", "--json")
    assert res.code == 0, res.err
    summary = res.json()
    assert summary["test_majority_class"] == "unacc"
    assert summary["test_beats_majority"] == (
        summary["test_accuracy"] > summary["test_majority_rate"]
    )
    pred = privet("predict", "--model", "privet-model", "--data", "car.csv")
    assert pred.code == 0
    assert "always answering 'unacc', the most common class in these rows, scores 0.700" in pred.err
    accuracy = float(pred.err.split("(1728 rows): ")[1].split(";")[0])
    assert ("does not beat" in pred.err) == (accuracy <= 1210 / 1728)
