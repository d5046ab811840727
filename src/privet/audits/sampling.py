"""Running a randomised function many times through joblib, in batches.

The tasks go through :class:`joblib.Parallel`: ``n_jobs`` workers with its
default (loky) backend, or any backend registered with joblib (Dask, Ray)
selected by the caller with ``joblib.parallel_config(backend=...)``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray

from privet.audits.events import Event, as_statistic_array
from privet.errors import InvalidParameterError


def accepts_size(mechanism: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(mechanism).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params


def draw(
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


def count_event(
    mechanism: Callable[..., Any],
    data: Any,
    size: int,
    statistic: Callable[[Any], Any] | None,
    vectorized: bool,
    event: Event,
) -> int:
    return int(np.count_nonzero(event.contains(draw(mechanism, data, size, statistic, vectorized))))


def batches(n: int, batch_size: int) -> list[int]:
    full, rest = divmod(n, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


def run_tasks(
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


def auto_batch_size(trials: int, n_jobs: int | None, vectorized: bool) -> int:
    workers = max(1, effective_n_jobs(n_jobs))
    cap = 250_000 if vectorized else 64
    return max(1, min(cap, math.ceil(trials / (4 * workers))))
