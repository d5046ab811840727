"""Attribute specs: the public domain of one column.

An attribute's domain is public knowledge (a data dictionary, a standard, the
definition of the feature), declared by the user or shipped with a dataset; it
is never read from the private data. Two kinds exist:

- :class:`Categorical` -- a finite, ordered list of categories. The position of
  a category in that list is its integer code.
- :class:`Numeric` -- a public range ``[lower, upper]`` cut by public interior
  edges into bins. Bin ``k`` is ``[edges[k], edges[k+1])`` and the last bin is
  closed on the right, so ``upper`` itself falls in the last bin. The bin index
  is the value's integer code.

Both are frozen, validated at construction, and raise
:class:`~privet.errors.SchemaError` when malformed.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from privet.errors import SchemaError

__all__ = ["Attribute", "Categorical", "CategoryValue", "Numeric", "attribute_from_dict"]

#: A category is a string, an integer or a boolean: the scalars that survive a
#: JSON round-trip exactly and hash without surprises (no NaN, no 0.1 + 0.2).
CategoryValue = str | int | bool


def _check_name(kind: str, name: object) -> str:
    if not isinstance(name, str) or not name:
        raise SchemaError(
            f"{kind} attribute name must be a non-empty string, got {name!r}; "
            "give every attribute a unique column name."
        )
    return name


def _category_type(value: object) -> type:
    # bool before int: bool is a subclass of int but a different kind of category.
    if isinstance(value, bool | np.bool_):
        return bool
    if isinstance(value, numbers.Integral):
        return int
    if isinstance(value, str):
        return str
    return type(value)


def _normalise_category(name: str, value: object) -> CategoryValue:
    kind = _category_type(value)
    if kind is bool:
        return bool(value)
    if kind is int:
        return int(value)  # numpy integers become Python ints (JSON, hashing)
    if kind is str:
        return str(value)
    raise SchemaError(
        f"Categorical {name!r}: category {value!r} has type {type(value).__name__}; "
        "categories must be str, int or bool. Use string labels, or a Numeric "
        "attribute for real-valued data."
    )


def _finite_real(owner: str, field: str, value: object) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise SchemaError(
            f"Numeric {owner!r}: {field} must be a real number, got {value!r} "
            f"({type(value).__name__}); give a finite float."
        )
    out = float(value)
    if not math.isfinite(out):
        raise SchemaError(
            f"Numeric {owner!r}: {field} must be finite, got {out!r}; public bounds "
            "have to be finite numbers (they bound the sensitivity of every query)."
        )
    return out


def _format_edge(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True, slots=True)
class Categorical:
    """A categorical attribute with a public, ordered list of categories.

    Parameters
    ----------
    name : str
        Column name.
    categories : sequence of str, int or bool
        The attribute's whole public domain, in code order: ``categories[k]``
        has code ``k``. Must be non-empty, unique, and of one type.

    Examples
    --------
    >>> Categorical("outlook", ["Sunny", "Overcast", "Rain"]).domain_size
    3
    """

    name: str
    categories: tuple[CategoryValue, ...]

    def __post_init__(self) -> None:
        name = _check_name("Categorical", self.name)
        raw = self.categories
        if isinstance(raw, str | bytes) or not isinstance(raw, Iterable):
            raise SchemaError(
                f"Categorical {name!r}: categories must be a list of values, got {raw!r}; "
                "pass e.g. categories=['a', 'b']."
            )
        cats = tuple(_normalise_category(name, v) for v in raw)
        if not cats:
            raise SchemaError(
                f"Categorical {name!r}: categories is empty; list every value the "
                "attribute can take (its public domain)."
            )
        kinds = {_category_type(c) for c in cats}
        if len(kinds) > 1:
            found = sorted(k.__name__ for k in kinds)
            raise SchemaError(
                f"Categorical {name!r}: categories mix the types {found}; use one type "
                "(e.g. all strings) so that values compare unambiguously."
            )
        seen: set[CategoryValue] = set()
        for c in cats:
            if c in seen:
                raise SchemaError(
                    f"Categorical {name!r}: category {c!r} appears more than once; "
                    "remove the duplicate."
                )
            seen.add(c)
        object.__setattr__(self, "categories", cats)

    @property
    def domain_size(self) -> int:
        """Number of categories (the number of integer codes)."""
        return len(self.categories)

    @property
    def labels(self) -> tuple[CategoryValue, ...]:
        """Value shown for each code: the categories themselves."""
        return self.categories

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description of this attribute."""
        return {"type": "categorical", "name": self.name, "categories": list(self.categories)}


#: Most bins Numeric.equal_width makes: every bin is a code the learners count over.
MAX_BINS = 1_000_000


@dataclass(frozen=True, slots=True)
class Numeric:
    """A numeric attribute with public bounds and public bin edges.

    Parameters
    ----------
    name : str
        Column name.
    lower, upper : float
        Public bounds: every value must lie in ``[lower, upper]``. Finite, with
        ``lower < upper``.
    bins : sequence of float, default=()
        Interior bin edges, strictly increasing and strictly inside
        ``(lower, upper)``. ``k`` edges give ``k + 1`` bins:
        ``[lower, e0), [e0, e1), ..., [e_{k-1}, upper]``.
    bin_labels : sequence of str, optional
        A name for each bin (e.g. ``"Young"``); by default the interval, such as
        ``"[25, 45)"``.

    Examples
    --------
    >>> age = Numeric("age", 17, 90, bins=[25, 45, 65])
    >>> age.domain_size, age.labels[0]
    (4, '[17, 25)')
    """

    name: str
    lower: float
    upper: float
    bins: tuple[float, ...] = ()
    bin_labels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        name = _check_name("Numeric", self.name)
        lower = _finite_real(name, "lower", self.lower)
        upper = _finite_real(name, "upper", self.upper)
        if not lower < upper:
            raise SchemaError(
                f"Numeric {name!r}: lower={lower!r} must be smaller than upper={upper!r}; "
                "swap them or widen the public range."
            )
        raw = self.bins
        if isinstance(raw, str | bytes) or not isinstance(raw, Iterable):
            raise SchemaError(
                f"Numeric {name!r}: bins must be a list of interior edges, got {raw!r}; "
                "pass e.g. bins=[25, 45, 65] (use Numeric.equal_width for n equal bins)."
            )
        edges = tuple(_finite_real(name, "bin edge", e) for e in raw)
        for e in edges:
            if not lower < e < upper:
                raise SchemaError(
                    f"Numeric {name!r}: bin edge {e!r} is outside the open range "
                    f"({lower!r}, {upper!r}); give only interior edges (lower and upper "
                    "are the outer edges already)."
                )
        for a, b in itertools.pairwise(edges):
            if not a < b:
                raise SchemaError(
                    f"Numeric {name!r}: bin edges must be strictly increasing, found "
                    f"{a!r} followed by {b!r} in {list(edges)}; sort them and remove "
                    "duplicates."
                )
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "bins", edges)
        if self.bin_labels is not None:
            labels = self.bin_labels
            if isinstance(labels, str) or not isinstance(labels, Iterable):
                raise SchemaError(
                    f"Numeric {name!r}: bin_labels must be a list of strings, got {labels!r}."
                )
            labels = tuple(labels)
            if len(labels) != len(edges) + 1:
                raise SchemaError(
                    f"Numeric {name!r}: {len(edges)} edges make {len(edges) + 1} bins but "
                    f"{len(labels)} bin_labels were given ({list(labels)}); give one "
                    "label per bin."
                )
            if not all(isinstance(s, str) and s for s in labels):
                raise SchemaError(
                    f"Numeric {name!r}: bin_labels must be non-empty strings, got {list(labels)}."
                )
            if len(set(labels)) != len(labels):
                raise SchemaError(
                    f"Numeric {name!r}: bin_labels must be unique, got {list(labels)}."
                )
            object.__setattr__(self, "bin_labels", labels)

    @classmethod
    def equal_width(cls, name: str, lower: float, upper: float, n_bins: int) -> Numeric:
        """``n_bins`` bins of equal width over the public range ``[lower, upper]``."""
        if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
            raise SchemaError(
                f"Numeric {name!r}: n_bins must be a positive integer, got {n_bins!r}."
            )
        if n_bins > MAX_BINS:  # 2**60 bins filled the memory of the machine
            raise SchemaError(
                f"Numeric {name!r}: n_bins must be at most {MAX_BINS:,} (one code per bin), got "
                f"{n_bins!r}."
            )
        lo = _finite_real(name, "lower", lower)
        hi = _finite_real(name, "upper", upper)
        edges = [lo + (hi - lo) * k / n_bins for k in range(1, int(n_bins))]
        return cls(name, lo, hi, tuple(edges))

    @property
    def edges(self) -> tuple[float, ...]:
        """All bin edges, ``(lower, *bins, upper)``."""
        return (self.lower, *self.bins, self.upper)

    @property
    def domain_size(self) -> int:
        """Number of bins (the number of integer codes)."""
        return len(self.bins) + 1

    @property
    def labels(self) -> tuple[str, ...]:
        """Name of each bin: ``bin_labels`` if given, else the interval."""
        if self.bin_labels is not None:
            return self.bin_labels
        pairs = list(itertools.pairwise(self.edges))
        out = [f"[{_format_edge(a)}, {_format_edge(b)})" for a, b in pairs[:-1]]
        a, b = pairs[-1]
        out.append(f"[{_format_edge(a)}, {_format_edge(b)}]")  # the last bin holds upper
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description of this attribute."""
        out: dict[str, Any] = {
            "type": "numeric",
            "name": self.name,
            "lower": self.lower,
            "upper": self.upper,
            "bins": list(self.bins),
        }
        if self.bin_labels is not None:
            out["bin_labels"] = list(self.bin_labels)
        return out


#: Any attribute spec.
Attribute = Categorical | Numeric

_KEYS = {
    "categorical": ({"type", "name", "categories"}, set()),
    "numeric": ({"type", "name", "lower", "upper"}, {"bins", "bin_labels"}),
}


def attribute_from_dict(d: Mapping[str, Any]) -> Attribute:
    """Build an attribute from the dict written by ``to_dict``.

    Raises
    ------
    SchemaError
        If ``type`` is unknown or a key is missing or unexpected.
    """
    if not isinstance(d, Mapping):
        raise SchemaError(f"An attribute must be a JSON object, got {d!r}.")
    kind = d.get("type")
    if kind not in _KEYS:
        raise SchemaError(
            f"Attribute {d.get('name', '?')!r} has type {kind!r}; expected "
            "'categorical' or 'numeric'."
        )
    required, optional = _KEYS[kind]

    def message(missing: list[str], unknown: list[str]) -> str:
        problems = [f"lacks keys {missing}"] if missing else []
        problems += [f"has unexpected keys {unknown}"] if unknown else []
        return (
            f"Attribute {d.get('name', '?')!r} ({kind}) {' and '.join(problems)}; "
            f"allowed keys are {sorted(required | optional)}."
        )

    check_keys(d, required, optional, message)
    if kind == "categorical":
        return Categorical(d["name"], d["categories"])
    labels = d.get("bin_labels")
    return Numeric(
        d["name"],
        d["lower"],
        d["upper"],
        tuple(d.get("bins", ())),
        None if labels is None else tuple(labels),
    )


def check_keys(
    d: Mapping[str, Any],
    required: set[str],
    optional: set[str],
    message: Callable[[list[str], list[str]], str],
) -> None:
    """Refuse a JSON object that lacks a required key or has one not allowed.

    ``message(missing, unknown)`` words the error (both lists sorted).
    """
    missing = sorted(required - d.keys())
    unknown = sorted(d.keys() - required - optional)
    if missing or unknown:
        raise SchemaError(message(missing, unknown))


class SchemaView(Protocol):
    """What coding and validation read from a schema (:class:`privet.data.Schema` has it).

    Declared here, below both, so that :mod:`privet.data.validation` and
    :mod:`privet.data.discretise` need not import :mod:`privet.data.schema`,
    which imports them.
    """

    @property
    def attributes(self) -> tuple[Attribute, ...]: ...

    @property
    def target(self) -> Categorical: ...

    @property
    def n_features(self) -> int: ...

    @property
    def feature_names(self) -> tuple[str, ...]: ...

    @property
    def columns(self) -> tuple[str, ...]: ...

    @property
    def domain_sizes(self) -> tuple[int, ...]: ...
