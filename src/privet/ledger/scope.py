"""Scopes: the nodes of a ledger's scope tree, where charges are made."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any

import numpy as np

from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    PrivetError,
    RelationMismatchError,
)
from privet.ledger.composition import check_sampling
from privet.ledger.entries import Claim, Entry, as_entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.records import ChargeLabels, ChargeRecord
from privet.ledger.relation import NeighbouringRelation, check_relation

if TYPE_CHECKING:  # a scope belongs to its ledger; this module never imports it
    from privet.ledger.history import History as Ledger

#: The most parts one partition may have (a guard against a runaway argument).
MAX_PARTS = 1_000_000

#: The labels of :meth:`Scope.can_charge`'s trial charge, which is never stored.
DRY_RUN = ChargeLabels("dry-run", None, "", "", None)


class Scope:
    """A node of the ledger's scope tree: one set of records.

    Charges in a scope compose sequentially. :meth:`partition` splits the
    records into disjoint parts (parallel composition); :meth:`subsample` draws
    a random subset (amplification).
    """

    __slots__ = ("_id", "_ledger")

    def __init__(self, ledger: Ledger, node_id: int) -> None:
        self._ledger = ledger
        self._id = node_id

    @property
    def id(self) -> int:
        return self._id

    @property
    def path(self) -> str:
        return self._ledger._nodes[self._id].path

    @property
    def label(self) -> str:
        return self._ledger._nodes[self._id].label

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def __repr__(self) -> str:
        return f"Scope({self.path!r})"

    def __copy__(self) -> Scope:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Scope:
        # A copy of a scope must charge the same budget (scikit-learn's clone
        # deep-copies parameters that are not estimators).
        return self

    def check_schema(self, schema: Any) -> None:
        """Refuse data whose public schema is not the dataset's (see :meth:`Ledger.check_schema`)."""
        self._ledger.check_schema(schema)

    def partition(self, labels: int | Sequence[str], *, stable: bool = False) -> tuple[Scope, ...]:
        """Split this scope's records into disjoint parts.

        Parameters
        ----------
        labels : int or sequence of str
            The number of parts, or one label per part.
        stable : bool, default=False
            True when the part a record goes to is fixed by who holds it and
            not by its values (horizontal partitioning over data owners). Under
            replace-one neighbours a non-stable partition costs its two
            costliest parts, since a replaced record can change part.
        """
        if isinstance(labels, bool | str | bytes | Mapping | Set) or not isinstance(
            labels, numbers.Integral | Iterable
        ):
            raise InvalidParameterError(
                f"A partition takes a number of parts or a sequence of labels, got {labels!r}; "
                "pass e.g. 2 or ['left', 'right'] (a string is one label, not a sequence; a "
                "dict or a set has no order for its parts)."
            )
        if not isinstance(stable, bool | np.bool_):
            raise InvalidParameterError(
                f"The 'stable' parameter of partition must be True or False, got {stable!r} of "
                f"type {type(stable).__name__}."
            )
        if isinstance(labels, numbers.Integral):  # int, numpy.int64, ...
            labels = int(labels)
            if labels < 1:
                raise InvalidParameterError(f"A partition needs at least one part, got {labels}.")
            if labels > MAX_PARTS:
                raise InvalidParameterError(
                    f"A partition has at most {MAX_PARTS} parts, got {labels}."
                )
            names = [str(i) for i in range(labels)]
        else:
            names = [str(x) for x in labels]
            if len(names) > MAX_PARTS:
                raise InvalidParameterError(
                    f"A partition has at most {MAX_PARTS} parts, got {len(names)}."
                )
            if not names:
                raise InvalidParameterError("A partition needs at least one part label.")
            if len(set(names)) != len(names):
                raise InvalidParameterError(f"Partition labels must be distinct, got {names!r}.")
        return self._ledger._add_group(self._id, "partition", names, stable=bool(stable))

    def subsample(self, rate: float, method: str = "poisson") -> Scope:
        """A random subset of this scope's records, drawn with ``method`` at ``rate``.

        ``"poisson"``: each record independently with probability ``rate``
        (add/remove ledgers). ``"without_replacement"``: m of the n records,
        ``rate = m / n`` (replace-one ledgers), with m fixed: a sample whose size
        follows the size of a part (which a replaced record can change) is not
        covered. A record that leaves or enters this scope (across a partition
        above) swaps places in the sample with another record, so the sample
        is then amplified as the cost of two records.
        """
        if isinstance(rate, bool | np.bool_) or not isinstance(rate, numbers.Real):
            raise InvalidParameterError(
                f"The sampling rate of subsample must be a number in (0, 1], got {rate!r} of "
                f"type {type(rate).__name__}."
            )
        if not isinstance(method, str):
            raise InvalidParameterError(
                f"The sampling method of subsample must be 'poisson' or 'without_replacement', "
                f"got {method!r}."
            )
        check_sampling(rate, method, self._ledger.relation)
        (child,) = self._ledger._add_group(
            self._id, "subsample", [f"{method}@{float(rate):g}"], rate=float(rate), method=method
        )
        return child

    def charge(
        self,
        entry: Entry | Guarantee | float,
        *,
        mechanism: str,
        sensitivity: float | None = None,
        relation: NeighbouringRelation | str | None = None,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> ChargeRecord:
        """Check the budget and commit one charge; raise before committing if it does not fit.

        Call this *before* releasing the value the charge pays for.
        """
        entry = as_entry(entry)
        check_relation(self._ledger.relation, relation, f"Mechanism {mechanism!r}")
        labels = check_charge_args(mechanism, sensitivity, caller, step, claim)
        return self._ledger._charge(self._id, entry, labels, commit=True)

    def can_charge(self, entry: Entry | Guarantee | float) -> bool:
        """Dry run of :meth:`charge`: whether it would fit now. Charges nothing."""
        try:
            self._ledger._charge(self._id, as_entry(entry), DRY_RUN, commit=False)
        except BudgetExceededError:
            return False
        return True

    def spent(self) -> Guarantee:
        """Composed cost of everything charged in this scope and below."""
        return self._ledger._subtree_bound(self._id).guarantee

    def run(
        self,
        measurement: Any,
        data: Any,
        d_in: Any,
        *,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> Any:
        """Charge an OpenDP measurement's privacy map at ``d_in``, then invoke it.

        Pure DP (MaxDivergence), zCDP (ZeroConcentratedDivergence) and
        approximate DP (Approximate(MaxDivergence)) measurements are accepted.
        """
        from privet.ledger.opendp_bridge import check_measurement_input, entry_for_measurement

        d_in = _check_run_args(measurement, d_in)
        try:
            entry, mechanism = entry_for_measurement(measurement, d_in, self._ledger.relation)
        except PrivetError:
            raise
        except Exception as exc:  # OpenDP's own exception types, from its privacy map
            raise InvalidParameterError(
                f"OpenDP could not compute the measurement's privacy map at d_in={d_in!r} "
                f"({type(exc).__name__}: {str(exc).strip()[:200]}); check d_in and the "
                "measurement's parameters. Nothing was charged."
            ) from None
        metric = str(measurement.input_metric)
        part = self._ledger.unstable_part_above(self._id)
        if part is not None and ("ChangeOne" in metric or "Hamming" in metric):
            raise RelationMismatchError(
                f"The OpenDP measurement's input metric {metric} bounds a changed record, "
                f"not a record entering or leaving scope {part!r}, which a replaced record "
                "can do in that non-stable partition. Build it on SymmetricDistance (with "
                "d_in=2) or charge it in a stable partition. Nothing was charged."
            )
        check_measurement_input(measurement, data)
        self.charge(entry, mechanism=mechanism, caller=caller, step=step, claim=claim)
        return measurement(data)


def _check_run_args(measurement: Any, d_in: Any) -> Any:
    """Refuse what :meth:`Scope.run` cannot charge: not a Measurement, or a d_in that is
    not a finite number >= 0 of the measurement's distance type. Returns d_in as that type."""
    if not (
        all(hasattr(measurement, a) for a in ("map", "output_measure", "input_metric"))
        and callable(measurement)
    ):
        raise InvalidParameterError(
            f"Scope.run charges an OpenDP Measurement (it has a privacy map into a privacy "
            f"measure), got {type(measurement).__name__}; a Transformation releases nothing "
            "private on its own: chain it with a measurement "
            "(transformation >> dp.m.then_laplace(...))."
        )
    integral = str(getattr(measurement, "input_distance_type", "")).startswith(("u", "i"))
    if (
        isinstance(d_in, bool | np.bool_)
        or not isinstance(d_in, numbers.Real)
        or not math.isfinite(d_in)
        or d_in < 0
        or (integral and float(d_in) != int(d_in))
    ):
        kind = "a whole number of records >= 0" if integral else "a finite number >= 0"
        raise InvalidParameterError(
            f"d_in, the distance between neighbouring inputs of the measurement, must be "
            f"{kind} (its input distance type is {measurement.input_distance_type}); got "
            f"{d_in!r}. Pass e.g. d_in=1. Nothing was charged."
        )
    return int(d_in) if integral else float(d_in)


def check_charge_args(
    mechanism: Any, sensitivity: Any, caller: Any, step: Any, claim: Any
) -> ChargeLabels:
    """Refuse a charge's descriptive arguments before anything is checked or stored.

    Returns them as the :class:`ChargeLabels` the charge is recorded with.
    """
    if not isinstance(mechanism, str) or not mechanism:
        raise InvalidParameterError(
            f"A charge needs the name of its mechanism as a non-empty string, got {mechanism!r}."
        )
    for name, value in (("caller", caller), ("step", step)):
        if not isinstance(value, str):
            raise InvalidParameterError(f"A charge's {name} must be a string, got {value!r}.")
    if claim is not None and not isinstance(claim, Claim):
        raise InvalidParameterError(
            f"claim must be a privet.ledger.Claim (epsilon, delta, source, note), got "
            f"{claim!r}; e.g. claim=Claim(0.5, source='paper, Thm. 2')."
        )
    if sensitivity is not None:
        if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Real):
            raise InvalidParameterError(
                f"A charge's sensitivity must be a number or None, got {sensitivity!r}."
            )
        if not math.isfinite(sensitivity) or sensitivity < 0:
            raise InvalidParameterError(
                f"A charge's sensitivity must be finite and >= 0, got {sensitivity!r}."
            )
    return ChargeLabels(mechanism, sensitivity, caller, step, claim)
