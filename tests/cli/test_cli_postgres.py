"""The command line against a real PostgreSQL ledger: ``--ledger postgresql://...``
wherever a ledger file goes, refusals that charge nothing on the server, and
``privet ledger copy`` between a file and the server."""

from __future__ import annotations

import itertools
import os

import pytest

from privet.ledger import Ledger

pytestmark = pytest.mark.postgres
_SCHEMAS = itertools.count()


@pytest.fixture
def url(postgres_server):
    return postgres_server.url("cli", search_path=f"cli{os.getpid()}_{next(_SCHEMAS)}")


def _train(privet, url, *extra):  # type: ignore[no-untyped-def]
    return privet(
        "train", "--learner", "dpid3", "--data", "car.csv", "--schema", "car",
        "--target", "class", "--ledger", url, "--seed", "0", "--yes", *extra,
    )  # fmt: skip


def test_train_show_history_verify_and_refusals_on_a_postgres_ledger(privet, url):
    first = _train(privet, url, "--epsilon", "0.5", "--budget", "1")
    assert first.code == 0, first.err
    over = _train(privet, url, "--epsilon", "0.75", "--out", "m2")
    assert over.code == 3 and "budget" in over.err.lower()
    led = Ledger.open(url, dataset="car")
    assert led.spent().epsilon == pytest.approx(0.5)  # the refusal charged nothing

    show = privet("ledger", "show", url, "--json")
    assert show.code == 0, show.err
    history = privet("ledger", "history", url, "--json")
    assert history.code == 0 and len(history.json()) == len(led.charges)
    verify = privet("ledger", "verify", url)
    assert verify.code == 0, verify.err


def test_ledger_copy_from_a_file_to_the_server_and_back(privet, url):
    assert _train(privet, "budget.sqlite", "--epsilon", "0.5", "--budget", "1").code == 0
    res = privet("ledger", "copy", "budget.sqlite", url, "--json")
    assert res.code == 0, res.err
    assert [r["dataset"] for r in res.json()] == ["car"]
    original = Ledger.open(str(privet.dir / "budget.sqlite"), dataset="car")
    assert Ledger.open(url, dataset="car").to_json() == original.to_json()
    again = privet("ledger", "copy", "budget.sqlite", url)
    assert again.code == 2 and "already holds dataset 'car'" in again.err
    back = privet("ledger", "copy", url, "back.sqlite", "--dataset", "car")
    assert back.code == 0, back.err
    assert Ledger.open(str(privet.dir / "back.sqlite"), dataset="car").spent() == original.spent()


def test_an_unreachable_server_is_one_line_and_no_traceback(privet, postgres_server):
    bad = f"postgresql://postgres:pw@127.0.0.1:{postgres_server.port + 1}/x"
    res = _train(privet, bad, "--epsilon", "0.5", "--budget", "1")
    assert res.code != 0 and "Traceback" not in res.err
    assert "Cannot reach" in res.err and ":pw@" not in res.err
