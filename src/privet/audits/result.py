"""The outcome of an empirical DP test: :class:`DPTestResult`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from privet.audits.events import Event

__all__ = ["DPTestResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DPTestResult:
    """Outcome of an empirical DP test on one pair of neighbouring inputs.

    Attributes
    ----------
    epsilon_lower : float
        With probability at least ``confidence`` the mechanism is not
        ``(e, claimed_delta)``-DP for any ``e < epsilon_lower`` (0 if no evidence).
    confidence : float
        Confidence level of ``epsilon_lower``.
    n_trials : int
        Runs per input (``D`` and ``D'`` each), selection plus estimation.
    n_selection, n_estimation : int
        The split of ``n_trials``.
    event : str
        Human-readable description of the distinguishing event.
    event_family : str
        ``"threshold"``, ``"classifier"`` or ``"set"``.
    more_likely_on : str
        ``"D"`` or ``"D'"``: where the event is the more likely one.
    k_d0, n_d0, k_d1, n_d1 : int
        Estimation counts: the event happened ``k`` times in ``n`` runs on
        ``D`` and on ``D'``.
    p_hi_lower, p_lo_upper : float
        The Clopper–Pearson bounds (each at ``1 - (1 - confidence) / 2``).
    claimed_epsilon : float or None
        The epsilon under test (None: estimation only).
    claimed_delta : float
        The delta used in the bound, that of the claim.
    verdict : str
        ``"PASS"`` if ``epsilon_lower <= claimed_epsilon``, ``"FAIL"`` otherwise,
        ``"NO CLAIM"`` without a claim.
    wall_time : float or None
        Seconds spent, sampling included (None when samples were given).
    selected_event : Event or None
        The event object, to count it again on other trials.
    """

    epsilon_lower: float
    confidence: float
    n_trials: int
    n_selection: int
    n_estimation: int
    event: str
    event_family: str
    more_likely_on: str
    k_d0: int
    n_d0: int
    k_d1: int
    n_d1: int
    p_hi_lower: float
    p_lo_upper: float
    claimed_epsilon: float | None
    claimed_delta: float
    wall_time: float | None = None
    selected_event: Event | None = field(default=None, repr=False, compare=False)
    verdict: str = field(init=False)

    def __post_init__(self) -> None:
        if self.claimed_epsilon is None:
            verdict = "NO CLAIM"
        elif self.epsilon_lower <= self.claimed_epsilon:
            verdict = "PASS"
        else:
            verdict = "FAIL"
        object.__setattr__(self, "verdict", verdict)

    @property
    def epsilon_estimate(self) -> float:
        """Point estimate ``ln((k_hi / n_hi - delta) / (k_lo / n_lo))`` (not a bound)."""
        hi, lo = ((self.k_d1, self.n_d1), (self.k_d0, self.n_d0))
        if self.more_likely_on == "D":
            hi, lo = lo, hi
        num = hi[0] / hi[1] - self.claimed_delta
        if num <= 0:
            return -math.inf
        return math.inf if lo[0] == 0 else math.log(num / (lo[0] / lo[1]))

    @property
    def counts(self) -> dict[str, tuple[int, int]]:
        """Estimation counts ``{"D": (k, n), "D'": (k, n)}``."""
        return {"D": (self.k_d0, self.n_d0), "D'": (self.k_d1, self.n_d1)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly record (the event object is left out)."""
        out = asdict(self)
        out.pop("selected_event", None)
        return out

    def _claim(self) -> str:
        if self.claimed_epsilon is None:
            return "no claim"
        return f"claimed ({self.claimed_epsilon:g}, {self.claimed_delta:g})-DP"

    def __str__(self) -> str:
        hi_is_d1 = self.more_likely_on == "D'"
        rows = []
        for name, k, n, hi in (
            ("D ", self.k_d0, self.n_d0, not hi_is_d1),
            ("D'", self.k_d1, self.n_d1, hi_is_d1),
        ):
            bound = f"p >= {self.p_hi_lower:.6g}" if hi else f"p <= {self.p_lo_upper:.6g}"
            rows.append(f"  {name}: k = {k:,} of n = {n:,}   {bound}")
        timing = f", {self.wall_time:.1f} s" if self.wall_time is not None else ""
        return "\n".join(
            [
                f"DP test {self.verdict}: epsilon >= {self.epsilon_lower:.6g} at "
                f"{self.confidence:.0%} confidence ({self._claim()})",
                f"  event: {self.event} (more likely on {self.more_likely_on})",
                *rows,
                f"  trials per input: {self.n_trials:,} (selection {self.n_selection:,}, "
                f"estimation {self.n_estimation:,}){timing}",
            ]
        )

    def __rich__(self) -> Any:
        from rich.panel import Panel
        from rich.table import Table

        colour = {"PASS": "green", "FAIL": "bold red"}.get(self.verdict, "yellow")
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        table.add_row("epsilon lower bound", f"{self.epsilon_lower:.6g}")
        table.add_row("confidence", f"{self.confidence:.1%}")
        table.add_row("claim", self._claim())
        table.add_row("event", f"{self.event} (more likely on {self.more_likely_on})")
        table.add_row("D counts", f"{self.k_d0:,} / {self.n_d0:,}")
        table.add_row("D' counts", f"{self.k_d1:,} / {self.n_d1:,}")
        table.add_row("bounds", f"p_hi >= {self.p_hi_lower:.6g}, p_lo <= {self.p_lo_upper:.6g}")
        table.add_row(
            "trials per input",
            f"{self.n_trials:,} (selection {self.n_selection:,}, estimation {self.n_estimation:,})",
        )
        if self.wall_time is not None:
            table.add_row("wall time", f"{self.wall_time:.1f} s")
        return Panel(table, title=f"DP test [{colour}]{self.verdict}[/]", expand=False)
