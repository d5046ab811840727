"""privet: privacy accounting and auditing for decision-tree learning.

Four parts: :mod:`privet.ledger` (the only place privacy loss is composed),
:mod:`privet.mechanisms` (randomisers), :mod:`privet.learners` (the papers'
systems as scikit-learn estimators) and :mod:`privet.audits` (membership
inference and empirical DP tests).
"""

from privet.errors import (
    BudgetExceededError,
    DataNotFoundError,
    InvalidParameterError,
    PrivetError,
    SchemaError,
)

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "DataNotFoundError",
    "InvalidParameterError",
    "PrivetError",
    "SchemaError",
    "__version__",
]
