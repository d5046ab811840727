"""Fuzz the command line (issue 11): junk arguments and junk files give a privet error
on one line with a documented exit code, never an unexpected exception, and a refused
``privet train`` charges nothing."""

from __future__ import annotations

import contextlib
import io
import os
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privet.cli import main
from privet.ledger import Guarantee, Ledger

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
EXIT_CODES = {0, 1, 2, 3, 4}

number = st.one_of(
    st.sampled_from(["0", "-1", "1e309", "nan", "inf", "0.5", "1", "2", "abc", "", "1e-300"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
learner = st.sampled_from(["dpid3", "DPID3Classifier", "id3", "dpgbt", "nope", "", "dp_forest"])
column = st.sampled_from(["class", "safety", "nope", ""])
junk_csv = st.one_of(
    st.just(""),
    st.just("a,b\n1,2\n"),
    st.just("buying,maint,doors,persons,lug_boot,safety,class\nvhigh,vhigh,2,2,small,low\n"),
    st.text(max_size=200),
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    data = resources.files("privet.data").joinpath("bundled", "car.csv").read_bytes()
    (tmp_path / "car.csv").write_bytes(data)
    Ledger.open(tmp_path / "budget.sqlite", "car", budget=Guarantee(1.0)).close()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def _spent(folder) -> float:
    led = Ledger.open(folder / "budget.sqlite", "car")
    try:
        return led.spent().epsilon
    finally:
        led.close()


@SETTINGS
@given(lrn=learner, eps=number, budget=st.one_of(st.none(), number), target=column,
       test_size=st.one_of(st.none(), number), csv=st.one_of(st.none(), junk_csv))  # fmt: skip
def test_train_with_junk_is_a_clear_error_and_charges_nothing(
    folder, lrn, eps, budget, target, test_size, csv
):
    data = "car.csv"
    if csv is not None:
        (folder / "junk.csv").write_text(csv)
        data = "junk.csv"
    argv = ["train", "--learner", lrn, "--data", data, "--schema", "car", "--target", target,
            "--epsilon", eps, "--ledger", "budget.sqlite", "--dataset", "car", "--yes",
            "--out", "m"]  # fmt: skip
    if budget is not None:
        argv += ["--budget", budget]
    if test_size is not None:
        argv += ["--test-size", test_size]
    before = _spent(folder)
    code, err = _run(argv)
    assert code in EXIT_CODES, (argv, code, err)
    assert "(unexpected;" not in err, (argv, err)
    assert "Traceback" not in err
    if code != 0:
        assert err.strip(), "a refusal says why"
        assert _spent(folder) == before, (argv, err)  # a refused command charged nothing


@SETTINGS
@given(cmd=st.sampled_from(["show", "export", "history", "verify"]), content=junk_csv,
       fmt=st.sampled_from(["json", "csv", "xml"]))  # fmt: skip
def test_ledger_commands_on_junk_files(folder, cmd, content, fmt):
    (folder / "junk.sqlite").write_text(content)
    argv = ["ledger", cmd, "junk.sqlite"] + (["--format", fmt] if cmd == "export" else [])
    code, err = _run(argv)
    assert code in EXIT_CODES and "(unexpected;" not in err, (argv, code, err)
    code, err = _run(["ledger", cmd, "missing.sqlite"])
    assert code != 0 and "(unexpected;" not in err, err


@SETTINGS
@given(content=junk_csv, target=column, cmd=st.sampled_from(["check", "infer"]))
def test_schema_and_predict_on_junk_files(folder, content, target, cmd):
    (folder / "junk.csv").write_text(content)
    argv = (
        ["schema", "check", "junk.csv", "car"]
        if cmd == "check"
        else ["schema", "infer", "junk.csv", "--target", target, "-o", "s.json"]
    )
    code, err = _run(argv)
    assert code in EXIT_CODES and "(unexpected;" not in err, (argv, code, err)
    code, err = _run(["predict", "--model", "nowhere", "--data", "junk.csv"])
    assert code != 0 and "(unexpected;" not in err, err
    os.makedirs("fake-model", exist_ok=True)
    (folder / "fake-model" / "model.json").write_text(content)
    code, err = _run(["predict", "--model", "fake-model", "--data", "junk.csv"])
    assert code != 0 and "(unexpected;" not in err, err


# Issue 37: negative and empty values of every option were accepted (--max-parts -1,
# --attacks '') or ended in an "unexpected" one-liner (a folder as a ledger file,
# --name a/../../b). Every command below is complete but for the option tried, so a
# value it accepts would run the command (and fail this test).
COMMANDS = {
    "ledger show": (["ledger", "show", "budget.sqlite"], ["--max-parts", "--dataset"]),
    "audit mia": (
        ["audit", "mia", "--learner", "dpid3"],
        ["--rows", "--shadows", "--epsilon", "--depth", "--confidence", "--n-jobs", "--seed",
         "--attacks", "--name", "--out", "--dataset"],
    ),
    "audit dp": (
        ["audit", "dp", "--learner", "dpid3"],
        ["--trials", "--epsilon", "--depth", "--confidence", "--n-jobs", "--seed", "--name"],
    ),
    "audit model": (
        ["audit", "model", "nowhere"],
        ["--trials", "--shadows", "--rows", "--confidence", "--n-jobs", "--seed", "--name"],
    ),
    "train": (
        ["train", "--learner", "dpid3", "--data", "car.csv", "--schema", "car", "--target",
         "class", "--ledger", "budget.sqlite", "--dataset", "car", "--epsilon", "0.1", "--yes"],
        ["--epsilon", "--budget", "--budget-delta", "--test-size", "--parties", "--max-depth",
         "--seed", "--out", "--backend"],
    ),
    "schema infer": (
        ["schema", "infer", "car.csv", "--target", "class", "-o", "s.json"],
        ["--bins", "--max-categories", "--output"],
    ),
    "schema check": (["schema", "check", "car.csv", "car"], ["--max"]),
    "demo": (["demo", "--ledger", "demo.sqlite"], ["--epsilon", "--budget", "--depth",
                                                   "--audit-trials", "--seed", "--dataset"]),
    "predict": (["predict", "--model", "nowhere", "--data", "car.csv"], ["--out"]),
}  # fmt: skip
BAD_VALUES = ["-1", "", "  ", "-0.5", "nan", "-inf"]
#: Names and paths: "-1" or "nan" is a valid file name; only an empty one is wrong.
TEXT = {"--name", "--out", "--output"}
CASES = [
    pytest.param(argv, opt, value, id=f"{cmd} {opt} {value!r}")
    for cmd, (argv, options) in COMMANDS.items()
    for opt in options
    for value in BAD_VALUES
    if not (opt == "--n-jobs" and value == "-1")  # all cores: valid
    and not (opt in TEXT and value.strip())
]


@pytest.mark.parametrize(("argv", "option", "value"), CASES)
def test_negative_and_empty_option_values_are_usage_errors(folder, argv, option, value):
    before = _spent(folder)
    if option in argv:  # replace the command's own value of it
        i = argv.index(option)
        argv = argv[:i] + argv[i + 2 :]
    code, err = _run([*argv, option, value])
    assert code != 0, f"{argv} {option} {value!r} was accepted"
    assert code in EXIT_CODES and "(unexpected;" not in err and "Traceback" not in err, err
    assert _spent(folder) == before


@pytest.mark.parametrize(
    "argv",
    [
        ["ledger", "show", "afolder"],
        ["ledger", "history", "afolder"],
        ["ledger", "verify", "afolder"],
        ["ledger", "export", "afolder"],
        ["audit", "mia", "--learner", "dpid3", "--name", "a/../../b"],
        ["audit", "dp", "--learner", "dpid3", "--name", ".."],
        ["train", "--learner", "dpid3", "--data", "car.csv", "--schema", "car", "--target",
         "class", "--ledger", "afolder", "--dataset", "car", "--epsilon", "0.1", "--yes"],
    ],
)  # fmt: skip
def test_a_folder_as_a_ledger_or_a_path_as_a_name_is_a_clear_error(folder, argv):
    (folder / "afolder").mkdir(exist_ok=True)
    code, err = _run(argv)
    assert code != 0 and code in EXIT_CODES, (argv, code, err)
    assert "(unexpected;" not in err and ("folder" in err or "stem" in err), err
