"""Privacy plans: what a learner will charge, computed from public information only.

A plan mirrors the scope tree a ``fit`` will build (charges, partition groups,
subsamples), so the ledger composes a plan with exactly the rules it uses for
real charges. Identical parts of a partition are planned once with a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from privet.errors import InvalidParameterError
from privet.ledger.composition import Cost, Pair, amplify_cost, parallel_repeated, sequential
from privet.ledger.entries import Claim, Entry, as_entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.relation import NeighbouringRelation


@dataclass(frozen=True, slots=True)
class PlannedCharge:
    entry: Entry
    mechanism: str
    step: str = ""
    claim: Claim | None = None


@dataclass
class PlanNode:
    """One scope of a plan."""

    label: str = "root"
    charges: list[PlannedCharge] = field(default_factory=list)
    groups: list[tuple[PlanNode, int, bool]] = field(default_factory=list)
    subsamples: list[tuple[PlanNode, float, str]] = field(default_factory=list)

    def charge(
        self,
        entry: Entry | Guarantee | float,
        *,
        mechanism: str,
        step: str = "",
        claim: Claim | None = None,
    ) -> PlanNode:
        self.charges.append(PlannedCharge(as_entry(entry), mechanism, step, claim))
        return self

    def partition(self, count: int, *, stable: bool = False, label: str = "part") -> PlanNode:
        """Plan a partition into ``count`` parts that each follow the returned node."""
        if int(count) < 1:
            raise InvalidParameterError(f"A partition needs at least one part, got {count!r}.")
        child = PlanNode(label)
        self.groups.append((child, int(count), stable))
        return child

    def subsample(self, rate: float, method: str = "poisson", label: str = "sample") -> PlanNode:
        child = PlanNode(label)
        self.subsamples.append((child, float(rate), method))
        return child

    def cost(self, relation: NeighbouringRelation, *, delta: float = 0.0) -> Cost:
        """Composed cost of this node, by the ledger's rules (``delta``: the budget's)."""
        return self.cost_pair(relation, delta=delta)[1]

    def cost_pair(self, relation: NeighbouringRelation, *, delta: float = 0.0) -> Pair:
        own = sequential(Cost.of(c.entry) for c in self.charges)
        single, double = own, own
        for child, count, stable in self.groups:
            pair = child.cost_pair(relation, delta=delta)
            s, d = parallel_repeated(pair, count, relation, stable=stable)
            single, double = single + s, double + d
        for child, rate, method in self.subsamples:
            s, d = child.cost_pair(relation, delta=delta)
            if method == "without_replacement":  # a fixed size: see ScopeTree._group_pair
                s = s + s
            amp_s = amplify_cost(s, rate, method, relation, delta)
            amp_d = amp_s if d is s else amplify_cost(d, rate, method, relation, delta)
            single, double = single + amp_s, double + amp_d
        return single, double

    def claims(self) -> list[tuple[str, PlannedCharge]]:
        out = [(self.label, c) for c in self.charges if c.claim is not None]
        for child, _, _ in self.groups:
            out += [(f"{self.label}/{p}", c) for p, c in child.claims()]
        for child, _, _ in self.subsamples:
            out += [(f"{self.label}/{p}", c) for p, c in child.claims()]
        return out


@dataclass
class PrivacyPlan(PlanNode):
    """The plan of one training call.

    Parameters
    ----------
    caller : str
        The learner (class name) the plan belongs to.
    description : str
        One line on how the budget is split, for the printed plan.
    claim : Claim or None
        What the paper claims for the whole call, if anything.
    delta : float or None
        The delta the plan was calibrated for (a Gaussian plan's target). The
        ledger reserves the plan's cost at this delta, or at its budget's if that
        is smaller; ``None``: at the budget's delta. A reservation at the budget's
        whole delta would leave no delta for any other fit on the same ledger.
    """

    caller: str = ""
    description: str = ""
    claim: Claim | None = None
    delta: float | None = None
