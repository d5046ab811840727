"""Tools for your own privacy test suites: hypothesis strategies and assertions.

>>> from privet.testing import schemas, datasets, neighbouring_pairs, assert_dp
"""

from privet.testing.assertions import assert_dp
from privet.testing.dpcheck import DPCheck, check_dp
from privet.testing.strategies import (
    InvalidStrategyArgument,
    canaries,
    datasets,
    entries,
    neighbouring_pairs,
    schemas,
)

__all__ = [
    "DPCheck",
    "InvalidStrategyArgument",
    "assert_dp",
    "canaries",
    "check_dp",
    "datasets",
    "entries",
    "neighbouring_pairs",
    "schemas",
]
