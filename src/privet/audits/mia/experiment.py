"""The membership-inference experiment: design, training, attacks, metrics.

:func:`membership_inference` runs the standard LiRA evaluation (Carlini et al.
2022, Sec. IV and their evaluation protocol) on a population dataset:

1. the rows are shuffled and split into a candidate *pool* and *population
   samples* ``z`` (``population_fraction`` of the rows; they train no model and
   serve RMIA as its reference population);
2. ``n_shadows`` shadow models are trained on random subsets of the pool such
   that each candidate is IN for ``in_fraction`` of them (half by default), and
   ``n_targets`` target models are trained on random ``in_fraction`` subsets of
   the pool — membership of every (target, candidate) pair is the ground
   truth; all fits and queries fan out over joblib;
3. every attack scores every (target, candidate) pair from the targets'
   outputs alone (plus the shadows and population samples);
4. each attack's scores are evaluated with :mod:`privet.audits.metrics` (ROC
   AUC, balanced accuracy, advantage, TPR at FPR 0.1% and 1% with
   Clopper–Pearson intervals, implied epsilon) plus a DeLong interval for the
   AUC and a held-out operating point (:mod:`privet.audits.mia.stats`).

The result sets the implied epsilon next to the proven epsilon of the targets'
ledgers (DESIGN.md, "Privacy truth").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from privet.audits.bounds import check_confidence, check_delta
from privet.audits.cluster import resolve_backend
from privet.audits.metrics import OperatingPoint, check_fpr_targets, mia_metrics, roc_curve
from privet.audits.mia.attacks import (
    ATTACKS,
    DEFAULT_ATTACKS,
    Variance,
)
from privet.audits.mia.results import FPR_TARGETS, AttackResult, MIAResult
from privet.audits.mia.rmia import check_a, check_gamma
from privet.audits.mia.signals import (
    DEFAULT_CLIP,
    MembershipSignals,
    Query,
    check_clip,
    check_fraction,
    collect_signals,
    inclusion_matrix,
)
from privet.audits.mia.stats import (
    ImpliedEpsilon,
    auc_interval,
    heldout_operating_point,
)
from privet.audits.sampling import check_seed, parallel
from privet.errors import InvalidParameterError

__all__ = [
    "FPR_TARGETS",
    "AttackResult",
    "MIAResult",
    "attack_signals",
    "evaluate_scores",
    "membership_inference",
]


# -- evaluation ------------------------------------------------------------------------------


def evaluate_scores(
    scores: NDArray[np.float64],
    membership: NDArray[np.bool_],
    *,
    confidence: float,
    delta: float = 0.0,
    fpr_targets: Sequence[float] = FPR_TARGETS,
    attack: str = "custom",
    title: str = "",
    info: Mapping[str, Any] | None = None,
    rng: np.random.Generator | int | None = 0,
) -> AttackResult:
    """Metrics of one attack's scores ``(T, n)`` against membership ``(T, n)``.

    Uses :func:`privet.audits.metrics.mia_metrics` and
    :func:`~privet.audits.metrics.roc_curve`, adds the DeLong AUC interval
    (clustered by candidate, i.e. by column), the
    implied epsilons and the held-out operating points (selection on the first
    half of the targets, estimation on the rest; with one target, a random half
    of its candidates).
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    s2 = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y2 = np.atleast_2d(np.asarray(membership, dtype=bool))
    if s2.shape != y2.shape:
        raise InvalidParameterError(
            f"scores and membership must have the same shape; got {s2.shape} and {y2.shape}."
        )
    s, y = s2.ravel(), y2.ravel()
    groups = np.broadcast_to(np.arange(s2.shape[1]), s2.shape).ravel()
    metrics = mia_metrics(y, s, confidence=confidence, delta=delta, fpr_targets=fpr_targets)
    fpr, tpr, _ = roc_curve(y, s)
    if s2.shape[0] >= 2:
        half = s2.shape[0] // 2
        sel = np.zeros(s2.shape, dtype=bool)
        sel[:half] = True
        sel = sel.ravel()
    else:
        sel = np.zeros(s.shape[0], dtype=bool)
        sel[np.random.default_rng(rng).permutation(s.shape[0])[: s.shape[0] // 2]] = True
    heldout: list[OperatingPoint] = []
    if _both(y[sel]) and _both(y[~sel]):
        for f in fpr_targets:
            heldout.append(
                heldout_operating_point(
                    y[sel], s[sel], y[~sel], s[~sel], f, confidence=confidence, delta=delta
                )
            )
    return AttackResult(
        attack=attack,
        title=title or attack,
        scores=s,
        membership=y,
        groups=groups,
        metrics=metrics,
        auc=auc_interval(y, s, confidence=confidence, groups=groups),
        implied=tuple(
            ImpliedEpsilon.from_operating_point(op, delta=delta) for op in metrics.operating_points
        ),
        heldout=tuple(heldout),
        fpr=fpr,
        tpr=tpr,
        confidence=confidence,
        info=dict(info or {}),
    )


def _both(y: NDArray[np.bool_]) -> bool:
    return bool(y.any() and not y.all())


# -- the driver ------------------------------------------------------------------------------


def _frame_and_target(data: Any, target: str | None) -> tuple[pd.DataFrame, str, tuple | None]:
    frame = getattr(data, "frame", data)
    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError(
            "'data' must be a privet Dataset (load_dataset(...)) or a pandas DataFrame with "
            f"the class column; got {type(data).__name__}."
        )
    schema = getattr(data, "schema", None)
    name = target or getattr(data, "target", None)
    if name is None and schema is not None:
        name = schema.target_name
    if name is None or name not in frame.columns:
        raise InvalidParameterError(
            f"Name the class column with target=...; got {name!r}, columns are "
            f"{list(frame.columns)}."
        )
    classes = tuple(schema.classes) if schema is not None else None
    return frame, name, classes


def _data_classes(y: pd.Series) -> tuple[Any, ...]:
    classes = tuple(pd.unique(y).tolist())
    try:
        return tuple(sorted(classes))
    except TypeError:
        return classes


def _check_int(name: str, value: Any, minimum: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter of membership_inference must be an int >= {minimum}"
            f"{why}; got {value!r}."
        )
    return int(value)


def membership_inference(
    data: Any,
    make_model: Callable[[], Any],
    *,
    confidence: float,
    n_shadows: int = 16,
    n_targets: int = 1,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
    target: str | None = None,
    in_fraction: float = 0.5,
    population_fraction: float = 0.2,
    query: Callable[[Any], Query] | None = None,
    clip: float = DEFAULT_CLIP,
    variance: Variance = "auto",
    rmia_a: float | str = "auto",
    rmia_gamma: float = 1.0,
    attack_model: Any = None,
    fpr_targets: Sequence[float] = FPR_TARGETS,
    delta: float | None = None,
    keep_signals: bool = True,
    n_jobs: int | None = None,
    backend: Any = None,
    scheduler: Any = None,
    verbose: int = 0,
    random_state: int | np.random.Generator | None = None,
) -> MIAResult:
    """Run loss, shadow-model, LiRA and RMIA attacks on models of ``make_model``.

    Parameters
    ----------
    data : privet Dataset or pandas.DataFrame
        The population: features plus the class column (``load_dataset(name)``
        or a frame with ``target=``). Subsample it first for speed.
    make_model : callable
        ``make_model() -> estimator`` with ``fit(X, y)`` and ``predict_proba``;
        e.g. ``lambda: DPID3Classifier(epsilon=1, schema=ds.schema)`` or
        ``functools.partial(sklearn.base.clone, template)``. Must be picklable
        (cloudpickle) for ``n_jobs != 1``.
    confidence : float
        Level of every interval (AUC, TPR, implied epsilon), e.g. 0.95.
    n_shadows : int, default=16
        Shadow (reference) models; at least 2 for the shadow-based attacks
        (LiRA needs IN and OUT models for every candidate). Carlini et al. use a
        global variance below 64 (``variance="auto"``).
    n_targets : int, default=1
        Target models, each trained on its own random ``in_fraction`` of the
        pool; the scores of all targets are pooled (more pairs, tighter
        intervals) and the held-out epsilon selects on half of them.
    attacks : sequence of str
        Names in :data:`~privet.audits.mia.attacks.ATTACKS`; default
        ``("loss", "shokri", "lira_offline", "lira_online", "rmia")``.
    target : str, optional
        Class column when ``data`` is a bare DataFrame.
    in_fraction : float in (0, 1), default=0.5
        Share of the pool each model trains on (each candidate is IN for that
        share of the shadows).
    population_fraction : float in [0, 1), default=0.2
        Share of the rows kept out of every model as RMIA's population samples;
        0 is allowed only without RMIA.
    query : callable, optional
        ``query(fitted_target) -> (X -> probabilities)``: how targets are
        queried (e.g. a secret-shared model's oblivious prediction protocol).
        Default: ``fitted_target.predict_proba``.
    clip : float, default=1e-4
        Probabilities are clipped to ``[clip, 1 - clip]`` before logits and logs
        (trees give exact 0 and 1; see ``DEFAULT_CLIP``).
    variance : {"auto", "global", "per_example"}
        LiRA's variance (see :func:`~privet.audits.mia.attacks.fit_gaussians`).
    rmia_a : float in [0, 1] or "auto", default="auto"
        RMIA's offline coefficient; "auto" tunes it on the shadow models
        (:func:`~privet.audits.mia.attacks.tune_rmia_a`).
    rmia_gamma : float > 0, default=1
        RMIA's threshold on the pairwise likelihood ratio.
    attack_model : estimator, optional
        Attack classifier of the shadow-model attack (cloned per class).
    fpr_targets : sequence of float, default=(0.001, 0.01)
    delta : float, optional
        Delta of the implied epsilons; default the targets' proven delta (0 for
        pure DP and non-private models).
    keep_signals : bool, default=True
        Keep all model outputs in the result (``result.signals``).
    n_jobs : int, optional
        joblib workers for training and querying.
    backend : str or joblib backend, optional
        joblib backend; None uses the active ``joblib.parallel_config``
        (``joblib.parallel_config(backend="dask")`` etc. for a cluster).
    scheduler : str, distributed.Client or cluster, optional
        Run the trainings on this Dask cluster (``"tcp://HOST:8786"``) through
        joblib's Dask backend; seeded runs give the same numbers as in one
        process (see :mod:`privet.audits.cluster`). Not with ``backend``.
    verbose : int, default=0
        joblib verbosity.
    random_state : int, Generator or None
        Seeds the split, the membership design and every model whose
        ``random_state`` parameter is None (one seed per model, through
        ``set_params``), so a seeded experiment gives the same numbers with any
        ``n_jobs`` and backend when the models' randomness is in their
        ``random_state``; OpenDP's noise cannot be seeded.

    Returns
    -------
    MIAResult

    Examples
    --------
    >>> from privet.data import load_dataset
    >>> from privet.learners import ID3Classifier
    >>> car = load_dataset("car")
    >>> res = membership_inference(
    ...     car, lambda: ID3Classifier(max_depth=6, schema=car.schema),
    ...     n_shadows=8, confidence=0.95, random_state=0, n_jobs=1)
    >>> res["lira_online"].auc.interval[0] > 0.5
    True
    """
    backend = resolve_backend(backend, scheduler)
    t0 = time.perf_counter()
    confidence = check_confidence(confidence)
    random_state = check_seed(random_state)
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    if not callable(make_model):
        raise InvalidParameterError(
            "'make_model' must be a callable returning a fresh estimator, e.g. "
            f"functools.partial(DPID3Classifier, epsilon=1.0, schema=schema); got {make_model!r}."
        )
    probe = make_model()  # builds, never fits: refuse a factory of no estimator now
    if not (hasattr(probe, "fit") and hasattr(probe, "predict_proba")):
        raise InvalidParameterError(
            "'make_model' must return a fresh estimator with fit(X, y) and predict_proba(X); "
            f"make_model() returned {type(probe).__name__} ({probe!r:.60})."
        )
    n_targets = _check_int("n_targets", n_targets, 1)
    in_fraction = check_fraction("in_fraction", in_fraction)
    clip = check_clip(clip)
    if isinstance(attacks, str):
        attacks = (attacks,)
    attacks = tuple(attacks)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown or not attacks:
        raise InvalidParameterError(
            f"Unknown attack(s) {unknown or list(attacks)}; choose among {sorted(ATTACKS)}."
        )
    specs = [ATTACKS[a] for a in attacks]
    needs_shadows = any(s.needs_shadows for s in specs)
    needs_population = any(s.needs_population for s in specs)
    if needs_shadows:
        n_shadows = _check_int(
            "n_shadows",
            n_shadows,
            2,
            " (LiRA, RMIA and the shadow-model attack need IN and OUT models for every candidate)",
        )
    else:
        n_shadows = _check_int("n_shadows", n_shadows, 0)
    population_fraction = check_fraction(
        "population_fraction", population_fraction, allow_zero=not needs_population
    )
    if variance not in ("auto", "global", "per_example"):
        raise InvalidParameterError(
            f"The 'variance' parameter must be 'auto', 'global' or 'per_example'; got {variance!r}."
        )
    if not (isinstance(rmia_a, str) and rmia_a == "auto"):
        rmia_a = check_a(rmia_a)
    rmia_gamma = check_gamma(rmia_gamma)
    fpr_targets = check_fpr_targets(fpr_targets)
    if delta is not None:
        delta = check_delta(delta)

    frame, target_col, classes = _frame_and_target(data, target)
    rng = np.random.default_rng(random_state)
    n_rows = len(frame)
    order = rng.permutation(n_rows)
    n_pop = round(population_fraction * n_rows)
    if needs_population:
        n_pop = max(n_pop, 1)
    pool_idx, pop_idx = order[n_pop:], order[:n_pop]
    if len(pool_idx) < 4:
        raise InvalidParameterError(
            f"The candidate pool has {len(pool_idx)} rows; membership inference needs at least 4. "
            "Pass more data or lower population_fraction."
        )
    X_all = frame.drop(columns=[target_col])
    y_all = frame[target_col]
    if classes is None:
        # A bare frame: the model's public schema knows every class, even those the
        # sample lacks (a model may predict them); else the classes found in the data.
        model_schema = getattr(make_model(), "schema", None)
        classes = getattr(model_schema, "classes", None)
        classes = tuple(classes) if classes is not None else _data_classes(y_all)
    X = X_all.iloc[pool_idx].reset_index(drop=True)
    y = y_all.iloc[pool_idx].reset_index(drop=True)
    X_pop = X_all.iloc[pop_idx].reset_index(drop=True) if n_pop else None
    y_pop = y_all.iloc[pop_idx].reset_index(drop=True) if n_pop else None
    n = len(pool_idx)
    target_in = inclusion_matrix(n_targets, n, in_fraction=in_fraction, balanced=False, rng=rng)
    shadow_in = (
        inclusion_matrix(n_shadows, n, in_fraction=in_fraction, balanced=True, rng=rng)
        if n_shadows
        else np.zeros((0, n), dtype=bool)
    )
    attack_seed = int(rng.integers(2**31))
    model_seeds = [int(v) for v in rng.integers(2**32, size=n_targets + n_shadows)]
    signals = collect_signals(
        X,
        y,
        make_model,
        classes=classes,
        target_in=target_in,
        shadow_in=shadow_in,
        X_population=X_pop,
        y_population=y_pop,
        query=query,
        n_jobs=n_jobs,
        backend=backend,
        seeds=model_seeds,
        verbose=verbose,
    )
    return _attack_and_evaluate(
        signals,
        attacks=attacks,
        confidence=confidence,
        in_fraction=in_fraction,
        clip=clip,
        variance=variance,
        rmia_a=rmia_a,
        rmia_gamma=rmia_gamma,
        attack_model=attack_model,
        fpr_targets=fpr_targets,
        delta=delta,
        keep_signals=keep_signals,
        seed=attack_seed,
        t0=t0,
    )


def _attack_and_evaluate(
    signals: MembershipSignals,
    *,
    attacks: Sequence[str],
    confidence: float,
    in_fraction: float,
    clip: float,
    variance: str,
    rmia_a: float | str,
    rmia_gamma: float,
    attack_model: Any,
    fpr_targets: Sequence[float],
    delta: float | None,
    keep_signals: bool,
    seed: int,
    t0: float,
) -> MIAResult:
    infos = signals.target_info
    proven_eps = max((i.proven_epsilon for i in infos), default=math.inf)
    proven_delta = max((i.proven_delta for i in infos), default=0.0)
    claims = [i.claimed_epsilon for i in infos if i.claimed_epsilon is not None]
    claimed = max(claims) if claims else None
    delta = proven_delta if delta is None else delta
    options = {
        "clip": clip,
        "variance": variance,
        "rmia_a": rmia_a,
        "rmia_gamma": rmia_gamma,
        "attack_model": attack_model,
        "seed": seed,
        "_cache": {},
    }
    results = []
    for name in attacks:
        spec = ATTACKS[name]
        scores, info = spec.run(signals, options)
        results.append(
            evaluate_scores(
                scores,
                signals.target_in,
                confidence=confidence,
                delta=delta,
                fpr_targets=fpr_targets,
                attack=name,
                title=spec.title,
                info=info,
                rng=seed,
            )
        )
    train_acc, test_acc = signals.target_accuracy()
    return MIAResult(
        attacks=tuple(results),
        model=infos[0].name if infos else "model",
        proven_epsilon=proven_eps,
        proven_delta=proven_delta,
        claimed_epsilon=claimed,
        n_shadows=signals.n_shadows,
        n_targets=signals.n_targets,
        n_candidates=signals.n_candidates,
        n_population=signals.n_population,
        in_fraction=in_fraction,
        confidence=confidence,
        delta=delta,
        fpr_targets=tuple(fpr_targets),
        clip=clip,
        train_accuracy=train_acc,
        test_accuracy=test_acc,
        elapsed_seconds=time.perf_counter() - t0,
        signals=signals if keep_signals else None,
    )


def attack_signals(
    signals: MembershipSignals,
    *,
    confidence: float,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
    clip: float = DEFAULT_CLIP,
    variance: Variance = "auto",
    rmia_a: float | str = "auto",
    rmia_gamma: float = 1.0,
    attack_model: Any = None,
    fpr_targets: Sequence[float] = FPR_TARGETS,
    delta: float | None = None,
    random_state: int | None = 0,
) -> MIAResult:
    """Rerun the attacks on signals already collected (e.g. ``result.signals``).

    Lets a caller try other attack options without retraining, or attack
    signals gathered elsewhere (for instance a deployed secret-shared target
    queried through its protocol, with shadows trained on the reference path).
    """
    confidence = check_confidence(confidence)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise InvalidParameterError(f"Unknown attack(s) {unknown}; choose among {sorted(ATTACKS)}.")
    if any(ATTACKS[a].needs_shadows for a in attacks) and signals.n_shadows < 2:
        raise InvalidParameterError(
            f"The shadow-based attacks need at least 2 shadow models; got {signals.n_shadows}."
        )
    if not (isinstance(rmia_a, str) and rmia_a == "auto"):
        rmia_a = check_a(rmia_a)
    frac = float(signals.shadow_in.mean()) if signals.n_shadows else float(signals.target_in.mean())
    return _attack_and_evaluate(
        signals,
        attacks=tuple(attacks),
        confidence=confidence,
        in_fraction=frac,
        clip=check_clip(clip),
        variance=variance,
        rmia_a=rmia_a,
        rmia_gamma=check_gamma(rmia_gamma),
        attack_model=attack_model,
        fpr_targets=check_fpr_targets(fpr_targets),
        delta=None if delta is None else check_delta(delta),
        keep_signals=True,
        seed=int(np.random.default_rng(random_state).integers(2**31)),
        t0=time.perf_counter(),
    )
