"""The privacy ledger: the budget of one dataset, and every charge against it.

Every private data access is charged to a :class:`~privet.ledger.Scope`. Scopes
form a tree that mirrors how the data is split (see :mod:`privet.ledger.composition`
for the rules); the ledger composes the tree and refuses any charge or reservation
that would take the total over the budget *before* the caller touches data.

Reservations. ``with ledger.reserve(plan):`` sets aside the planned cost. While
the reservation is open, charges made inside it are checked against the
reservation, and everyone else sees the full reserved amount as spent. When the
block exits (normally or by an exception) the reservation closes: the charges
made in it stay (charged means released), the unused rest returns to the budget.

Storage. Every change is an event written to the ledger's store
(:mod:`privet.ledger.store`) inside one exclusive transaction, after reading
what other processes committed: check and commit are one step, so concurrent
processes can never overspend. Events form a hash chain
(:mod:`privet.ledger.chain`) that is verified whenever they are read.

Copies. ``copy.deepcopy`` and scikit-learn's ``clone`` return the ledger itself,
so every copy of an estimator charges the same budget. A file ledger pickles as
its path and dataset and reopens the same file in another process; an in-memory
ledger pickles as a read-only copy that refuses to charge (another process would
otherwise spend a second budget): use a ledger file to share a budget.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from typing import Any

from privet.errors import (
    InvalidParameterError,
    LedgerCorruptError,
    PrivetError,
    SchemaError,
)
from privet.ledger.budget import check_budget
from privet.ledger.composition import Bound, Cost, best_guarantee, view_bounds
from privet.ledger.document import events_from_json, to_document
from privet.ledger.entries import Claim, Entry, as_entry
from privet.ledger.guarantee import Guarantee, check_delta
from privet.ledger.history import dataset_name, genesis
from privet.ledger.locations import open_store
from privet.ledger.plan import PlanNode
from privet.ledger.pld import PLDTooLargeError
from privet.ledger.pld_tree import PLDPair, plan_pair
from privet.ledger.records import ChargeRecord
from privet.ledger.relation import NeighbouringRelation, check_relation
from privet.ledger.reservation import Reservation
from privet.ledger.scope import Scope, check_charge_args
from privet.ledger.store import MemoryStore
from privet.ledger.tree import ABANDON_MARK, ALL
from privet.ledger.writes import CheckedWrites


class Ledger(CheckedWrites):
    """A privacy budget for one dataset, and everything charged against it.

    Parameters
    ----------
    budget : Guarantee or float
        The total (epsilon, delta) the dataset may ever spend through this ledger.
        ``Guarantee.unbounded()`` for a paper-faithful run that accepts any loss;
        an infinite epsilon given any other way is refused.
    relation : {"add_remove", "replace_one"}, default="add_remove"
        The neighbouring relation every charge is analysed under.
    dataset : str, default="dataset"
        Name of the dataset, the label of the root scope (surrounding whitespace
        is removed).

    Examples
    --------
    >>> from privet.ledger import Ledger, Guarantee
    >>> led = Ledger(budget=Guarantee(1.0))
    >>> left, right = led.root.partition(2)
    >>> _ = left.charge(Guarantee(0.3), mechanism="laplace")
    >>> _ = right.charge(Guarantee(0.5), mechanism="laplace")
    >>> led.spent()
    Guarantee(epsilon=0.5, delta=0.0)
    """

    def __init__(
        self,
        budget: Guarantee | float,
        *,
        relation: NeighbouringRelation | str = NeighbouringRelation.ADD_REMOVE,
        dataset: str = "dataset",
    ) -> None:
        budget = check_budget(budget)
        rel = NeighbouringRelation.parse(relation)
        name = dataset_name(dataset)
        self._attach(MemoryStore(name))
        with self._write():
            self._append("dataset", genesis(name, budget, rel, root=1))

    # ------------------------------------------------------------------ public
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        dataset: str,
        budget: Guarantee | float | None = None,
        *,
        relation: NeighbouringRelation | str | None = None,
        timeout: float = 60.0,
        schema: Any = None,
    ) -> Ledger:
        """A durable ledger in a SQLite file or a PostgreSQL database, shared by all who open it.

        ``path`` is a file path (SQLite: the processes of one host) or a
        ``postgresql://USER@HOST/DB`` URL (PostgreSQL: processes on many hosts; see
        :mod:`privet.ledger.postgres_store`). Both keep the same ledger.

        The first open of ``dataset`` in the file needs ``budget`` (and fixes
        ``relation``, default add/remove); later opens may omit them, and must
        agree with the stored values if they give them. The file's integrity
        and its hash chain are checked on open; a damaged or edited file raises
        :class:`~privet.errors.LedgerCorruptError`. ``timeout`` (seconds) is how
        long a write waits for another process's lock before
        :class:`~privet.errors.LedgerBusyError`. ``schema`` (a
        :class:`privet.data.Schema`) is checked with :meth:`check_schema`.
        """
        name = dataset_name(dataset)
        if budget is not None:
            budget = check_budget(budget)
        rel = None if relation is None else NeighbouringRelation.parse(relation)
        store = open_store(path, name, timeout)
        led = cls.__new__(cls)
        led._attach(store)
        try:
            led._open_dataset(budget, rel)
            if schema is not None:
                led.check_schema(schema)
        except BaseException:
            store.close()
            raise
        return led

    def _open_dataset(self, budget: Guarantee | None, rel: NeighbouringRelation | None) -> None:
        where = self._store.describe()
        self._load()
        if self._seq < 0:
            with self._write():
                if self._seq < 0:  # nobody created it while we waited for the lock
                    if budget is None:
                        raise InvalidParameterError(
                            f"Dataset {self._store.dataset!r} has no budget in {where} yet; "
                            "pass budget=Guarantee(epsilon, delta) the first time you open it."
                        )
                    root = self._store.new_root()  # type: ignore[attr-defined]
                    payload = genesis(
                        self._store.dataset,
                        budget,
                        rel or NeighbouringRelation.ADD_REMOVE,
                        root=root,
                    )
                    self._append("dataset", payload)
                    return
        if budget is not None and budget != self.budget:
            raise InvalidParameterError(
                f"Dataset {self.dataset!r} in {where} has budget {self.budget}, not {budget}; "
                "a lifetime budget cannot be changed. Omit budget= to use the stored one (a "
                "new dataset name is for other rows: these cannot move to another budget)."
            )
        if rel is not None and rel is not self.relation:
            raise InvalidParameterError(
                f"Dataset {self.dataset!r} in {where} uses {self.relation.label} neighbours, "
                f"not {rel.label}; omit relation= or use a new dataset name."
            )

    @property
    def path(self) -> str | None:
        """The ledger file's path or database URL (None for an in-memory ledger)."""
        return getattr(self._store, "path", None) or getattr(self._store, "url", None)

    def close(self) -> None:
        """Close the ledger file (nothing to do in memory)."""
        with self._lock:
            self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify(self) -> int:
        """Re-read every stored event and check the hash chain and the stored rows.

        Returns the number of events verified; raises
        :class:`~privet.errors.LedgerCorruptError` if the store was damaged or
        edited outside privet (a raw ``UPDATE`` of a budget, a deleted charge).
        """
        with self._lock, self._store.snapshot():
            events = self._store.events_after(-1)
            self._verify(events, "", final=True)
            self._store.check_rows(events)
        return len(events)

    def check_schema(self, schema: Any) -> None:
        """Record the dataset's public schema the first time; refuse a different one later.

        ``schema`` is a :class:`privet.data.Schema` (its ``fingerprint()``) or a
        fingerprint string. A learner calls this at ``fit`` so that rows of one
        dataset cannot be charged to another dataset's budget.
        """
        fingerprint = schema if isinstance(schema, str) else getattr(schema, "fingerprint", None)
        if callable(fingerprint):
            fingerprint = fingerprint()
        if not isinstance(fingerprint, str) or not fingerprint:
            raise InvalidParameterError(
                f"check_schema takes a privet.data.Schema or its fingerprint, got {schema!r}."
            )
        with self._lock:
            self._refresh()
            if self._schema is None:
                with self._write():
                    if self._schema is None:
                        self._append("schema", {"fingerprint": fingerprint})
            if self._schema != fingerprint:
                raise SchemaError(
                    f"Dataset {self.dataset!r} was recorded with schema fingerprint "
                    f"{self._schema[:12]}..., but this data's schema has {fingerprint[:12]}...: "
                    "it is another dataset (or the same one with other attributes or "
                    "domains). Use the ledger of that dataset, or a new dataset name. "
                    "Nothing was charged."
                )

    def check_table(self, X: Any, y: Any = None, *, record: bool = True) -> None:
        """Refuse rows already charged to another dataset of this ledger file; remember them.

        ``X`` (a DataFrame or 2-D array, columns in the schema's order) and its labels
        ``y`` are the whole table a call trains on. Its salted fingerprint
        (:mod:`privet.ledger.fingerprint`: one keyed hash of the sorted row hashes,
        nothing computed from a single record is kept) is looked up among the tables
        recorded in the same file or database: the same rows, in any order, recorded
        for another dataset raise :class:`~privet.errors.SchemaError` naming that
        dataset. With ``record=True`` (the default) the table is then recorded for
        this dataset; ``record=False`` only checks. A learner calls this at ``fit``
        with the rows it is given. An in-memory ledger holds one dataset: nothing to
        compare with.

        It catches the same rows registered under a second name; a subset, a
        superset or a re-encoded copy has another fingerprint (docs/ledger.md).
        """
        from privet.ledger.fingerprint import row_digests, table_fingerprint

        if not self._store.shared:
            return
        digests = row_digests(X, y)
        with self._lock:
            if record:
                with self._store.transaction():
                    fingerprint = table_fingerprint(digests, self._store.table_salt(create=True))
                    owner = self._store.record_table(fingerprint)
                    self._refuse_other_owner(owner, len(digests))
                return
            with self._store.snapshot():
                salt = self._store.table_salt(create=False)
                owner = (
                    None
                    if salt is None
                    else self._store.table_owner(table_fingerprint(digests, salt))
                )
            self._refuse_other_owner(owner, len(digests))

    def _refuse_other_owner(self, owner: str | None, rows: int) -> None:
        from privet.ledger.fingerprint import clash_message

        if owner is not None and owner != self.dataset:
            raise SchemaError(clash_message(owner, self.dataset, self._store.describe(), rows))

    @property
    def schema_fingerprint(self) -> str | None:
        """The fingerprint recorded by :meth:`check_schema`, or None."""
        with self._lock:
            self._refresh()
            return self._schema

    @property
    def root(self) -> Scope:
        """The dataset's scope: the root of the scope tree."""
        return Scope(self, self._root_id)

    def spent(self, delta: float | None = None) -> Guarantee:
        """Composed cost of every charge committed so far (reservations not included).

        The smallest figure any of the ledger's accountants proves (basic, advanced,
        zCDP, Gaussian DP, Rényi DP, privacy loss distributions) at the budget's
        delta, or with ``delta``, the smallest epsilon proven within that delta. A
        report keeps a figure that spends less delta (pure DP, say) unless spending
        the budget's delta lowers epsilon by more than 0.1% (or that figure is over the
        budget and the PLD's, on which the checks admit, is not). A charge never makes the
        report a stronger guarantee (a smaller epsilon at a delta no larger); its
        epsilon alone can dip by up to 0.1% where it moves from such a figure to
        (epsilon, delta). ``spent(delta=...)`` never goes down (up to the PLD grid's
        rounding).
        """
        with self._lock:
            self._refresh()
            if delta is None:
                return self._bound_all().guarantee
            delta = check_delta(delta)
            return self._best(ALL, delta=delta, smallest=True).guarantee

    def bounds(self, delta: float | None = None) -> dict[str, Guarantee]:
        """What each accountant proves for every charge committed so far, at the
        budget's delta (or ``delta``): ``{"basic": ..., "advanced": ..., "pld": ...}``,
        only the accountants that apply. :meth:`spent` reports the smallest."""
        with self._lock:
            self._refresh()
            delta = self.budget.delta if delta is None else check_delta(delta)
            cost = self._cost(self._root_id, ALL)
            out = {b.method: b.guarantee for b in view_bounds(cost, delta)}
            eps = self._pld_epsilon(lambda: self._pld_node(self._root_id, ALL), delta)
            if math.isfinite(eps):
                out["pld"] = Guarantee(eps, delta)
            return out

    def spent_by(self, reservations: Iterable[Reservation]) -> Guarantee:
        """Composed cost of the charges made inside ``reservations``, open or closed.

        What one model has spent over several calls (its fit, then batches of
        private predictions) without the charges of anything else on this
        ledger. The ledger composes them over its scope tree, as for
        :meth:`spent`: charges in disjoint parts of a partition count once.
        """
        reservations = list(reservations)
        for r in reservations:
            if not isinstance(r, Reservation) or r._ledger is not self:
                raise InvalidParameterError(
                    f"spent_by takes reservations made by this ledger's reserve(), got {r!r} "
                    "(from another ledger, or not a reservation)."
                )
        ids = {r.id for r in reservations}
        with self._lock:
            self._refresh()
            keep = lambda rec: rec.reservation in ids  # noqa: E731
            cost = self._pair_filtered(self._root_id, keep)[1]
            bound = best_guarantee(cost, self.budget.delta)
            build = lambda: self._pld_node(self._root_id, None, keep)  # noqa: E731
            return self._with_pld(bound, build, self.budget.delta).guarantee

    def spent_bound(self) -> Bound:
        """Like :meth:`spent`, with the accountant that proved it."""
        with self._lock:
            self._refresh()
            return self._bound_all()

    def reserved(self) -> Guarantee:
        """Sum of the open reservations' amounts (basic composition).

        What they promise, added up; it can exceed what is left (and the budget) when
        reservations hold their plans' costs, which compose better than their amounts.
        """
        with self._lock:
            self._refresh()
            eps = math.fsum(r.amount.epsilon for r in self._open_reservations())
            delta = math.fsum(r.amount.delta for r in self._open_reservations())
            return Guarantee(eps, min(delta, 1 - 1e-16))

    def remaining(self) -> Guarantee:
        """What can still be charged: the budget less committed charges and open reservations."""
        with self._lock:
            self._refresh()
            used = self._global_bound().guarantee
            return Guarantee(
                max(0.0, self.budget.epsilon - used.epsilon)
                if math.isfinite(self.budget.epsilon)
                else math.inf,
                max(0.0, self.budget.delta - used.delta),
            )

    def plan_cost(
        self, plan: PlanNode | Guarantee | Entry | float, *, delta: float | None = None
    ) -> Guarantee:
        """The guarantee the ledger proves for a plan, without charging it.

        At the budget's delta; with ``delta``, the smallest epsilon the ledger proves for
        a plan (or one entry) within that delta, as :meth:`spent` does for committed
        charges. A bare :class:`Guarantee` is returned as it is.
        """
        if isinstance(plan, Guarantee):
            return plan
        if delta is not None:
            delta = check_delta(delta)
        if isinstance(plan, PlanNode):
            if delta is None:
                return self._plan_bound(plan, self.budget.delta).guarantee
            return self._plan_bound(plan, delta, smallest=True).guarantee
        entry = as_entry(plan)
        if delta is None:
            return entry.guarantee()
        bound = best_guarantee(Cost.of(entry), delta)
        return self._with_pld(
            bound, lambda: self.pld_composer.entry(entry), delta, check=True
        ).guarantee

    def _plan_bound(self, plan: PlanNode, delta: float, *, smallest: bool = False) -> Bound:
        """The smallest bound of a plan at ``delta``: its cost's views, or its PLD. With
        ``smallest``, the smallest epsilon wins even where it spends more delta."""
        cost = plan.cost(self.relation, delta=self.budget.delta)
        bound = best_guarantee(cost, delta)
        build = lambda: plan_pair(self.pld_composer, plan)  # noqa: E731
        return self._with_pld(bound, build, delta, check=smallest)

    def _plan_pld(self, plan: PlanNode | Guarantee | Entry | float) -> tuple[bytes, PLDPair] | None:
        """The plan's PLD (digest, pair), held by its reservation while it charges nothing."""
        if isinstance(plan, Guarantee):
            return None
        try:
            if isinstance(plan, PlanNode):
                return plan_pair(self.pld_composer, plan)
            return self.pld_composer.entry(as_entry(plan))
        except PLDTooLargeError:
            return None

    def _reservation_amount(self, plan: PlanNode | Guarantee | Entry | float) -> Guarantee:
        """What :meth:`reserve` sets aside: the plan's cost as an (epsilon, delta) amount.

        At the plan's own ``delta`` where it states one (never above the budget's,
        unless the budget is :meth:`Guarantee.unbounded`, which limits nothing),
        else at the budget's. Safety does not rest on this choice: every charge is
        checked against the whole tree of committed charges at the budget's delta.
        """
        if isinstance(plan, (Entry, int, float)) and not self.budget.is_unbounded:
            own = as_entry(plan).guarantee()
            if not own.fits_in(self.budget):  # a Gaussian with no (epsilon, delta) of its
                # own has epsilon = inf: held at its best guarantee at the budget's delta
                return best_guarantee(Cost.of(as_entry(plan)), self.budget.delta).guarantee
            return own
        target = getattr(plan, "delta", None)
        if target is None or not isinstance(plan, PlanNode):
            return self.plan_cost(plan)
        if not 0 < target < 1:
            raise InvalidParameterError(f"A plan's delta must be in (0, 1), got {target!r}.")
        if not self.budget.is_unbounded:
            target = min(float(target), self.budget.delta)
        return self._plan_bound(plan, float(target)).guarantee

    def _plan_curve(self, plan: PlanNode | Guarantee | Entry | float, amount: Guarantee) -> Cost:
        """The plan's own cost, every view of it, and ``amount`` as its basic view where
        it has none (:meth:`Cost.with_basic_view`): what a reservation checks and holds."""
        if isinstance(plan, PlanNode):
            cost = plan.cost(self.relation, delta=self.budget.delta)
        elif isinstance(plan, Guarantee):
            return Cost.of_guarantee(amount)
        else:
            cost = Cost.of(as_entry(plan))
        return cost.with_basic_view(amount)

    def reserve(
        self,
        plan: PlanNode | Guarantee | Entry | float,
        *,
        scope: Scope | None = None,
        caller: str = "",
        on_abandon: str = "release",
    ) -> Reservation:
        """Set aside a plan's cost; raise :class:`BudgetExceededError` if it does not fit.

        The check composes the plan's own cost (every view of it: Rényi, Gaussian DP)
        with what is spent, as its charges will be composed, so a second Gaussian fit
        is accepted whenever its charges would fit. While open, the reservation holds
        that cost for every process (the budget file stores it), less what it has
        charged. Its (epsilon, delta) amount (:attr:`Reservation.amount`) is what it
        promises the caller: the charges made in it must fit in it. With
        ``on_abandon="charge"`` the reservation is admitted and held as its amount,
        because an abandoned rest is charged as an (epsilon, delta) release.

        Use as a context manager around the code that reads the private data.
        The reservation sits in ``scope`` (default: the root), so reservations in
        disjoint parts of a partition compose in parallel like the charges they
        stand for.

        ``on_abandon`` says what happens when the reserving process dies with the
        reservation open (found by the next writer on the same host):
        ``"release"`` returns its unused rest to the budget; ``"charge"`` charges
        that rest, for work whose results may already be out (an MPC run whose
        parties open values before the host charges them).
        """
        if on_abandon not in ("release", "charge"):
            raise InvalidParameterError(
                f"on_abandon must be 'release' or 'charge', got {on_abandon!r}."
            )
        amount = self._reservation_amount(plan)
        if not isinstance(caller, str):
            raise InvalidParameterError(f"caller must be a string, got {caller!r}.")
        if caller.endswith(ABANDON_MARK) or str(getattr(plan, "caller", "")).endswith(ABANDON_MARK):
            raise InvalidParameterError(
                f"caller must not end with {ABANDON_MARK!r}, the mark of a reservation "
                "charged in full if abandoned; pass on_abandon='charge' instead."
            )
        if not caller and hasattr(plan, "caller"):
            caller = str(plan.caller)

        if scope is not None and not isinstance(scope, Scope):
            raise InvalidParameterError(f"scope must be a Scope of this ledger, got {scope!r}.")
        if scope is not None and scope.ledger is not self:
            raise InvalidParameterError(
                f"The scope {scope.path!r} belongs to another ledger; reserve on its own ledger."
            )
        node_id = self._root_id if scope is None else scope.id
        if on_abandon == "charge":
            # stored in the caller text, which every store and the JSON document keep
            caller = f"{caller}{ABANDON_MARK}"
        # A reservation charged in full if abandoned is admitted and held as its amount:
        # that rest is charged as an (epsilon, delta) release, which must fit then too.
        cost = (
            self._plan_curve(plan, amount) if on_abandon == "release" else Cost.of_guarantee(amount)
        )
        plan_pld = self._plan_pld(plan) if on_abandon == "release" else None
        rid = self._reserve(amount, cost, caller, node_id, plan_pld)
        return Reservation(self, rid)

    def charge_many(
        self,
        charges: Iterable[tuple[Scope, Entry | Guarantee | float]],
        *,
        mechanism: str,
        sensitivity: float | None = None,
        relation: NeighbouringRelation | str | None = None,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> list[ChargeRecord]:
        """Charge several scopes of this ledger at once: all or nothing.

        The same as calling :meth:`Scope.charge` on each ``(scope, entry)`` pair,
        with one budget check for the whole batch and one write transaction: a
        tree's leaves, or every node of one tree level, are released together.
        If the batch does not fit, :class:`BudgetExceededError` is raised and
        nothing is charged. One check suffices because every composed cost grows
        with each charge added, so a batch that fits has every prefix fitting.
        """
        items: list[tuple[int, Entry]] = []
        for pair in charges:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise InvalidParameterError(
                    f"charge_many takes (scope, entry) pairs, got {pair!r}."
                )
            scope, entry = pair
            if not isinstance(scope, Scope) or scope.ledger is not self:
                raise InvalidParameterError(
                    f"charge_many charges scopes of this ledger only, got {scope!r}."
                )
            items.append((scope.id, as_entry(entry)))
        check_relation(self.relation, relation, f"Mechanism {mechanism!r}")
        labels = check_charge_args(mechanism, sensitivity, caller, step, claim)
        if not items:
            return []
        return self._charge_many(items, labels)

    @property
    def charges(self) -> list[ChargeRecord]:
        """Every committed charge, oldest first."""
        with self._lock:
            self._refresh()
            return [self._charges[k] for k in sorted(self._charges)]

    def charge_rows(self) -> list[dict[str, Any]]:
        """Every committed charge as a flat row, oldest first (:meth:`ChargeRecord.to_row`).

        What a regulator's spreadsheet wants: ``pandas.DataFrame(ledger.charge_rows())``
        has one row per charge with its time, caller, step, scope, the (ε, δ) proven
        for it alone at the budget's δ, its noise's parameters (σ and sensitivity, ρ, μ)
        and the paper's claim. ``privet ledger history`` prints these rows.
        """
        delta = self.budget.delta
        return [c.to_row(self.dataset, delta) for c in self.charges]

    def claims(self) -> list[ChargeRecord]:
        """The charges that carry a paper's claim, for claimed-vs-proven tables."""
        return [c for c in self.charges if c.claim is not None]

    def report(
        self, *, max_parts: int | None = 3, max_depth: int | None = None, collapse: bool = True
    ) -> Any:
        """A rich renderable of the scope tree with costs, charges and claims.

        ``max_parts`` costliest parts of each partition are shown (None: all);
        ``max_depth`` (number of nested scopes) cuts deep trees; ``collapse`` shows
        repeated sibling scopes and charges of the same kind once, with how many
        there are (:mod:`privet.ledger.report`); ``collapse=False`` shows each.
        """
        from privet.ledger.report import render_tree

        with self._lock:
            self._refresh()
            return render_tree(self, max_parts=max_parts, max_depth=max_depth, collapse=collapse)

    def print_report(self, **kwargs: Any) -> None:
        from rich.console import Console

        Console().print(self.report(**kwargs))

    def to_json(self) -> str:
        """Everything in the ledger as JSON; :meth:`from_json` restores it exactly."""
        with self._lock:
            self._refresh()
            return json.dumps(to_document(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """An in-memory ledger with exactly the content of :meth:`to_json`'s output.

        A malformed document raises :class:`~privet.errors.LedgerCorruptError`
        (or InvalidParameterError when it is not a ledger document at all).
        """
        if not isinstance(text, str | bytes | bytearray):
            raise InvalidParameterError(
                f"Ledger.from_json takes the JSON text of to_json(), got {type(text).__name__}."
            )
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise InvalidParameterError(f"Not a privet ledger JSON document: {exc}.") from None
        if not isinstance(data, dict) or data.get("format") != "privet-ledger":
            raise InvalidParameterError(
                "Not a privet ledger JSON document (missing format 'privet-ledger')."
            )
        if data.get("version") != 1:
            raise LedgerCorruptError(
                f"Ledger JSON version {data.get('version')!r} is not one this privet reads (1)."
            )
        led = cls.__new__(cls)
        try:
            events = events_from_json(data)
            led._attach(MemoryStore(dataset_name(data["dataset"])))
            with led._write():
                for kind, payload in events:
                    led._append(kind, payload)
        except PrivetError as exc:
            if isinstance(exc, LedgerCorruptError):
                raise
            raise LedgerCorruptError(f"Malformed privet ledger JSON document: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
            raise LedgerCorruptError(
                f"Malformed privet ledger JSON document ({type(exc).__name__}: {exc}); "
                "it was damaged or edited. Restore it from to_json()'s output."
            ) from None
        return led

    # ------------------------------------------------------------------ copies
    def __copy__(self) -> Ledger:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Ledger:
        # Every copy of an estimator must charge the same budget: scikit-learn's
        # clone deep-copies parameters that are not estimators.
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        args = self._store.reopen_args()
        if args is not None:
            # A file ledger unpickles by reopening the same file and dataset.
            return (_reopen, args)
        # An in-memory ledger unpickles as a read-only copy: charging it in
        # another process would spend a second budget.
        return (_frozen_copy, (self.to_json(),))

    def __repr__(self) -> str:
        if self.path is not None:
            kind = "PostgresLedger" if hasattr(self._store, "url") else "SQLiteLedger"
            return (
                f"{kind}({self._store.describe()}, dataset={self.dataset!r}, budget={self.budget})"
            )
        return (
            f"{type(self).__name__}(dataset={self.dataset!r}, budget={self.budget}, "
            f"relation={self.relation.value!r}, spent={self.spent()})"
        )

    def iter_scopes(self) -> Iterator[Scope]:
        for k in sorted(self._nodes):
            yield Scope(self, k)


def _reopen(path: str, dataset: str, timeout: float) -> Ledger:
    return Ledger.open(path, dataset, timeout=timeout)


def _frozen_copy(text: str) -> Ledger:
    led = Ledger.from_json(text)
    led._frozen = (
        f"This is a read-only copy of the in-memory ledger of dataset {led.dataset!r}, made "
        "by pickling it (e.g. for a worker process of cross_val_score(n_jobs>1)); charging "
        "it would spend a second budget. Share one budget through a ledger file: "
        "Ledger.open(path, dataset, budget). Nothing was charged."
    )
    return led


__all__ = ["ChargeRecord", "Ledger", "PrivetError", "Reservation", "Scope"]
