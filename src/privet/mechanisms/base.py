"""The shape every privet mechanism shares.

A mechanism is a small object that declares its neighbouring relation, its
sensitivity and its privacy guarantee, and draws noise only in ``__call__``,
after charging a ledger scope (the pattern of OpenDP's measurements: the map is
known before the data is touched). Parameters are validated in the constructor,
so a bad mechanism never reaches a charge; inputs are validated in ``__call__``
before the charge, so a refused call costs nothing.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import ChargeRecord, Claim, Entry, Guarantee, NeighbouringRelation
from privet.mechanisms import _validate as v
from privet.mechanisms import recorder
from privet.mechanisms.laws import Law


class Mechanism(abc.ABC):
    """Base class: ``relation``, ``sensitivity``, ``privacy_map``, ``check``, ``entry``.

    Subclasses set ``mechanism`` (the name recorded with each charge), store
    ``relation`` and ``sensitivity`` and implement :meth:`entry` and
    :meth:`privacy_map`.
    """

    mechanism: ClassVar[str] = "mechanism"
    relation: NeighbouringRelation
    sensitivity: float

    @abc.abstractmethod
    def entry(self) -> Entry:
        """The ledger entry one call of this mechanism charges."""

    @abc.abstractmethod
    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        """The guarantee for inputs at distance ``d_in`` (default: the sensitivity)."""

    def law(self) -> Law | None:
        """The law of one release given its input (:mod:`privet.mechanisms.laws`).

        What a white-box audit needs to compute the likelihood ratio of a release
        on two neighbouring inputs; None when the mechanism does not state one.
        """
        return None

    def _label(self, caller: str, step: str, mechanism: str | None = None) -> str:
        where = " ".join(p for p in (caller, step) if p)
        name = mechanism or self.mechanism
        return f"{name}: {where}" if where else name

    def guarantee(self) -> Guarantee:
        """The guarantee of one call on neighbouring inputs."""
        return self.entry().guarantee()

    @property
    def epsilon(self) -> float:
        return self.guarantee().epsilon

    def check(self, d_in: float, d_out: Guarantee | float) -> bool:
        """Whether inputs at distance ``d_in`` are protected at least as well as ``d_out``."""
        target = d_out if isinstance(d_out, Guarantee) else Guarantee(d_out)
        return self.privacy_map(d_in).fits_in(target)

    def _d_in(self, d_in: float | None) -> float:
        if d_in is None:
            return self.sensitivity
        if isinstance(d_in, bool):
            raise InvalidParameterError(f"d_in must be a number >= 0, got {d_in!r}.")
        try:
            value = float(d_in)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"d_in must be a number >= 0, got {d_in!r}.") from None
        if math.isnan(value) or value < 0:
            raise InvalidParameterError(f"d_in must be a number >= 0, got {d_in!r}.")
        return value

    def _charge(
        self,
        scope: Any,
        caller: str,
        step: str,
        claim: Claim | None,
        entry: Entry | None = None,
        mechanism: str | None = None,
    ) -> ChargeRecord:
        target = v.scope_of(scope, type(self).__name__)
        return target.charge(
            self.entry() if entry is None else entry,
            mechanism=mechanism or self.mechanism,
            sensitivity=self.sensitivity,
            relation=self.relation,
            caller=caller,
            step=step,
            claim=claim,
        )

    def __call__(
        self,
        values: Any,
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> Any:
        """Check ``values``, charge ``scope`` once, then return the noisy release.

        A refused input raises a :class:`~privet.errors.PrivetError` and charges
        nothing. The output has the input's shape (a scalar for a scalar).
        """
        return self._release(values, scope=scope, caller=caller, step=step, claim=claim)

    def _release(
        self,
        values: Any,
        *,
        scope: Any,
        caller: str,
        step: str,
        claim: Claim | None,
        validate: Callable[[Any], NDArray[Any]] | None = None,
        sample: Callable[[NDArray[Any]], Any] | None = None,
        mechanism: str | None = None,
        recorded: bool = True,
    ) -> Any:
        """Validate, then charge, then sample: the one order every release follows.

        The draw passes through the release recorder (:mod:`privet.mechanisms.recorder`)
        with the mechanism's :meth:`law`; a ``sample`` that records its own noisy
        values (``recorded=False``) does it itself.
        """
        arr = (validate or self._validate_input)(values)
        self._charge(scope, caller, step, claim, mechanism=mechanism)
        draw = sample or self._sample
        if recorded:
            label = self._label(caller, step, mechanism)
            out = recorder.release(self.law(), arr, lambda: draw(arr), label=label)
        else:
            out = draw(arr)
        if isinstance(out, tuple):  # several released arrays (e.g. answers and estimate)
            return out
        out = np.asarray(out)
        return out.item() if out.ndim == 0 else out

    def release_many(
        self,
        values: Sequence[Any],
        scopes: Sequence[Any],
        *,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
    ) -> list[Any]:
        """One release per ``(values[i], scopes[i])``, charged together, then drawn.

        The same as calling the mechanism once per pair, with every input checked
        first, then one :meth:`~privet.ledger.Ledger.charge_many` on the scopes'
        ledger (all or nothing, one budget check), then the draws. Used for a
        tree's leaves or one level of its nodes, each in its own scope.
        """
        owner = type(self).__name__
        targets = [v.scope_of(sc, owner) for sc in scopes]
        arrs = [self._validate_input(x) for x in values]
        if len(arrs) != len(targets):
            raise InvalidParameterError(
                f"{owner}.release_many needs one scope per input; got {len(arrs)} inputs "
                f"and {len(targets)} scopes."
            )
        if not arrs:
            return []
        ledger = targets[0].ledger
        entry = self.entry()
        ledger.charge_many(
            [(sc, entry) for sc in targets],
            mechanism=self.mechanism,
            sensitivity=self.sensitivity,
            relation=self.relation,
            caller=caller,
            step=step,
            claim=claim,
        )
        out = []
        label = self._label(caller, step)
        draws = recorder.release_many(
            self.law(), arrs, lambda: self._sample_many(arrs), label=label
        )
        for res in draws:
            res = np.asarray(res)
            out.append(res.item() if res.ndim == 0 else res)
        return out

    def _sample_many(self, arrs: list[NDArray[Any]]) -> list[Any]:
        """The releases of several validated inputs (after their charges)."""
        return [self._sample(a) for a in arrs]

    def _validate_input(self, values: Any) -> NDArray[Any]:
        """The checked input array (raises before anything is charged)."""
        return v.finite_array(values, "values", type(self).__name__)

    def _sample(self, arr: NDArray[Any]) -> Any:
        """The noisy release of a validated input (called only after the charge)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _sample")

    def _repr_extra(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        parts = {
            "relation": self.relation.value,
            "sensitivity": self.sensitivity,
            "guarantee": str(self.guarantee()),
            **self._repr_extra(),
        }
        body = ", ".join(
            f"{k}={val:.6g}" if isinstance(val, float) else f"{k}={val!r}"
            for k, val in parts.items()
        )
        return f"{type(self).__name__}({body})"


M = TypeVar("M", bound=Mechanism)


def calibrate(
    make_mechanism: Callable[[float], M],
    target: Guarantee | float,
    bounds: tuple[float, float],
    *,
    rtol: float = 1e-9,
    d_in: float | None = None,
) -> M:
    """The mechanism with the least noise whose privacy map fits in ``target``.

    ``make_mechanism(x)`` builds a mechanism from a noise parameter ``x`` (a
    scale, a sigma) whose privacy loss decreases as ``x`` grows; bisection over
    ``bounds`` returns the mechanism at the smallest ``x`` that still fits.
    Closed forms such as :func:`calibrate_laplace_scale` are preferred where
    they exist; this is for mechanisms without one.
    """
    goal = target if isinstance(target, Guarantee) else Guarantee(target)
    lo, hi = (float(b) for b in bounds)
    if not (0 < lo < hi and math.isfinite(hi)):
        raise InvalidParameterError(
            f"calibrate needs bounds 0 < lo < hi < inf on the noise parameter; got {bounds!r}."
        )
    best = make_mechanism(hi)
    if not best.privacy_map(d_in).fits_in(goal):
        raise InvalidParameterError(
            f"Even the noisiest mechanism in bounds ({best!r}) exceeds {goal}; raise the upper "
            "bound of the noise parameter."
        )
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        cand = make_mechanism(mid)
        if cand.privacy_map(d_in).fits_in(goal):
            hi, best = mid, cand
        else:
            lo = mid
    return best
