"""Empirical differential-privacy tests: epsilon lower bounds with stated confidence.

A mechanism ``M`` is ``(epsilon, delta)``-DP if for all neighbouring ``D, D'``
and every set of outputs ``S``::

    P[M(D) in S] <= e^epsilon * P[M(D') in S] + delta.

A test runs ``M`` many times on a fixed pair ``(D, D')``, picks an event ``S`` on
one part of the trials (*selection*), and counts it on the other part
(*estimation*). With Clopper–Pearson bounds ``p_hi_lower`` on the side where
``S`` is likely and ``p_lo_upper`` on the other, each at one-sided level
``1 - (1 - confidence) / 2``, ::

    epsilon_lower = ln((p_hi_lower - delta) / p_lo_upper)

holds with probability at least ``confidence``: if the claim ``epsilon`` is
below it, the claim is refuted (verdict ``FAIL``). The event families are in
:mod:`privet.audits.events`, the interval arithmetic in
:mod:`privet.audits.bounds`.

Parallelism goes through joblib: ``n_jobs`` processes with its default (loky)
backend, or any backend registered with joblib (Dask, Ray) selected by the
caller with ``joblib.parallel_config(backend=...)``.

References
----------
.. [1] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of
   differential privacy", CCS 2018.
.. [2] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-box
   discovery of differential privacy violations using classifiers", IEEE S&P 2021.
.. [3] M. Jagielski, J. Ullman, A. Oprea, "Auditing differentially private
   machine learning: How private is private SGD?", NeurIPS 2020.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray

from privet.audits.bounds import (
    check_confidence,
    check_delta,
    epsilon_lower_from_counts,
    plan_trials,
)
from privet.audits.events import (
    DATASET_NAMES,
    Candidate,
    ClassifierSpec,
    Event,
    as_statistic_array,
    distinct_count,
    is_discrete,
    select_classifier_event,
    select_set_event,
    select_threshold_event,
)
from privet.errors import InvalidParameterError

__all__ = [
    "DPTestResult",
    "PairSearchResult",
    "canary_pair",
    "dp_test",
    "estimate_epsilon_lower_bound",
    "search_neighbouring_pairs",
]

Family = Literal["threshold", "classifier", "set"]
EventsSpec = Literal["auto", "threshold", "classifier", "set"] | Sequence[Family]
_FAMILIES = ("threshold", "classifier", "set")


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


# ---------------------------------------------------------------- parameter checks


def _check_fraction(value: float, name: str) -> float:
    if not isinstance(value, (int, float)) or not 0.0 < float(value) < 1.0:
        raise InvalidParameterError(
            f"The '{name}' parameter must be a float in (0, 1); got {value!r}."
        )
    return float(value)


def _check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter must be an int >= {minimum}; got {value!r}."
        )
    return int(value)


def _check_epsilon(value: Any, name: str) -> float:
    try:
        eps = float(value)
    except (TypeError, ValueError):
        eps = math.nan
    if not eps >= 0.0:  # also rejects NaN
        raise InvalidParameterError(
            f"The '{name}' parameter must be a non-negative float; got {value!r}."
        )
    return eps


def _families(spec: EventsSpec) -> tuple[str, ...] | None:
    if isinstance(spec, str):
        if spec == "auto":
            return None
        spec = (spec,)
    out = tuple(spec)
    bad = [f for f in out if f not in _FAMILIES]
    if bad or not out:
        raise InvalidParameterError(
            "The 'events' parameter must be 'auto', one of 'threshold', 'classifier', 'set', "
            f"or a sequence of them; got {spec!r}."
        )
    return out


# ---------------------------------------------------------------- event selection


def _select(
    sel0: NDArray[Any],
    sel1: NDArray[Any],
    *,
    n_estimation: int,
    delta: float,
    confidence: float,
    events: EventsSpec,
    classifier: ClassifierSpec,
    max_thresholds: int,
    max_discrete_values: int,
    selection_penalty: float,
    random_state: int | None,
) -> Candidate:
    if sel0.shape[1:] != sel1.shape[1:]:
        raise InvalidParameterError(
            f"Statistics on D and D' have different shapes per trial ({sel0.shape[1:]} and "
            f"{sel1.shape[1:]}); the statistic must return the same shape on both inputs."
        )
    families = _families(events)
    discrete = is_discrete(sel0) or is_discrete(sel1)
    if families is None:
        if discrete:
            families = ("set",)
        else:
            families = ("threshold",) if sel0.ndim == 1 else ("classifier",)
            pooled = np.concatenate([sel0, sel1])
            if distinct_count(pooled, max_discrete_values) <= max_discrete_values:
                families = (*families, "set")
    if discrete and set(families) - {"set"}:
        raise InvalidParameterError(
            f"Statistics of dtype {sel0.dtype} have no numeric order; use events='set' "
            "(or map them to numbers in the statistic)."
        )
    if "threshold" in families and sel0.ndim != 1:
        raise InvalidParameterError(
            f"Threshold events need a scalar statistic; got vectors of length {sel0.shape[1]}. "
            "Use events='classifier' or reduce the statistic to a scalar."
        )
    common = {"n_estimation": n_estimation, "delta": delta, "confidence": confidence}

    def best(penalty: float) -> Candidate:
        candidates: list[Candidate] = []
        for family in families:
            if family == "threshold":
                candidates.append(
                    select_threshold_event(
                        sel0,
                        sel1,
                        max_thresholds=max_thresholds,
                        selection_penalty=penalty,
                        **common,
                    )
                )
            elif family == "set":
                candidates.append(select_set_event(sel0, sel1, selection_penalty=penalty, **common))
            else:
                candidates.append(
                    select_classifier_event(
                        sel0,
                        sel1,
                        classifier=classifier,
                        max_thresholds=max_thresholds,
                        selection_penalty=penalty,
                        random_state=random_state,
                        **common,
                    )
                )
        return max(candidates, key=lambda c: c.score)

    chosen = best(selection_penalty)
    if chosen.score <= 0.0 and selection_penalty > 0.0:
        # No event is expected to give a positive bound even pessimistically: the
        # selection trials are too few for the full penalty, which would then only
        # pick near-certain events (ratio ~ 1). Halve it once; still selection-only.
        chosen = best(selection_penalty / 2.0)
    return chosen


def _result(
    candidate: Candidate,
    k0: int,
    n0: int,
    k1: int,
    n1: int,
    *,
    n_selection: int,
    delta: float,
    confidence: float,
    claimed_epsilon: float | None,
    wall_time: float | None,
) -> DPTestResult:
    k_hi, n_hi, k_lo, n_lo = (k1, n1, k0, n0) if candidate.hi == 1 else (k0, n0, k1, n1)
    eps, p_hi_lower, p_lo_upper = epsilon_lower_from_counts(
        k_hi, n_hi, k_lo, n_lo, delta=delta, confidence=confidence
    )
    return DPTestResult(
        epsilon_lower=eps,
        confidence=confidence,
        n_trials=n_selection + max(n0, n1),
        n_selection=n_selection,
        n_estimation=max(n0, n1),
        event=candidate.event.describe(),
        event_family=candidate.family,
        more_likely_on=DATASET_NAMES[candidate.hi],
        k_d0=k0,
        n_d0=n0,
        k_d1=k1,
        n_d1=n1,
        p_hi_lower=p_hi_lower,
        p_lo_upper=p_lo_upper,
        claimed_epsilon=claimed_epsilon,
        claimed_delta=delta,
        wall_time=wall_time,
        selected_event=candidate.event,
    )


def estimate_epsilon_lower_bound(
    samples_d0: Any,
    samples_d1: Any,
    *,
    delta: float = 0.0,
    confidence: float,
    claimed_epsilon: float | None = None,
    selection_fraction: float = 0.5,
    events: EventsSpec = "auto",
    classifier: ClassifierSpec = "logistic",
    max_thresholds: int = 512,
    max_discrete_values: int = 64,
    selection_penalty: float = 3.0,
    shuffle: bool = True,
    random_state: int | None = None,
) -> DPTestResult:
    """Epsilon lower bound from samples of a statistic of ``M(D)`` and ``M(D')``.

    Each array is split into a selection part (``selection_fraction``) and an
    estimation part. The distinguishing event is chosen on the selection parts
    only; its frequencies on the estimation parts give the bound, so the stated
    confidence holds whatever the selection did.

    Parameters
    ----------
    samples_d0, samples_d1 : array_like
        One statistic per trial (first axis): shape ``(n,)`` for scalars,
        ``(n, d)`` for vectors; any dtype for discrete outputs (labels, strings).
    delta : float, default=0
        The delta of the hypothesis (and claim) ``(epsilon, delta)``-DP.
    confidence : float
        Overall confidence of the bound, split equally (Bonferroni) between the
        Clopper–Pearson bounds of the two proportions.
    claimed_epsilon : float, optional
        If given, the result's verdict compares the bound with it.
    selection_fraction : float, default=0.5
        Share of each array used to choose the event.
    events : {"auto", "threshold", "classifier", "set"} or sequence, default="auto"
        Event families to search. ``"auto"``: sets for non-numeric outputs;
        thresholds for numeric scalars and a classifier for numeric vectors, plus
        sets when there are at most ``max_discrete_values`` distinct outputs.
    classifier : {"logistic", "boosting"} or classifier, default="logistic"
        Model of the classifier family (see :func:`~privet.audits.events.make_classifier`).
    max_thresholds : int, default=512
        Size of the quantile grid of threshold candidates.
    max_discrete_values : int, default=64
        Largest number of distinct outputs for which ``"auto"`` adds set events.
    selection_penalty : float, default=3.0
        Pessimism of event selection, in standard deviations per proportion (see
        :func:`~privet.audits.events.score_candidates`); halved once if no event
        scores above 0 with it (too few selection trials).
    shuffle : bool, default=True
        Split at random (seeded by ``random_state``) rather than first/last.
    random_state : int, optional
        Seed of the split and of the classifier: non-private randomness.

    Returns
    -------
    DPTestResult

    Notes
    -----
    A scalar threshold event near the median has probability about 1/2 on both
    sides, which makes the log-ratio estimate nearly as precise as any event
    can: its variance is about ``2 / n`` (pure DP, small epsilon), so the bound
    misses the true epsilon by about ``2 * 1.96 * sqrt(2 / n)`` at 95%.

    References
    ----------
    .. [1] Bichsel et al., "DP-Sniper", IEEE S&P 2021, Sec. IV (thresholds on a
       classifier's posterior chosen on separate samples).
    .. [2] Ding et al., "Detecting violations of differential privacy", CCS 2018.

    Examples
    --------
    Randomised response with epsilon = 1 (truth told with probability
    e / (1 + e)), one bit per trial:

    >>> rng = np.random.default_rng(0)
    >>> keep = np.e / (1 + np.e)
    >>> x0 = rng.random(20_000) >= keep  # true bit 0
    >>> x1 = rng.random(20_000) < keep  # true bit 1
    >>> r = estimate_epsilon_lower_bound(x0, x1, confidence=0.95, claimed_epsilon=1.0,
    ...                                  random_state=0)
    >>> r.verdict, r.event_family, 0.8 < r.epsilon_lower < 1.0
    ('PASS', 'set', True)
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    selection_fraction = _check_fraction(selection_fraction, "selection_fraction")
    if claimed_epsilon is not None:
        claimed_epsilon = _check_epsilon(claimed_epsilon, "claimed_epsilon")
    s0 = as_statistic_array(samples_d0, "samples_d0")
    s1 = as_statistic_array(samples_d1, "samples_d1")
    n_sel0 = round(len(s0) * selection_fraction)
    n_sel1 = round(len(s1) * selection_fraction)
    if min(n_sel0, n_sel1, len(s0) - n_sel0, len(s1) - n_sel1) < 1:
        raise InvalidParameterError(
            f"Need at least one selection and one estimation trial per input; got "
            f"{len(s0)} and {len(s1)} samples with selection_fraction={selection_fraction}. "
            "Run more trials."
        )
    rng = np.random.default_rng(random_state)
    if shuffle:
        s0 = s0[rng.permutation(len(s0))]
        s1 = s1[rng.permutation(len(s1))]
    candidate = _select(
        s0[:n_sel0],
        s1[:n_sel1],
        n_estimation=min(len(s0) - n_sel0, len(s1) - n_sel1),
        delta=delta,
        confidence=confidence,
        events=events,
        classifier=classifier,
        max_thresholds=max_thresholds,
        max_discrete_values=max_discrete_values,
        selection_penalty=selection_penalty,
        random_state=int(rng.integers(2**31)),
    )
    est0, est1 = s0[n_sel0:], s1[n_sel1:]
    k0 = int(np.count_nonzero(candidate.event.contains(est0)))
    k1 = int(np.count_nonzero(candidate.event.contains(est1)))
    return _result(
        candidate,
        k0,
        len(est0),
        k1,
        len(est1),
        n_selection=max(n_sel0, n_sel1),
        delta=delta,
        confidence=confidence,
        claimed_epsilon=claimed_epsilon,
        wall_time=None,
    )


# ------------------------------------------------------------------------ sampling


def _accepts_size(mechanism: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(mechanism).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params


def _draw(
    mechanism: Callable[..., Any],
    data: Any,
    size: int,
    statistic: Callable[[Any], Any] | None,
    vectorized: bool,
) -> NDArray[Any]:
    if vectorized:
        outputs: Any = mechanism(data, size=size)
    else:
        outputs = [mechanism(data) for _ in range(size)]
    values = statistic(outputs) if statistic is not None else outputs
    arr = as_statistic_array(values, "statistic(outputs)")
    if len(arr) != size:
        raise InvalidParameterError(
            f"Expected {size} outputs from one batch, got {len(arr)}. A vectorised mechanism "
            "must return size outputs along the first axis, and the statistic one row per output."
        )
    return arr


def _count(
    mechanism: Callable[..., Any],
    data: Any,
    size: int,
    statistic: Callable[[Any], Any] | None,
    vectorized: bool,
    event: Event,
) -> int:
    return int(
        np.count_nonzero(event.contains(_draw(mechanism, data, size, statistic, vectorized)))
    )


def _batches(n: int, batch_size: int) -> list[int]:
    full, rest = divmod(n, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


def _run(
    func: Callable[..., Any],
    tasks: list[tuple[int, int]],
    args: tuple[Any, ...],
    datasets: tuple[Any, Any],
    n_jobs: int | None,
    verbose: int,
) -> list[Any]:
    mechanism, statistic, vectorized, *extra = args
    calls = (
        delayed(func)(mechanism, datasets[side], size, statistic, vectorized, *extra)
        for side, size in tasks
    )
    return list(Parallel(n_jobs=n_jobs, verbose=verbose)(calls))


def _auto_batch_size(trials: int, n_jobs: int | None, vectorized: bool) -> int:
    workers = max(1, effective_n_jobs(n_jobs))
    cap = 250_000 if vectorized else 64
    return max(1, min(cap, math.ceil(trials / (4 * workers))))


def dp_test(
    mechanism: Callable[..., Any],
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int,
    confidence: float,
    statistic: Callable[[Any], Any] | None = None,
    n_jobs: int | None = None,
    batch_size: int | None = None,
    selection_fraction: float = 0.5,
    target_epsilon: float | None = None,
    power: float = 0.9,
    events: EventsSpec = "auto",
    classifier: ClassifierSpec = "logistic",
    vectorized: bool | None = None,
    max_thresholds: int = 512,
    max_discrete_values: int = 64,
    selection_penalty: float = 3.0,
    random_state: int | None = None,
    verbose: int = 0,
) -> DPTestResult:
    """Test a randomised function for ``(epsilon, delta)``-DP on neighbours ``d0, d1``.

    Runs ``mechanism`` ``trials`` times on each input in two phases: selection
    trials (statistics kept, the event chosen on them) and fresh estimation
    trials (only the event's counts kept), then bounds epsilon from below as in
    :func:`estimate_epsilon_lower_bound`.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data)`` returns one output; if it accepts ``size=``
        (``mechanism(data, size=n)``) it must return ``n`` outputs along the
        first axis, and is called that way (much faster). Must be picklable for
        ``n_jobs != 1`` (module-level functions, or closures cloudpickle handles);
        build unpicklable samplers (e.g. OpenDP measurements) inside the call.
    d0, d1 : object
        The neighbouring inputs ``D`` and ``D'``, passed as given.
    epsilon : float
        The claimed epsilon; the verdict is ``FAIL`` if the bound exceeds it.
    delta : float, default=0
        The claimed delta, used in the bound.
    trials : int
        Maximum runs per input, selection included.
    confidence : float
        Confidence level of the bound, e.g. 0.95.
    statistic : callable, optional
        Maps a batch of outputs (the array returned by a vectorised mechanism, or
        the list of outputs of a looped one) to one scalar or vector per output.
        Default: the outputs themselves.
    n_jobs : int, optional
        joblib workers; None uses the active ``joblib.parallel_config`` (1 by
        default), -1 all cores.
    batch_size : int, optional
        Runs per task; default spreads each phase over about four tasks per
        worker (at most 250,000 runs for vectorised mechanisms, 64 otherwise).
    selection_fraction : float, default=0.5
        Share of ``trials`` used for selection.
    target_epsilon : float, optional
        If given, the estimation phase draws only as many trials as needed for
        the bound to reach this value with probability ``power``, judged from
        the selection frequencies (with the log-ratio capped at ``epsilon``) by
        :func:`~privet.audits.bounds.plan_trials`; never more than
        ``trials - selection``. The plan uses selection trials only, so the
        bound stays honest.
    power : float, default=0.9
        See ``target_epsilon``.
    events, classifier, max_thresholds, max_discrete_values, selection_penalty
        As in :func:`estimate_epsilon_lower_bound`.
    vectorized : bool, optional
        Force (or forbid) calls with ``size=``; default: whether the signature
        has a ``size`` parameter.
    random_state : int, optional
        Seed of the non-private randomness (the classifier); the mechanism's
        noise is its own.
    verbose : int, default=0
        joblib verbosity.

    Returns
    -------
    DPTestResult

    Examples
    --------
    A discrete Laplace counting query from OpenDP, vectorised::

        def laplace_count(true_count, size):
            import opendp.prelude as dp
            dp.enable_features("contrib")
            space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
            meas = dp.m.make_laplace(*space, scale=10.0)
            return np.asarray(meas([true_count] * size))

        result = dp_test(laplace_count, 0, 1, epsilon=0.1, trials=10**6,
                         confidence=0.95, n_jobs=2)
        print(result)
    """
    start = time.perf_counter()
    epsilon = _check_epsilon(epsilon, "epsilon")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    trials = _check_positive_int(trials, "trials", minimum=2)
    selection_fraction = _check_fraction(selection_fraction, "selection_fraction")
    if target_epsilon is not None:
        target_epsilon = _check_epsilon(target_epsilon, "target_epsilon")
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    if not callable(mechanism):
        raise InvalidParameterError(
            f"'mechanism' must be callable as mechanism(data) or mechanism(data, size=n); "
            f"got {type(mechanism).__name__}."
        )
    vec = _accepts_size(mechanism) if vectorized is None else bool(vectorized)
    n_sel = min(trials - 1, max(1, round(trials * selection_fraction)))
    n_est_max = trials - n_sel
    datasets = (d0, d1)
    common = (mechanism, statistic, vec)

    # Phase 1: selection trials, statistics kept.
    bs = batch_size or _auto_batch_size(2 * n_sel, n_jobs, vec)
    tasks = [(side, size) for size in _batches(n_sel, bs) for side in (0, 1)]
    parts = _run(_draw, tasks, common, datasets, n_jobs, verbose)
    sel = [
        np.concatenate([p for (side, _), p in zip(tasks, parts, strict=True) if side == s])
        for s in (0, 1)
    ]
    rng = np.random.default_rng(random_state)
    candidate = _select(
        sel[0],
        sel[1],
        n_estimation=n_est_max,
        delta=delta,
        confidence=confidence,
        events=events,
        classifier=classifier,
        max_thresholds=max_thresholds,
        max_discrete_values=max_discrete_values,
        selection_penalty=selection_penalty,
        random_state=int(rng.integers(2**31)),
    )
    del sel, parts

    # Phase 2: fresh estimation trials, only the event's counts kept.
    n_est = n_est_max
    if target_epsilon is not None:
        p_hi = candidate.k_hi / candidate.n_hi
        p_lo = candidate.k_lo / candidate.n_lo
        if p_hi > delta:
            # The selection ratio is optimistic (it won a search); if the claim
            # is true no event exceeds it, so plan with the ratio capped there.
            p_lo = max(p_lo, (p_hi - delta) * math.exp(-epsilon))
        planned = plan_trials(
            p_hi,
            p_lo,
            target_epsilon=target_epsilon,
            delta=delta,
            confidence=confidence,
            power=power,
            max_trials=n_est_max,
        )
        n_est = n_est_max if planned is None else max(1, min(planned, n_est_max))
    bs = batch_size or _auto_batch_size(2 * n_est, n_jobs, vec)
    tasks = [(side, size) for size in _batches(n_est, bs) for side in (0, 1)]
    counts = _run(_count, tasks, (*common, candidate.event), datasets, n_jobs, verbose)
    k = [sum(c for (side, _), c in zip(tasks, counts, strict=True) if side == s) for s in (0, 1)]
    return _result(
        candidate,
        k[0],
        n_est,
        k[1],
        n_est,
        n_selection=n_sel,
        delta=delta,
        confidence=confidence,
        claimed_epsilon=epsilon,
        wall_time=time.perf_counter() - start,
    )


# ------------------------------------------------------------ neighbouring inputs


def _append(dataset: Any, record: Any, index: int | None) -> Any:
    import pandas as pd

    if isinstance(dataset, pd.DataFrame):
        row = record if isinstance(record, pd.DataFrame) else pd.DataFrame([record])
        row = row.reindex(columns=dataset.columns)
        if index is None:
            return pd.concat([dataset, row], ignore_index=True)
        return pd.concat([dataset.iloc[:index], row, dataset.iloc[index:]], ignore_index=True)
    if isinstance(dataset, np.ndarray):
        rec = np.asarray(record, dtype=dataset.dtype)
        if rec.shape != dataset.shape[1:]:
            raise InvalidParameterError(
                f"The canary has shape {rec.shape} but rows of the dataset have shape "
                f"{dataset.shape[1:]}; give one record."
            )
        where = len(dataset) if index is None else index
        return np.insert(dataset, where, rec, axis=0)
    if isinstance(dataset, list):
        out = list(dataset)
        out.insert(len(out) if index is None else index, record)
        return out
    raise InvalidParameterError(
        f"Cannot insert a canary into a {type(dataset).__name__}; use a numpy array, a "
        "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
    )


def _replace(dataset: Any, record: Any, index: int) -> Any:
    import pandas as pd

    if isinstance(dataset, pd.DataFrame):
        out = dataset.copy()
        row = record.iloc[0] if isinstance(record, pd.DataFrame) else pd.Series(record)
        out.iloc[index] = row.reindex(dataset.columns).to_numpy()
        return out
    if isinstance(dataset, np.ndarray):
        out = dataset.copy()
        out[index] = np.asarray(record, dtype=dataset.dtype)
        return out
    if isinstance(dataset, list):
        out_list = list(dataset)
        out_list[index] = record
        return out_list
    raise InvalidParameterError(
        f"Cannot replace a record of a {type(dataset).__name__}; use a numpy array, a "
        "pandas DataFrame, a list of records, or a tuple of those (e.g. (X, y))."
    )


def canary_pair(
    dataset: Any,
    canary: Any,
    *,
    relation: Literal["add_remove", "replace_one"] = "add_remove",
    index: int | None = None,
) -> tuple[Any, Any]:
    """Neighbouring inputs ``(D, D')`` that differ in one canary record.

    Parameters
    ----------
    dataset : ndarray, DataFrame, list or tuple of those
        The base data ``D``. A tuple such as ``(X, y)`` is treated column-wise:
        the canary is then a tuple ``(x, y)`` of one record per part.
    canary : object
        The record: a row (array), a mapping or one-row DataFrame, a list item,
        or a tuple of those matching a tuple dataset.
    relation : {"add_remove", "replace_one"}, default="add_remove"
        ``"add_remove"``: ``D' = D`` plus the canary (appended, or inserted at
        ``index``). ``"replace_one"``: ``D'`` is ``D`` with record ``index``
        replaced by the canary; ``index`` is then required.
    index : int, optional
        Position of the canary, see ``relation``.

    Returns
    -------
    tuple
        ``(D, D')``; ``D`` is ``dataset`` itself (not copied).
    """
    if relation not in ("add_remove", "replace_one"):
        raise InvalidParameterError(
            f"The 'relation' parameter must be 'add_remove' or 'replace_one'; got {relation!r}."
        )
    if relation == "replace_one" and index is None:
        raise InvalidParameterError(
            "relation='replace_one' needs the index of the record to replace; pass index=i."
        )
    if isinstance(dataset, tuple):
        if not isinstance(canary, tuple) or len(canary) != len(dataset):
            raise InvalidParameterError(
                f"A dataset given as a tuple of {len(dataset)} parts needs a canary tuple of "
                f"as many parts (one record each); got {type(canary).__name__}."
            )
        pairs = [
            canary_pair(part, rec, relation=relation, index=index)
            for part, rec in zip(dataset, canary, strict=True)
        ]
        return dataset, tuple(p[1] for p in pairs)
    if relation == "add_remove":
        return dataset, _append(dataset, canary, index)
    assert index is not None
    return dataset, _replace(dataset, canary, index)


@dataclass(frozen=True, slots=True, kw_only=True)
class PairSearchResult:
    """Outcome of :func:`search_neighbouring_pairs`.

    Attributes
    ----------
    best_index : int
        Index of the pair with the largest pilot bound.
    pilot_results : tuple of DPTestResult
        The pilot test of every candidate pair (for ranking only: their bounds
        are not corrected for the search).
    result : DPTestResult
        The test of the chosen pair on fresh trials: the honest bound.
    """

    best_index: int
    pilot_results: tuple[DPTestResult, ...]
    result: DPTestResult

    @property
    def epsilon_lower(self) -> float:
        """The honest bound, that of ``result``."""
        return self.result.epsilon_lower

    @property
    def verdict(self) -> str:
        return self.result.verdict

    def __str__(self) -> str:
        return (
            f"Pair search over {len(self.pilot_results)} pairs: chose #{self.best_index} "
            f"(pilot bound {self.pilot_results[self.best_index].epsilon_lower:.4g})\n"
            + str(self.result)
        )


def search_neighbouring_pairs(
    mechanism: Callable[..., Any],
    pairs: Sequence[tuple[Any, Any]],
    *,
    epsilon: float,
    delta: float = 0.0,
    pilot_trials: int,
    trials: int,
    confidence: float,
    **kwargs: Any,
) -> PairSearchResult:
    """Pick the most revealing neighbouring pair on a pilot run, then test it afresh.

    Every pair gets a pilot :func:`dp_test` with ``pilot_trials`` runs per input;
    the pair with the largest pilot bound is tested again with ``trials`` new runs.
    Only the final test's bound is reported as the result: the pilot runs chose
    the pair, so reusing them would overstate the confidence.

    Parameters
    ----------
    mechanism : callable
        As in :func:`dp_test`.
    pairs : sequence of (D, D')
        Candidate neighbouring inputs, e.g. from :func:`canary_pair` with
        different canaries.
    epsilon, delta, confidence
        As in :func:`dp_test`.
    pilot_trials, trials : int
        Runs per input of each pilot and of the final test.
    **kwargs
        Passed to every :func:`dp_test` call (``statistic``, ``n_jobs``, ...).

    Returns
    -------
    PairSearchResult
    """
    if len(pairs) == 0:
        raise InvalidParameterError("'pairs' is empty; give at least one (D, D') pair.")
    pilots = tuple(
        dp_test(
            mechanism,
            a,
            b,
            epsilon=epsilon,
            delta=delta,
            trials=pilot_trials,
            confidence=confidence,
            **kwargs,
        )
        for a, b in pairs
    )
    best = max(
        range(len(pilots)), key=lambda i: (pilots[i].epsilon_lower, pilots[i].epsilon_estimate)
    )
    final = dp_test(
        mechanism,
        pairs[best][0],
        pairs[best][1],
        epsilon=epsilon,
        delta=delta,
        trials=trials,
        confidence=confidence,
        **kwargs,
    )
    return PairSearchResult(best_index=best, pilot_results=pilots, result=final)
