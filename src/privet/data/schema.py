"""The public schema of a dataset: ordered feature attributes plus the class.

A :class:`Schema` is what a learner may know before it touches private data:
the features, their domains, and the classes. It fixes the integer coding
(see :mod:`privet.data.discretise`) and the one-hot layout (see
:mod:`privet.data.encoding`), and it checks data (:meth:`Schema.validate`).

JSON format (``Schema.to_json``)::

    {
      "format": "privet.schema",
      "version": 1,
      "description": "free text, optional",
      "attributes": [
        {"type": "categorical", "name": "outlook", "categories": ["Sunny", "Rain"]},
        {"type": "numeric", "name": "age", "lower": 17, "upper": 90, "bins": [25, 45]}
      ],
      "target": {"type": "categorical", "name": "play", "categories": ["No", "Yes"]}
    }

Unknown keys are refused rather than ignored, so a typo cannot drop a domain.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from privet.data.attributes import (
    Attribute,
    Categorical,
    CategoryValue,
    Numeric,
    attribute_from_dict,
    check_keys,
)
from privet.data.discretise import from_codes, labels_from_codes
from privet.data.validation import MissingPolicy, TargetPolicy, check, column_codes
from privet.errors import SchemaError

__all__ = ["Schema"]

_FORMAT = "privet.schema"
_VERSION = 1
_TOP_KEYS = {"format", "version", "description", "attributes", "target"}


@dataclass(frozen=True, slots=True)
class Schema:
    """Ordered feature attributes plus a categorical class attribute.

    Parameters
    ----------
    attributes : sequence of Categorical or Numeric
        The features, in the order of the columns of ``X_codes``.
    target : Categorical
        The class attribute; at least two classes.
    description : str, default=""
        Free text: where the domains come from.

    Examples
    --------
    >>> outlook = Categorical("outlook", ["Sunny", "Overcast", "Rain"])
    >>> temp = Numeric("temp", -10, 45, bins=[15, 25])
    >>> s = Schema([outlook, temp], Categorical("play", ["No", "Yes"]))
    >>> s.domain_sizes, s.max_domain_size, s.classes
    ((3, 3), 3, ('No', 'Yes'))
    """

    attributes: tuple[Attribute, ...]
    target: Categorical
    description: str = ""

    def __post_init__(self) -> None:
        raw = self.attributes
        if isinstance(raw, Categorical | Numeric | str) or not isinstance(raw, Iterable):
            raise SchemaError(
                f"Schema attributes must be a list of Categorical/Numeric specs, got {raw!r}."
            )
        attrs = tuple(raw)
        for a in attrs:
            if not isinstance(a, Categorical | Numeric):
                raise SchemaError(
                    f"Schema attribute {a!r} is a {type(a).__name__}; use "
                    "privet.data.Categorical or privet.data.Numeric."
                )
        if not attrs:
            raise SchemaError(
                "Schema has no feature attributes; list at least one Categorical or Numeric."
            )
        if not isinstance(self.target, Categorical):
            raise SchemaError(
                f"Schema target must be a Categorical (the class attribute), got "
                f"{self.target!r}; discretise a numeric label into classes first."
            )
        if self.target.domain_size < 2:
            raise SchemaError(
                f"Class attribute {self.target.name!r} has {self.target.domain_size} class "
                f"{list(self.target.categories)}; a classifier needs at least two classes."
            )
        names = [a.name for a in attrs] + [self.target.name]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(
                f"Schema names {dupes} more than once (features and class together); every "
                "column needs a unique name."
            )
        if not isinstance(self.description, str):
            raise SchemaError(f"Schema description must be a string, got {self.description!r}.")
        object.__setattr__(self, "attributes", attrs)

    # -- properties -------------------------------------------------------------------------

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Feature column names, in schema order."""
        return tuple(a.name for a in self.attributes)

    @property
    def target_name(self) -> str:
        """Name of the class column."""
        return self.target.name

    @property
    def columns(self) -> tuple[str, ...]:
        """Feature names followed by the class column name."""
        return (*self.feature_names, self.target.name)

    @property
    def n_features(self) -> int:
        """Number of feature attributes (the class excluded)."""
        return len(self.attributes)

    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """Per feature, the number of codes after discretisation."""
        return tuple(a.domain_size for a in self.attributes)

    @property
    def max_domain_size(self) -> int:
        """Largest feature domain size: the one-hot width ``w`` of seed 000."""
        return max(self.domain_sizes)

    @property
    def classes(self) -> tuple[CategoryValue, ...]:
        """Class labels in code order."""
        return self.target.categories

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return self.target.domain_size

    def __getitem__(self, name: str) -> Attribute:
        """The attribute (feature or class) called ``name``."""
        for a in (*self.attributes, self.target):
            if a.name == name:
                return a
        raise KeyError(
            f"No attribute {name!r} in the schema; its columns are {list(self.columns)}."
        )

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def index(self, name: str) -> int:
        """Position of feature ``name`` (its column in ``X_codes``)."""
        try:
            return self.feature_names.index(name)
        except ValueError:
            raise KeyError(
                f"No feature {name!r} in the schema; its features are {list(self.feature_names)}."
            ) from None

    def subset(self, names: Sequence[str]) -> Schema:
        """The schema restricted to the features ``names`` (in that order), same class.

        Useful for a party of a vertical partition, which holds some columns only.
        """
        if isinstance(names, str):
            names = [names]
        attrs = tuple(self.attributes[self.index(n)] for n in names)
        return Schema(attrs, self.target, self.description)

    # -- checking and coding ----------------------------------------------------------------

    def validate(
        self,
        data: Any,
        *,
        missing: MissingPolicy = "error",
        missing_category: CategoryValue = "Unknown",
        target: TargetPolicy = "optional",
        extra: Literal["error", "ignore"] = "error",
    ) -> pd.DataFrame:
        """Check data against the schema; return the schema columns in schema order.

        Parameters
        ----------
        data : pandas.DataFrame or 2-D array
            Columns by name; an array's columns are read in schema order
            (features, then optionally the class).
        missing : {"error", "drop", "category"}, default="error"
            Missing values (None/NaN): ``"error"`` raises; ``"drop"`` returns the
            frame without the rows that have a missing value in a schema column;
            ``"category"`` replaces missing values of categorical columns by
            ``missing_category``, which must be one of their public categories.
        missing_category : str, int or bool, default="Unknown"
            See ``missing``.
        target : {"optional", "required", "absent"}, default="optional"
            Whether the class column may, must or must not be present.
        extra : {"error", "ignore"}, default="error"
            Columns not in the schema raise, or are left out of the result.

        Returns
        -------
        pandas.DataFrame
            The checked columns, index kept; a new frame (rows dropped or values
            filled only when the policy says so).

        Raises
        ------
        SchemaError
            Missing column; unknown category; number outside ``[lower, upper]``;
            NaN/None (under ``missing="error"``); infinity; text or booleans in
            a numeric column. The message names the column, a few bad values and
            rows, the allowed values, and the fix.
        """
        return check(
            self,
            data,
            missing=missing,
            missing_category=missing_category,
            target=target,
            extra=extra,
        ).frame

    def encode(
        self,
        X: Any,
        *,
        missing: MissingPolicy = "error",
        missing_category: CategoryValue = "Unknown",
    ) -> np.ndarray:
        """Validate features and return their codes, an ``(n, d)`` int64 array.

        ``X`` is a DataFrame (features by name, no class column) or a 2-D array
        whose ``d`` columns are in schema order. With ``missing="drop"`` the
        rows with missing values are left out; to keep labels aligned, drop rows
        on the frame that holds both (``validate(df, missing="drop")`` or
        :func:`~privet.data.to_codes`) instead.
        """
        return check(
            self, X, missing=missing, missing_category=missing_category, target="absent"
        ).X_codes

    def encode_target(self, y: Any) -> np.ndarray:
        """Validate class labels and return their codes, an ``(n,)`` int64 array."""
        if isinstance(y, pd.DataFrame):
            raise SchemaError(
                f"encode_target expects one column of labels, got a DataFrame with columns "
                f"{list(y.columns)}; pass df[{self.target.name!r}]."
            )
        return column_codes(self.target, y)

    def decode(self, X_codes: Any) -> pd.DataFrame:
        """Codes back to labels (numeric bins become their bin labels)."""
        return from_codes(X_codes, self)

    def decode_target(self, y_codes: Any) -> pd.Series:
        """Class codes back to class labels."""
        return pd.Series(labels_from_codes(y_codes, self.target), name=self.target.name)

    # -- serialisation ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; see the module docstring for the format."""
        out: dict[str, Any] = {"format": _FORMAT, "version": _VERSION}
        if self.description:
            out["description"] = self.description
        out["attributes"] = [a.to_dict() for a in self.attributes]
        out["target"] = self.target.to_dict()
        return out

    def fingerprint(self) -> str:
        """A stable hash (SHA-256, hex) of the public schema: attributes and target.

        Two schemas have the same fingerprint exactly when their attributes (names,
        kinds, categories, bounds, bins, in order) and targets are equal; the
        description does not count. A ledger records it per dataset so that rows
        of one dataset cannot be charged to another's budget.

        >>> from privet.data import Categorical, Numeric, Schema
        >>> s = Schema([Numeric("age", 0, 100)], Categorical("y", ["no", "yes"]))
        >>> len(s.fingerprint()), s.fingerprint() == Schema.from_dict(s.to_dict()).fingerprint()
        (64, True)
        """
        public = {
            "attributes": [a.to_dict() for a in self.attributes],
            "target": self.target.to_dict(),
        }
        text = json.dumps(public, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Schema:
        """Build a schema from the dict written by :meth:`to_dict`."""
        if not isinstance(d, Mapping):
            raise SchemaError(f"A schema must be a JSON object, got {type(d).__name__}.")
        check_keys(d, {"attributes", "target"}, _TOP_KEYS, _top_keys_message)
        if d.get("format", _FORMAT) != _FORMAT or d.get("version", _VERSION) != _VERSION:
            raise SchemaError(
                f"Schema JSON declares format {d.get('format')!r} version "
                f"{d.get('version')!r}; this privet reads {_FORMAT!r} version {_VERSION}."
            )
        attrs = d["attributes"]
        if not isinstance(attrs, list):
            raise SchemaError(f"Schema JSON 'attributes' must be a list, got {attrs!r}.")
        try:
            target = attribute_from_dict(d["target"])
            if not isinstance(target, Categorical):
                raise SchemaError(
                    f"Schema JSON 'target' must be categorical, got {d['target'].get('type')!r}."
                )
            parsed = tuple(attribute_from_dict(a) for a in attrs)
            return cls(parsed, target, d.get("description", ""))
        except SchemaError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            # a value of the wrong kind deep in an attribute (e.g. a list as a category)
            raise SchemaError(
                f"Schema JSON has a malformed attribute or target ({type(exc).__name__}: "
                f"{exc}); write it with Schema.to_json() or follow its format."
            ) from None

    def to_json(self, *, indent: int | None = 2) -> str:
        """Serialise to JSON text (exact round-trip through :meth:`from_json`)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Schema:
        """Parse JSON text written by :meth:`to_json`."""
        if not isinstance(text, str | bytes | bytearray):
            raise SchemaError(
                f"Schema.from_json takes the JSON text of Schema.to_json() (a str or bytes), "
                f"got {type(text).__name__}; for a dict use Schema.from_dict, for a file "
                "Schema.load(path)."
            )
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(
                f"Schema text is not valid JSON ({exc.msg} at line {exc.lineno}, column "
                f"{exc.colno}); check the file."
            ) from exc
        except (UnicodeDecodeError, RecursionError) as exc:
            raise SchemaError(f"Schema text is not JSON text ({exc}); check the file.") from None
        return cls.from_dict(d)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the schema as JSON to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_json() + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Schema:
        """Read a schema file (written by :meth:`save`, ``privet schema infer`` or by hand).

        The file is checked as a whole first (:mod:`privet.data.schema_file`: its
        JSON Schema, then its meaning): one :class:`SchemaError` lists every problem.
        """
        from privet.data.schema_file import check_schema_text, read_schema_text

        text = read_schema_text(path)
        check_schema_text(text, f"In schema file {os.fspath(path)!r}: the file")
        return cls.from_json(text)


def _top_keys_message(missing: list[str], unknown: list[str]) -> str:
    problems = [f"unexpected keys {unknown}"] if unknown else []
    problems += [f"no {missing} key"] if missing else []
    return (
        f"Schema JSON has {' and '.join(problems)}; allowed keys are "
        f"{sorted(_TOP_KEYS)} ('attributes' and 'target' are required)."
    )
