"""The privacy ledger: the only place in privet where privacy loss is composed.

>>> from privet.ledger import Ledger, Guarantee
>>> led = Ledger(budget=Guarantee(epsilon=1.0, delta=1e-6))
>>> left, right = led.root.partition(2)
>>> _ = left.charge(Guarantee(0.3), mechanism="laplace")
>>> led.spent()
Guarantee(epsilon=0.3, delta=0.0)
"""

from privet.errors import BudgetExceededError, RelationMismatchError, UnsupportedEntryError
from privet.ledger.composition import (
    Bound,
    Cost,
    amplify,
    best_guarantee,
    gdp_to_epsilon,
    zcdp_to_epsilon,
)
from privet.ledger.copying import CopiedDataset, copy_ledger
from privet.ledger.entries import (
    ZCDP,
    ApproxDP,
    Claim,
    DiscreteGaussian,
    DiscreteLaplaceCounts,
    Entry,
    Exponential,
    Gaussian,
    Laplace,
    LocalRandomiser,
    NonPrivate,
    PureDP,
    register_entry,
)
from privet.ledger.guarantee import Guarantee
from privet.ledger.ledger import Ledger
from privet.ledger.locations import list_datasets, table_owner
from privet.ledger.plan import PlanNode, PrivacyPlan
from privet.ledger.records import ChargeRecord
from privet.ledger.relation import ADD_REMOVE, REPLACE_ONE, NeighbouringRelation
from privet.ledger.reservation import Reservation
from privet.ledger.scope import Scope

__all__ = [
    "ADD_REMOVE",
    "REPLACE_ONE",
    "ZCDP",
    "ApproxDP",
    "Bound",
    "BudgetExceededError",
    "ChargeRecord",
    "Claim",
    "CopiedDataset",
    "Cost",
    "DiscreteGaussian",
    "DiscreteLaplaceCounts",
    "Entry",
    "Exponential",
    "Gaussian",
    "Guarantee",
    "Laplace",
    "Ledger",
    "LocalRandomiser",
    "NeighbouringRelation",
    "NonPrivate",
    "PlanNode",
    "PrivacyPlan",
    "PureDP",
    "RelationMismatchError",
    "Reservation",
    "Scope",
    "UnsupportedEntryError",
    "amplify",
    "best_guarantee",
    "copy_ledger",
    "gdp_to_epsilon",
    "list_datasets",
    "register_entry",
    "table_owner",
    "zcdp_to_epsilon",
]
