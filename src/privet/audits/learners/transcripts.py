"""White-box trials: one training, its recorded releases, and the exact likelihood ratio.

One *trial* trains the learner on one side of a neighbouring pair, ``D`` or
``D' = D + canary``, while the release recorder (:mod:`privet.mechanisms.recorder`)
keeps every noisy value the mechanisms draw, with its law and the value it was
given. The learner is then *replayed* on the other side with the same outputs
forced and the same public ``random_state`` and privacy coins: the replay gives
the values the other dataset would have produced for the same outputs. The
trial's statistic is the log-likelihood ratio of the whole transcript::

    T = sum_t log P_t(o_t | x'_t) - log P_t(o_t | x_t)        (x: on D, x': on D')

which is the optimal (Neyman-Pearson) test statistic of ``D`` against ``D'``
when the mechanisms follow their laws, adaptive composition included. ``T`` is
``+inf`` (``-inf``) when the transcript cannot happen on ``D`` (``D'``): the
replay on the other side asked for a release the run did not make, or the
fitted models differ on the probe records although every release was the same
(something reached the model outside the mechanisms).

Secret Poisson subsamples (the ones the ledger amplifies) are not conditioned
on: the canary's coins are summed out. With ``k`` sample draws in a fit, the
trial replays ``D'`` with the canary out of every sample (world A) and in sample
``j`` only (world ``B_j``), and::

    T = sum_j log((1 - g_j) + g_j exp(l_{B_j} - l_A))

which is exact when each release depends on the canary through one sample
(trees on their own samples, boosting rounds given the earlier outputs).

Besides ``T``, a trial reports what the laws say about this transcript: the
largest privacy loss its releases could show between the two inputs
(``pure_bound``, the sum of each release's ``max_loss``; infinite with a
Gaussian release that moved) and the squared Gaussian shift in units of sigma
(``gaussian_shift2``, the mu^2 of Gaussian DP along this transcript).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.mechanisms import recorder
from privet.mechanisms.recorder import Recorder

__all__ = ["TrialBatch", "likelihood_ratio", "run_trials", "transcript_summary"]

# outcome codes of a trial
OK, DIVERGED, MODEL_DIFFERS, NO_LAW, FAILED = 0, 1, 2, 3, 4
OUTCOMES = {
    OK: "ok",
    DIVERGED: "replay diverged",
    MODEL_DIFFERS: "model differs",
    NO_LAW: "release without a law",
    FAILED: "fit failed",
}


@dataclass(frozen=True, slots=True)
class TrialBatch:
    """The trials of one batch (arrays of one entry per trial)."""

    side: NDArray[np.int8]
    statistic: NDArray[np.float64]
    pure_bound: NDArray[np.float64]
    gaussian_shift2: NDArray[np.float64]
    n_releases: NDArray[np.int64]
    outcome: NDArray[np.int8]
    notes: tuple[str, ...]
    cpu_seconds: float
    labels: tuple[str, ...] = ()

    @staticmethod
    def concat(batches: Sequence[TrialBatch]) -> TrialBatch:
        notes: list[str] = []
        labels: list[str] = []
        for b in batches:
            notes += [n for n in b.notes if n not in notes][:5]
            labels += [lab for lab in b.labels if lab not in labels]
        return TrialBatch(
            side=np.concatenate([b.side for b in batches]),
            statistic=np.concatenate([b.statistic for b in batches]),
            pure_bound=np.concatenate([b.pure_bound for b in batches]),
            gaussian_shift2=np.concatenate([b.gaussian_shift2 for b in batches]),
            n_releases=np.concatenate([b.n_releases for b in batches]),
            outcome=np.concatenate([b.outcome for b in batches]),
            notes=tuple(notes[:10]),
            cpu_seconds=float(sum(b.cpu_seconds for b in batches)),
            labels=tuple(labels[:50]),
        )


def _log_likelihoods(rec: Recorder) -> tuple[float, bool]:
    """Sum of ``log P_t(o_t | x_t)`` over the releases; False if a release has no law."""
    total = 0.0
    for r in rec.releases:
        if r.law is None:
            return math.nan, False
        total += r.law.log_likelihood(r.output, r.value)
    return total, True


def likelihood_ratio(on_d0: Recorder, on_d1: Recorder) -> tuple[float, float, float, bool]:
    """``(T, pure_bound, gaussian_shift2, has_laws)`` of two aligned transcripts.

    ``on_d0`` and ``on_d1`` hold the same outputs (one is the run, the other its
    replay), with the values each dataset gave.
    """
    t = bound = shift2 = 0.0
    for r0, r1 in zip(on_d0.releases, on_d1.releases, strict=True):
        if r0.law is None or r1.law is None:
            if np.array_equal(np.asarray(r0.value), np.asarray(r1.value)):
                continue  # the canary does not move it: no evidence, whatever its law
            return math.nan, math.nan, math.nan, False
        t += r1.law.log_likelihood(r1.output, r1.value) - r0.law.log_likelihood(r0.output, r0.value)
        if r0.law == r1.law:
            loss = r0.law.max_loss(r0.value, r1.value)
            back = r0.law.max_loss(r1.value, r0.value)
            bound += max(loss, back)
            shift = getattr(r0.law, "shift", None)
            if shift is not None and not r0.law.pure:
                shift2 += shift(r0.value, r1.value) ** 2
        else:
            bound = math.inf
    return t, bound, shift2, True


def transcript_summary(rec: Recorder) -> list[str]:
    """One line per release: its label and law (for reports)."""
    return [f"{r.label} [{r.law.describe() if r.law else 'no law'}]" for r in rec.releases]


def _view(model: Any, probes: Any) -> NDArray[np.float64] | None:
    """What the fitted model shows of itself: its probabilities on the probe records."""
    if probes is None or len(probes) == 0:
        return None
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(probes), dtype=np.float64)
    return np.asarray(model.predict(probes)).astype(str)  # type: ignore[no-any-return]


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return True
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    return bool(np.array_equal(a, b))


def _fit(spec: Any, params: dict[str, Any], data: tuple[Any, ...], seed: int | None) -> Any:
    X, y, fit_params = data
    model = spec.make(**params, random_state=seed)
    return model.fit(X, y, **fit_params)


def _one_trial(
    spec: Any,
    params: dict[str, Any],
    sides: tuple[tuple[Any, ...], tuple[Any, ...]],
    probes: Any,
    side: int,
    seed: int | None,
) -> tuple[float, float, float, int, int, str, list[str]]:
    """One trial on side ``side``: ``(T, bound, shift2, releases, outcome, note, labels)``."""
    sign = 1.0 if side == 1 else -1.0
    # the model's view is taken inside the recorder too: a release (or coin) at prediction
    # time is part of the transcript, and the replay forces it like the others
    with recorder.recording() as run:
        model = _fit(spec, params, sides[side], seed)
        view = _view(model, probes)
    labels = transcript_summary(run)
    if run.samples:  # secret Poisson coins: sum the canary's out
        return _subsampled_trial(spec, params, sides, probes, side, seed, run, view, labels)
    other_view = None
    try:
        with recorder.replaying(run) as rep:
            other = _fit(spec, params, sides[1 - side], seed)
            other_view = _view(other, probes)
    except Exception as exc:  # the other dataset's fit failed on the forced outputs
        return sign * math.inf, math.inf, math.inf, len(run.releases), FAILED, repr(exc), labels
    if rep.diverged:
        return (
            sign * math.inf,
            math.inf,
            math.inf,
            len(run.releases),
            DIVERGED,
            rep.diverged,
            labels,
        )
    on0, on1 = (run, rep) if side == 0 else (rep, run)
    t, bound, shift2, ok = likelihood_ratio(on0, on1)
    if not ok:
        unknown = sorted({r.label for r in run.releases if r.law is None})
        return math.nan, math.nan, math.nan, len(run.releases), NO_LAW, ", ".join(unknown), labels
    if not _same(view, other_view):
        note = "the models differ on the probes although every release is the same"
        return sign * math.inf, bound, shift2, len(run.releases), MODEL_DIFFERS, note, labels
    return t, bound, shift2, len(run.releases), OK, "", labels


def _subsampled_trial(
    spec: Any,
    params: dict[str, Any],
    sides: tuple[tuple[Any, ...], tuple[Any, ...]],
    probes: Any,
    side: int,
    seed: int | None,
    run: Recorder,
    view: Any,
    labels: list[str],
) -> tuple[float, float, float, int, int, str, list[str]]:
    """A trial of a learner with secret Poisson samples: the canary's coins summed out."""
    sign = 1.0 if side == 1 else -1.0
    k = len(run.samples)
    rates = run.sample_rates
    worlds: list[Recorder] = []
    views = []
    for force in [dict.fromkeys(range(k), False)] + [
        {j: (j == i) for j in range(k)} for i in range(k)
    ]:
        try:
            with recorder.replaying(run, force_last=force) as rep:
                fitted = _fit(spec, params, sides[1], seed)
                views.append(_view(fitted, probes))
        except Exception as exc:
            return sign * math.inf, math.inf, math.inf, len(run.releases), FAILED, repr(exc), labels
        if rep.diverged:
            return (
                sign * math.inf,
                math.inf,
                math.inf,
                len(run.releases),
                DIVERGED,
                rep.diverged,
                labels,
            )
        worlds.append(rep)
    world_a = worlds[0]
    l_a, ok = _log_likelihoods(world_a)
    if not ok:
        return math.nan, math.nan, math.nan, len(run.releases), NO_LAW, "", labels
    t = 0.0
    bound = 0.0
    for j, world_b in enumerate(worlds[1:]):
        l_b, _ = _log_likelihoods(world_b)
        g = rates[j]
        # log((1 - g) + g exp(l_b - l_a)), stably
        t += float(np.logaddexp(math.log1p(-g), math.log(g) + (l_b - l_a))) if g < 1 else l_b - l_a
        _, pure, _, _ = likelihood_ratio(world_a, world_b)
        bound += math.log1p(g * math.expm1(pure)) if math.isfinite(pure) else math.inf
    # the model must not depend on the canary's data beyond the releases: compare the
    # run with the world that holds the canary as the run did
    if side == 0 and not _same(view, views[0]):
        return -math.inf, bound, math.nan, len(run.releases), MODEL_DIFFERS, "", labels
    return t, bound, math.nan, len(run.releases), OK, "", labels


def run_trials(
    spec: Any,
    params: dict[str, Any],
    sides: tuple[tuple[Any, ...], tuple[Any, ...]],
    probes: Any,
    trial_sides: Sequence[int],
    seeds: Sequence[int | None],
) -> TrialBatch:
    """The trials ``(trial_sides[i], seeds[i])`` in this process (one joblib task)."""
    t0 = time.process_time()
    out = [
        _one_trial(spec, params, sides, probes, int(s), seed)
        for s, seed in zip(trial_sides, seeds, strict=True)
    ]
    notes = tuple(dict.fromkeys(f"{OUTCOMES[o[4]]}: {o[5]}" for o in out if o[4] != OK))
    labels: list[str] = []
    for o in out[:1]:
        labels = o[6]
    return TrialBatch(
        side=np.asarray(trial_sides, dtype=np.int8),
        statistic=np.array([o[0] for o in out], dtype=np.float64),
        pure_bound=np.array([o[1] for o in out], dtype=np.float64),
        gaussian_shift2=np.array([o[2] for o in out], dtype=np.float64),
        n_releases=np.array([o[3] for o in out], dtype=np.int64),
        outcome=np.array([o[4] for o in out], dtype=np.int8),
        notes=notes[:5],
        cpu_seconds=time.process_time() - t0,
        labels=tuple(labels),
    )
