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
