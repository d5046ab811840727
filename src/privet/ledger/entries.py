"""Ledger entries: one immutable record per kind of release.

Each entry states exactly what the accountant needs and its docstring gives the
math. Three views of the privacy loss are exposed where they exist:

* ``epsilon``/``delta``: an (epsilon, delta)-DP statement of the release alone
  (``epsilon = inf`` when the release has none, e.g. zCDP-only);
* ``rho``: a zero-concentrated DP (zCDP) parameter, or ``None``.

Stored entries never change meaning: a new analysis gets a new class, never a
new meaning for an old field. A stored entry carries its class name and the
module that defines it (``{"type": "NoisyMax", "module": "privet.mechanisms.entries",
...}``); reading it resolves the name through the registry that entry classes join
when their module is imported (:func:`register_entry`), importing the tagged module
first if needed. Only modules inside the ``privet`` package are imported that way,
so the ledger never imports the layers above it by name and a stored document
cannot make privet import arbitrary code.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Any

from privet.errors import InvalidParameterError, UnsupportedEntryError
from privet.ledger.guarantee import Guarantee, check_delta, check_epsilon, check_positive
from privet.ledger.pld import (
    BoundedRangeCurve,
    Curve,
    DiscreteGaussianCurve,
    GaussianCurve,
    LaplaceCurve,
    RandomisedResponse,
    RandomisedResponseProduct,
    ZCDPCurve,
)

_REGISTRY: dict[str, type[Entry]] = {}

# Rows written before entries carried their module (privet ledger format 1) name
# only the class: the classes defined outside this module at that time.
_LEGACY_MODULES = {
    "NoisyMax": "privet.mechanisms.entries",
    "DistributedLaplace": "privet.mechanisms.entries",
}


def _resolve(name: Any, module: Any) -> type[Entry]:
    """The entry class stored as ``name`` (defined in ``module``), importing it if needed."""
    if not isinstance(name, str) or not name:
        raise UnsupportedEntryError(f"A stored ledger entry has no valid type tag: {name!r}.")
    cls = _REGISTRY.get(name)
    if cls is not None:
        return cls
    if module is None:
        module = _LEGACY_MODULES.get(name)
    if isinstance(module, str) and (module == "privet" or module.startswith("privet.")):
        try:
            importlib.import_module(module)
        except ImportError:
            pass
        cls = _REGISTRY.get(name)
    if cls is None:
        raise UnsupportedEntryError(
            f"Unknown ledger entry type {name!r} (module {module!r}); this ledger was "
            "written by a newer or different privet. Upgrade privet to read it."
        )
    return cls


def register_entry(cls: type[Entry]) -> type[Entry]:
    """Make an entry class readable from stored ledgers (JSON, SQLite).

    Apply it outermost, after ``@dataclass(slots=True)`` has built the final class.
    """
    _REGISTRY[cls.__name__] = cls
    return cls


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """Base class of ledger entries."""

    @property
    def epsilon(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float | None:
        """zCDP parameter; pure epsilon-DP implies (epsilon^2/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
        if self.delta == 0.0 and math.isfinite(self.epsilon):
            return self.epsilon * self.epsilon / 2  # inf (never OverflowError) for huge epsilon
        return None

    def guarantee(self) -> Guarantee:
        return Guarantee(self.epsilon, self.delta)

    def privacy_curve(self) -> Curve | None:
        """The hockey-stick curve of a pair dominating this release's outputs on
        neighbouring datasets, for the PLD accountant (:mod:`privet.ledger.pld`); None
        for a release with no guarantee.

        By default the release is known by its (epsilon, delta) alone: randomised
        response at epsilon, with an infinite loss of probability delta, dominates every
        such release (Kairouz, Oh & Viswanath 2015, Thm. 2.1); with only a zCDP view,
        the Rényi-to-hockey-stick conversion at every order. Entries whose noise is
        known in full override it with that noise's exact curve.
        """
        eps, delta = self.epsilon, self.delta
        if math.isfinite(eps):
            return RandomisedResponse(eps, delta)
        rho = self.rho
        if rho is not None and math.isfinite(rho):
            return ZCDPCurve(rho)
        return None

    def _positive_fields(self, *names: str) -> None:
        """Store each named field as a finite float > 0, or raise (for ``__post_init__``)."""
        owner = type(self).__name__
        for name in names:
            object.__setattr__(self, name, check_positive(getattr(self, name), name, owner))

    def to_dict(self) -> dict[str, Any]:
        cls = type(self)
        fields = {name: getattr(self, name) for name in _field_names(cls)[0]}
        return {
            "type": cls.__name__,
            "module": cls.__module__,
            **{k: _enc(v) for k, v in fields.items()},
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Entry:
        if not isinstance(data, dict):
            raise UnsupportedEntryError(f"A stored ledger entry must be an object, got {data!r}.")
        data = dict(data)
        cls = _resolve(data.pop("type", None), data.pop("module", None))
        names, text = _field_names(cls)
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise UnsupportedEntryError(
                f"A stored {cls.__name__} entry has fields {unknown} that this privet does "
                "not know; upgrade privet to read it."
            )
        try:
            return cls(**{k: v if k in text else _dec(v) for k, v in data.items()})
        except TypeError as exc:
            raise UnsupportedEntryError(
                f"A stored {cls.__name__} entry is malformed ({exc}); the ledger document "
                "is damaged."
            ) from None


@functools.cache
def _field_names(cls: type) -> tuple[tuple[str, ...], frozenset[str]]:
    """An entry class's field names, and those of its text fields.

    "inf" in a float field is infinity; in a str field (a reason) it is text.
    Cached: entries are read back for every stored charge.
    """
    fields = dataclasses.fields(cls)
    return tuple(f.name for f in fields), frozenset(
        f.name for f in fields if f.type in ("str", str)
    )


def _enc(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "inf" if v > 0 else "-inf"
    return v


def _dec(v: Any) -> Any:
    if v == "inf":
        return math.inf
    return v


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class PureDP(Entry):
    """A release that is epsilon-DP by an argument stated elsewhere."""

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class ApproxDP(Entry):
    """A release that is (epsilon, delta)-DP."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class Laplace(Entry):
    """Adds Laplace(0, scale) noise per coordinate to a query of L1 sensitivity
    ``sensitivity``: epsilon = sensitivity / scale, delta = 0 (Dwork et al. 2006).
    Covers the discrete Laplace (two-sided geometric) with the same scale."""

    scale: float
    sensitivity: float

    def __post_init__(self) -> None:
        self._positive_fields("scale", "sensitivity")

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    def privacy_curve(self) -> Curve:
        """Randomised response at epsilon: the entry covers the discrete Laplace on any
        lattice and a vector query, and on a lattice of one step per sensitivity the
        discrete Laplace *is* randomised response. Record :class:`LatticeLaplace` to
        be charged the noise's own, smaller curve."""
        return RandomisedResponse(self.epsilon)


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class LatticeLaplace(Entry):
    """Adds Laplace(0, scale) noise to a query of L1 sensitivity ``sensitivity`` that
    changes in **one coordinate** between neighbours (a scalar, or a histogram under
    add/remove), the noise drawn as the discrete Laplace on the lattice
    ``granularity`` * Z (OpenDP's float Laplace rounds its input to 2^k and adds
    discrete noise there; ``granularity=0``: continuous noise). epsilon =
    sensitivity / scale, and its privacy loss distribution is the discrete Laplace's
    on that lattice (:class:`~privet.ledger.pld.LaplaceCurve`), with the shift
    rounded up to a whole number of lattice steps. A change spread over several
    coordinates is not covered: record :class:`Laplace` for it."""

    scale: float
    sensitivity: float
    granularity: float = 0.0

    def __post_init__(self) -> None:
        self._positive_fields("scale", "sensitivity")
        g = check_epsilon(self.granularity, "granularity")
        object.__setattr__(self, "granularity", g)

    @property
    def epsilon(self) -> float:
        if self.granularity > 0:
            return (
                math.ceil(self.sensitivity / self.granularity - 1e-12)
                * self.granularity
                / self.scale
            )
        return self.sensitivity / self.scale

    def privacy_curve(self) -> Curve:
        step = self.granularity / self.scale
        if step >= self.epsilon:  # one lattice step: randomised response
            return RandomisedResponse(self.epsilon)
        return LaplaceCurve(self.epsilon, step)


MAX_MOVED_COUNTS = 10**6
"""The most counts a :class:`DiscreteLaplaceCounts` entry may move (its curve's size grows
with the count)."""


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteLaplaceCounts(Entry):
    """Adds discrete Laplace noise of ``scale`` b, P(z) proportional to e^(-|z| / b),
    independently to every coordinate of an integer vector (counts) that changes
    between neighbours in at most ``sensitivity`` = k coordinates, **each by at most
    1** (L1 sensitivity k, L-infinity sensitivity 1; the mechanism states k for the
    ledger's relation, e.g. a record that adds 1 to k distinct counts: k under
    add/remove, 2k under replace-one).

    Pure epsilon = k / b, as :class:`Laplace` with sensitivity k (so a pure budget
    is charged the same). Its privacy curve is tighter: the loss of a product of
    independent coordinates is the sum of the coordinates' losses (the densities
    multiply), so the pair of the vector is the product of the coordinates' pairs.
    A coordinate that does not change gives identical distributions (loss 0); one
    shifted by +1 or -1 gives the discrete Laplace against itself shifted by one
    step, whose loss is +1/b where the output is on the side of the original value
    (probability e^(1/b) / (1 + e^(1/b))) and -1/b elsewhere: randomised response at
    1/b (:class:`~privet.ledger.pld.LaplaceCurve` at one lattice step). So the
    vector's pair is at most k randomised responses at 1/b composed, dominated by
    exactly k of them (a pair composed with one more non-trivial pair dominates
    it): :class:`~privet.ledger.pld.RandomisedResponseProduct` (1/b, k). ``rho`` is
    k / (2 b^2): each coordinate is (1/b)-DP, hence (1/(2 b^2))-zCDP (Bun & Steinke
    2016, Prop. 1.4), and Renyi divergences of independent products add.

    Not for a vector whose coordinate can move by 2 or more (record :class:`Laplace`
    or :class:`LatticeLaplace` then), nor for noise whose coordinates are dependent.
    """

    scale: float
    sensitivity: int

    def __post_init__(self) -> None:
        self._positive_fields("scale")
        k = self.sensitivity
        ok = (
            not isinstance(k, bool)
            and isinstance(k, numbers.Real)
            and math.isfinite(k)
            and k == int(k)
            and 1 <= k <= MAX_MOVED_COUNTS
        )
        if not ok:
            raise InvalidParameterError(
                "DiscreteLaplaceCounts: sensitivity is the number of counts that move "
                f"(each by at most 1), an integer in [1, {MAX_MOVED_COUNTS:,}]; got {k!r}. "
                "A count that moves by more is recorded as Laplace."
            )
        object.__setattr__(self, "sensitivity", int(k))

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    @property
    def rho(self) -> float:
        unit = 1.0 / self.scale
        return self.sensitivity * unit * unit / 2

    def privacy_curve(self) -> Curve:
        if self.sensitivity == 1:
            return RandomisedResponse(1.0 / self.scale)
        return RandomisedResponseProduct(1.0 / self.scale, self.sensitivity)


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class Gaussian(Entry):
    """Adds N(0, sigma^2) noise per coordinate to a query of L2 sensitivity
    ``sensitivity``: rho = sensitivity^2 / (2 sigma^2)-zCDP (Bun & Steinke 2016,
    Prop. 1.6), and exactly (sensitivity / sigma)-GDP (Dong, Roth & Su 2022): the
    continuous Gaussian only; record a discrete Gaussian as :class:`DiscreteGaussian`.
    ``epsilon``/``delta`` is an optional (epsilon, delta) statement of
    the same release (e.g. the analytic Gaussian calibration); without one, only
    the zCDP view is used and the ledger needs delta > 0 in its budget."""

    sigma: float
    sensitivity: float
    epsilon: float = math.inf
    delta: float = 0.0

    def __post_init__(self) -> None:
        self._positive_fields("sigma", "sensitivity")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.sensitivity / self.sigma > 1e100:
            raise InvalidParameterError(
                f"Gaussian: sensitivity/sigma = {self.sensitivity / self.sigma:g} gives no "
                "meaningful privacy (rho overflows); use a larger sigma."
            )

    @property
    def gdp_mu(self) -> float:
        """mu of Gaussian differential privacy: exactly (sensitivity / sigma)-GDP."""
        return self.sensitivity / self.sigma

    def privacy_curve(self) -> Curve:
        """The Gaussian's exact curve, mu = sensitivity / sigma (Dong, Roth & Su 2022)."""
        return GaussianCurve(self.sensitivity / self.sigma)

    @property
    def rho(self) -> float:
        # the ratio first: squaring a tiny sigma or a huge sensitivity alone under- or
        # overflows (5e-324 ** 2 == 0) although the ratio is an ordinary number
        ratio = self.sensitivity / self.sigma
        return ratio * ratio / 2  # inf, not OverflowError, past 1e154


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteGaussian(Gaussian):
    """Adds discrete Gaussian noise N_Z(0, sigma^2) (Canonne, Kamath & Steinke 2020)
    per coordinate to an integer query of L2 sensitivity ``sensitivity``: the same
    rho = sensitivity^2 / (2 sigma^2)-zCDP as :class:`Gaussian` (their Thm. 4), but
    *not* (sensitivity / sigma)-GDP, so it has no Gaussian-DP view and no
    sampled-Gaussian RDP curve under a Poisson subsample. At sigma = 1, sensitivity 1
    its exact epsilon at delta = 1e-5 is 4.430 (their Thm. 7), above the continuous
    Gaussian's 4.377; at sigma = 0.7, 6.956 against 6.652."""

    @property
    def gdp_mu(self) -> None:  # type: ignore[override]
        return None

    def privacy_curve(self) -> Curve:
        """Its own exact curve (:class:`~privet.ledger.pld.DiscreteGaussianCurve`: the
        worst integer shift within the L2 sensitivity), not the continuous one's."""
        return DiscreteGaussianCurve(self.sigma, self.sensitivity)


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class ZCDP(Entry):
    """A release that is rho-zCDP (e.g. an OpenDP measurement into
    ZeroConcentratedDivergence)."""

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_epsilon(self.rho, "rho"))

    @property
    def epsilon(self) -> float:
        return math.inf


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class Exponential(Entry):
    """Exponential mechanism (McSherry & Talwar 2007) over a finite candidate set
    with utility of sensitivity ``sensitivity``: probabilities proportional to
    exp(epsilon u / (2 sensitivity)), or exp(epsilon u / sensitivity) when the
    utility is monotone; epsilon-DP either way. Report-noisy-max with Gumbel
    noise is the same distribution and is recorded with this entry; it is also
    (epsilon^2/8)-zCDP (Cesar & Rogers 2021, bounded range). Report-noisy-max
    with exponential noise (permute-and-flip) is a different distribution: record
    it as :class:`PureDP`."""

    epsilon: float
    sensitivity: float
    monotone: bool = False

    def __post_init__(self) -> None:
        self._positive_fields("epsilon", "sensitivity")

    @property
    def rho(self) -> float:
        return self.epsilon * self.epsilon / 8

    def privacy_curve(self) -> Curve:
        """epsilon-bounded range (the log-ratio of any two outcomes' probabilities moves
        within an interval of width epsilon): :class:`~privet.ledger.pld.BoundedRangeCurve`
        (Dong, Durfee & Rogers 2020)."""
        return BoundedRangeCurve(self.epsilon)


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRandomiser(Entry):
    """Each record is perturbed by its owner with an epsilon-LDP randomiser
    (Piecewise, Duchi et al., randomised response, local Laplace). Local DP per
    record implies central epsilon-DP for the collection of reports."""

    epsilon: float
    randomiser: str = ""

    def __post_init__(self) -> None:
        self._positive_fields("epsilon")


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class NonPrivate(Entry):
    """An aggregate revealed in the clear (exact counts, exact errors, a split
    chosen on exact scores): no DP guarantee, epsilon = infinity. Only a ledger
    whose budget is :meth:`Guarantee.unbounded` accepts it."""

    reason: str

    @property
    def epsilon(self) -> float:
        return math.inf


@dataclass(frozen=True, slots=True)
class Claim:
    """What a paper claims for a step, recorded next to the proven value.

    The ledger never composes claims; they are shown side by side with what it
    proves so that a reader can see where the two differ and why.
    """

    epsilon: float
    delta: float = 0.0
    source: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": _enc(self.epsilon),
            "delta": self.delta,
            "source": self.source,
            "note": self.note,
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Claim:
        return Claim(_dec(data["epsilon"]), data["delta"], data["source"], data["note"])


def as_entry(value: Entry | Guarantee | float) -> Entry:
    """Accept a Guarantee or a bare epsilon where an entry is expected."""
    if isinstance(value, Entry):
        return value
    if isinstance(value, Guarantee):
        if value.delta == 0.0:
            return PureDP(epsilon=value.epsilon)
        return ApproxDP(epsilon=value.epsilon, delta=value.delta)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return PureDP(epsilon=value)
    raise InvalidParameterError(
        f"Expected a ledger Entry, a Guarantee or an epsilon, got {value!r} "
        f"of type {type(value).__name__}."
    )
