"""The ledger's write path: every charge and reservation checked, then committed.

A check and its commit are one step: each runs inside one exclusive write
transaction of the store (:meth:`History._write`), after reading what other
processes committed, so concurrent processes can never overspend. What is
checked is the merged scope tree of every committed charge, plus what the other
open reservations may still charge, composed at the budget's delta
(:mod:`privet.ledger.tree`); a charge made inside a reservation must also fit in
that reservation. :class:`~privet.ledger.Ledger` adds the public methods.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import time
from collections.abc import Iterator, Sequence

from privet.errors import BudgetExceededError, InvalidParameterError, RelationMismatchError
from privet.ledger.budget import check_entry_size, left_of
from privet.ledger.composition import Bound, Cost, best_guarantee
from privet.ledger.entries import Entry, LocalRandomiser, NonPrivate
from privet.ledger.guarantee import Guarantee
from privet.ledger.history import History
from privet.ledger.pld_tree import PLDPair
from privet.ledger.records import ChargeLabels, ChargeRecord, eps_text
from privet.ledger.relation import NeighbouringRelation
from privet.ledger.reservation import Reservation
from privet.ledger.scope import Scope
from privet.ledger.tree import ABANDON_MARK, ALL, MAX_DEPTH, ReservationState


def _by_epsilon(bound: Bound) -> tuple[float, float]:
    return bound.guarantee.epsilon, bound.guarantee.delta


class CheckedWrites(History):
    """Scope groups, charges and reservations: checked against the budget, then committed."""

    # ---------------------------------------------------------------- writes
    def _subtree_bound(self, node_id: int) -> Bound:
        with self._lock:
            self._refresh()
            bound = best_guarantee(self._subtree_cost(node_id), self.budget.delta)
            return self._with_pld(bound, lambda: self._pld_node(node_id, ALL), self.budget.delta)

    def _add_group(
        self,
        parent: int,
        kind: str,
        labels: list[str],
        *,
        stable: bool = False,
        rate: float = 1.0,
        method: str = "",
    ) -> tuple[Scope, ...]:
        payload = {
            "id": None,
            "parent": parent,
            "kind": kind,
            "stable": bool(stable),
            "rate": float(rate),
            "method": method,
            "members": [[None, label] for label in labels],
        }
        with self._write():
            node = self._nodes[parent]
            if node.depth >= MAX_DEPTH:
                raise InvalidParameterError(
                    f"Scopes nest at most {MAX_DEPTH} levels deep; {node.path!r} is at "
                    f"{node.depth}. Split a scope into several parts at once rather than "
                    "one level at a time."
                )
            event = self._append("group", payload)
        return tuple(Scope(self, m[0]) for m in event.payload["members"])

    # ---------------------------------------------------------------- checks
    def _check_charge(self, node_id: int, entry: Entry, reservation: Reservation | None) -> None:
        """Raise BudgetExceededError if the charge does not fit; change nothing."""
        self._check_charges([(node_id, entry)], reservation)

    def _check_charges(
        self, items: Sequence[tuple[int, Entry]], reservation: Reservation | None
    ) -> None:
        """Raise BudgetExceededError unless all the charges fit together; change nothing.

        One check for the whole batch: a prefix of it releases less, so its true loss
        is at most the batch's, which the check bounds. (The ledger's figure for a
        prefix can be looser: under a subsample, Laplace charges alone are amplified
        from their basic epsilon, and a Gaussian among them switches the subsample to
        the best bound of everything in it.)
        """
        for _, entry in items:
            if isinstance(entry, NonPrivate) and math.isfinite(self.budget.epsilon):
                raise BudgetExceededError(
                    f"A non-private release ({entry.reason}) has no DP guarantee (epsilon = "
                    f"infinity) and cannot be charged to the finite budget {self.budget} of "
                    f"dataset {self.dataset!r}; use the learner's sound variant, or a ledger "
                    "with budget=Guarantee.unbounded() if you accept the leak knowingly."
                )
        if len(items) == 1:
            what = f"Charging {items[0][1].guarantee()} in scope {self._nodes[items[0][0]].path!r}"
        else:
            what = (
                f"Charging {len(items)} releases together (the first {items[0][1].guarantee()} "
                f"in scope {self._nodes[items[0][0]].path!r})"
            )
        # The cost of a tree is not additive: add tentatively, measure, restore.
        if reservation is None:
            with self._tentative_many(items, None):
                bound = self._global_bound(need=self.budget)
            if not bound.guarantee.fits_in(self.budget):
                left = left_of(self.budget, self._global_bound().guarantee)
                raise BudgetExceededError(
                    f"{what} would bring dataset {self.dataset!r} to {bound.guarantee} "
                    f"({bound.method} composition), over its budget {self.budget}; {left} is "
                    "left. Lower epsilon; the budget is the dataset's for life, and its rows "
                    "cannot be charged to another dataset. Nothing was charged."
                )
            return
        # The reservation stands in the global check at its scope, so what is charged
        # in it must lie in that scope's subtree and is measured at that scope (above
        # it, e.g. under a subsample, the global check amplifies the reserved amount).
        scope_id = reservation._state.scope_id
        for node_id, entry in items:
            cur: int | None = node_id
            while cur is not None and cur != scope_id:
                cur = self._nodes[cur].parent
            if cur is None:
                raise BudgetExceededError(
                    f"Charging {entry.guarantee()} in scope {self._nodes[node_id].path!r} inside "
                    f"reservation #{reservation.id}, which sits in scope {self._nodes[scope_id].path!r} and "
                    "covers only charges in that scope and below; charge inside it, or reserve "
                    "at a scope holding both. Nothing was charged."
                )
        # A reservation charged in full if abandoned keeps its own rest in the check: a
        # dead process's rest is charged without a check, and in the merged tree the
        # charges made so far can cost more than their own bound counts (a subsample
        # shared with settled charges; basic composition with an approximate-DP charge).
        own_rest = reservation._state.caller.endswith(ABANDON_MARK)
        with self._tentative_many(items, reservation.id):
            used = self._used(reservation.id, need=reservation.amount)
            bound = self._global_bound(
                exclude=None if own_rest else reservation.id, need=self.budget
            )
        if not used.guarantee.fits_in(reservation.amount):
            raise BudgetExceededError(
                f"{what} would use {used.guarantee} of reservation #{reservation.id}, which "
                f"set aside {reservation.amount}; the privacy plan under-estimated this call. "
                "Nothing was charged."
            )
        # Within its amount, a reservation's charges can still push the merged tree
        # over the budget where composition is not additive (a subsample shared
        # with settled charges): check the merged tree too.
        if not bound.guarantee.fits_in(self.budget):
            raise BudgetExceededError(
                f"{what} inside reservation #{reservation.id} would bring dataset "
                f"{self.dataset!r} to {bound.guarantee} ({bound.method} composition) with the "
                f"other charges it composes with, over its budget {self.budget}. Nothing was "
                "charged."
            )

    @contextlib.contextmanager
    def _tentative_many(
        self, items: Sequence[tuple[int, Entry]], rid: int | None
    ) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for node_id, entry in items:
                stack.enter_context(self._tentative(node_id, Cost.of(entry), rid, entry))
            yield

    def _charge(
        self, node_id: int, entry: Entry, labels: ChargeLabels, *, commit: bool
    ) -> ChargeRecord:
        if not commit:
            reservation = self._open_reservation()
            check_entry_size(entry)
            self._check_moves([(node_id, entry)])
            with self._lock:
                self._refresh()
                self._check_charge(node_id, entry, reservation)
            return self._record(node_id, entry, labels, reservation)
        return self._charge_many([(node_id, entry)], labels)[0]

    def _check_moves(self, items: Sequence[tuple[int, Entry]]) -> None:
        """Refuse a local randomiser's charge where a replaced record can change parts.

        Under replace-one a non-stable partition is composed as if every charge
        below it also covered adding or removing a record in its part (the
        replaced record leaves one part and its replacement enters another). An
        epsilon-LDP report covers a changed value only: a record entering a part
        adds a report to it, which no epsilon bounds. For the same reason an add/remove
        ledger refuses it anywhere: the added record's report is the difference.
        """
        if self.relation is not NeighbouringRelation.REPLACE_ONE:
            if any(isinstance(entry, LocalRandomiser) for _, entry in items):
                raise RelationMismatchError(
                    "A local randomiser's reports bound a changed value (replace-one "
                    "neighbours), not a record added or removed: on this add/remove ledger "
                    "the added record's report is itself the difference, which no epsilon "
                    "bounds. Open the ledger with relation='replace_one' (the number of "
                    "reports is public). Nothing was charged."
                )
            return
        for node_id, entry in items:
            if not isinstance(entry, LocalRandomiser):
                continue
            part = self.unstable_part_above(node_id)
            if part is not None:
                raise RelationMismatchError(
                    f"A local randomiser's reports bound a changed value, not a record "
                    f"entering or leaving scope {part!r}: under replace-one neighbours a "
                    "replaced record can move between the parts of that non-stable "
                    "partition, adding a report to one part and removing one from another. "
                    "Charge it in a stable partition (scope.partition(..., stable=True): "
                    "records assigned by who holds them) or outside any partition. Nothing "
                    "was charged."
                )

    def _open_reservation(self) -> Reservation | None:
        reservation = self._active.get()
        if reservation is not None and (reservation._ledger is not self or not reservation.is_open):
            reservation = None
        return reservation

    def _record(
        self, node_id: int, entry: Entry, labels: ChargeLabels, reservation: Reservation | None
    ) -> ChargeRecord:
        return ChargeRecord(
            id=0,  # the store gives the id
            scope_id=node_id,
            path=self._nodes[node_id].path,
            entry=entry,
            mechanism=labels.mechanism,
            sensitivity=None if labels.sensitivity is None else float(labels.sensitivity),
            relation=self.relation.value,
            caller=labels.caller,
            step=labels.step,
            claim=labels.claim,
            timestamp=time.time(),
            reservation=None if reservation is None else reservation.id,
        )

    def _charge_many(
        self, items: Sequence[tuple[int, Entry]], labels: ChargeLabels
    ) -> list[ChargeRecord]:
        """Check the batch once, then commit every charge in one write transaction."""
        if not labels.mechanism:
            raise InvalidParameterError("A charge needs the name of its mechanism.")
        for _, entry in items:
            check_entry_size(entry)
        self._check_moves(items)
        reservation = self._open_reservation()
        with self._write():
            if reservation is not None and not reservation.is_open:
                reservation = None
            self._check_charges(items, reservation)
            ids = []
            for node_id, entry in items:
                rec = self._record(node_id, entry, labels, reservation)
                event = self._append("charge", {"id": None, "record": rec.to_dict()})
                ids.append(event.payload["id"])
        return [self._charges[i] for i in ids]

    def _reserve(
        self,
        amount: Guarantee,
        cost: Cost,
        caller: str,
        node_id: int,
        plan_pld: tuple[bytes, PLDPair] | None = None,
    ) -> int:
        """Check that the plan's ``cost`` fits at its scope, then record the reservation.

        The check composes the plan's own cost (its Rényi and Gaussian views, so a
        second Gaussian fit composes with the first as its charges will), and the
        reservation holds that cost while it is open: every process (the file
        stores it) keeps room for the plan's cost less what it has charged. Where
        the (epsilon, delta) amount composes better, or the plan is a bare amount,
        the reservation holds its amount. An amount over the budget on its own is
        refused.
        """
        check_entry_size(amount)
        coarse = Cost.of_guarantee(amount)
        with self._write():
            # Check with a stand-in reservation placed at its scope, then remove it.
            held: Cost | None = cost if amount.fits_in(self.budget) else None
            bound = self._trial_bound(amount, caller, node_id, held, plan_pld)
            if held is not None and not bound.guarantee.fits_in(self.budget):
                coarse_bound = self._trial_bound(amount, caller, node_id, None, plan_pld)
                if _by_epsilon(coarse_bound) < _by_epsilon(bound):
                    bound, held = coarse_bound, None
            if not bound.guarantee.fits_in(self.budget):
                left = self._global_bound().guarantee
                raise BudgetExceededError(
                    f"Reserving {amount} for {caller or 'this call'} in scope "
                    f"{self._nodes[node_id].path!r} would bring dataset {self.dataset!r} to "
                    f"{bound.guarantee}, over its budget {self.budget}: "
                    f"{left_of(self.budget, left)} is left. Lower epsilon; the budget is the "
                    "dataset's for life, and its rows cannot be charged to another dataset. "
                    "Nothing was charged."
                )
            payload: dict[str, object] = {
                "id": None,
                "epsilon": eps_text(amount.epsilon),
                "delta": amount.delta,
                "caller": caller,
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "created": time.time(),
                "scope_id": node_id,
            }
            if held is not None and held != coarse:  # the cost says more than the amount
                payload["cost"] = held.to_payload()
            event = self._append("reserve", payload)
            rid = int(event.payload["id"])
            self._reservations[rid].pld = plan_pld
            # tied to this process's life before it is committed (a PostgreSQL lock)
            self._store.hold_reservation(rid)
        return rid

    def _trial_bound(
        self,
        amount: Guarantee,
        caller: str,
        node_id: int,
        cost: Cost | None = None,
        plan_pld: tuple[bytes, PLDPair] | None = None,
    ) -> Bound:
        """The bound the budget must cover with a stand-in reservation at ``node_id``:
        ``cost`` where given, else ``amount`` (and for the PLD view, the plan's PLD
        where given, else ``amount``). The stand-in is removed again."""
        trial = ReservationState(-1, amount, "open", caller, 0, "", 0.0, node_id, cost, plan_pld)
        self._reservations[-1] = trial
        self._place_reservation(node_id, -1, amount)
        try:
            return self._global_bound(need=self.budget)
        finally:
            self._unplace_reservation(node_id, -1)
            del self._reservations[-1]

    def _close_reservation(self, rid: int) -> None:
        if self._frozen is not None:
            return
        with self._write():
            if self._reservations[rid].status == "open":
                self._append("close", {"id": rid})
        self._store.release_reservation(rid)
