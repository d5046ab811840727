"""Neighbouring training sets that change a tree learner's structure, and their probes.

* :func:`near_tie_pair` — two attributes whose split scores tie on ``D``; the
  added record ``r`` raises one score by 1 and flips which attribute an exact
  argmax picks, and the probe queries land in leaves with opposite
  majorities. This is the record that exposes a non-randomised ("hidden") split.
* :func:`lone_leaf_pair` — ``r`` differs from every record of ``D`` in every
  attribute, so whatever splits a tree makes, ``r`` sits alone in its leaf; the
  probe is ``r`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privet.errors import InvalidParameterError

__all__ = ["LearnerPair", "frame_from_codes", "lone_leaf_pair", "near_tie_pair", "xy_schema"]


def _raw_value(attr: Any, code: int) -> Any:
    from privet.data import Categorical

    if isinstance(attr, Categorical):
        return attr.categories[int(code)]
    edges = attr.edges
    return 0.5 * (edges[int(code)] + edges[int(code) + 1])  # the middle of the public bin


def frame_from_codes(
    schema: Any, codes: Any, y_codes: Any | None = None
) -> tuple[pd.DataFrame, pd.Series | None]:
    """Records with the given attribute (and class) codes, as raw values in ``schema``.

    Categorical codes become their categories, numeric codes the middle of
    their public bin. Returns ``(X, y)``, ``y`` None without ``y_codes``.
    """
    codes = np.atleast_2d(np.asarray(codes, dtype=np.int64))
    X = pd.DataFrame(
        {a.name: [_raw_value(a, c) for c in codes[:, j]] for j, a in enumerate(schema.attributes)}
    )
    if y_codes is None:
        return X, None
    y = pd.Series(
        [schema.target.categories[int(c)] for c in np.asarray(y_codes).ravel()],
        name=schema.target_name,
    )
    return X, y


@dataclass(frozen=True, eq=False)
class LearnerPair:
    """Neighbouring training sets ``D`` and ``D' = D + record``, and the probe queries.

    Attributes
    ----------
    kind : str
        ``"near_tie"``, ``"lone_leaf"`` or a user label.
    description : str
        What the record does to the learner.
    X0, y0, X1, y1
        ``D`` and ``D'``.
    probes : DataFrame
        The queries whose predictions are the released output of one trial.
    schema : Schema
        The public schema of the records.
    max_depth : int or None
        The depth the pair is designed for (None: any).
    fit_params0, fit_params1 : dict
        Extra keyword arguments of ``fit`` on ``D`` and ``D'`` (e.g. the data
        owner of each row, so that both sides deal the rows alike).
    """

    kind: str
    description: str
    X0: pd.DataFrame = field(repr=False)
    y0: pd.Series = field(repr=False)
    X1: pd.DataFrame = field(repr=False)
    y1: pd.Series = field(repr=False)
    probes: pd.DataFrame = field(repr=False)
    schema: Any = field(repr=False)
    max_depth: int | None = None
    fit_params0: dict[str, Any] = field(default_factory=dict, repr=False)
    fit_params1: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n_records(self) -> tuple[int, int]:
        return len(self.X0), len(self.X1)


def _pair_from_codes(
    kind: str,
    description: str,
    schema: Any,
    codes: Any,
    labels: list[int],
    record: Any,
    label: int,
    probe_codes: Any,
    *,
    max_depth: int | None = None,
) -> LearnerPair:
    """``D`` = the records ``codes`` with class codes ``labels``; ``D'`` = ``D`` + ``record``."""
    X0, y0 = frame_from_codes(schema, codes, labels)
    X1, y1 = frame_from_codes(schema, np.vstack([codes, record]), [*labels, label])
    probes, _ = frame_from_codes(schema, probe_codes)
    return LearnerPair(
        kind=kind,
        description=description,
        X0=X0,
        y0=y0,  # type: ignore[arg-type]
        X1=X1,
        y1=y1,  # type: ignore[arg-type]
        probes=probes,
        schema=schema,
        max_depth=max_depth,
    )


def near_tie_pair(
    schema: Any,
    *,
    attributes: tuple[int, int] = (0, 1),
    classes: tuple[int, int] = (0, 1),
    majority: int = 20,
    minority: int = 5,
) -> LearnerPair:
    """A record that flips an exact tie between two split attributes.

    With ``a, b`` the two attributes (codes 0 and 1 of each) and classes
    ``c0, c1``, ``D`` holds ``majority`` records ``(a=0, b=0, c0)``,
    ``majority`` records ``(a=1, b=1, c1)`` and ``minority`` records each of
    ``(a=0, b=1, c0)`` and ``(a=0, b=1, c1)``; every other attribute is at code
    0 (constant, so it never scores above ``a`` and ``b``). The max-operator
    scores (seed 000, Eq. 1) of ``a`` and ``b`` are both
    ``2 * majority + minority``: an exact tie, won by ``a`` (the lower index;
    every exact argmax in privet breaks ties that way). The record
    ``r = (a=0, b=1, c1)`` raises the score of ``b`` by one and leaves ``a``'s,
    so on ``D' = D + r`` the exact argmax picks ``b``. The probe ``(a=0, b=1)``
    then lands in a leaf whose majority is ``c0`` on ``D`` and ``c1`` on ``D'``.

    Designed for depth-1 trees (``max_depth=1``): deeper trees that split on
    both ``a`` and ``b`` end with the same leaves in either order, which hides
    the flip in this two-attribute construction.
    """
    a, b = attributes
    if a == b or not (0 <= a < schema.n_features and 0 <= b < schema.n_features):
        raise InvalidParameterError(
            f"near_tie_pair needs two different attribute indices below {schema.n_features}; "
            f"got {attributes}."
        )
    for j in (a, b):
        if schema.domain_sizes[j] < 2:
            raise InvalidParameterError(
                f"Attribute {schema.feature_names[j]!r} has one value; the near-tie pair needs "
                "two attributes with at least two values each."
            )
    c0, c1 = classes
    if c0 == c1 or max(c0, c1) >= schema.n_classes:
        raise InvalidParameterError(
            f"near_tie_pair needs two different class indices below {schema.n_classes}; got "
            f"{classes}."
        )
    if not 0 < minority < majority:
        raise InvalidParameterError(
            f"near_tie_pair needs 0 < minority < majority; got {minority}, {majority}."
        )
    blocks = [((0, 0), c0, majority), ((1, 1), c1, majority), ((0, 1), c0, minority)]
    blocks.append(((0, 1), c1, minority))
    rows, labels = [], []
    for (va, vb), c, count in blocks:
        for _ in range(count):
            r = np.zeros(schema.n_features, dtype=np.int64)
            r[a], r[b] = va, vb
            rows.append(r)
            labels.append(c)
    record = np.zeros(schema.n_features, dtype=np.int64)
    record[a], record[b] = 0, 1
    probe_codes = np.zeros((4, schema.n_features), dtype=np.int64)
    probe_codes[:, a] = [0, 0, 1, 1]
    probe_codes[:, b] = [0, 1, 0, 1]
    fa, fb = schema.feature_names[a], schema.feature_names[b]
    score = 2 * majority + minority
    return _pair_from_codes(
        "near_tie",
        f"{fa!r} and {fb!r} tie at score {score} on D ({len(rows)} records); "
        f"the added record raises {fb!r} to {score + 1}",
        schema,
        np.array(rows),
        labels,
        record,
        c1,
        probe_codes,
        max_depth=1,
    )


def lone_leaf_pair(
    data: Any,
    *,
    schema: Any = None,
    canary: int | None = None,
    max_rows: int | None = None,
    random_state: int | np.random.Generator | None = None,
) -> LearnerPair:
    """A record that sits alone in its leaf, whatever the tree's splits.

    The canary is row ``canary`` of ``data`` or, by default, a record made of
    the least frequent value of every attribute; ``D`` keeps only the records
    that differ from it in *every* attribute (at most ``max_rows`` of them,
    drawn at random), so on any root-to-leaf path of length at least one the
    canary shares its leaf with nobody. Its class is
    set to the rarest class of ``D`` (one absent from ``D`` if there is one), so
    that the empty leaf of ``D`` and the canary's leaf of ``D'`` disagree as much
    as they can. The probe is the canary itself.

    Parameters
    ----------
    data : privet Dataset or (X, y)
        Where the canary and ``D`` come from.
    schema : Schema, optional
        Required when ``data`` is ``(X, y)``.
    canary : int, optional
        Row index of the canary (default: the rarest values, see above).
    max_rows : int, optional
        Size cap of ``D``.
    random_state : int or Generator, optional
    """
    X, y, schema = xy_schema(data, schema)
    rng = np.random.default_rng(random_state)
    codes = schema.encode(X)
    y_codes = schema.encode_target(y)
    if canary is None:
        record = np.array(
            [
                int(np.argmin(np.bincount(codes[:, j], minlength=size)))
                for j, size in enumerate(schema.domain_sizes)
            ]
        )
        what = "a canary of the rarest value of every attribute"
    else:
        idx = int(canary)
        if not 0 <= idx < len(X):
            raise InvalidParameterError(
                f"canary must be a row index below {len(X)}; got {canary!r}."
            )
        record = codes[idx]
        what = f"row {idx}"
    keep = np.flatnonzero(np.all(codes != record, axis=1))
    if keep.size == 0:
        raise InvalidParameterError(
            f"No record of the data differs from {what} in every attribute; pick another "
            "canary or a dataset with more varied records."
        )
    if max_rows is not None and keep.size > max_rows:
        keep = np.sort(rng.choice(keep, size=int(max_rows), replace=False))
    counts = np.bincount(y_codes[keep], minlength=schema.n_classes)
    label = int(np.argmin(counts))  # the rarest class of D (absent ones first)
    return _pair_from_codes(
        "lone_leaf",
        f"{what} (class {schema.classes[label]!r}) differs from each of the "
        f"{len(keep)} records of D in every attribute: alone in its leaf",
        schema,
        codes[keep],
        y_codes[keep].tolist(),
        record,
        label,
        record,
    )


def xy_schema(data: Any, schema: Any) -> tuple[pd.DataFrame, pd.Series, Any]:
    """``(X, y, schema)`` of a privet Dataset or of ``(X, y)`` with ``schema``."""
    if hasattr(data, "frame") and hasattr(data, "schema"):
        return data.X, data.y, schema if schema is not None else data.schema
    if isinstance(data, tuple) and len(data) == 2:
        if schema is None:
            raise InvalidParameterError("Pass schema=... with data given as (X, y).")
        return data[0], data[1], schema
    raise InvalidParameterError(
        "'data' must be a privet Dataset (load_dataset(name)) or a tuple (X, y); got "
        f"{type(data).__name__}."
    )
