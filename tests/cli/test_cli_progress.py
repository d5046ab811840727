"""An MPC fit in ``privet train`` shows each opening in the terminal's spinner."""

from __future__ import annotations

import logging

import pytest

from privet.cli import _output
from privet.mpc import launch


class _Spinner:
    """Stands in for rich's status spinner: records its texts (the terminal is not
    under test; what reaches it is)."""

    def __init__(self, text: str) -> None:
        self.texts = [text]

    def __enter__(self) -> _Spinner:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, text: str) -> None:
        self.texts.append(text)


class _Terminal:
    def __init__(self) -> None:
        self.spinners: list[_Spinner] = []

    def status(self, text: str) -> _Spinner:
        self.spinners.append(_Spinner(text))
        return self.spinners[-1]


@pytest.mark.mpc
def test_the_spinner_shows_each_value_the_parties_open(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(_output, "interactive", lambda: True)
    monkeypatch.setattr(_output, "console", lambda **_: terminal)
    logger = logging.getLogger(_output.PROGRESS_LOGGER)
    level, handlers = logger.level, list(logger.handlers)

    with _output.working("Training MPCID3Classifier..."):
        launch("privet.mpc.programs:ping", {"rounds": 3}, timeout=30)

    (spinner,) = terminal.spinners
    assert spinner.texts[0] == "Training MPCID3Classifier..."
    shown = spinner.texts[1:]
    assert len(shown) == 3
    for i, text in enumerate(shown, start=1):
        assert text.startswith("Training MPCID3Classifier...")
        assert f"opening {i} " in text and "ping counter" in text
    # the terminal's handler is gone again and the logger's level is restored
    assert logger.level == level and logger.handlers == handlers


def test_nothing_is_shown_when_piped_or_quiet(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(_output, "console", lambda **_: terminal)
    monkeypatch.setattr(_output, "interactive", lambda: False)
    with _output.working("Training..."):
        pass
    monkeypatch.setattr(_output, "interactive", lambda: True)
    with _output.working("Training...", quiet=True):
        pass
    assert terminal.spinners == []
