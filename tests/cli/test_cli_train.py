"""``privet train``, ``predict`` and ``ledger``: the plan before the data, refusals that charge
nothing, a saved model that predicts, and the ledger's account of it."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from privet.ledger import Guarantee, Ledger

TRAIN = ["train", "--learner", "dpid3", "--data", "car.csv", "--schema", "car"]
TRAIN += ["--target", "class", "--ledger", "budget.sqlite", "--seed", "0"]


def _spent(privet, dataset="car"):  # type: ignore[no-untyped-def]
    led = Ledger.open(str(privet.dir / "budget.sqlite"), dataset=dataset)
    try:
        return led.spent()
    finally:
        led.close()


@pytest.fixture
def trained(privet):  # type: ignore[no-untyped-def]
    """One call of 0.5 charged to a dataset 'car' of lifetime budget 1 in budget.sqlite."""
    res = privet(*TRAIN, "--epsilon", "0.5", "--budget", "1", "--test-size", "0.2", "--yes")
    assert res.code == 0, res.err
    return privet, res


def test_train_prints_the_plan_first_saves_the_model_and_charges_the_ledger(trained):
    privet, res = trained
    out = res.out
    assert out.index("Privacy plan") < out.index("Trained")  # plan before any value is read
    assert "the ledger proves: ε=0.5" in out and "Held-out accuracy" in out
    assert "not covered by the ledger" in out  # an exact figure of private rows, said so
    assert _spent(privet) == Guarantee(0.5)
    meta = json.loads((privet.dir / "privet-model" / "model.json").read_text())
    assert meta["learner"] == "DPID3Classifier" and meta["ledger"] == "budget.sqlite"
    assert meta["params"]["epsilon"] == 0.5 and not meta["secret_shared"]
    assert "test_accuracy" not in meta  # model.json describes the model; it may be published
    # the model's guarantee as a mechanism (its plan), beside what this call charged
    assert meta["privacy_guarantee"] == meta["privacy_spent"] == str(Guarantee(0.5))

    pred = privet("predict", "--model", "privet-model", "--data", "car.csv", "--out", "p.csv")
    assert pred.code == 0, pred.err
    lines = (privet.dir / "p.csv").read_text().splitlines()
    assert lines[0].endswith("predicted_class") and len(lines) == 1729
    assert "Accuracy" in pred.err
    assert _spent(privet) == Guarantee(0.5)  # predicting charges nothing


def test_refused_calls_charge_nothing(trained):
    privet, _ = trained
    before = _spent(privet)
    over = privet(*TRAIN, "--epsilon", "0.8", "--yes")
    assert over.code == 3 and "Nothing was charged" in over.err
    assert "Privacy plan" in over.out  # the plan is shown, then refused
    lines = (privet.dir / "car.csv").read_text().splitlines()
    (privet.dir / "bad.csv").write_text("\n".join([*lines[:5], "sky," + lines[5].split(",", 1)[1]]))
    mismatch = privet(*TRAIN, "--epsilon", "0.1", "--yes", "--data", "bad.csv", "--dataset", "car")
    assert mismatch.code == 4 and "privet schema check" in mismatch.err
    (privet.dir / "broken.csv").write_text('buying,maint\n"vhigh,low\n1,2,3\n')
    broken = privet(*TRAIN, "--epsilon", "0.1", "--yes", "--data", "broken.csv")
    assert broken.code == 4 and "Cannot read" in broken.err
    missing = privet(*TRAIN, "--epsilon", "0.1", "--yes", "--data", "nope.csv")
    assert missing.code == 4 and "No data file" in missing.err
    unconfirmed = privet(*TRAIN, "--epsilon", "0.1")  # stdin is not a terminal, no --yes
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.err
    unknown = privet(*TRAIN, "--epsilon", "0.1", "--yes", "--learner", "c45")
    assert unknown.code == 2 and "privet learners" in unknown.err
    for res in (over, mismatch, broken, missing, unconfirmed, unknown):
        assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    assert _spent(privet) == before


def test_the_first_charge_of_a_dataset_needs_a_budget(privet):
    res = privet(*TRAIN, "--epsilon", "0.5", "--yes", "--dataset", "fresh")
    assert res.code == 2 and "--budget" in res.err
    assert privet(*TRAIN, "--epsilon", "0.5", "--budget", "0.5", "--yes").code == 0
    again = privet(*TRAIN, "--epsilon", "0.1", "--yes", "--out", "m2")  # budget spent
    assert again.code == 3 and _spent(privet) == Guarantee(0.5)


def test_json_summary_and_ledger_commands(trained):
    privet, _ = trained
    res = privet(*TRAIN, "--epsilon", "0.25", "--yes", "--json", "--out", "m2")
    assert res.code == 0, res.err
    summary = res.json()
    assert summary["plan"]["proven_epsilon"] == 0.25 and summary["ledger_spent"] == "ε=0.75"
    show = privet("ledger", "show", "budget.sqlite", "--json")
    assert Ledger.from_json(show.out).spent() == Guarantee(0.75)
    history = privet("ledger", "history", "budget.sqlite", "--json").json()
    assert {h["caller"] for h in history} == {"DPID3Classifier"}
    assert all(h["time"].endswith("UTC") for h in history)
    # add/remove: each level and the leaves are one charge in the tree's scope, so the
    # history's rows add up to the cost (no parallel parts)
    assert math.isclose(sum(h["epsilon"] for h in history), 0.75)
    csv_out = privet("ledger", "export", "budget.sqlite", "--format", "csv").out.splitlines()
    assert csv_out[0].startswith("dataset,id,time,caller") and len(csv_out) == len(history) + 1
    doc = privet("ledger", "export", "budget.sqlite", "--format", "json", "-o", "l.json")
    assert doc.code == 0
    exported = Ledger.from_json((privet.dir / "l.json").read_text())
    assert exported.spent() == Guarantee(0.75)
    missing = privet("ledger", "history", "nope.sqlite")
    assert missing.code == 1 and "No ledger file" in missing.err


def test_non_private_learner_takes_no_epsilon(privet):
    res = privet(*TRAIN[:-4], "--learner", "id3", "--epsilon", "1")
    assert res.code == 2 and "not differentially private" in res.err
    ok = privet(*TRAIN[:-4], "--learner", "ID3Classifier", "--out", "plain")
    assert ok.code == 0, ok.err
    assert "no privacy" in ok.out


def test_audit_model_directory(trained):
    privet, _ = trained
    res = privet("audit", "model", "privet-model", "--trials", "10", "--out", "aud", "--json")
    assert res.code == 0, res.err
    summary = res.json()
    assert summary["claimed_epsilon"] == 0.5 and summary["proven_epsilon"] == 0.5
    assert (privet.dir / "aud" / "audit.html").stat().st_size > 0


@pytest.mark.mpc
def test_secret_shared_model_saves_one_share_file_per_party_and_predicts_obliviously(privet):
    res = privet(
        "train", "--learner", "oblivious_id3", "--data", "tennis.csv", "--schema", "tennis",
        "--target", "Play", "--epsilon", "1", "--backend", "mpc", "--parties", "3",
        "--max-depth", "1", "--out", "obl", "--seed", "1", timeout=240,
    )  # fmt: skip
    assert res.code == 0, res.err
    model = privet.dir / "obl"
    parties = sorted(p.name for p in model.glob("party-*.pkl"))
    assert parties == ["party-0.pkl", "party-1.pkl", "party-2.pkl"]
    shares = [pickle.loads((model / p).read_bytes()) for p in parties]
    assert shares[0] != shares[1]  # each party holds its own shares

    class Refs(pickle.Unpickler):
        refs: list = []

        def persistent_load(self, pid):  # type: ignore[no-untyped-def]
            self.refs.append(pid[0])
            return None

    with open(model / "estimator.pkl", "rb") as fh:
        est = Refs(fh).load()
    assert "shared" in Refs.refs and est.tree_ is None  # no reconstructed tree on disk
    pred = privet("predict", "--model", "obl", "--data", "tennis.csv", "--json", timeout=240)
    assert pred.code == 0, pred.err
    assert set(pred.json()["predictions"]) <= {"Yes", "No"} and pred.json()["rows"] == 14


def test_model_directory_errors_are_refused_before_training(privet):
    (privet.dir / "busy").mkdir()
    (privet.dir / "busy" / "notes.txt").write_text("mine")
    res = privet(*TRAIN[:-4], "--epsilon", "0.5", "--out", "busy")
    assert res.code == 2 and "holds other files" in res.err
    assert not (privet.dir / "busy" / "model.json").exists()
    nomodel = privet("predict", "--model", "busy", "--data", "car.csv")
    assert nomodel.code == 4 and "No privet model" in nomodel.err


def test_a_csv_written_by_hand_numbers_booleans_and_integer_codes(privet):
    """The path of a user with their own CSV: infer a draft, check, train, predict."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 300
    age, smoker = rng.integers(18, 90, n), rng.choice(["True", "False"], n)
    risk = np.where((age > 60) | (smoker == "True"), "high", "low")
    rows = [f"{a},{rng.normal(120, 15):.1f},{s},{rng.integers(1, 4)},{r}"
            for a, s, r in zip(age, smoker, risk, strict=True)]  # fmt: skip
    (privet.dir / "mine.csv").write_text("age,bp,smoker,grade,risk\n" + "\n".join(rows) + "\n")
    assert privet("schema", "infer", "mine.csv", "--target", "risk", "-o", "s.json").code == 0
    kinds = {a["name"]: a for a in json.loads((privet.dir / "s.json").read_text())["attributes"]}
    assert kinds["age"]["type"] == "numeric" and kinds["smoker"]["categories"] == [False, True]
    assert kinds["grade"]["categories"] == [1, 2, 3]
    assert privet("schema", "check", "mine.csv", "s.json").code == 0
    res = privet(
        "train", "--learner", "dpgbt", "--data", "mine.csv", "--schema", "s.json",
        "--target", "risk", "--epsilon", "2", "--test-size", "0.25", "--seed", "0",
    )  # fmt: skip
    assert res.code == 0, res.err
    (privet.dir / "new.csv").write_text("age,bp,smoker,grade\n70,150.5,True,2\n20,110,False,1\n")
    pred = privet("predict", "--model", "privet-model", "--data", "new.csv", "--json")
    assert pred.code == 0, pred.err
    assert set(pred.json()["predictions"]) <= {"high", "low"} and pred.json()["rows"] == 2


def test_an_infinite_plan_is_refused_with_the_fix(privet):
    base = ["train", "--data", "car.csv", "--schema", "car", "--target", "class"]
    base += ["--ledger", "budget.sqlite", "--budget", "2", "--yes", "--epsilon", "1"]
    gbt = privet(*base, "--learner", "dpgbt")  # Gaussian leaves need a delta in the budget
    assert gbt.code == 2 and "--budget-delta" in gbt.err  # a missing option, said first
    assert gbt.out == ""  # before the plan, which would read "proves: ε=∞"
    exact = privet(*base, "--learner", "obliviousid3", "--option", "split=exact")  # the paper
    assert exact.code == 3 and "split=exponential" in exact.err
    assert not (privet.dir / "budget.sqlite").exists()  # refused calls write nothing


def test_extra_columns_and_missing_values_are_refused_unless_the_user_says_what_to_do(privet):
    lines = (privet.dir / "car.csv").read_text().splitlines()
    rows = [r + ",note" for r in lines[1:]]
    rows[3] = ",".join(["", *rows[3].split(",")[1:]])  # row 4 misses 'buying'
    (privet.dir / "mine.csv").write_text("\n".join([lines[0] + ",comment", *rows]) + "\n")
    mine = ["--data", "mine.csv", "--epsilon", "0.5", "--budget", "1", "--yes"]
    base = [a if a != "car.csv" else "mine.csv" for a in TRAIN]
    refused = privet(*base, *mine)
    assert refused.code == 4 and "--extra ignore" in refused.err
    still = privet(*base, *mine, "--extra", "ignore")
    assert still.code == 4 and "--missing drop" in still.err
    ok = privet(*base, *mine, "--extra", "ignore", "--missing", "drop")
    assert ok.code == 0, ok.err
    assert f"{len(rows) - 1} rows (1 with a missing value left out)" in ok.err + ok.out
    check = privet("schema", "check", "mine.csv", "car", "--extra", "ignore", "--missing", "drop")
    assert check.code == 0, check.err


def test_held_out_rows_come_from_secret_coins_at_the_asked_rate():
    """--test-size holds out each row independently (a Poisson subsample trains), from OS
    entropy: two draws differ, and the rate is within a 99.99 % binomial interval."""
    from privet.cli.train import held_out_rows

    n, rate = 20_000, 0.2
    first, second = held_out_rows(n, rate), held_out_rows(n, rate)
    assert first.shape == (n,) and first.dtype == bool
    assert not np.array_equal(first, second)  # equal with probability about 2^-14,000
    half = 3.9 * np.sqrt(n * rate * (1 - rate))  # z of a two-sided 99.99 % interval
    for draw in (first, second):
        assert abs(draw.sum() - n * rate) < half
    # independent of the row's position: the first and second halves hold out alike
    assert abs(first[: n // 2].sum() - first[n // 2 :].sum()) < 2 * half
    assert not held_out_rows(n, None).any()


def test_audit_model_is_white_box_and_refuses_private_rows_on_a_budget(trained):
    """The model's own epsilon is the claim; an audit on its rows would be a non-private
    release, which its budgeted ledger refuses without charging anything."""
    privet, _ = trained
    res = privet("audit", "model", "privet-model", "--trials", "10", "--out", "aud", "--json")
    assert res.code == 0, res.err
    summary = res.json()
    assert summary["mode"] == "releases" and summary["neighbours"] == "schema"
    assert summary["claimed_epsilon"] == 0.5 and not summary["internal"]
    refused = privet("audit", "model", "privet-model", "--on-private-rows", "--out", "aud2")
    assert refused.code == 3 and "non-private release" in refused.err
    assert _spent(privet) == Guarantee(0.5)  # the refused audit charged nothing
