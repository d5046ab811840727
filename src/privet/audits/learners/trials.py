"""Trainings as trials: the many-trainings DP test and the one-run audit of a learner.

A learner is a randomised algorithm from datasets to models, and every model is
queried only through its predictions, so the released output of one *trial* is
a full training run followed by predictions on a few fixed *probe* queries of a
:class:`~privet.audits.learners.pairs.LearnerPair`.

:func:`learner_dp_test` runs the trainings (joblib, with a progress callback),
keeps the predictions and bounds epsilon from below with
:func:`~privet.audits.estimate_epsilon_lower_bound` (events chosen on half the
trainings, counted on the other half; Clopper–Pearson). :func:`learner_one_run`
is the one-training audit of Steinke, Nasr and Jagielski (2023) with ``m``
mislabelled canaries.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed
from numpy.typing import NDArray

from privet.audits.bounds import check_confidence, check_real
from privet.audits.cluster import resolve_backend
from privet.audits.estimate import (
    check_epsilon,
    check_positive_int,
    check_split,
    estimate_epsilon_lower_bound,
)
from privet.audits.learners.pairs import LearnerPair, frame_from_codes, xy_schema
from privet.audits.learners.registry import LearnerSpec, Output, Progress, resolve_learner
from privet.audits.one_run import OneRunAuditResult, one_run_audit
from privet.audits.result import DPTestResult
from privet.audits.sampling import batches, check_seed, parallel, task_seeds
from privet.errors import InvalidParameterError

__all__ = ["LearnerDPTest", "Output", "Progress", "learner_dp_test", "learner_one_run"]


# ------------------------------------------------------------------------- sampling


def _fit_predict(
    spec: LearnerSpec,
    params: dict[str, Any],
    X: pd.DataFrame,
    y: pd.Series,
    probes: pd.DataFrame,
    output: Output,
    size: int,
    seed: int | None,
) -> NDArray[Any]:
    """``size`` independent trainings on ``(X, y)``; their predictions on ``probes``.

    With a ``seed``, training ``i`` gets the ``i``-th seed of :func:`task_seeds`
    as its ``random_state`` (the learner's own randomness; OpenDP's noise
    cannot be seeded).
    """
    rows = []
    for s in task_seeds(seed, size):
        model = spec.make(**params, random_state=s).fit(X, y)
        if output == "labels":
            rows.append(np.asarray(model.predict(probes), dtype=object))
        else:
            rows.append(np.asarray(model.predict_proba(probes), dtype=np.float64).ravel())
    out = np.array(rows, dtype=object if output == "labels" else np.float64)
    if output == "labels":
        # Labels as strings: a fixed dtype for the set events whatever the class type.
        out = out.astype(str)
    return out


def _sample_trainings(
    spec: LearnerSpec,
    params: dict[str, Any],
    pair: LearnerPair,
    output: Output,
    trials: int,
    *,
    n_jobs: int | None,
    backend: Any,
    batch_size: int | None,
    random_state: Any,
    progress: Progress | None,
) -> tuple[NDArray[Any], NDArray[Any]]:
    # Batches depend on the number of trainings only, never on the workers: seeded
    # audits give the same numbers on any backend.
    bs = batch_size or max(1, min(50, math.ceil(trials / 16)))
    tasks = [(side, s) for s in batches(trials, bs) for side in (0, 1)]
    seeds = task_seeds(random_state, len(tasks), stream=3)
    data = ((pair.X0, pair.y0), (pair.X1, pair.y1))
    parts: list[list[NDArray[Any]]] = [[], []]
    total, done = 2 * trials, 0
    if progress is not None:
        progress(0, total)
    calls = (
        delayed(_fit_predict)(spec, params, *data[side], pair.probes, output, s, seed)
        for (side, s), seed in zip(tasks, seeds, strict=True)
    )
    results = parallel(n_jobs, backend, return_as="generator")(calls)
    for (side, s), arr in zip(tasks, results, strict=True):
        parts[side].append(arr)
        done += s
        if progress is not None:
            progress(done, total)
    return np.concatenate(parts[0]), np.concatenate(parts[1])


# --------------------------------------------------------------------- DP test


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnerDPTest:
    """A many-trainings DP test of one learner on one neighbouring pair.

    Attributes
    ----------
    learner : str
    pair : str
        The pair's kind.
    pair_description : str
    result : DPTestResult
        The bound, its event and counts (one trial = one training).
    curve : tuple of (int, float)
        ``(trainings per dataset, epsilon lower bound)`` on growing prefixes of
        the same trainings, each at ``result.confidence`` on its own.
    output : str
        ``"labels"`` or ``"proba"``: what the trials released.
    n_probes : int
    """

    learner: str
    pair: str
    pair_description: str
    result: DPTestResult
    curve: tuple[tuple[int, float], ...]
    output: str
    n_probes: int

    @property
    def epsilon_lower(self) -> float:
        return self.result.epsilon_lower

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "pair": self.pair,
            "pair_description": self.pair_description,
            "output": self.output,
            "n_probes": self.n_probes,
            "curve": [list(p) for p in self.curve],
            **self.result.to_dict(),
        }


def _curve_points(n: int, points: int = 8) -> list[int]:
    lo = max(8, n // 2**points)
    grid = np.unique(np.geomspace(lo, n, points).round().astype(int))
    return [int(g) for g in grid if g >= 4]


def learner_dp_test(
    learner: str | LearnerSpec,
    pair: LearnerPair,
    *,
    epsilon: float,
    trials: int,
    confidence: float,
    max_depth: int | None = None,
    claimed_epsilon: float | None = None,
    output: Output = "labels",
    selection_fraction: float = 0.5,
    n_jobs: int | None = None,
    backend: Any = None,
    scheduler: Any = None,
    batch_size: int | None = None,
    random_state: int | None = 0,
    progress: Progress | None = None,
    curve: bool = True,
) -> LearnerDPTest:
    """Empirical DP test of a learner: ``trials`` independent trainings on each of ``D, D'``.

    Parameters
    ----------
    learner : str or LearnerSpec
        A name of :data:`LEARNERS` or a spec.
    pair : LearnerPair
        From :func:`near_tie_pair`, :func:`lone_leaf_pair`, or your own.
    epsilon : float
        The learner's privacy parameter.
    trials : int
        Trainings per dataset (selection and estimation together).
    confidence : float
        Confidence of the bound.
    max_depth : int, optional
        Tree depth; default the pair's design depth, else 3.
    claimed_epsilon : float, optional
        The claim the verdict compares with; default ``epsilon`` (every DP
        learner of privet claims its parameter).
    output : {"labels", "proba"}, default="labels"
        What a trial releases: predicted labels (set events) or the
        probability vectors (classifier events).
    selection_fraction : float, default=0.5
        Share of the trainings that choose the event.
    n_jobs, backend, batch_size
        joblib workers, joblib backend (None: the active
        ``joblib.parallel_config``) and trainings per task.
    scheduler : str, distributed.Client or cluster, optional
        Run the trainings on this Dask cluster (``"tcp://HOST:8786"``) through
        joblib's Dask backend; seeded runs give the same numbers as in one
        process (see :mod:`privet.audits.cluster`). Not with ``backend``.
    random_state : int, optional
        Seed of the selection/estimation split and of the learners' own
        ``random_state`` (one seed per training: bootstrap samples, random
        splits...); OpenDP's noise cannot be seeded. The trainings are cut into
        tasks independently of ``n_jobs``, so a seeded test of a learner whose
        randomness is all in ``random_state`` gives the same numbers on every
        backend.
    progress : callable, optional
        ``progress(done, total)`` after each batch of trainings.
    curve : bool, default=True
        Also compute the bound on growing prefixes of the trainings.

    Returns
    -------
    LearnerDPTest
    """
    backend = resolve_backend(backend, scheduler)
    spec = resolve_learner(learner)
    confidence = check_confidence(confidence)
    if output not in ("labels", "proba"):
        raise InvalidParameterError(f"output must be 'labels' or 'proba'; got {output!r}.")
    if isinstance(trials, bool) or not isinstance(trials, int | np.integer) or trials < 4:
        raise InvalidParameterError(f"trials must be an int >= 4; got {trials!r}.")
    trials = int(trials)
    check_split(trials, selection_fraction)
    if not isinstance(pair, LearnerPair):
        raise InvalidParameterError(
            "'pair' must be a LearnerPair (near_tie_pair(schema), lone_leaf_pair(data), or "
            f"your own); got {type(pair).__name__}."
        )
    epsilon = check_real(epsilon, "epsilon", lower=0.0)
    if claimed_epsilon is not None:
        claimed_epsilon = check_epsilon(claimed_epsilon, "claimed_epsilon")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    depth = max_depth if max_depth is not None else (pair.max_depth or 3)
    depth = check_positive_int(depth, "max_depth", minimum=0)
    check_seed(random_state)
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    schema = pair.schema
    params = {"epsilon": epsilon, "max_depth": depth, "schema": schema}
    t0 = time.perf_counter()
    x0, x1 = _sample_trainings(
        spec,
        params,
        pair,
        output,
        trials,
        n_jobs=n_jobs,
        backend=backend,
        batch_size=batch_size,
        random_state=random_state,
        progress=progress,
    )
    claim = epsilon if claimed_epsilon is None else claimed_epsilon
    kwargs = {
        "confidence": confidence,
        "claimed_epsilon": claim,
        "selection_fraction": selection_fraction,
        "random_state": random_state,
        "events": "set" if output == "labels" else "auto",
    }
    result = estimate_epsilon_lower_bound(x0, x1, **kwargs)  # type: ignore[arg-type]
    result = _with_time(result, time.perf_counter() - t0)
    points: list[tuple[int, float]] = []
    if curve:
        for n in _curve_points(len(x0)):
            if n == len(x0):
                points.append((n, result.epsilon_lower))
                continue
            try:
                r = estimate_epsilon_lower_bound(x0[:n], x1[:n], **kwargs)  # type: ignore[arg-type]
            except InvalidParameterError:
                continue
            points.append((n, r.epsilon_lower))
    return LearnerDPTest(
        learner=spec.name,
        pair=pair.kind,
        pair_description=pair.description,
        result=result,
        curve=tuple(points),
        output=output,
        n_probes=len(pair.probes),
    )


def _with_time(result: DPTestResult, seconds: float) -> DPTestResult:
    d = {k: getattr(result, k) for k in result.__dataclass_fields__ if k != "verdict"}
    d["wall_time"] = seconds
    return DPTestResult(**d)


# -------------------------------------------------------------------------- one run


def learner_one_run(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    confidence: float,
    schema: Any = None,
    max_depth: int | None = None,
    m: int | None = None,
    guesses: Sequence[tuple[int, int]] | None = None,
    claimed_epsilon: float | None = None,
    random_state: int | None = 0,
) -> OneRunAuditResult:
    """One-run audit (Steinke, Nasr, Jagielski 2023) of a learner with ``m`` canaries.

    ``m`` records of ``data`` become canaries: their class is changed to
    another class drawn at random (mislabelled records stand out), and each
    is included in the single training run independently with probability
    1/2, on top of the other records. The trained model scores every canary by
    the probability it gives the canary's (changed) class at the canary's
    features; the auditor guesses "in" for the highest scores and "out" for the
    lowest (the rules of ``guesses``, Bonferroni-corrected), and
    :func:`~privet.audits.one_run_audit` turns the correct guesses into an
    epsilon lower bound.

    ``max_depth`` defaults to the number of attributes: full-depth trees give
    every canary a leaf of its own when the records are distinct (Car holds
    each combination of values once).
    """
    spec = resolve_learner(learner)
    X, y, schema = xy_schema(data, schema)
    confidence = check_confidence(confidence)
    rng = np.random.default_rng(random_state)
    n = len(X)
    if m is None:
        m = min(1000, n // 2)
    if not 2 <= m < n:
        raise InvalidParameterError(f"m must be in [2, {n - 1}] for {n} records; got {m!r}.")
    codes = schema.encode(X)
    y_codes = schema.encode_target(y)
    order = rng.permutation(n)
    can, base = order[:m], order[m:]
    shift = rng.integers(1, schema.n_classes, size=m)
    can_y = (y_codes[can] + shift) % schema.n_classes
    Xc, yc = frame_from_codes(schema, codes[can], can_y)
    Xb, yb = frame_from_codes(schema, codes[base], y_codes[base])
    depth = schema.n_features if max_depth is None else int(max_depth)
    if guesses is None:
        ks = sorted({max(1, m // d) for d in (40, 20, 10, 4)})
        guesses = [(k, 0) for k in ks] + [(k, k) for k in ks if 2 * k <= m]

    def train(included: NDArray[np.bool_]) -> NDArray[np.float64]:
        Xt = pd.concat([Xb, Xc[included]], ignore_index=True)
        yt = pd.concat([yb, yc[included]], ignore_index=True)
        model = spec.make(epsilon=float(epsilon), max_depth=depth, schema=schema).fit(Xt, yt)
        proba = np.asarray(model.predict_proba(Xc), dtype=np.float64)
        return proba[np.arange(m), can_y]

    return one_run_audit(
        train,
        m,
        delta=0.0,
        confidence=confidence,
        guesses=list(guesses),
        claimed_epsilon=float(epsilon) if claimed_epsilon is None else claimed_epsilon,
        random_state=rng,
    )
