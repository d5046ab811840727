"""What the attacks observe: model outputs on candidates and population samples.

Every membership-inference attack in :mod:`privet.audits.mia` reads only the
probability vectors that a model returns for chosen records. A *query* is any
callable ``query(X) -> probabilities`` of shape ``(n, n_classes)``: an
estimator's ``predict_proba``, or for a secret-shared model its oblivious
prediction protocol — the attack never looks inside the model.

This module holds

* :func:`inclusion_matrix`, the standard LiRA experiment design (Carlini et al.
  2022, Sec. IV and their evaluation protocol): each reference ("shadow") model is
  trained on a random subset of a candidate pool such that every candidate is
  IN for the same number of models (half of them with ``in_fraction=0.5``);
* :func:`true_class_probability` and :func:`logit_confidence`, the per-example
  statistics (confidence ``p_y`` on the true label and its logit
  ``phi = log(p_y / (1 - p_y))``, Carlini et al. 2022, Sec. IV, "logit
  scaling"), with clipping because trees output exact 0 and 1;
* :class:`MembershipSignals`, the outputs of all targets and shadows, and
  :func:`collect_signals`, which trains and queries the models in parallel
  through joblib (``n_jobs``; a Dask or Ray cluster through
  ``joblib.parallel_config(backend=...)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed
from numpy.typing import ArrayLike, NDArray

from privet.audits.bounds import check_real
from privet.audits.sampling import parallel
from privet.errors import InvalidParameterError
from privet.learners._base import proven_guarantee

__all__ = [
    "DEFAULT_CLIP",
    "MembershipSignals",
    "ModelInfo",
    "Query",
    "check_clip",
    "collect_signals",
    "inclusion_matrix",
    "logit_confidence",
    "true_class_probability",
]

Query = Callable[[Any], ArrayLike]
"""``query(X) -> probabilities`` of shape ``(n_samples, n_classes)``."""

DEFAULT_CLIP = 1e-4
"""Default clipping of probabilities before logs and logits.

``p`` is clipped to ``[c, 1 - c]``, so ``phi`` lies in ``±ln((1 - c) / c)``
(``±9.21`` for ``c = 1e-4``). A leaf of a tree outputs ``k / n_leaf``; with
``c = 1e-4`` every non-degenerate leaf probability of a leaf with fewer than
10^4 records keeps its own value, and the exact 0 and 1 of pure (or noisily
emptied) leaves map to the two ends of the range instead of to ``±inf``.
"""


def check_clip(clip: float) -> float:
    """Validate the clipping constant: a float in the open interval (0, 0.5)."""
    return check_real(clip, "clip", lower=0.0, upper=0.5, example=", e.g. 1e-4")


def true_class_probability(proba: ArrayLike, labels: ArrayLike) -> NDArray[np.float64]:
    """``p_y``: the probability each output row gives to its record's true class.

    Parameters
    ----------
    proba : array_like, shape (..., n, n_classes)
        Outputs of one or several models on ``n`` records.
    labels : array_like of int, shape (n,)
        Column index of each record's true class.
    """
    p = np.asarray(proba, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.intp)
    if p.shape[-2] != lab.shape[0]:
        raise InvalidParameterError(
            f"proba has {p.shape[-2]} rows but labels has {lab.shape[0]}; pass one label per row."
        )
    return np.take_along_axis(p, lab.reshape((1,) * (p.ndim - 2) + (-1, 1)), axis=-1)[..., 0]


def logit_confidence(p_true: ArrayLike, *, clip: float = DEFAULT_CLIP) -> NDArray[np.float64]:
    """LiRA's logit-scaled confidence ``phi = log(p / (1 - p))``, ``p`` clipped.

    For a probability vector, ``log(p_y) - log(sum_{y' != y} p_y')`` of Carlini
    et al. (2022, Sec. IV) equals ``log(p_y / (1 - p_y))``. Tree leaves give
    exact 0 and 1, so ``p`` is first clipped to ``[clip, 1 - clip]``; the result
    lies in ``±ln((1 - clip) / clip)``.
    """
    c = check_clip(clip)
    p = np.clip(np.asarray(p_true, dtype=np.float64), c, 1.0 - c)
    return np.log(p) - np.log1p(-p)


def inclusion_matrix(
    n_models: int,
    n_examples: int,
    *,
    in_fraction: float = 0.5,
    balanced: bool = True,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.bool_]:
    """Which example trains which model: a boolean matrix ``(n_models, n_examples)``.

    With ``balanced=True`` (shadow models) every example is IN for exactly
    ``k = round(in_fraction * n_models)`` models, ``k`` clipped to
    ``[1, n_models - 1]`` so that each example has IN and OUT models, and the
    ``k`` models are a uniformly random subset; each model then trains on about
    ``in_fraction`` of the pool (Carlini et al. 2022). With
    ``balanced=False`` (targets) each model trains on exactly
    ``round(in_fraction * n_examples)`` examples chosen at random.
    """
    if n_models < 1 or n_examples < 1:
        raise InvalidParameterError(
            f"inclusion_matrix needs n_models >= 1 and n_examples >= 1; got {n_models}, "
            f"{n_examples}."
        )
    in_fraction = check_fraction("in_fraction", in_fraction)
    rng = np.random.default_rng(rng)
    if balanced:
        if n_models < 2:
            raise InvalidParameterError(
                "A balanced design needs at least 2 models (each example IN for some and "
                f"OUT for others); got n_models={n_models}."
            )
        k = min(max(round(in_fraction * n_models), 1), n_models - 1)
        ranks = rng.random((n_models, n_examples)).argsort(axis=0).argsort(axis=0)
        return ranks < k
    k = min(max(round(in_fraction * n_examples), 1), n_examples)
    mask = np.zeros((n_models, n_examples), dtype=bool)
    for i in range(n_models):
        mask[i, rng.permutation(n_examples)[:k]] = True
    return mask


def check_fraction(name: str, value: float, *, allow_zero: bool = False) -> float:
    """Validate a fraction in (0, 1) (or [0, 1) with ``allow_zero``)."""
    closed = "left" if allow_zero else "neither"
    return check_real(value, name, lower=0.0, upper=1.0, closed=closed, example=", e.g. 0.5")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    """What a trained model says about itself (read after ``fit``).

    Attributes
    ----------
    name : str
        Class name of the estimator.
    proven_epsilon, proven_delta : float
        What the model's ledger proves for it as a mechanism (its plan's cost, at
        least ``privacy_spent_``: :func:`privet.learners.proven_guarantee`);
        ``inf`` and 0 when the model has no ledger (a non-private model).
    claimed_epsilon : float or None
        ``privacy_claim_`` (the paper's claim), when the model records one.
    """

    name: str
    proven_epsilon: float
    proven_delta: float
    claimed_epsilon: float | None


def _model_info(model: Any) -> ModelInfo:
    spent = proven_guarantee(model)
    claim = getattr(model, "privacy_claim_", None)
    return ModelInfo(
        name=type(model).__name__,
        proven_epsilon=float(spent.epsilon) if spent is not None else math.inf,
        proven_delta=float(spent.delta) if spent is not None else 0.0,
        claimed_epsilon=float(claim.epsilon) if claim is not None else None,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MembershipSignals:
    """Outputs of the target and shadow models on candidates and population samples.

    ``T`` targets, ``S`` shadow (reference) models, ``n`` candidates, ``m``
    population samples (never used for training), ``C`` classes.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        Column index of each candidate's true class.
    target_proba : ndarray, shape (T, n, C)
        What the targets' queries returned for the candidates.
    target_in : ndarray of bool, shape (T, n)
        Ground truth: candidate ``j`` trained target ``t``.
    shadow_proba : ndarray, shape (S, n, C)
    shadow_in : ndarray of bool, shape (S, n)
    population_labels : ndarray of int, shape (m,)
    population_target_proba : ndarray, shape (T, m, C)
    population_shadow_proba : ndarray, shape (S, m, C)
    classes : tuple
        Class labels in column order.
    target_info, shadow_info : tuple of ModelInfo
        Name and privacy guarantees of each model.
    """

    labels: NDArray[np.intp]
    target_proba: NDArray[np.float64]
    target_in: NDArray[np.bool_]
    shadow_proba: NDArray[np.float64]
    shadow_in: NDArray[np.bool_]
    population_labels: NDArray[np.intp]
    population_target_proba: NDArray[np.float64]
    population_shadow_proba: NDArray[np.float64]
    classes: tuple[Any, ...]
    target_info: tuple[ModelInfo, ...] = field(default=())
    shadow_info: tuple[ModelInfo, ...] = field(default=())

    def __post_init__(self) -> None:
        t, n, c = self.target_proba.shape
        s = self.shadow_proba.shape[0]
        m = self.population_labels.shape[0]
        expected = {
            "labels": (self.labels.shape, (n,)),
            "target_in": (self.target_in.shape, (t, n)),
            "shadow_proba": (self.shadow_proba.shape, (s, n, c)),
            "shadow_in": (self.shadow_in.shape, (s, n)),
            "population_target_proba": (self.population_target_proba.shape, (t, m, c)),
            "population_shadow_proba": (self.population_shadow_proba.shape, (s, m, c)),
        }
        for name, (got, want) in expected.items():
            if tuple(got) != want:
                raise InvalidParameterError(
                    f"MembershipSignals.{name} has shape {tuple(got)}, expected {want}."
                )

    @property
    def n_targets(self) -> int:
        return int(self.target_proba.shape[0])

    @property
    def n_shadows(self) -> int:
        return int(self.shadow_proba.shape[0])

    @property
    def n_candidates(self) -> int:
        return int(self.target_proba.shape[1])

    @property
    def n_population(self) -> int:
        return int(self.population_labels.shape[0])

    def target_p(self) -> NDArray[np.float64]:
        """``p_y`` of the targets on the candidates, shape (T, n)."""
        return true_class_probability(self.target_proba, self.labels)

    def shadow_p(self) -> NDArray[np.float64]:
        """``p_y`` of the shadows on the candidates, shape (S, n)."""
        return true_class_probability(self.shadow_proba, self.labels)

    def population_target_p(self) -> NDArray[np.float64]:
        return true_class_probability(self.population_target_proba, self.population_labels)

    def population_shadow_p(self) -> NDArray[np.float64]:
        return true_class_probability(self.population_shadow_proba, self.population_labels)

    def target_accuracy(self) -> tuple[float, float]:
        """Mean accuracy of the targets on their members and on their non-members."""
        pred = self.target_proba.argmax(axis=-1)
        hit = pred == self.labels[None, :]
        return float(hit[self.target_in].mean()), float(hit[~self.target_in].mean())


# -- training and querying ------------------------------------------------------------


def _take(X: Any, idx: NDArray[np.intp]) -> Any:
    return X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx]


def _concat(a: Any, b: Any) -> Any:
    if b is None:
        return a
    if isinstance(a, pd.DataFrame | pd.Series):
        return pd.concat([a, b], axis=0, ignore_index=True)
    return np.concatenate([np.asarray(a), np.asarray(b)], axis=0)


def _align(proba: Any, model_classes: Any, classes: Sequence[Any], n_rows: int) -> NDArray:
    p = np.asarray(proba, dtype=np.float64)
    c = len(classes)
    if p.ndim != 2 or p.shape[0] != n_rows:
        raise InvalidParameterError(
            f"A query must return probabilities of shape (n_samples, n_classes) = ({n_rows}, "
            f"{c}); got shape {p.shape}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < -1e-9) or np.any(p > 1 + 1e-9):
        raise InvalidParameterError(
            "A query returned values outside [0, 1] or NaN; it must return class probabilities."
        )
    p = np.clip(p, 0.0, 1.0)
    if model_classes is None:
        if p.shape[1] != c:
            raise InvalidParameterError(
                f"The query returned {p.shape[1]} columns for {c} classes {list(classes)} and "
                "the model has no classes_ to align them; return one column per class, in "
                "the order of the classes."
            )
        return p
    model_classes = list(model_classes)
    if p.shape[1] != len(model_classes):
        raise InvalidParameterError(
            f"The query returned {p.shape[1]} columns but the model has "
            f"{len(model_classes)} classes_."
        )
    index = {_key(v): i for i, v in enumerate(classes)}
    out = np.zeros((n_rows, c))
    for j, v in enumerate(model_classes):
        if _key(v) not in index:
            raise InvalidParameterError(
                f"The model predicts class {v!r}, which is not among the classes "
                f"{list(classes)} of the data."
            )
        out[:, index[_key(v)]] = p[:, j]
    return out


def _key(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def encode_labels(y: Any, classes: Sequence[Any]) -> NDArray[np.intp]:
    """Column index of each label in ``classes``; raises on unknown labels."""
    index = {_key(v): i for i, v in enumerate(classes)}
    values = list(y.tolist() if hasattr(y, "tolist") else y)
    out = np.empty(len(values), dtype=np.intp)
    for i, v in enumerate(values):
        k = _key(v)
        if k not in index:
            raise InvalidParameterError(
                f"Label {v!r} is not among the classes {list(classes)}; pass classes=... "
                "listing every class."
            )
        out[i] = index[k]
    return out


def _fit_and_query(
    make_model: Callable[[], Any],
    X: Any,
    y: Any,
    train_idx: NDArray[np.intp],
    X_eval: Any,
    n_eval: int,
    query: Callable[[Any], Query] | None,
    classes: Sequence[Any],
    seed: int | None = None,
) -> tuple[NDArray[np.float64], ModelInfo]:
    model = make_model()
    if seed is not None:
        _seed_model(model, seed)
    model.fit(_take(X, train_idx), _take(y, train_idx))
    fn = model.predict_proba if query is None else query(model)
    proba = _align(fn(X_eval), getattr(model, "classes_", None), classes, n_eval)
    return proba, _model_info(model)


def _seed_model(model: Any, seed: int) -> None:
    """Give ``model`` the ``random_state`` ``seed`` if it has that parameter and it is None."""
    get_params = getattr(model, "get_params", None)
    if get_params is None:
        return
    try:
        params = get_params(deep=False)
    except TypeError:
        params = get_params()
    if "random_state" in params and params["random_state"] is None:
        model.set_params(random_state=seed)


def collect_signals(
    X: Any,
    y: Any,
    make_model: Callable[[], Any],
    *,
    classes: Sequence[Any],
    target_in: NDArray[np.bool_],
    shadow_in: NDArray[np.bool_],
    X_population: Any = None,
    y_population: Any = None,
    query: Callable[[Any], Query] | None = None,
    n_jobs: int | None = None,
    backend: Any = None,
    seeds: Sequence[int | None] | None = None,
    verbose: int = 0,
) -> MembershipSignals:
    """Train every target and shadow model and query it on candidates and population.

    Parameters
    ----------
    X, y : frame/array and labels of the ``n`` candidates (the pool).
    make_model : callable
        ``make_model() -> estimator`` with ``fit(X, y)`` and ``predict_proba``,
        e.g. ``lambda: sklearn.base.clone(template)``. Called once per model, in
        the worker; it must be picklable by cloudpickle for ``n_jobs != 1``.
    classes : sequence
        All class labels, in the column order of the signals.
    target_in, shadow_in : bool arrays, shape (T, n) and (S, n)
        Training sets of the targets and shadows (see :func:`inclusion_matrix`).
    X_population, y_population : optional
        ``m`` records that train no model (RMIA's population samples ``z``).
    query : callable, optional
        ``query(fitted_target) -> Query``: how the *targets* are queried, e.g.
        through an oblivious prediction protocol. Default ``predict_proba``.
        Shadows are the attacker's own models and are always queried with
        ``predict_proba``.
    n_jobs : int, optional
        joblib workers (``-1``: all cores).
    backend : str or joblib backend, optional
        joblib backend; None uses the active ``joblib.parallel_config``
        (loky unless the caller selected ``"dask"``, ``"ray"``, ...).
    seeds : sequence of int, optional
        One seed per model, targets first then shadows: a model whose
        ``random_state`` parameter is None gets its seed (``set_params``), so
        seeded experiments give the same signals on every backend.
    """
    target_in = np.asarray(target_in, dtype=bool)
    shadow_in = np.asarray(shadow_in, dtype=bool)
    n = len(y)
    m = 0 if y_population is None else len(y_population)
    X_eval = _concat(X, X_population if m else None)
    n_eval = n + m
    jobs = [(True, row) for row in target_in] + [(False, row) for row in shadow_in]
    if seeds is None:
        seeds = [None] * len(jobs)
    if len(seeds) != len(jobs):
        raise InvalidParameterError(
            f"'seeds' needs one seed per model ({len(jobs)}: targets then shadows); got "
            f"{len(seeds)}."
        )
    out = parallel(n_jobs, backend, verbose)(
        delayed(_fit_and_query)(
            make_model,
            X,
            y,
            np.flatnonzero(row),
            X_eval,
            n_eval,
            query if is_t else None,
            classes,
            seed,
        )
        for (is_t, row), seed in zip(jobs, seeds, strict=True)
    )
    probas = np.stack([p for p, _ in out]) if out else np.zeros((0, n_eval, len(classes)))
    infos = tuple(info for _, info in out)
    t = target_in.shape[0]
    labels = encode_labels(y, classes)
    pop_labels = encode_labels(y_population, classes) if m else np.zeros(0, dtype=np.intp)
    c = len(classes)
    shadows = probas[t:] if len(shadow_in) else np.zeros((0, n_eval, c))
    return MembershipSignals(
        labels=labels,
        target_proba=probas[:t, :n],
        target_in=target_in,
        shadow_proba=shadows[:, :n],
        shadow_in=shadow_in.reshape(-1, n),
        population_labels=pop_labels,
        population_target_proba=probas[:t, n:],
        population_shadow_proba=shadows[:, n:],
        classes=tuple(classes),
        target_info=infos[:t],
        shadow_info=infos[t:],
    )


# -- shared by the attacks -------------------------------------------------------------


def as_2d(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise InvalidParameterError(f"'{name}' must be 1-D or 2-D; got shape {a.shape}.")
    return a


def check_shadows(
    shadow: ArrayLike, shadow_in: ArrayLike, n: int, *, attack: str, minimum: int = 2
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    s = np.asarray(shadow, dtype=np.float64)
    mask = np.asarray(shadow_in)
    if s.ndim != 2 or mask.shape != s.shape or s.shape[1] != n:
        raise InvalidParameterError(
            f"{attack}: shadow signals and shadow_in must both have shape (n_shadows, {n}); "
            f"got {s.shape} and {mask.shape}."
        )
    if s.shape[0] < minimum:
        raise InvalidParameterError(
            f"{attack} needs at least {minimum} shadow models (it fits IN and OUT statistics per "
            f"example); got n_shadows={s.shape[0]}. Train more shadow models."
        )
    return s, mask.astype(bool)
