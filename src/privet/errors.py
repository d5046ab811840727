"""privet's exceptions.

Every error privet raises on bad input derives from :class:`PrivetError` and says
what was wrong, the value found, and what to do. A call that raises one of these
has charged no privacy budget.
"""

from __future__ import annotations

from typing import Any


class PrivetError(Exception):
    """Base class of every error privet raises on purpose."""


class InvalidParameterError(PrivetError, ValueError):
    """A parameter is outside its allowed range (negative epsilon, NaN, ...)."""


class BudgetExceededError(PrivetError):
    """A reservation or charge does not fit in the remaining privacy budget.

    Raised before any private value is read; nothing was charged.
    """


class UnsupportedEntryError(PrivetError):
    """The ledger cannot account for this entry (e.g. an amplification bound
    that is not proven for the ledger's neighbouring relation)."""


class RelationMismatchError(PrivetError):
    """A mechanism assumes a neighbouring relation other than the ledger's."""


class LedgerCorruptError(PrivetError):
    """A ledger file or document is damaged or was edited outside privet.

    Raised on open (integrity check, hash chain) and by ``Ledger.verify``; the
    ledger is not used. Restore the file from a backup; never edit it by hand.
    """


class LedgerBusyError(PrivetError, TimeoutError):
    """Another process held the ledger file's write lock for longer than ``timeout``.

    Nothing was charged; retry, or open the ledger with a longer ``timeout``.
    """


class LedgerUnavailableError(PrivetError, ConnectionError):
    """The ledger's database server could not be reached (a PostgreSQL ledger).

    The message says whether anything may have been stored: a failure before the
    commit stored nothing; a connection lost during the commit may have stored it.
    """


class LedgerClosedError(PrivetError, ValueError):
    """The ledger was closed (``Ledger.close()``, or the end of its ``with`` block).

    Nothing was read or charged; open it again with ``Ledger.open(path, dataset)``.
    """


class LedgerNotShareableError(PrivetError, TypeError):
    """An in-memory ledger cannot be shared with another process.

    A pickled copy of an in-memory ledger is read-only: charging it would start
    a second budget. Use a ledger file (``Ledger.open(path, dataset, budget)``).
    """


class SchemaError(PrivetError, ValueError):
    """Data does not match its public schema, or a schema is malformed."""


class DataNotFoundError(PrivetError, FileNotFoundError):
    """A dataset file could not be found."""


def _make_not_fitted_error() -> type:
    # Built on first use so that importing privet (e.g. in every MPC party
    # process) does not import scikit-learn.
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(PrivetError, SklearnNotFittedError):
        """An estimator was used before ``fit`` (also scikit-learn's NotFittedError)."""

    NotFittedError.__module__ = __name__
    return NotFittedError


def __getattr__(name: str) -> Any:
    if name == "NotFittedError":
        cls = _make_not_fitted_error()
        globals()["NotFittedError"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class MPCError(PrivetError, RuntimeError):
    """A multiparty computation failed (a party died, timed out, ...)."""


class AuditError(PrivetError, RuntimeError):
    """An audit could not finish its trainings (e.g. a cluster worker died repeatedly).

    No bound is reported: an audit never reports a bound computed from fewer
    trainings than it says.
    """
