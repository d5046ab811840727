"""``privet --help``, ``learners``, ``datasets``, ``schema infer|check``: names, drafts, violations."""

from __future__ import annotations

import json

import privet.learners
from privet.audits import SHORT_NAMES
from privet.data import Schema

COMMANDS = ["demo", "learners", "datasets", "schema", "train", "predict", "ledger", "audit"]


def test_help_lists_every_command_and_each_gives_an_example(privet):
    top = privet("--help")
    assert top.code == 0
    for name in COMMANDS:
        assert name in top.out
    for argv in (
        ["learners"], ["datasets"], ["schema", "infer"], ["schema", "check"], ["train"],
        ["predict"], ["ledger", "show"], ["ledger", "export"], ["ledger", "history"],
        ["audit", "model"],
    ):  # fmt: skip
        res = privet(*argv, "--help")
        assert res.code == 0 and "Example: privet" in " ".join(res.out.split()), argv


def test_no_command_is_a_usage_error(privet):
    assert privet().code == 2
    assert privet("schema").code == 2
    assert privet("train", "--data", "car.csv").code == 2  # argparse: missing options


def test_learners_lists_every_exported_learner_with_the_audits_short_name(privet):
    res = privet("learners", "--json")
    assert res.code == 0
    rows = {r["class"]: r for r in res.json()}
    exported = [n for n in privet_learners() if n.endswith("Classifier")]
    assert set(exported) <= set(rows)
    for cls, row in rows.items():
        assert row["short_name"] == SHORT_NAMES[cls]  # one vocabulary: the audits'
        assert row["protects"] and row["proves"], cls
    plain = privet("learners")
    assert "dpid3" in plain.out and "DPID3Classifier" in plain.out
    assert "┃" not in plain.out and "\t" in plain.out  # piped: plain text, not a rich table


def privet_learners() -> list[str]:
    return list(privet.learners.__all__)


def test_datasets_json_names_the_shipped_schemas(privet):
    res = privet("datasets", "--json")
    assert res.code == 0
    names = {r["name"]: r for r in res.json()}
    assert names["car"]["target"] == "class" and names["adult"]["attributes"] > 5


def test_schema_infer_writes_a_draft_and_warns_that_it_is_not_public(privet):
    res = privet("schema", "infer", "car.csv", "--target", "class", "-o", "draft.json")
    assert res.code == 0
    assert "WARNING" in res.err and "NOT public" in res.err
    schema = Schema.load(privet.dir / "draft.json")
    assert schema.target.name == "class" and schema.n_features == 6
    assert "DRAFT" in schema.description
    assert privet("schema", "check", "car.csv", "draft.json").code == 0
    to_stdout = privet("schema", "infer", "tennis.csv", "--target", "Play")
    assert Schema.from_json(to_stdout.out).target.name == "Play"
    bad = privet("schema", "infer", "car.csv", "--target", "nope")
    assert bad.code == 2 and "not a column" in bad.err


def test_schema_check_lists_every_violation_with_row_column_and_value(privet):
    lines = (privet.dir / "car.csv").read_text().splitlines()
    head, rows = lines[0], lines[1:6]
    rows[1] = rows[1].replace("vhigh", "sky-high", 1)  # row 2: unknown category of buying
    rows[3] = ",".join(["", *rows[3].split(",")[1:]])  # row 4: missing buying
    (privet.dir / "bad.csv").write_text("\n".join([head + ",extra", *(r + ",1" for r in rows)]))
    res = privet("schema", "check", "bad.csv", "car", "--json")
    assert res.code == 4
    found = res.json()["violations"]
    assert {"row": None, "column": "extra", "value": None,
            "problem": "column not in the schema"} in found  # fmt: skip
    assert {(v["row"], v["column"], v["value"]) for v in found if v["row"]} == {
        (2, "buying", "sky-high"),
        (4, "buying", None),
    }
    table = privet("schema", "check", "bad.csv", "car")
    assert table.code == 4 and "sky-high" in table.out and "3 violations" in table.err


def test_schema_check_numeric_range_and_text(privet):
    (privet.dir / "s.json").write_text(
        json.dumps(
            {
                "format": "privet.schema",
                "version": 1,
                "description": "test",
                "attributes": [
                    {"type": "numeric", "name": "age", "lower": 0, "upper": 100, "bins": [50]}
                ],
                "target": {"type": "categorical", "name": "y", "categories": [0, 1]},
            }
        )
    )
    (privet.dir / "n.csv").write_text("age,y\n30,0\n130,1\nold,1\n40,2\n")
    res = privet("schema", "check", "n.csv", "s.json", "--json")
    assert res.code == 4, res.err
    got = {(v["row"], v["column"], v["value"]) for v in res.json()["violations"]}
    assert got == {(2, "age", "130"), (3, "age", "old"), (4, "y", "2")}


def test_schema_check_errors_are_one_line_with_exit_4(privet):
    missing = privet("schema", "check", "nope.csv", "car")
    assert missing.code == 4 and "No data file" in missing.err
    assert len(missing.err.strip().splitlines()) == 1 and "Traceback" not in missing.err
    (privet.dir / "broken.csv").write_text('a,b\n1,2\n"3,4\n5,6,7,8\n')
    broken = privet("schema", "check", "broken.csv", "car")
    assert broken.code == 4 and "Cannot read" in broken.err
    noschema = privet("schema", "check", "car.csv", "nothere.json")
    assert noschema.code == 4 and "privet schema infer" in noschema.err
    debug = privet("--debug", "schema", "check", "nope.csv", "car")
    assert "Traceback" in debug.err and debug.code == 4


def test_audit_commands_report_json_on_stdout(privet):
    listing = privet("audit", "list", "--json")
    assert listing.code == 0
    names = listing.json()
    assert any(n["short_name"] == "dpid3" for n in names["names"])
    assert any(m["name"] == "laplace_half_scale" for m in names["mechanisms"])
    res = privet(
        "audit", "dp", "--mechanism", "laplace_half_scale", "--trials", "3000",
        "--out", "zoo", "--json",
    )  # fmt: skip
    assert res.code == 0, res.err
    (entry,) = res.json()["zoo"]
    assert entry["broken_verdict"] == "FAIL"  # the tables went to stderr, the JSON to stdout
    assert "Bug zoo" in res.err


def test_ledger_verify_json(privet):
    from privet.ledger import Guarantee, Ledger

    path = privet.dir / "l.sqlite"
    led = Ledger.open(str(path), dataset="car", budget=Guarantee(1.0))
    led.root.charge(Guarantee(0.25), mechanism="test", caller="test")
    led.close()
    res = privet("ledger", "verify", "l.sqlite", "--json")
    assert res.code == 0 and res.json() == [{"dataset": "car", "ok": True, "events": 2}]


def test_every_exported_learner_is_reachable_by_its_class_and_short_name():
    from privet.cli.learners import choose_learner

    for cls in privet_learners():
        if not cls.endswith("Classifier"):
            continue
        for name in (cls, cls.lower(), SHORT_NAMES[cls]):
            choice = choose_learner(name)
            assert choice.class_name == cls and choice.options == {}, name
            assert choice.klass().__name__ == cls
    sound = choose_learner("oblivious_id3")  # an audit configuration fixes its options
    assert sound.class_name == "ObliviousID3Classifier"
    assert sound.options == {"split": "exponential"}
