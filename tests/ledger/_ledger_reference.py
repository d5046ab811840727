"""An independent reference composer for the ledger tests.

Written from the rules of the issue, not from privet's code: a record's
*placement* is the set of scopes it lies in (one part of every partition group
below a scope it lies in). Basic composition of what one record can see is the
sum of the charges of its scopes; the ledger's cost is the maximum over
placements. Under replace-one neighbours the old and the new record each have a
placement (the same part of a ``stable`` group, any parts otherwise) and the
cost is the sum over the union of the two placements. A subsample scope is
amplified as a whole: eps' = ln(1 + g(e^eps - 1)), delta' = g delta, applied to
the brute-force cost of the records inside it. Under replace-one the sample has a
fixed size (m of n), so it always sees a substitution: of the old record by the new
one when both reach it, and otherwise (one of them left or entered its parent) of
that record by some other record of the parent, placed anywhere below (in another
part of a stable group too), counted as two separate records (two single costs).

Trees are small plain data, so that hypothesis can draw them and the tests can
build the same tree in a ledger.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field


@dataclass
class RNode:
    """A scope: its own charges (eps, delta), partition groups and subsamples."""

    charges: list[tuple[float, float]] = field(default_factory=list)
    partitions: list[tuple[bool, list[RNode]]] = field(default_factory=list)  # (stable, parts)
    subsamples: list[tuple[float, RNode]] = field(default_factory=list)  # (rate, child)


def amplify(eps: float, delta: float, rate: float) -> tuple[float, float]:
    """Exact amplification by subsampling, written out independently."""
    return math.log(1.0 + rate * (math.exp(eps) - 1.0)), rate * delta


def _placements(node: RNode) -> list[tuple[int, ...]]:
    """Every placement of one record below ``node``, as a tuple of choices per group."""
    options = [range(len(parts)) for _, parts in node.partitions]
    out = []
    for choice in itertools.product(*options):
        subs = [
            _placements(parts[i]) for (_, parts), i in zip(node.partitions, choice, strict=True)
        ]
        for inner in itertools.product(*subs):
            out.append((choice, inner))
    return out


def _own(node: RNode) -> tuple[float, float]:
    return (math.fsum(e for e, _ in node.charges), math.fsum(d for _, d in node.charges))


def _subsample_cost(node: RNode, records: int, pair: bool) -> tuple[float, float]:
    eps = delta = 0.0
    for rate, child in node.subsamples:
        if pair and records == 2:
            ce, cd = brute_force(child, 2)
        else:
            ce, cd = (x * (2 if pair else 1) for x in brute_force(child, 1, pair=pair))
        if ce == 0.0 and cd == 0.0:
            continue
        ae, ad = amplify(ce, cd, rate)
        eps, delta = eps + ae, delta + ad
    return eps, delta


def _cost_of(node: RNode, places: list, records_here: int, pair: bool) -> tuple[float, float]:
    """Cost of the union of the given placements (all of which lie in ``node``);
    ``pair``: of a replaced pair's placements (replace-one)."""
    eps, delta = _own(node)
    se, sd = _subsample_cost(node, records_here, pair)
    eps, delta = eps + se, delta + sd
    for g, (_, parts) in enumerate(node.partitions):
        by_part: dict[int, list] = {}
        for choice, inner in places:
            by_part.setdefault(choice[g], []).append(inner[g])
        for i, inner_places in by_part.items():
            ce, cd = _cost_of(parts[i], inner_places, len(inner_places), pair)
            eps, delta = eps + ce, delta + cd
    return eps, delta


def _stable_ok(node: RNode, a, b) -> bool:
    """Old and new record in the same part of every stable group they both reach."""
    (ca, ia), (cb, ib) = a, b
    for g, (stable, _) in enumerate(node.partitions):
        if ca[g] == cb[g]:
            if not _stable_ok(node.partitions[g][1][ca[g]], ia[g], ib[g]):
                return False
        elif stable:
            return False
    return True


def brute_force(node: RNode, records: int = 1, *, pair: bool = False) -> tuple[float, float]:
    """Basic-composition (eps, delta) of ``node`` for 1 record (add/remove) or a
    replaced pair (2 records, replace-one). eps and delta are maximised separately.
    ``pair`` with 1 record: one record of a replaced pair (its samples below see a
    substitution)."""
    places = _placements(node)
    best_e = best_d = 0.0
    if records == 1:
        for p in places:
            e, d = _cost_of(node, [p], 1, pair)
            best_e, best_d = max(best_e, e), max(best_d, d)
        return best_e, best_d
    for a in places:
        for b in places:
            if not _stable_ok(node, a, b):
                continue
            e, d = _cost_of(node, [a, b] if a != b else [a, a], 2, True)
            best_e, best_d = max(best_e, e), max(best_d, d)
    return best_e, best_d


def build(node: RNode, scope, *, relation_value: str, method: str) -> None:
    """Create ``node``'s tree under a privet scope and charge it."""
    from privet.ledger import ApproxDP, PureDP

    for eps, delta in node.charges:
        entry = PureDP(epsilon=eps) if delta == 0 else ApproxDP(epsilon=eps, delta=delta)
        scope.charge(entry, mechanism="ref")
    for stable, parts in node.partitions:
        children = scope.partition(len(parts), stable=stable)
        for child_scope, child in zip(children, parts, strict=True):
            build(child, child_scope, relation_value=relation_value, method=method)
    for rate, child in node.subsamples:
        build(
            child,
            scope.subsample(rate, method),
            relation_value=relation_value,
            method=method,
        )


def flat_charges(node: RNode) -> list[tuple[float, float]]:
    out = list(node.charges)
    for _, parts in node.partitions:
        for p in parts:
            out += flat_charges(p)
    for _, child in node.subsamples:
        out += flat_charges(child)
    return out
