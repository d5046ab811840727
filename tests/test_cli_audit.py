"""``privet audit``: list, dp (zoo mechanisms and learners) and mia, with report files."""

from __future__ import annotations

import json

import pytest

from privet.cli import build_parser, main


def _record(out):
    return json.loads((out / "audit.json").read_text(encoding="utf-8"))


def _audit(capsys, out, *words):
    """Run ``privet audit WORDS --out OUT``, require exit 0 and return its standard output."""
    assert main(["audit", *words, "--out", str(out)]) == 0
    return capsys.readouterr().out


def test_audit_list_names_mechanisms_and_learners(capsys):
    assert main(["audit", "list"]) == 0
    text = capsys.readouterr().out
    assert "naive_float_laplace" in text and "oblivious_id3_exact" in text


def test_audit_dp_on_a_zoo_mechanism_writes_the_report(tmp_path, capsys):
    out = tmp_path / "zoo"
    text = _audit(capsys, out, "dp", "--mechanism", "naive_float_laplace", "--trials", "1000")
    assert "Bug zoo" in text and "FAIL" in text and "audit.html" in text
    for name in ("audit.html", "audit.md", "audit.json"):
        assert (out / name).stat().st_size > 0
    (entry,) = _record(out)["zoo"]
    assert entry["broken_verdict"] == "FAIL" and entry["correct_verdict"] == "PASS"
    assert entry["trials"] == 1000


def test_audit_dp_can_test_only_the_correct_version(tmp_path, capsys):
    out = tmp_path / "correct"
    argv = ["dp", "--mechanism", "svt_stoddard_2014", "--which", "correct"]
    argv += ["--trials", "500", "--confidence", "0.999"]
    _audit(capsys, out, *argv)
    (entry,) = _record(out)["zoo"]
    assert entry["broken_verdict"] == "PASS"  # the correct version, in the only slot
    assert entry["correct_verdict"] is None


def test_audit_dp_on_the_faithful_oblivious_learner_fails_its_claim(tmp_path, capsys):
    out = tmp_path / "learner"
    argv = ["dp", "--learner", "oblivious_id3_exact", "--pair", "near_tie", "--trials", "40"]
    text = _audit(capsys, out, *argv)
    assert "Claimed, proven and measured epsilon" in text and "∞" in text
    (learner,) = _record(out)["learners"]
    assert learner["verdict"] == "FAIL" and learner["proven_epsilon"] == "inf"
    assert learner["claimed_epsilon"] == 1.0 and learner["measured_epsilon"] > 1.0


def test_audit_mia_runs_the_attacks_and_writes_roc_curves(tmp_path, capsys):
    out = tmp_path / "mia"
    argv = ["mia", "--learner", "dp_id3", "--dataset", "car", "--epsilon", "1", "--depth", "2"]
    argv += ["--shadows", "2", "--rows", "120", "--attacks", "loss,lira_offline"]
    text = _audit(capsys, out, *argv)
    assert "Membership inference" in text and "lira_offline" in text
    record = _record(out)
    (mia,) = record["mia"].values()
    assert mia["proven_epsilon"] == 1.0 and len(mia["attacks"]) == 2
    assert "data:image/png;base64," in (out / "audit.html").read_text(encoding="utf-8")


def test_unknown_names_are_reported_not_raised(tmp_path, capsys):
    # an unknown name is a usage error (exit 2), reported on one line of standard error
    assert main(["audit", "dp", "--mechanism", "nope", "--out", str(tmp_path)]) == 2
    assert "No zoo entry 'nope'" in capsys.readouterr().err
    assert main(["audit", "mia", "--learner", "c45", "--out", str(tmp_path)]) == 2
    assert "No learner 'c45'" in capsys.readouterr().err


def test_audit_dp_needs_a_mechanism_or_a_learner():
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["audit", "dp"])
    with pytest.raises(SystemExit):
        parser.parse_args(["audit", "dp", "--mechanism", "x", "--learner", "y"])
    with pytest.raises(SystemExit):
        parser.parse_args(["audit", "dp", "--mechanism", "x", "--trials", "many"])
    assert main(["audit"]) == 2


@pytest.mark.parametrize("name", ["dpid3", "DPID3Classifier"])
def test_audit_mia_accepts_the_class_name_and_the_short_name(tmp_path, capsys, name):
    """``--learner dpid3`` failed with "No learner 'dpid3'": the audits called it dp_id3."""
    out = tmp_path / name
    argv = ["mia", "--learner", name, "--depth", "1", "--shadows", "2"]
    argv += ["--rows", "60", "--attacks", "loss"]
    assert "DPID3Classifier" in _audit(capsys, out, *argv)
    (mia,) = _record(out)["mia"].values()
    assert mia["proven_epsilon"] == 1.0


def test_audit_list_shows_class_and_short_names(capsys):
    assert main(["audit", "list"]) == 0
    text = capsys.readouterr().out
    assert "dpid3" in text and "obliviousid3" in text
    assert "oblivious_id3_exact_local" in text  # configuration names are never cut


def test_audit_learner_is_white_box_on_neighbours_from_the_schema(tmp_path, capsys):
    out = tmp_path / "learner"
    text = _audit(capsys, out, "learner", "dpextratrees", "--trials", "40", "--seed", "1")
    assert "releases" in text and "the public schema alone" in text
    (learner,) = _record(out)["learners"]
    assert learner["mode"] == "releases" and learner["neighbours"] == "schema"
    assert learner["proven_epsilon"] == pytest.approx(1.0) and not learner["internal"]
    assert learner["release_tests"][0]["outcomes"] == {"ok": 80}
