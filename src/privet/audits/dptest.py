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
backend, ``backend=`` for one call, or any backend registered with joblib
(Dask, Ray) selected by the caller with ``joblib.parallel_config(backend=...)``;
seeded runs give the same numbers on every backend (:mod:`privet.audits.sampling`).

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

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.audits.bounds import check_confidence, check_delta, check_real, plan_trials
from privet.audits.cluster import resolve_backend
from privet.audits.estimate import (
    EventsSpec,
    Family,
    NoneGuard,
    check_epsilon,
    check_event_options,
    check_fraction,
    check_positive_int,
    estimate_epsilon_lower_bound,
    make_result,
    select_event,
)
from privet.audits.events import ClassifierSpec
from privet.audits.neighbours import canary_pair
from privet.audits.result import DPTestResult
from privet.audits.sampling import (
    accepts,
    accepts_size,
    auto_batch_size,
    batches,
    check_seed,
    count_event,
    draw,
    parallel,
    run_tasks,
    task_seeds,
)
from privet.errors import InvalidParameterError

__all__ = [
    "DPTestResult",
    "EventsSpec",
    "Family",
    "PairSearchResult",
    "canary_pair",
    "dp_test",
    "estimate_epsilon_lower_bound",
    "search_neighbouring_pairs",
]


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
    backend: Any = None,
    scheduler: Any = None,
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
    backend : str or joblib backend, optional
        joblib backend (``"loky"``, ``"threading"``, ``"dask"``...); None uses
        the active ``joblib.parallel_config`` (loky by default).
    scheduler : str, distributed.Client or cluster, optional
        Run the trainings on this Dask cluster (``"tcp://HOST:8786"``) through
        joblib's Dask backend; seeded runs give the same numbers as in one
        process (see :mod:`privet.audits.cluster`). Not with ``backend``.
    batch_size : int, optional
        Runs per task; default cuts each phase into about 32 tasks per input
        (at most 250,000 runs for vectorised mechanisms, 64 otherwise), whatever
        the number of workers, so that seeded runs are reproducible.
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
        Seed of the classifier and, when ``mechanism`` takes a ``random_state``
        argument, of the mechanism: each batch is then called with its own seed
        (:func:`~privet.audits.sampling.task_seeds`), so a seeded test gives the
        same numbers with any ``n_jobs`` and backend. A mechanism without that
        argument draws its own noise.
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
    backend = resolve_backend(backend, scheduler)
    start = time.perf_counter()
    epsilon = check_epsilon(epsilon, "epsilon")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    trials = check_positive_int(trials, "trials", minimum=2)
    selection_fraction = check_fraction(selection_fraction, "selection_fraction")
    if target_epsilon is not None:
        target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    power = check_real(power, "power", lower=0.0, upper=1.0, example=", e.g. 0.9")
    check_event_options(classifier, max_thresholds, max_discrete_values, selection_penalty)
    pool = parallel(n_jobs, backend, verbose)
    random_state = check_seed(random_state)
    if not callable(mechanism):
        raise InvalidParameterError(
            f"'mechanism' must be callable as mechanism(data) or mechanism(data, size=n); "
            f"got {type(mechanism).__name__}."
        )
    statistic = NoneGuard(statistic, getattr(mechanism, "__name__", type(mechanism).__name__))
    vec = accepts_size(mechanism) if vectorized is None else bool(vectorized)
    n_sel = min(trials - 1, max(1, round(trials * selection_fraction)))
    n_est_max = trials - n_sel
    datasets = (d0, d1)
    common = (mechanism, statistic, vec)
    seeded = random_state if accepts(mechanism, "random_state") else None

    # Phase 1: selection trials, statistics kept.
    bs = batch_size or auto_batch_size(n_sel, vec)
    tasks = [(side, size) for size in batches(n_sel, bs) for side in (0, 1)]
    seeds = task_seeds(seeded, len(tasks), stream=1)
    parts = run_tasks(draw, tasks, common, datasets, seeds, pool)
    sel = [
        np.concatenate([p for (side, _), p in zip(tasks, parts, strict=True) if side == s])
        for s in (0, 1)
    ]
    rng = np.random.default_rng(random_state)
    candidate = select_event(
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
    bs = batch_size or auto_batch_size(n_est, vec)
    tasks = [(side, size) for size in batches(n_est, bs) for side in (0, 1)]
    seeds = task_seeds(seeded, len(tasks), stream=2)
    counts = run_tasks(count_event, tasks, (*common, candidate.event), datasets, seeds, pool)
    k = [sum(c for (side, _), c in zip(tasks, counts, strict=True) if side == s) for s in (0, 1)]
    return make_result(
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
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise InvalidParameterError(
            f"'pairs' must be a sequence of (D, D') pairs; got {type(pairs).__name__}."
        )
    if len(pairs) == 0:
        raise InvalidParameterError("'pairs' is empty; give at least one (D, D') pair.")
    bad = [i for i, p in enumerate(pairs) if not (isinstance(p, tuple) and len(p) == 2)]
    if bad:
        raise InvalidParameterError(
            f"Every pair must be a tuple (D, D'); items {bad[:5]} are not (canary_pair(D, "
            "record) builds one)."
        )
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
