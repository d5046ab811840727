"""An accuracy next to what always answering the most common class would score.

A DP model trained on few rows, or at a small epsilon, can do no better than that
constant guess (the credit data at epsilon 1 with 800 rows: 0.665 against 0.675).
``privet train --test-size`` and ``privet predict`` print both, and say plainly
when the model does not beat the guess. Both figures are exact, on the rows
scored: private whenever those rows are.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Score"]


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True, slots=True)
class Score:
    """The accuracy of predictions on ``rows`` labelled rows, and the majority-class rate."""

    accuracy: float
    majority_class: Any
    majority_rate: float
    rows: int

    @staticmethod
    def of(predicted: Any, truth: Any) -> Score:
        pred, true = np.asarray(predicted), np.asarray(truth)
        label, count = Counter(true.tolist()).most_common(1)[0]
        return Score(
            accuracy=float(np.mean(pred == true)),
            majority_class=_plain(label),
            majority_rate=count / len(true),
            rows=len(true),
        )

    @property
    def beats_majority(self) -> bool:
        return self.accuracy > self.majority_rate

    def majority_fields(self, prefix: str = "") -> dict[str, Any]:
        """The JSON fields: ``majority_class``, ``majority_rate``, ``beats_majority``."""
        return {
            f"{prefix}majority_class": self.majority_class,
            f"{prefix}majority_rate": self.majority_rate,
            f"{prefix}beats_majority": self.beats_majority,
        }

    def lines(self, what: str, note: str) -> list[str]:
        """The accuracy, the constant guess beside it, and a plain warning if it is not beaten."""
        out = [
            f"{what}: {self.accuracy:.3f}; always answering {self.majority_class!r}, the most "
            f"common class in these rows, scores {self.majority_rate:.3f} ({note})"
        ]
        if not self.beats_majority:
            out.append(
                "Warning: this model does not beat always answering "
                f"{self.majority_class!r}: it has learned nothing useful from these rows. A "
                "larger epsilon or more rows may help (docs/getting-started.md, 'What a useful "
                "model needs')."
            )
        return out
