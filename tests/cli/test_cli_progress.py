"""``privet train`` shows a progress bar on a terminal: the learner's steps (trees done out
of the total, time left) and each value an MPC run's parties open; nothing when piped."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import rich.progress

from privet.cli import _output
from privet.data import load_dataset
from privet.learners import DPGradientBoostingClassifier
from privet.mpc import launch


class _Bars:
    """Stands in for rich's Progress: records its tasks and updates (the terminal is not
    under test; what reaches it is)."""

    made: list[_Bars] = []

    def __init__(self, *columns: Any, console: Any = None) -> None:
        self.columns = columns
        self.added: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        _Bars.made.append(self)

    def __enter__(self) -> _Bars:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None) -> int:
        self.added.append({"description": description, "total": total})
        return 0

    def update(self, task: int, **fields: Any) -> None:
        self.updates.append(fields)


@pytest.fixture
def bars(monkeypatch):  # type: ignore[no-untyped-def]
    _Bars.made = []
    monkeypatch.setattr(rich.progress, "Progress", _Bars)
    monkeypatch.setattr(_output, "interactive", lambda: True)
    loggers = [logging.getLogger(n) for n in (_output.STEPS_LOGGER, _output.PROGRESS_LOGGER)]
    before = [(lg.level, list(lg.handlers)) for lg in loggers]
    yield _Bars.made
    # the terminal's handler is gone again and the loggers' levels are restored
    assert [(lg.level, list(lg.handlers)) for lg in loggers] == before


def test_a_boosted_fit_shows_its_trees_done_out_of_the_total(bars):
    car = load_dataset("car")
    model = DPGradientBoostingClassifier(epsilon=1.0, delta=1e-5, schema=car.schema)
    with _output.working("Training DPGradientBoostingClassifier..."):
        model.fit(car.X, car.y)
    (bar,) = bars
    n = len(model.trees_)
    steps = [u for u in bar.updates if "completed" in u]
    assert [u["completed"] for u in steps] == list(range(1, n + 1))
    assert all(u["total"] == n and u["description"].endswith("trees") for u in steps)
    # time left needs the total: the columns include it
    assert any(isinstance(c, rich.progress.TimeRemainingColumn) for c in bar.columns)
    assert any(isinstance(c, rich.progress.MofNCompleteColumn) for c in bar.columns)


@pytest.mark.mpc
def test_the_bar_shows_each_value_the_parties_open(bars):
    with _output.working("Training MPCID3Classifier..."):
        launch("privet.mpc.programs:ping", {"rounds": 3}, timeout=30)
    (bar,) = bars
    shown = [u for u in bar.updates if "opening" in u.get("description", "")]
    assert len(shown) == 3
    for i, update in enumerate(shown, start=1):
        assert update["description"].startswith("Training MPCID3Classifier...")
        assert f"opening {i} " in update["description"] and "ping counter" in update["description"]
        assert update["completed"] == i  # no total known: the openings are counted


def test_nothing_is_shown_when_piped_or_quiet(bars, monkeypatch):
    with _output.working("Training...", quiet=True):
        logging.getLogger(_output.STEPS_LOGGER).info("x", extra={"progress": (1, 2, "trees")})
    monkeypatch.setattr(_output, "interactive", lambda: False)
    with _output.working("Training..."):
        pass
    assert bars == []
