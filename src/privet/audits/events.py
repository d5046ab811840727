"""Distinguishing events for empirical DP tests, and their selection on held-out trials.

An *event* is a set ``S`` of outputs of a mechanism ``M``. If ``M`` is
``(epsilon, delta)``-DP, then ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``
for every ``S`` and both orders of the neighbours ``D, D'``; a test looks for an
``S`` where the two sides are as far apart as the data allow. Three families:

* :class:`ThresholdEvent` — ``{s >= t}`` or ``{s <= t}`` for a scalar statistic
  ``s``; the threshold grid comes from quantiles of the selection trials.
* :class:`ClassifierEvent` — ``{posterior(x) >= t}`` or ``{posterior(x) <= t}``
  where ``posterior`` is a classifier trained to tell ``M(D)`` from ``M(D')`` on
  held-out trials (DP-Sniper [1]_), for vector statistics.
* :class:`SetEvent` — an explicit set of output values (predicted labels,
  categories), chosen as a prefix of the values ordered by their empirical
  likelihood ratio, the Neyman–Pearson order [2]_.

Selection never touches the trials that later estimate the probabilities: the
functions here see only selection trials, and rank candidates by the bound they
would give on the estimation trials if their true frequencies sat at the
pessimistic ends of their selection intervals (see :func:`score_candidates`).

References
----------
.. [1] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-box
   discovery of differential privacy violations using classifiers", IEEE S&P 2021.
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of
   differential privacy", CCS 2018.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from sklearn.base import ClassifierMixin, clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privet.errors import InvalidParameterError

__all__ = [
    "Candidate",
    "ClassifierEvent",
    "Event",
    "SetEvent",
    "ThresholdEvent",
    "as_statistic_array",
    "is_discrete",
    "score_candidates",
    "select_classifier_event",
    "select_set_event",
    "select_threshold_event",
]

Direction = Literal[">=", "<="]
DATASET_NAMES = ("D", "D'")


@runtime_checkable
class Event(Protocol):
    """A set of outputs: ``contains`` maps a batch of statistics to booleans."""

    def contains(self, samples: NDArray[Any]) -> NDArray[np.bool_]:
        """Return one boolean per trial (first axis of ``samples``)."""
        ...

    def describe(self) -> str:
        """A short human-readable description of the set."""
        ...


def as_statistic_array(samples: Any, name: str = "samples") -> NDArray[Any]:
    """Convert trials to an array whose first axis indexes trials.

    Scalars per trial give shape ``(n,)``, vectors ``(n, d)``; a trailing axis of
    length one is dropped; higher-dimensional outputs are flattened per trial.
    """
    arr = np.asarray(samples)
    if arr.ndim == 0:
        raise InvalidParameterError(
            f"'{name}' must hold one statistic per trial (first axis = trials); got a scalar."
        )
    if arr.ndim > 2:
        arr = arr.reshape(arr.shape[0], -1)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise InvalidParameterError(
            f"'{name}' contains NaN or infinite values; map them to finite values in the "
            "statistic (e.g. clip) before testing."
        )
    return arr


def is_discrete(samples: NDArray[Any]) -> bool:
    """Whether the values have no numeric order (labels, strings, booleans)."""
    return samples.dtype.kind in "OUSbV"


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class ThresholdEvent:
    """``{s >= threshold}`` or ``{s <= threshold}`` for a scalar statistic ``s``."""

    threshold: float
    direction: Direction
    label: str = "s"

    def contains(self, samples: NDArray[Any]) -> NDArray[np.bool_]:
        s = np.asarray(samples)
        if s.ndim == 2 and s.shape[1] == 1:
            s = s[:, 0]
        if s.ndim != 1:
            raise InvalidParameterError(
                f"A threshold event needs one scalar per trial; got shape {s.shape}."
            )
        return s >= self.threshold if self.direction == ">=" else s <= self.threshold

    def describe(self) -> str:
        return f"{self.label} {self.direction} {self.threshold:.6g}"


@dataclass(frozen=True, slots=True, eq=False)
class ClassifierEvent:
    """``{P_clf(D' | x) >= t}`` or ``{... <= t}`` for a fitted probabilistic classifier.

    The classifier was trained on selection trials (label 1 for ``D'``); only its
    ``predict_proba`` is used here.
    """

    classifier: Any
    threshold: float
    direction: Direction
    n_features: int

    def contains(self, samples: NDArray[Any]) -> NDArray[np.bool_]:
        x = np.asarray(samples, dtype=np.float64).reshape(len(samples), -1)
        if x.shape[1] != self.n_features:
            raise InvalidParameterError(
                f"The classifier event was fitted on {self.n_features} features; "
                f"got statistics with {x.shape[1]}."
            )
        score = self.classifier.predict_proba(x)[:, 1]
        return ThresholdEvent(self.threshold, self.direction).contains(score)

    def describe(self) -> str:
        name = type(self.classifier).__name__
        if hasattr(self.classifier, "steps"):
            name = type(self.classifier.steps[-1][1]).__name__
        return f"{name} posterior P(D'|x) {self.direction} {self.threshold:.6g}"


def _row_keys(samples: NDArray[Any], dtype: np.dtype[Any] | None = None) -> NDArray[Any]:
    """One sortable key per trial: the value itself, or the row's bytes for vectors."""
    arr = np.asarray(samples) if dtype is None else np.asarray(samples, dtype=dtype)
    if arr.ndim == 1:
        return arr
    arr = np.ascontiguousarray(arr.reshape(arr.shape[0], -1))
    if arr.dtype.kind == "O":
        out = np.empty(arr.shape[0], dtype=object)
        out[:] = [tuple(row) for row in arr]
        return out
    return arr.view(np.dtype((np.void, arr.dtype.itemsize * arr.shape[1]))).ravel()


def _factorize(keys: NDArray[Any]) -> tuple[NDArray[np.intp], list[Hashable]]:
    if keys.dtype.kind != "O":
        uniques, codes = np.unique(keys, return_inverse=True)
        return codes.ravel(), list(uniques)
    table: dict[Hashable, int] = {}
    codes = np.fromiter((table.setdefault(k, len(table)) for k in keys), np.intp, len(keys))
    return codes, list(table)


@dataclass(frozen=True, slots=True, eq=False)
class SetEvent:
    """``{output in values}`` for discrete outputs (scalars or rows of labels)."""

    values: tuple[Hashable, ...]
    row_dtype: Any = None  # dtype of vector outputs, so that rows compare bytewise
    row_shape: tuple[int, ...] | None = None
    _lookup: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        lookup: Any
        if self.values and isinstance(self.values[0], tuple):
            lookup = frozenset(self.values)  # rows of object outputs
        else:
            arr = np.asarray(self.values)
            # Scalars and byte views of numeric rows: sorted look-up with np.isin.
            lookup = frozenset(self.values) if arr.dtype.kind == "O" else arr
        object.__setattr__(self, "_lookup", lookup)

    def contains(self, samples: NDArray[Any]) -> NDArray[np.bool_]:
        arr = np.asarray(samples)
        if self.row_shape is not None and arr.ndim > 1:
            keys = _row_keys(arr, self.row_dtype)
        else:
            keys = _row_keys(arr)
        if isinstance(self._lookup, frozenset):
            return np.fromiter((k in self._lookup for k in keys), bool, len(keys))
        return np.isin(keys, self._lookup)

    def describe(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, np.void) and self.row_dtype is not None:
                return str(tuple(np.frombuffer(v.tobytes(), dtype=self.row_dtype).tolist()))
            return repr(v.item() if isinstance(v, np.generic) else v)

        shown = ", ".join(show(v) for v in self.values[:8])
        more = f", ... ({len(self.values)} values)" if len(self.values) > 8 else ""
        return f"output in {{{shown}{more}}}"


# ------------------------------------------------------------------ candidate scoring


@dataclass(frozen=True, slots=True, eq=False)
class Candidate:
    """An event chosen on selection trials, with the side where it is more likely.

    ``hi`` is 0 if the event is more likely on ``D`` (the first input), 1 if on
    ``D'``; ``k_hi / n_hi`` and ``k_lo / n_lo`` are its selection counts and
    ``score`` the criterion of :func:`score_candidates`.
    """

    event: Event
    hi: int
    k_hi: int
    n_hi: int
    k_lo: int
    n_lo: int
    score: float
    family: str

    def describe(self) -> str:
        return f"{self.event.describe()} (more likely on {DATASET_NAMES[self.hi]})"


def score_candidates(
    k_hi: NDArray[Any],
    n_hi: int | NDArray[Any],
    k_lo: NDArray[Any],
    n_lo: int | NDArray[Any],
    *,
    n_estimation: int,
    delta: float,
    confidence: float,
    selection_penalty: float,
) -> NDArray[np.float64]:
    """Rank events by the bound they should give on fresh trials, pessimistically.

    The score of an event is the bound that ``n_estimation`` fresh trials per
    input would give (as :func:`~privet.audits.bounds.projected_epsilon_lower`)
    if its true probabilities sat at the pessimistic ends of their selection
    intervals: ``p_hi`` at its lower and ``p_lo`` at its upper bound, each
    ``selection_penalty`` standard deviations out. Wilson score bounds stand in
    for Clopper–Pearson here (closed form, fast on thousands of candidates);
    only the ranking depends on them, never the reported bound. Plug-in frequencies alone would let rare
    events whose selection ratio is large by chance (1 against 0) beat frequent
    events whose ratio is known precisely (the winner's curse); the pessimistic
    ends also favour, among events with the same ratio, the more frequent ones,
    whose estimates are more precise.
    """
    kh = np.asarray(k_hi, dtype=np.float64)
    kl = np.asarray(k_lo, dtype=np.float64)
    n_hi = np.asarray(n_hi, dtype=np.float64)
    n_lo = np.asarray(n_lo, dtype=np.float64)
    p_hi = _wilson(kh, n_hi, -selection_penalty)
    p_lo = _wilson(kl, n_lo, selection_penalty)
    z = float(stats.norm.isf((1.0 - confidence) / 2.0))  # Bonferroni, as in the final bound
    hi = _wilson(p_hi * n_estimation, n_estimation, -z) - delta
    lo = _wilson(p_lo * n_estimation, n_estimation, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(np.where(hi > 0, hi, 1.0)) - np.log(lo)
    return np.where((hi > 0) & (lo > 0), score, -np.inf)


def _wilson(k: NDArray[Any], n: Any, z: float) -> NDArray[np.float64]:
    """Wilson score bound ``z`` standard deviations from ``k / n`` (``z < 0``: lower).

    Closed form, vectorised, sensible at ``k = 0`` and ``k = n``: close to the
    Clopper–Pearson bound and used instead of it where only the ranking matters.
    """
    n = np.asarray(n, dtype=np.float64)
    p = np.clip(k / n, 0.0, 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = abs(z) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return np.clip(centre + np.sign(z) * half, 0.0, 1.0)


def _best(
    make_event: Callable[[int], Event],
    his: NDArray[np.intp],
    k_hi: NDArray[Any],
    k_lo: NDArray[Any],
    n0: int,
    n1: int,
    family: str,
    **score_kw: Any,
) -> Candidate:
    n_hi = np.where(his == 1, n1, n0)
    n_lo = np.where(his == 1, n0, n1)
    scores = score_candidates(k_hi, n_hi, k_lo, n_lo, **score_kw)
    i = int(np.argmax(scores))
    return Candidate(
        event=make_event(i),
        hi=int(his[i]),
        k_hi=int(k_hi[i]),
        n_hi=int(n_hi[i]),
        k_lo=int(k_lo[i]),
        n_lo=int(n_lo[i]),
        score=float(scores[i]),
        family=family,
    )


def _threshold_grid(s0: NDArray[Any], s1: NDArray[Any], max_thresholds: int) -> NDArray[Any]:
    pooled = np.concatenate([s0, s1])
    qs = np.linspace(0.0, 1.0, max_thresholds)
    return np.unique(np.quantile(pooled, qs, method="inverted_cdf"))


def select_threshold_event(
    s0: NDArray[Any],
    s1: NDArray[Any],
    *,
    n_estimation: int,
    delta: float,
    confidence: float,
    max_thresholds: int = 512,
    selection_penalty: float = 3.0,
    label: str = "s",
) -> Candidate:
    """Best threshold event on scalar statistics ``s0`` (from ``D``) and ``s1`` (``D'``).

    Candidates: ``{s >= t}`` and ``{s <= t}`` for ``t`` on a grid of at most
    ``max_thresholds`` quantiles of the pooled trials, each in both directions
    (more likely on ``D`` or on ``D'``): ``4 * len(grid)`` events, counted with
    two sorts and binary searches.
    """
    s0 = np.sort(np.asarray(s0).ravel())
    s1 = np.sort(np.asarray(s1).ravel())
    n0, n1 = len(s0), len(s1)
    grid = _threshold_grid(s0, s1, max_thresholds)
    ge0 = n0 - np.searchsorted(s0, grid, side="left")
    ge1 = n1 - np.searchsorted(s1, grid, side="left")
    le0 = np.searchsorted(s0, grid, side="right")
    le1 = np.searchsorted(s1, grid, side="right")
    g = len(grid)

    def make_event(i: int) -> Event:
        return ThresholdEvent(float(grid[i % g]), ">=" if i < 2 * g else "<=", label)

    his = np.repeat(np.array([1, 0, 1, 0]), g)
    k_hi = np.concatenate([ge1, ge0, le1, le0])
    k_lo = np.concatenate([ge0, ge1, le0, le1])
    return _best(
        make_event,
        his,
        k_hi,
        k_lo,
        n0,
        n1,
        "threshold",
        n_estimation=n_estimation,
        delta=delta,
        confidence=confidence,
        selection_penalty=selection_penalty,
    )


def select_set_event(
    x0: NDArray[Any],
    x1: NDArray[Any],
    *,
    n_estimation: int,
    delta: float,
    confidence: float,
    selection_penalty: float = 3.0,
) -> Candidate:
    """Best set of output values, by likelihood-ratio ordering.

    The distinct values ``v`` are ordered by ``(c1(v) + 1/2) / (c0(v) + 1/2)``
    (their selection counts on ``D'`` and ``D``); the candidates are the prefixes
    of this order (likely on ``D'``) and of the reverse order (likely on ``D``).
    By the Neyman–Pearson lemma the optimal events are of this form.
    """
    x0 = np.asarray(x0)
    x1 = np.asarray(x1)
    n0, n1 = len(x0), len(x1)
    vector = x0.ndim > 1
    row_dtype = np.result_type(x0.dtype, x1.dtype) if vector else None
    keys = _row_keys(np.concatenate([x0, x1]), row_dtype)
    codes, uniques = _factorize(keys)
    c0 = np.bincount(codes[:n0], minlength=len(uniques))
    c1 = np.bincount(codes[n0:], minlength=len(uniques))
    ratio = (c1 + 0.5) / (c0 + 0.5) * ((n0 + 1.0) / (n1 + 1.0))
    order_hi1 = np.argsort(-ratio, kind="stable")
    order_hi0 = order_hi1[::-1]
    his: list[int] = []
    k_hi: list[NDArray[Any]] = []
    k_lo: list[NDArray[Any]] = []
    row_shape = tuple(x0.shape[1:]) if vector else None
    for hi, order in ((1, order_hi1), (0, order_hi0)):
        cum_hi = np.cumsum((c1 if hi == 1 else c0)[order])
        cum_lo = np.cumsum((c0 if hi == 1 else c1)[order])
        keep = max(len(order) - 1, 1)  # the full set has probability 1 on both sides
        k_hi.append(cum_hi[:keep])
        k_lo.append(cum_lo[:keep])
        his.extend([hi] * keep)
    his_arr = np.asarray(his)
    n_first = len(k_hi[0])

    def materialise(i: int) -> Event:
        hi = int(his_arr[i])
        length = (i if hi == 1 else i - n_first) + 1
        order = order_hi1 if hi == 1 else order_hi0
        chosen = tuple(uniques[j] for j in order[:length])
        return SetEvent(chosen, row_dtype=row_dtype, row_shape=row_shape)

    return _best(
        materialise,
        his_arr,
        np.concatenate(k_hi),
        np.concatenate(k_lo),
        n0,
        n1,
        "set",
        n_estimation=n_estimation,
        delta=delta,
        confidence=confidence,
        selection_penalty=selection_penalty,
    )


ClassifierSpec = Literal["logistic", "boosting"] | ClassifierMixin


def make_classifier(spec: ClassifierSpec, random_state: int | None) -> Any:
    """The scikit-learn classifier behind a :class:`ClassifierEvent`.

    ``"logistic"``: standardised logistic regression (DP-Sniper's cheap model);
    ``"boosting"``: a small histogram gradient-boosted tree ensemble (captures
    non-monotone and interaction effects); an estimator instance is cloned.
    """
    if isinstance(spec, str):
        if spec == "logistic":
            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        if spec == "boosting":
            return HistGradientBoostingClassifier(
                max_iter=100,
                max_leaf_nodes=15,
                learning_rate=0.1,
                early_stopping=False,
                random_state=random_state,
            )
        raise InvalidParameterError(
            "The 'classifier' parameter must be 'logistic', 'boosting' or a scikit-learn "
            f"classifier with predict_proba; got {spec!r}."
        )
    if not hasattr(spec, "predict_proba"):
        raise InvalidParameterError(
            f"The classifier {type(spec).__name__} has no predict_proba; use a probabilistic "
            "classifier such as LogisticRegression."
        )
    return clone(spec)


def select_classifier_event(
    x0: NDArray[Any],
    x1: NDArray[Any],
    *,
    n_estimation: int,
    delta: float,
    confidence: float,
    classifier: ClassifierSpec = "logistic",
    fit_fraction: float = 0.5,
    max_fit_samples: int = 200_000,
    max_thresholds: int = 512,
    selection_penalty: float = 3.0,
    random_state: int | None = None,
) -> Candidate:
    """DP-Sniper-style event: threshold on a classifier's posterior.

    A classifier is trained to predict ``D'`` (label 1) versus ``D`` (label 0)
    from the statistic on a ``fit_fraction`` of the selection trials (at most
    ``max_fit_samples`` per side); its posterior on the remaining selection
    trials is a scalar statistic, on which :func:`select_threshold_event` picks
    the threshold and direction.
    """
    if not 0.0 < fit_fraction < 1.0:
        raise InvalidParameterError(f"'fit_fraction' must be in (0, 1); got {fit_fraction!r}.")
    x0 = np.asarray(x0, dtype=np.float64).reshape(len(x0), -1)
    x1 = np.asarray(x1, dtype=np.float64).reshape(len(x1), -1)
    rng = np.random.default_rng(random_state)
    n_fit0 = int(len(x0) * fit_fraction)
    n_fit1 = int(len(x1) * fit_fraction)
    if min(n_fit0, len(x0) - n_fit0, n_fit1, len(x1) - n_fit1) < 2:
        raise InvalidParameterError(
            "Too few selection trials to fit and calibrate a classifier event "
            f"({len(x0)} and {len(x1)}); run more trials."
        )
    fit0 = x0[: min(n_fit0, max_fit_samples)]
    fit1 = x1[: min(n_fit1, max_fit_samples)]
    features = np.concatenate([fit0, fit1])
    labels = np.concatenate([np.zeros(len(fit0), np.int8), np.ones(len(fit1), np.int8)])
    perm = rng.permutation(len(labels))
    clf = make_classifier(classifier, None if random_state is None else int(rng.integers(2**31)))
    clf.fit(features[perm], labels[perm])
    score0 = clf.predict_proba(x0[n_fit0:])[:, 1]
    score1 = clf.predict_proba(x1[n_fit1:])[:, 1]
    inner = select_threshold_event(
        score0,
        score1,
        n_estimation=n_estimation,
        delta=delta,
        confidence=confidence,
        max_thresholds=max_thresholds,
        selection_penalty=selection_penalty,
    )
    assert isinstance(inner.event, ThresholdEvent)
    event = ClassifierEvent(clf, inner.event.threshold, inner.event.direction, x0.shape[1])
    # The threshold's counts and score carry over; the event becomes the classifier's.
    return replace(inner, event=event, family="classifier")


def distinct_count(samples: NDArray[Any], limit: int) -> int:
    """Number of distinct values (rows), or ``limit + 1`` if there are more."""
    keys = _row_keys(samples)
    if keys.dtype.kind == "O":
        seen: set[Hashable] = set()
        for k in keys:
            seen.add(k)
            if len(seen) > limit:
                return limit + 1
        return len(seen)
    return min(len(np.unique(keys)), limit + 1)
