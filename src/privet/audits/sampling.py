"""Running randomised functions many times through joblib, in batches, reproducibly.

Every many-trainings audit (:func:`~privet.audits.dp_test`, the learner tests,
the shadow models of membership inference) fans its runs out through
:func:`parallel`: ``n_jobs`` workers of ``backend`` (joblib's default, loky,
when None), or whatever the caller selected with
``joblib.parallel_config(backend=...)`` — a Dask or Ray cluster registers a
joblib backend and plugs in there.

Seeded runs give the same numbers whatever the backend and the number of
workers: the runs are cut into batches that depend on the number of runs only
(never on ``n_jobs``), and each batch gets its own seed from
:func:`task_seeds`, derived from the audit's ``random_state`` and the batch's
index with :class:`numpy.random.SeedSequence`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from joblib import Parallel, delayed, parallel_config
from numpy.typing import NDArray

from privet.audits.cluster import dask_client, is_scheduler, translate_cluster_errors
from privet.audits.events import Event, as_statistic_array
from privet.errors import InvalidParameterError

__all__ = [
    "TASKS_PER_PHASE",
    "accepts",
    "auto_batch_size",
    "batches",
    "check_n_jobs",
    "check_seed",
    "parallel",
    "run_tasks",
    "task_seeds",
]

TASKS_PER_PHASE = 32
"""Batches per side and phase of a DP test when ``batch_size`` is not given."""


def accepts(func: Callable[..., Any], name: str) -> bool:
    """Whether ``func`` takes a keyword argument ``name`` (or ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def accepts_size(mechanism: Callable[..., Any]) -> bool:
    """Whether ``mechanism`` has a ``size`` parameter (vectorised calls)."""
    try:
        params = inspect.signature(mechanism).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params


def check_n_jobs(n_jobs: Any) -> int | None:
    """``None`` or a non-zero int (``-1``: all cores), as joblib takes it."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise InvalidParameterError(
            f"The 'n_jobs' parameter must be None, a positive int or -1 (all cores); got "
            f"{n_jobs!r}."
        )
    return int(n_jobs)


def parallel(
    n_jobs: Any = None, backend: Any = None, verbose: int = 0, *, return_as: str = "list"
) -> Parallel:
    """A :class:`joblib.Parallel` for ``n_jobs`` workers of ``backend``.

    ``backend=None`` (and ``n_jobs=None``) defer to the active
    ``joblib.parallel_config``; a name (``"loky"``, ``"threading"``,
    ``"dask"``...) or a joblib backend instance selects one for this call; a
    Dask scheduler (``"tcp://HOST:8786"``, a ``distributed.Client`` or a
    cluster object) runs the calls on that cluster (:mod:`privet.audits.cluster`).
    """
    n_jobs = check_n_jobs(n_jobs)
    if is_scheduler(backend):
        client = dask_client(backend)
        with parallel_config(backend="dask", client=client):
            pool = Parallel(
                n_jobs=-1 if n_jobs is None else n_jobs, verbose=verbose, return_as=return_as
            )
        return translate_cluster_errors(pool)  # type: ignore[return-value]
    if backend is not None and not isinstance(backend, str) and not hasattr(backend, "configure"):
        raise InvalidParameterError(
            "The 'backend' parameter must be None, a joblib backend name ('loky', "
            "'threading', 'dask', ...), a joblib backend instance or a Dask scheduler "
            f"address ('tcp://HOST:8786'); got {backend!r}."
        )
    try:
        return Parallel(n_jobs=n_jobs, backend=backend, verbose=verbose, return_as=return_as)
    except (ValueError, KeyError) as exc:
        raise InvalidParameterError(
            f"joblib refused backend={backend!r}: {exc}. Use 'loky', 'threading', or register "
            "the backend first (e.g. `from dask.distributed import Client; Client(...)` for "
            "'dask')."
        ) from None


def check_seed(random_state: Any) -> Any:
    """``None``, a non-negative int or a numpy Generator, returned as given."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, int | np.integer) and not isinstance(random_state, bool):
        if random_state >= 0:
            return random_state
    raise InvalidParameterError(
        "The 'random_state' parameter must be None, a non-negative int or a numpy Generator; "
        f"got {random_state!r}."
    )


def task_seeds(random_state: Any, n: int, *, stream: int = 0) -> list[int | None]:
    """``n`` independent 32-bit seeds from ``random_state`` (``None``: ``n`` Nones).

    ``stream`` separates the uses of one ``random_state`` (selection and
    estimation trials, shadow models...): each stream is a different child of
    the seed's :class:`~numpy.random.SeedSequence`.
    """
    if check_seed(random_state) is None:
        return [None] * n
    if isinstance(random_state, np.random.Generator):
        entropy = int(random_state.integers(2**63))
    else:
        entropy = int(random_state)
    seq = np.random.SeedSequence(entropy, spawn_key=(int(stream),))
    return [int(child.generate_state(1)[0]) for child in seq.spawn(n)]


def _call(mechanism: Callable[..., Any], data: Any, seed: int | None, **kwargs: Any) -> Any:
    return (
        mechanism(data, **kwargs) if seed is None else mechanism(data, random_state=seed, **kwargs)
    )


def draw(
    mechanism: Callable[..., Any],
    data: Any,
    size: int,
    statistic: Callable[[Any], Any] | None,
    vectorized: bool,
    seed: int | None = None,
) -> NDArray[Any]:
    """``size`` runs of ``mechanism`` on ``data``, as a statistic array.

    With a ``seed`` the mechanism is called with ``random_state=`` (the batch's
    seed when vectorised, one seed per call otherwise).
    """
    if vectorized:
        outputs: Any = _call(mechanism, data, seed, size=size)
    else:
        seeds = task_seeds(seed, size)
        outputs = [_call(mechanism, data, s) for s in seeds]
    values = statistic(outputs) if statistic is not None else outputs
    arr = as_statistic_array(values, "statistic(outputs)")
    if len(arr) != size:
        raise InvalidParameterError(
            f"Expected {size} outputs from one batch, got {len(arr)}. A vectorised mechanism "
            "must return size outputs along the first axis, and the statistic one row per output."
        )
    return arr


def count_event(
    mechanism: Callable[..., Any],
    data: Any,
    size: int,
    statistic: Callable[[Any], Any] | None,
    vectorized: bool,
    seed: int | None,
    event: Event,
) -> int:
    """How many of ``size`` runs fall in ``event``."""
    return int(
        np.count_nonzero(event.contains(draw(mechanism, data, size, statistic, vectorized, seed)))
    )


def batches(n: int, batch_size: int) -> list[int]:
    """``n`` runs cut into batches of ``batch_size`` (the last one shorter)."""
    full, rest = divmod(n, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


def run_tasks(
    func: Callable[..., Any],
    tasks: list[tuple[int, int]],
    args: tuple[Any, ...],
    datasets: tuple[Any, Any],
    seeds: list[int | None],
    pool: Parallel,
) -> list[Any]:
    """``func(mechanism, datasets[side], size, statistic, vectorized, seed, *extra)`` per task."""
    mechanism, statistic, vectorized, *extra = args
    calls = (
        delayed(func)(mechanism, datasets[side], size, statistic, vectorized, seed, *extra)
        for (side, size), seed in zip(tasks, seeds, strict=True)
    )
    return list(pool(calls))


def auto_batch_size(trials: int, vectorized: bool) -> int:
    """Runs per batch: about :data:`TASKS_PER_PHASE` batches, whatever the workers.

    At most 250,000 runs per batch for vectorised mechanisms and 64 for looped
    ones. Never depends on ``n_jobs``, so seeded runs are reproducible on any
    backend.
    """
    cap = 250_000 if vectorized else 64
    return max(1, min(cap, math.ceil(trials / TASKS_PER_PHASE)))
