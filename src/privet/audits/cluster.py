"""Audits on a Dask cluster: the scheduler a user names becomes joblib's backend.

An audit's trainings go through joblib (:func:`privet.audits.sampling.parallel`).
Given ``scheduler="tcp://HOST:8786"`` (or a ``dask.distributed.Client``, or a
cluster object such as ``LocalCluster``), they run on that cluster's workers
through joblib's own Dask backend; nothing of privet's runs a server or opens a
socket. One client per scheduler address is kept for the process.

Seeded audits give the same numbers on the cluster as in one process: the
batches and their seeds depend on the number of trainings only
(:mod:`privet.audits.sampling`).

A worker that dies is handled by Dask: its tasks are retried on other workers,
up to the scheduler's ``distributed.scheduler.allowed-failures``. A task that
keeps killing workers ends the audit with :class:`~privet.errors.AuditError`
and no bound, never a bound from fewer trainings than the audit says.

Ledgers reach the workers by pickling: a SQLite file or PostgreSQL ledger
reopens the same budget on the worker; an in-memory ledger arrives read-only and
refuses to charge. Across hosts, use a PostgreSQL ledger (SQLite is not safe on
a network file system).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from privet.errors import AuditError, InvalidParameterError

__all__ = ["dask_client", "is_scheduler", "resolve_backend", "translate_cluster_errors"]

_SCHEMES = ("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")
_CLIENTS: dict[str, Any] = {}
_LOCK = threading.Lock()


def is_scheduler(backend: Any) -> bool:
    """Whether ``backend`` names a Dask scheduler (address, Client or cluster)."""
    if isinstance(backend, str):
        return backend.startswith(_SCHEMES)
    return hasattr(backend, "scheduler_info") or hasattr(backend, "scheduler_address")


def dask_client(scheduler: Any, *, timeout: float = 30.0) -> Any:
    """A ``distributed.Client`` for ``scheduler`` (one per address, kept for the process)."""
    try:
        from distributed import Client
    except ImportError:
        raise InvalidParameterError(
            'Running an audit on a Dask cluster needs dask.distributed: pip install "privet[dask]".'
        ) from None
    if hasattr(scheduler, "scheduler_info") and hasattr(scheduler, "submit"):
        return scheduler  # already a Client
    address = getattr(scheduler, "scheduler_address", scheduler)
    with _LOCK:
        client = _CLIENTS.get(address)
        if client is not None and client.status == "running":
            return client
        try:
            client = Client(address, set_as_default=False, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise InvalidParameterError(
                f"Cannot reach the Dask scheduler at {address!r} ({exc}); start it with "
                "`dask scheduler` (and workers with `dask worker ADDRESS`), or check the "
                "address. No training ran."
            ) from None
        _CLIENTS[address] = client
        return client


def _is_cluster_failure(exc: BaseException) -> bool:
    # distributed's KilledWorker and CommClosedError, matched by name so that this
    # module does not import distributed when no cluster is used
    return type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError")


def _audit_error(exc: BaseException) -> AuditError:
    return AuditError(
        f"The audit's trainings failed on the Dask cluster ({type(exc).__name__}: {exc}). "
        "A task was retried on other workers until the scheduler's allowed-failures ran out; "
        "no bound is reported. Check the workers' logs (memory limits), then rerun: a seeded "
        "audit gives the same numbers."
    )


class translate_cluster_errors:
    """Wrap a joblib Parallel so that a dead cluster becomes one AuditError."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def __call__(self, calls: Any) -> Any:
        try:
            out = self._pool(calls)
        except Exception as exc:
            if _is_cluster_failure(exc):
                raise _audit_error(exc) from None
            raise
        if self._pool.return_as == "list":
            return out
        return self._guard(out)

    @staticmethod
    def _guard(results: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from results
        except Exception as exc:
            if _is_cluster_failure(exc):
                raise _audit_error(exc) from None
            raise


def resolve_backend(backend: Any, scheduler: Any) -> Any:
    """The joblib backend of an audit given ``backend=`` and ``scheduler=`` (one at most)."""
    if scheduler is None:
        return backend
    if backend is not None:
        raise InvalidParameterError(
            f"Give backend= or scheduler=, not both (got backend={backend!r}, "
            f"scheduler={scheduler!r}); scheduler= runs the trainings on that Dask cluster."
        )
    if not is_scheduler(scheduler):
        raise InvalidParameterError(
            "scheduler= is a Dask scheduler address such as 'tcp://HOST:8786', a "
            f"distributed.Client or a cluster object; got {scheduler!r}."
        )
    return scheduler
