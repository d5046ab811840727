"""Former home of the learner audits, kept so that its names stay importable.

The code lives in :mod:`privet.audits.learners` (``registry``, ``pairs``,
``trials``, ``audit``); import from there or from :mod:`privet.audits`.
"""

from privet.audits.learners import *  # noqa: F403
from privet.audits.learners import __all__ as __all__
