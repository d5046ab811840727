"""Epsilon lower bounds from samples: choose an event on some trials, count it on the others.

With Clopper–Pearson bounds ``p_hi_lower`` on the side where the event ``S`` is
likely and ``p_lo_upper`` on the other, each at one-sided level
``1 - (1 - confidence) / 2``, ``epsilon_lower = ln((p_hi_lower - delta) / p_lo_upper)``
holds with probability at least ``confidence`` because ``S`` was chosen on
trials that are not counted. :func:`estimate_epsilon_lower_bound` works on
samples given; :func:`~privet.audits.dptest.dp_test` draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from privet.audits.bounds import (
    check_confidence,
    check_delta,
    check_real,
    epsilon_lower_from_counts,
)
from privet.audits.events import (
    DATASET_NAMES,
    Candidate,
    ClassifierSpec,
    as_statistic_array,
    distinct_count,
    is_discrete,
    make_classifier,
    select_classifier_event,
    select_set_event,
    select_threshold_event,
)
from privet.audits.result import DPTestResult
from privet.audits.sampling import check_seed
from privet.errors import InvalidParameterError

__all__ = ["EventsSpec", "Family", "estimate_epsilon_lower_bound"]

Family = Literal["threshold", "classifier", "set"]
EventsSpec = Literal["auto", "threshold", "classifier", "set"] | Sequence[Family]
_FAMILIES = ("threshold", "classifier", "set")


# ---------------------------------------------------------------- parameter checks


def check_fraction(value: float, name: str) -> float:
    """Validate a fraction in (0, 1)."""
    return check_real(value, name, lower=0.0, upper=1.0)


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter must be an int >= {minimum}; got {value!r}."
        )
    return int(value)


def check_split(n: int, selection_fraction: float) -> tuple[int, int]:
    """``(selection, estimation)`` trials of ``n`` at ``selection_fraction``: both at least 1.

    The same rounding as :func:`estimate_epsilon_lower_bound`, so that a caller
    can refuse a split before it spends any run.
    """
    fraction = check_fraction(selection_fraction, "selection_fraction")
    n_sel = round(n * fraction)
    if min(n_sel, n - n_sel) < 1:
        raise InvalidParameterError(
            f"Need at least one selection and one estimation trial per input; got {n} trials "
            f"with selection_fraction={selection_fraction}. Run more trials or choose a "
            "selection_fraction nearer 0.5."
        )
    return n_sel, n - n_sel


def check_event_options(
    classifier: Any, max_thresholds: Any, max_discrete_values: Any, selection_penalty: Any
) -> None:
    """Refuse the event search's options at the entry point, not when a family needs
    them (classifier="foo" passed wherever the threshold family won)."""
    make_classifier(classifier, None)
    check_positive_int(max_thresholds, "max_thresholds")
    check_positive_int(max_discrete_values, "max_discrete_values")
    check_real(selection_penalty, "selection_penalty", lower=0.0, closed="left")


class NoneGuard:
    """The statistic of a dp_test, refusing a mechanism whose outputs are all None
    (a function that returns nothing would pass every test)."""

    def __init__(self, statistic: Any, name: str) -> None:
        self.statistic, self.name = statistic, name

    def __call__(self, outputs: Any) -> Any:
        if outputs is None or (
            isinstance(outputs, list) and outputs and all(o is None for o in outputs)
        ):
            raise InvalidParameterError(
                f"The mechanism {self.name} returned None: it must return its output (a "
                "number, an array, a model's predictions), or there is nothing to test."
            )
        return outputs if self.statistic is None else self.statistic(outputs)


def check_epsilon(value: Any, name: str) -> float:
    """Validate a non-negative epsilon (``inf`` allowed: no claim)."""
    return check_real(value, name, lower=0.0, closed="both")


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


def select_event(
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


def make_result(
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
    selection_fraction = check_fraction(selection_fraction, "selection_fraction")
    check_event_options(classifier, max_thresholds, max_discrete_values, selection_penalty)
    if claimed_epsilon is not None:
        claimed_epsilon = check_epsilon(claimed_epsilon, "claimed_epsilon")
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
    rng = np.random.default_rng(check_seed(random_state))
    if shuffle:
        s0 = s0[rng.permutation(len(s0))]
        s1 = s1[rng.permutation(len(s1))]
    candidate = select_event(
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
    return make_result(
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
