"""Hyperparameter selection for privet learners, charged to the ledger (issue 34).

>>> from privet.model_selection import PrivateSearchCV  # doctest: +SKIP

See :class:`PrivateSearchCV` and ``docs/model_selection.md``.
"""

from privet.model_selection.search import LOG_LOSS_FLOOR, SCORINGS, PrivateSearchCV

__all__ = ["LOG_LOSS_FLOOR", "SCORINGS", "PrivateSearchCV"]
