"""How far a long fit has got: steps done out of a known total, for a progress bar.

A learner with a loop of known length (a forest's trees, a boosted model's trees)
calls :func:`advance` after each step. Nothing is shown unless someone listens: each
step is an INFO record of the :data:`LOGGER` logger carrying ``(done, total, what)``
in its ``progress`` attribute, which ``privet train`` draws as a rich progress bar
(steps done, time elapsed and left) on a terminal, and nothing else. What a step
says is public: the number of trees is a parameter, and that a tree is done reveals
nothing about the rows.
"""

from __future__ import annotations

import logging

__all__ = ["LOGGER", "advance"]

#: The logger the steps of a fit are reported on.
LOGGER = "privet.progress"

_logger = logging.getLogger(LOGGER)


def advance(done: int, total: int, what: str) -> None:
    """Report that ``done`` of ``total`` steps (``what``: "trees") of a fit are done."""
    if _logger.isEnabledFor(logging.INFO):
        _logger.info("%s: %d of %d", what, done, total, extra={"progress": (done, total, what)})
