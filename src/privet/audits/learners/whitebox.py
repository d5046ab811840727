"""The white-box learner test: the exact likelihood ratio of the releases, many trainings.

:func:`release_test` trains a learner ``trials`` times on each side of a
neighbouring pair, each training with its replay on the other side
(:mod:`~privet.audits.learners.transcripts`), and turns the per-training
log-likelihood ratios ``T`` into

* a **rigorous** lower bound: a threshold event ``{T >= t}`` or ``{T <= t}`` is
  chosen on a part of the trainings (``selection_fraction``) and counted on the
  rest; Clopper–Pearson bounds on the two frequencies give
  ``epsilon >= ln((p_hi - delta) / p_lo)`` at the stated confidence, whatever the
  mechanisms do (the laws only make the statistic good, not the bound valid);
* an **estimate** with an interval: for pure-DP releases the plug-in ratio of
  the same event with its two-sided Clopper–Pearson interval (the privacy
  loss distribution of the releases is a lattice, and the top level set's
  ratio is ``e^epsilon`` of the pair); for Gaussian releases the mu of the
  Gaussian-DP trade-off curve fitted at the median threshold and converted to
  epsilon at the learner's delta (Nasr, Hayes, Steinke, Balle, Tramèr,
  Jagielski, Carlini & Terzis 2023, "Tight auditing of differentially private
  machine learning", Sec. 4);
* the pair's **analytic** figure: the largest privacy loss the recorded
  transcripts could show by their laws (pure DP) or the root mean square
  Gaussian shift (mu), i.e. the best any test on this pair can reach.

A learner whose fit releases nothing through privet's mechanisms, a release
without a stated law that the canary moves, or a time limit that leaves too
few trainings give a result that says *not measured* and why (never a bound
of 0 read as a measurement).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from joblib import delayed
from numpy.typing import NDArray

from privet.audits.bounds import (
    check_confidence,
    check_delta,
    check_real,
    gdp_epsilon,
    gdp_mu_estimate,
    log_ratio_estimate,
)
from privet.audits.estimate import check_epsilon, check_positive_int, check_split
from privet.audits.learners.pairs import LearnerPair
from privet.audits.learners.registry import LearnerSpec, resolve_learner
from privet.audits.learners.transcripts import (
    NO_LAW,
    OK,
    OUTCOMES,
    TrialBatch,
    likelihood_ratio,
    run_trials,
)
from privet.audits.result import DPTestResult
from privet.audits.sampling import check_seed, parallel, task_seeds
from privet.errors import InvalidParameterError
from privet.mechanisms import recorder

#: Default pessimism of the threshold's choice in the white-box tests, in standard
#: deviations per proportion. The statistic is the exact likelihood ratio, so the
#: candidates are its few levels (pure DP) and the best is often the top one, which is
#: rare; a pessimism of 3 (the black-box default, guarding many candidate events
#: against the winner's curse) passed it over for frequent levels of lower ratio. On
#: the sound ODP+FMPC-ID3's pair (four levels, the top one on 7% of trainings on D'),
#: 56,633 trainings a side gave >= 0.754 with 3 (the chosen event had ratio e^0.77).
#: Drawn from that pair's laws at 50,000 trainings a side (20 draws), the mean bound was
#: 0.761 with 3, 0.817 with 2, 0.861 with 1 and 0.868 with 0.5; on DP ID3's pair
#: (resampling 2,500 real trainings a side) 1 gave 0.769 at 20,000 a side against
#: 0.458 with 3, and the same at 40,000. Any value is valid: the threshold is chosen
#: on trainings the bound does not use.
SELECTION_PENALTY = 1.0

IMPOSSIBLE = 1e9
"""The statistic of a transcript impossible on the other dataset (log-ratio +-inf)."""

__all__ = [
    "OneRunNotSupported",
    "ReleaseTest",
    "protocol_release_test",
    "release_one_run",
    "release_test",
    "statistics_bound",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseTest:
    """A white-box test of one learner on one neighbouring pair.

    Attributes
    ----------
    learner, pair, pair_description : str
    result : DPTestResult or None
        The rigorous bound (event, counts, Clopper–Pearson); None when not measured.
    not_measured : str
        Why there is no bound ('' when there is one).
    estimate : float
        Point estimate of the pair's epsilon (at ``delta``); nan when not measured.
    estimate_interval : (float, float)
        Its two-sided interval at the test's confidence.
    estimate_method : str
        ``"plug-in ratio"`` (pure DP) or ``"Gaussian DP fit"``.
    mu, mu_interval : float, (float, float)
        The fitted Gaussian-DP mu (Gaussian releases only; nan otherwise).
    pair_epsilon : float
        The analytic figure of the pair: the largest privacy loss the recorded
        transcripts allow by the mechanisms' laws (pure DP), or epsilon at
        ``delta`` of the root-mean-square Gaussian shift ``pair_mu``.
    pair_mu : float
    delta : float
        The delta of the bound and of the estimate (the learner's proven delta).
    n_trials : int
        Trainings per side (each with its replay).
    outcomes : dict
        Number of trainings per outcome (``ok``, ``replay diverged``, ...).
    notes : tuple of str
        The first reasons for outcomes other than ``ok``.
    releases : tuple of str
        The releases of one training (mechanism, step, law).
    curve : tuple of (int, float)
        The rigorous bound on growing prefixes of the trainings.
    cpu_seconds, wall_seconds : float
        CPU time of the trainings (summed over workers) and elapsed time.
    statistics : (ndarray, ndarray) or None
        The test statistic of every training on ``D`` and on ``D'`` (the exact
        log-likelihood ratio of its transcript), kept so that the bound can be
        recomputed (another confidence, another event selection) without training
        again; not part of :meth:`to_dict`.
    """

    learner: str
    pair: str
    pair_description: str
    result: DPTestResult | None
    not_measured: str = ""
    estimate: float = math.nan
    estimate_interval: tuple[float, float] = (math.nan, math.nan)
    estimate_method: str = ""
    mu: float = math.nan
    mu_interval: tuple[float, float] = (math.nan, math.nan)
    pair_epsilon: float = math.nan
    pair_mu: float = math.nan
    delta: float = 0.0
    n_trials: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    releases: tuple[str, ...] = ()
    curve: tuple[tuple[int, float], ...] = ()
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    statistics: tuple[NDArray[np.float64], NDArray[np.float64]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def measured(self) -> bool:
        return self.result is not None

    @property
    def epsilon_lower(self) -> float | None:
        """The rigorous lower bound, or None when not measured."""
        return None if self.result is None else self.result.epsilon_lower

    @property
    def confidence(self) -> float | None:
        return None if self.result is None else self.result.confidence

    @property
    def verdict(self) -> str:
        if self.result is None:
            return "NOT MEASURED"
        return self.result.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "pair": self.pair,
            "pair_description": self.pair_description,
            "mode": "releases",
            "not_measured": self.not_measured,
            "epsilon_lower": self.epsilon_lower,
            "estimate": self.estimate,
            "estimate_interval": list(self.estimate_interval),
            "estimate_method": self.estimate_method,
            "mu": self.mu,
            "mu_interval": list(self.mu_interval),
            "pair_epsilon": self.pair_epsilon,
            "pair_mu": self.pair_mu,
            "delta": self.delta,
            "n_trials": self.n_trials,
            "outcomes": dict(self.outcomes),
            "notes": list(self.notes),
            "releases": list(self.releases),
            "curve": [list(p) for p in self.curve],
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "result": None if self.result is None else self.result.to_dict(),
        }


def _not_measured(spec: LearnerSpec, pair: LearnerPair, why: str, **kw: Any) -> ReleaseTest:
    return ReleaseTest(
        learner=spec.name,
        pair=pair.kind,
        pair_description=pair.description,
        result=None,
        not_measured=why,
        **kw,
    )


def _curve_points(n: int, points: int = 8) -> list[int]:
    lo = max(16, n // 2**points)
    grid = np.unique(np.geomspace(lo, max(n, lo), points).round().astype(int))
    return [int(g) for g in grid if g <= n]


def statistics_bound(t0: np.ndarray, t1: np.ndarray, **kw: Any) -> DPTestResult:
    """The rigorous bound of a white-box test from its trainings' statistics
    (:attr:`ReleaseTest.statistics`): a threshold event on the likelihood ratio, chosen
    on a share of them; ``kw`` as :func:`~privet.audits.estimate.estimate_epsilon_lower_bound`
    (``delta``, ``confidence``, ``selection_fraction``, ``selection_penalty``, ...).
    Recomputes a test's bound, or gives it at another delta, without training again."""
    from privet.audits.estimate import estimate_epsilon_lower_bound

    # an impossible transcript (T = +-inf) becomes +-IMPOSSIBLE: beyond any finite ratio
    t0 = np.clip(t0, -IMPOSSIBLE, IMPOSSIBLE)
    t1 = np.clip(t1, -IMPOSSIBLE, IMPOSSIBLE)
    return estimate_epsilon_lower_bound(t0, t1, events="threshold", **kw)


def release_test(
    learner: str | LearnerSpec,
    pair: LearnerPair,
    *,
    epsilon: float,
    trials: int,
    confidence: float,
    max_depth: int | None = None,
    delta: float = 0.0,
    claimed_epsilon: float | None = None,
    selection_fraction: float = 0.25,
    selection_penalty: float = SELECTION_PENALTY,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    backend: Any = None,
    batch_size: int | None = None,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
    curve: bool = True,
) -> ReleaseTest:
    """White-box DP test of a learner on ``pair``: ``trials`` trainings per side.

    Parameters
    ----------
    learner : str or LearnerSpec
    pair : LearnerPair
        ``D`` and ``D' = D + canary`` (the canary the last row of ``D'``), e.g.
        from :func:`~privet.audits.learners.worst_case.worst_case_pair`.
    epsilon : float
        The learner's privacy parameter.
    trials : int
        Trainings per side (each is followed by its replay on the other side).
    confidence : float
        Confidence of the rigorous bound (and of the estimate's interval).
    max_depth : int, optional
        Default: the pair's design depth, else 3.
    delta : float, default=0
        The delta of the hypothesis: the learner's proven delta.
    claimed_epsilon : float, optional
        The epsilon the verdict compares the bound with (default: ``epsilon``).
    selection_fraction : float, default=0.25
        Share of the trainings that chooses the threshold (the likelihood
        ratio is already the best statistic; only its threshold is chosen).
    selection_penalty : float, default=SELECTION_PENALTY
        Pessimism of the threshold's choice, in standard deviations per
        proportion (see :func:`~privet.audits.events.score_candidates`). Any
        value gives a valid bound (the threshold is chosen on trainings the bound
        does not use); see :data:`SELECTION_PENALTY` for the default.
    time_limit : float, optional
        Seconds after which no new batch of trainings starts.
    n_jobs, backend, batch_size, random_state, progress
        As in :func:`~privet.audits.learners.trials.learner_dp_test`.
    curve : bool, default=True
        Also compute the bound on growing prefixes of the trainings.
    """
    spec = resolve_learner(learner)
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    epsilon = check_real(epsilon, "epsilon", lower=0.0)
    trials = check_positive_int(trials, "trials", minimum=4)
    check_split(trials, selection_fraction)
    selection_penalty = check_real(selection_penalty, "selection_penalty", lower=0.0, closed="left")
    if claimed_epsilon is not None:
        claimed_epsilon = check_epsilon(claimed_epsilon, "claimed_epsilon")
    if not isinstance(pair, LearnerPair):
        raise InvalidParameterError(
            f"'pair' must be a LearnerPair (worst_case_pair(...), count_pair(schema), ...); "
            f"got {type(pair).__name__}."
        )
    if time_limit is not None:
        time_limit = check_real(time_limit, "time_limit", lower=0.0, closed="left")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    check_seed(random_state)
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    depth = max_depth if max_depth is not None else (pair.max_depth or 3)
    params = {"epsilon": epsilon, "max_depth": int(depth), "schema": pair.schema}
    sides = ((pair.X0, pair.y0, pair.fit_params0), (pair.X1, pair.y1, pair.fit_params1))
    t_start = time.perf_counter()

    # a pilot training: does the learner release anything through the mechanisms?
    pilot = run_trials(spec, params, sides, pair.probes, [1], [0])
    if int(pilot.n_releases[0]) == 0:
        return _not_measured(
            spec,
            pair,
            "the learner released nothing through privet's mechanisms during fit (no "
            "recorded release), so there is no likelihood ratio to test; audit its "
            "predictions instead (output='labels' or 'proba')",
            delta=delta,
        )
    if int(pilot.outcome[0]) == NO_LAW:
        return _not_measured(
            spec,
            pair,
            f"{pilot.notes[0] if pilot.notes else 'a release has no stated law'}: privet "
            "cannot compute its likelihood ratio",
            delta=delta,
            releases=pilot.labels,
        )

    bs = batch_size or max(1, min(50, math.ceil(2 * trials / 32)))
    total = 2 * trials
    seeds = task_seeds(random_state, total, stream=11)
    side_of = [i % 2 for i in range(total)]
    cuts = [*range(0, total, bs), total]
    tasks = [(side_of[a:b], seeds[a:b]) for a, b in itertools.pairwise(cuts)]
    calls = (delayed(run_trials)(spec, params, sides, pair.probes, s, sd) for s, sd in tasks)
    parts: list[TrialBatch] = [pilot]
    done = 0
    if progress is not None:
        progress(0, total)
    stopped = False
    batches = iter(parallel(n_jobs, backend, return_as="generator")(calls))
    while True:
        if time_limit is not None and time.perf_counter() - t_start > time_limit:
            stopped = True  # no new batch once the time is up (running ones are dropped)
            break
        batch = next(batches, None)
        if batch is None:
            break
        parts.append(batch)
        done += len(batch.side)
        if progress is not None:
            progress(done, total)
    trials_all = TrialBatch.concat(parts[1:]) if len(parts) > 1 else pilot
    return _summarise(
        spec,
        pair,
        trials_all,
        releases=pilot.labels,
        cpu=trials_all.cpu_seconds + pilot.cpu_seconds,
        wall=time.perf_counter() - t_start,
        stopped=stopped,
        time_limit=time_limit,
        epsilon=epsilon,
        claimed_epsilon=claimed_epsilon,
        delta=delta,
        confidence=confidence,
        selection_fraction=selection_fraction,
        selection_penalty=selection_penalty,
        random_state=random_state,
        curve=curve,
    )


def _summarise(
    spec: LearnerSpec,
    pair: LearnerPair,
    trials_all: TrialBatch,
    *,
    releases: tuple[str, ...],
    cpu: float,
    wall: float,
    stopped: bool,
    time_limit: float | None,
    epsilon: float,
    claimed_epsilon: float | None,
    delta: float,
    confidence: float,
    selection_fraction: float,
    random_state: Any,
    curve: bool,
    selection_penalty: float = SELECTION_PENALTY,
) -> ReleaseTest:
    """Statistics of the trainings -> the rigorous bound, the estimate, the pair's figure."""
    outcomes = {
        OUTCOMES[int(k)]: int(np.count_nonzero(trials_all.outcome == k))
        for k in np.unique(trials_all.outcome)
    }
    common: dict[str, Any] = {
        "delta": delta,
        "outcomes": outcomes,
        "notes": trials_all.notes,
        "releases": releases,
        "cpu_seconds": cpu,
        "wall_seconds": wall,
    }
    stat = trials_all.statistic
    keep = ~np.isnan(stat)
    if not keep.any():
        return _not_measured(
            spec,
            pair,
            "no training gave a likelihood ratio (" + "; ".join(trials_all.notes) + ")",
            **common,
        )
    t0 = stat[keep & (trials_all.side == 0)]
    t1 = stat[keep & (trials_all.side == 1)]
    n = min(len(t0), len(t1))
    n_sel = round(n * selection_fraction)
    if n < 4 or n_sel < 1 or n - n_sel < 1:
        why = (
            f"the time limit of {time_limit:g} s left {n} trainings per side, too few for a bound"
            if stopped
            else f"only {n} trainings per side gave a likelihood ratio"
        )
        return _not_measured(spec, pair, why + "; allow more time or trainings", **common)
    t0, t1 = t0[:n], t1[:n]
    claim = epsilon if claimed_epsilon is None else claimed_epsilon
    kw = {
        "delta": delta,
        "confidence": confidence,
        "claimed_epsilon": claim,
        "selection_fraction": selection_fraction,
        "selection_penalty": selection_penalty,
        "random_state": random_state,
    }
    result = statistics_bound(t0, t1, **kw)
    result = _timed(result, wall)

    gaussian = bool(np.nansum(trials_all.gaussian_shift2[keep]) > 0)
    ok = keep & (trials_all.outcome == OK)
    if gaussian:
        mid = 0.5 * (np.median(t0) + np.median(t1))
        mu, mu_lo, mu_hi = gdp_mu_estimate(
            int(np.count_nonzero(t1 > mid)),
            len(t1),
            int(np.count_nonzero(t0 > mid)),
            len(t0),
            confidence=confidence,
        )
        eff = delta if delta > 0 else 1e-5
        estimate = gdp_epsilon(eff, max(mu, 0.0))
        interval = (gdp_epsilon(eff, max(mu_lo, 0.0)), gdp_epsilon(eff, max(mu_hi, 0.0)))
        shifts = trials_all.gaussian_shift2[ok]
        pair_mu = float(np.sqrt(np.mean(shifts))) if shifts.size else math.nan
        pair_eps = gdp_epsilon(eff, pair_mu) if np.isfinite(pair_mu) else math.nan
        method = "Gaussian DP fit"
        extra = {"mu": mu, "mu_interval": (mu_lo, mu_hi), "pair_mu": pair_mu}
    else:
        estimate, lo, hi = _top_level_estimate(t0, t1, delta=delta, confidence=confidence)
        interval = (lo, hi)
        bounds = trials_all.pure_bound[ok]
        pair_eps = float(np.max(bounds)) if bounds.size else math.nan
        method = "plug-in ratio"
        extra = {}
    points: list[tuple[int, float]] = []
    if curve:
        for m in _curve_points(n):
            if m == n:
                points.append((m, result.epsilon_lower))
                continue
            if round(m * selection_fraction) < 1:
                continue
            points.append((m, statistics_bound(t0[:m], t1[:m], **kw).epsilon_lower))
    return ReleaseTest(
        learner=spec.name,
        pair=pair.kind,
        pair_description=pair.description,
        result=result,
        estimate=max(0.0, float(estimate)),  # an epsilon: the larger of the two directions
        estimate_interval=(max(0.0, float(interval[0])), max(0.0, float(interval[1]))),
        estimate_method=method,
        pair_epsilon=float(pair_eps),
        n_trials=n,
        curve=tuple(points),
        statistics=(t0, t1),
        **extra,
        **common,
    )


def _top_level_estimate(
    t0: np.ndarray, t1: np.ndarray, *, delta: float, confidence: float, min_count: int = 30
) -> tuple[float, float, float]:
    """The privacy-loss estimate of pure-DP releases: the ratio of the top level set.

    With the exact log-likelihood ratio as statistic, the releases' privacy
    loss takes a lattice of values and ``{T >= t}`` for the largest level ``t``
    has probability ratio ``e^t`` between ``D'`` and ``D``. The estimate is the
    plug-in ratio of ``{T >= t}`` (and of ``{T <= -t}`` the other way) for the
    largest ``t`` still seen ``min_count`` times on the favoured side, over all
    trainings, with its two-sided Clopper–Pearson interval; the larger of the
    two directions. An estimate (the level is chosen on the same trainings),
    not a bound.
    """
    best = (-math.inf, -math.inf, -math.inf)
    # sums of float log-ratios: levels equal up to rounding are one level
    t0, t1 = np.round(t0, 9), np.round(t1, 9)
    for hi_side, lo_side in ((t1, t0), (-t0, -t1)):
        levels = np.unique(hi_side)[::-1]
        for t in levels:
            k_hi = int(np.count_nonzero(hi_side >= t))
            if k_hi < min(min_count, len(hi_side)):
                continue
            k_lo = int(np.count_nonzero(lo_side >= t))
            est = log_ratio_estimate(
                k_hi, len(hi_side), k_lo, len(lo_side), delta=delta, confidence=confidence
            )
            if est[0] > best[0]:
                best = est
            break
    return best


def _timed(result: DPTestResult, seconds: float) -> DPTestResult:
    d = {k: getattr(result, k) for k in result.__dataclass_fields__ if k != "verdict"}
    d["wall_time"] = seconds
    return DPTestResult(**d)


# ------------------------------------------------------------------- one run


class OneRunNotSupported(InvalidParameterError):
    """The white-box one-run audit cannot replay this learner (it deals rows by position)."""


def _canary_frames(schema: Any, m: int, base: int, rng: np.random.Generator) -> tuple[Any, ...]:
    from privet.audits.learners.pairs import frame_from_codes

    sizes = np.asarray(schema.domain_sizes)
    codes = np.stack([rng.integers(s, size=m) for s in sizes], axis=1)
    labels = rng.integers(schema.n_classes, size=m)
    Xc, yc = frame_from_codes(schema, codes, labels)
    Xb, yb = frame_from_codes(
        schema, np.zeros((base, schema.n_features), dtype=np.int64), [0] * base
    )
    return Xb, yb, Xc, yc


def _replay_log_likelihood(run: recorder.Recorder, fit: Callable[[], Any]) -> float | None:
    """``sum_t log P_t(o_t | x_t)`` of ``run``'s outputs on the dataset ``fit`` trains on.

    None when that dataset cannot give the transcript (the replay diverged or failed).
    """
    try:
        with recorder.replaying(run) as rep:
            fit()
    except Exception:
        return None
    if rep.diverged:
        return None
    total = 0.0
    for r in rep.releases:
        if r.law is None:
            return None
        total += r.law.log_likelihood(r.output, r.value)
    return total


def release_one_run(
    learner: str | LearnerSpec,
    schema: Any,
    *,
    epsilon: float,
    confidence: float,
    max_depth: int = 3,
    m: int = 200,
    base_rows: int = 200,
    delta: float = 0.0,
    claimed_epsilon: float | None = None,
    random_state: int | None = 0,
) -> Any:
    """One-run audit (Steinke, Nasr & Jagielski 2023) with the white-box view.

    ``m`` canaries (records of random codes and classes drawn from the public
    schema) each join ``base_rows`` schema-only records with probability 1/2;
    the learner trains once, under the release recorder. Each canary's score is
    the log-likelihood ratio of the recorded releases on the base rows with that
    canary alone against the base rows alone (replays): a function of the output
    and public records only, as Theorem 3.1 requires of the guesses (a score that
    held the other canaries as drawn would use their secret inclusion, and
    canaries sharing a release would be guessed right together more often than
    the theorem allows). The guesses and the bound are those of
    :func:`~privet.audits.one_run_audit`. Costs one training and ``m + 1`` replays.

    Refused (:class:`OneRunNotSupported`) for a learner that draws privacy
    coins per row position (dealing rows to trees): removing one canary would
    move the others' coins.
    """
    import pandas as pd

    from privet.audits.one_run import one_run_audit

    spec = resolve_learner(learner)
    m = check_positive_int(m, "m", minimum=2)
    base_rows = check_positive_int(base_rows, "base_rows", minimum=1)
    rng = np.random.default_rng(check_seed(random_state))
    Xb, yb, Xc, yc = _canary_frames(schema, m, base_rows, rng)
    params = {"epsilon": float(epsilon), "max_depth": int(max_depth), "schema": schema}
    seed = int(rng.integers(2**31))

    def data(included: np.ndarray) -> tuple[Any, Any]:
        X = pd.concat([Xb, Xc[included]], ignore_index=True)
        y = pd.concat([yb, yc[included]], ignore_index=True)
        return X, y

    def fit(included: np.ndarray) -> Any:
        X, y = data(included)
        return spec.make(**params, random_state=seed).fit(X, y)

    def train(included: np.ndarray) -> np.ndarray:
        included = np.asarray(included, dtype=bool)
        with recorder.recording() as run:
            fit(included)
        if run.coins or run.samples:
            raise OneRunNotSupported(
                f"{spec.name} draws privacy coins per row (dealing rows, Poisson samples): "
                "the white-box one-run audit cannot flip one canary without moving the "
                "others' coins; use the many-trainings test (release_test)."
            )
        if not run.releases:
            raise OneRunNotSupported(
                f"{spec.name} released nothing through privet's mechanisms: no white-box view."
            )
        # The score of canary i compares the transcript on the base rows with and without
        # canary i alone: a function of the output and public records only. (Holding the
        # other canaries as they were drawn would use their secret inclusion, and the
        # guesses of canaries that share a release would then be correct together more
        # often than Theorem 3.1 allows: the bound would not hold.)
        none = np.zeros(m, dtype=bool)
        base = _replay_log_likelihood(run, lambda: fit(none))
        scores = np.zeros(m)
        if base is None:
            return scores  # the base rows alone cannot give this transcript: no evidence
        for i in range(m):
            alone = none.copy()
            alone[i] = True
            with_i = _replay_log_likelihood(run, lambda alone=alone: fit(alone))
            scores[i] = -math.inf if with_i is None else with_i - base
        return _finite_order(scores)

    ks = sorted({max(1, m // d) for d in (40, 20, 10, 4)})
    guesses = [(k, 0) for k in ks] + [(k, k) for k in ks if 2 * k <= m]
    return one_run_audit(
        train,
        m,
        delta=delta,
        confidence=confidence,
        guesses=guesses,
        claimed_epsilon=float(epsilon) if claimed_epsilon is None else claimed_epsilon,
        random_state=rng,
    )


def _finite_order(scores: np.ndarray) -> np.ndarray:
    """The same order with finite values: one run guesses from the order of the scores
    only, so a transcript impossible with canary i alone (-inf) sits below every finite
    score and an infinite ratio (+inf, a non-private release) above; ties stay ties."""
    finite = scores[np.isfinite(scores)]
    lo = (finite.min() if finite.size else 0.0) - 1.0
    hi = (finite.max() if finite.size else 0.0) + 1.0
    return np.where(scores == -math.inf, lo, np.where(scores == math.inf, hi, scores))


# ------------------------------------------------------------------ protocols


def _reference_spec(spec: LearnerSpec) -> LearnerSpec:
    """The same learner and options on its plaintext reference path (``backend="reference"``)."""
    from dataclasses import replace

    from privet.audits.learners.registry import LearnerBuilder

    build = spec.build
    if not isinstance(build, LearnerBuilder):
        raise InvalidParameterError(
            f"{spec.name}: a protocol audit needs a LearnerBuilder (class and options) to "
            "build the learner's reference path."
        )
    options = {**dict(build.options), "backend": "reference"}
    return replace(
        spec,
        name=f"{spec.name}:reference",
        build=LearnerBuilder(build.cls, tuple(options.items())),
        path="reference",
        slow=False,
    )


def _protocol_trials(
    spec: LearnerSpec,
    reference: LearnerSpec,
    params: dict[str, Any],
    sides: tuple[tuple[Any, ...], tuple[Any, ...]],
    side_of: list[int],
    seeds: list[int | None],
) -> list[tuple[float, float, float, int, int, str, list[str]]]:
    """A batch of :func:`_protocol_trial` (one joblib task)."""
    return [
        _protocol_trial(spec, reference, params, sides, side, seed)
        for side, seed in zip(side_of, seeds, strict=True)
    ]


def _protocol_trial(
    spec: LearnerSpec,
    reference: LearnerSpec,
    params: dict[str, Any],
    sides: tuple[tuple[Any, ...], tuple[Any, ...]],
    side: int,
    seed: int | None,
) -> tuple[float, float, float, int, int, str, list[str]]:
    """One protocol training on ``sides[side]``; its openings replayed on both references."""
    from privet.audits.learners.transcripts import DIVERGED, FAILED, NO_LAW

    X, y, fit_params = sides[side]
    model = spec.make(**params, random_state=seed).fit(X, y, **fit_params)
    # what the strongest party the proof covers knows, in release order (release_transcript_),
    # else what every party saw opened (opened_)
    opened = getattr(model, "release_transcript_", None)
    if opened is None:
        opened = getattr(model, "opened_", None)
    if opened is None:
        return math.nan, math.nan, math.nan, 0, NO_LAW, "no opened_ transcript", []
    source = recorder.Recorder(
        mode="record",
        releases=[
            recorder.Release(None, None, np.asarray(o), "opened by the parties") for o in opened
        ],
    )
    worlds = []
    for X_w, y_w, fp_w in sides:
        try:
            with recorder.replaying(source) as rep:
                reference.make(**params, random_state=seed).fit(X_w, y_w, **fp_w)
        except Exception as exc:
            return math.nan, math.nan, math.nan, len(opened), FAILED, repr(exc), []
        worlds.append(rep)
    diverged = [bool(w.diverged) for w in worlds]
    sign = 1.0 if side == 1 else -1.0
    if diverged[side]:  # the reference on the run's own data cannot follow the protocol
        why = f"the protocol's openings do not follow the reference path: {worlds[side].diverged}"
        return math.nan, math.nan, math.nan, len(opened), DIVERGED, why, []
    if diverged[1 - side]:
        return (
            sign * math.inf,
            math.inf,
            math.inf,
            len(opened),
            DIVERGED,
            worlds[1 - side].diverged,
            [],
        )
    t, bound, shift2, ok = likelihood_ratio(worlds[0], worlds[1])
    labels = [
        f"{r.label} [{r.law.describe() if r.law else 'no law'}]" for r in worlds[side].releases
    ]
    return t, bound, shift2, len(opened), OK if ok else NO_LAW, "", labels


def protocol_release_test(
    learner: str | LearnerSpec,
    pair: LearnerPair,
    *,
    epsilon: float,
    trials: int,
    confidence: float,
    max_depth: int | None = None,
    delta: float = 0.0,
    claimed_epsilon: float | None = None,
    selection_fraction: float = 0.25,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    backend: Any = None,
    batch_size: int | None = None,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ReleaseTest:
    """The white-box test through an MPC protocol: the values the parties open.

    Each training runs the learner's protocol (its party processes over TCP)
    on one side of ``pair``; the learner exposes what the strongest party its
    proof covers knows, in release order (``release_transcript_``: secure-sum
    ID3's party 0 knows its own noise shares and the sums), or what every party
    saw opened (``opened_``). Those openings are forced on the
    learner's plaintext reference path on *both* datasets (the release
    recorder's replay), which gives the values each dataset would have fed the
    same releases, hence the exact likelihood ratio of the protocol's
    transcript. A transcript the reference cannot follow on the run's own data
    means the protocol and its reference disagree: the trial is reported, not
    counted.

    Each training starts its own party processes on fresh ports, so trainings
    are independent: ``n_jobs``, ``backend`` and ``batch_size`` spread them over
    workers as in :func:`release_test` (default: one after another). Most of a
    training's cost is its parties starting up; with ``n_jobs=2`` on two cores
    the wall time about halves. ``time_limit`` is checked between batches (20
    trainings at most by default): a batch started before the limit runs to its end,
    and with ``n_jobs > 1`` the batches already running when it passes are dropped
    (each party process stops when the worker that launched it ends).
    """
    spec = resolve_learner(learner)
    reference = _reference_spec(spec)
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    trials = check_positive_int(trials, "trials", minimum=4)
    check_split(trials, selection_fraction)
    if time_limit is not None:
        time_limit = check_real(time_limit, "time_limit", lower=0.0, closed="left")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    depth = max_depth if max_depth is not None else (pair.max_depth or 3)
    params = {"epsilon": float(epsilon), "max_depth": int(depth), "schema": pair.schema}
    sides = ((pair.X0, pair.y0, pair.fit_params0), (pair.X1, pair.y1, pair.fit_params1))
    total = 2 * trials
    seeds = task_seeds(random_state, total, stream=13)
    side_of_all = [i % 2 for i in range(total)]
    bs = batch_size or max(1, min(20, math.ceil(total / 32)))
    cuts = [*range(0, total, bs), total]
    calls = (
        delayed(_protocol_trials)(spec, reference, params, sides, side_of_all[a:b], seeds[a:b])
        for a, b in itertools.pairwise(cuts)
    )
    t_start = time.perf_counter()
    cpu0 = time.process_time()
    out: list[tuple[float, float, float, int, int, str, list[str]]] = []
    side_of: list[int] = []
    stopped = False
    batches = iter(parallel(n_jobs, backend, return_as="generator")(calls))
    for a, b in itertools.pairwise(cuts):
        if time_limit is not None and time.perf_counter() - t_start > time_limit:
            stopped = True  # no new batch once the time is up (running ones are dropped)
            break
        out += next(batches)
        side_of += side_of_all[a:b]
        if progress is not None:
            progress(b, total)
    labels = next((o[6] for o in out if o[6]), [])
    batch = TrialBatch(
        side=np.asarray(side_of, dtype=np.int8),
        statistic=np.array([o[0] for o in out], dtype=np.float64),
        pure_bound=np.array([o[1] for o in out], dtype=np.float64),
        gaussian_shift2=np.array([o[2] for o in out], dtype=np.float64),
        n_releases=np.array([o[3] for o in out], dtype=np.int64),
        outcome=np.array([o[4] for o in out], dtype=np.int8),
        notes=tuple(dict.fromkeys(f"{OUTCOMES[o[4]]}: {o[5]}" for o in out if o[4] != OK))[:5],
        cpu_seconds=time.process_time() - cpu0,
        labels=tuple(labels),
    )
    return _summarise(
        spec,
        pair,
        batch,
        releases=tuple(labels),
        cpu=batch.cpu_seconds,
        wall=time.perf_counter() - t_start,
        stopped=stopped,
        time_limit=time_limit,
        epsilon=float(epsilon),
        claimed_epsilon=claimed_epsilon,
        delta=delta,
        confidence=confidence,
        selection_fraction=selection_fraction,
        random_state=random_state,
        curve=True,
    )
