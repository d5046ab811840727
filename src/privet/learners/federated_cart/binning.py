"""Public bins of the federated CART (seed 003, Sec. 3.2 and 3.3.1).

Every split candidate comes from the public schema, never from the data:

* a numeric attribute with public bounds ``[lower, upper]`` becomes one tree
  feature with ``num_bins`` equal-width bins over those bounds (Sec. 3.2: "an
  equidistant grid, which has the advantage of not consuming any privacy
  budget (as we are assuming that the feature ranges are publicly known)");
* a categorical attribute is one-hot encoded: one tree feature per category,
  each with 2 bins (not the category / the category; Sec. 3.3.1), or, with
  ``categorical="ordinal"``, one tree feature with one bin per category in the
  schema's order (a split sends the first ``l`` categories left). The paper's
  experiments have numeric features only; both encodings are its algorithm on
  public bins (one record is in one bin of every feature, so the histograms'
  sensitivity and Thm. 7's bound are unchanged); "ordinal" has fewer features
  (p), so each feature's histogram gets more of a node's budget (eps_node / p).

A split is ``(feature j, border l)``: the records whose bin index is ``< l``
go left. Borders ``1 .. n_bins[j] - 1`` are the candidates (Alg. 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privet.data import Categorical, Numeric, Schema
from privet.errors import SchemaError


@dataclass(frozen=True)
class FeatureMap:
    """The tree features derived from a public schema and ``num_bins``.

    Attributes
    ----------
    names : tuple of str
        One per tree feature (``"age"``, ``"workclass=Private"``).
    attribute : ndarray of int
        The schema attribute each tree feature comes from.
    category : ndarray of int
        For a one-hot feature, the category code it tests; -1 for numeric; -2 for
        an ordinal categorical feature (bin = category code).
    n_bins : ndarray of int
        Bins of each tree feature (``num_bins`` or 2).
    edges : tuple of ndarray
        Bin edges of each tree feature (``n_bins + 1`` values; ``[0, 1, 2]`` for
        one-hot features, border 1 meaning "is the category").
    """

    names: tuple[str, ...]
    attribute: np.ndarray
    category: np.ndarray
    n_bins: np.ndarray
    edges: tuple[np.ndarray, ...]

    @property
    def n_features(self) -> int:
        return len(self.names)

    @property
    def max_bins(self) -> int:
        return int(self.n_bins.max())


CATEGORICAL = ("onehot", "ordinal")


def feature_map(schema: Schema, num_bins: int, categorical: str = "onehot") -> FeatureMap:
    """Tree features of ``schema`` (public: schema, ``num_bins`` and the encoding only)."""
    if categorical not in CATEGORICAL:
        raise SchemaError(f"categorical must be one of {CATEGORICAL}; got {categorical!r}.")
    if not isinstance(schema, Schema):
        raise SchemaError(
            f"A public schema is required, got {type(schema).__name__}; pass "
            "schema=privet.data.Schema(...) with numeric bounds and categories."
        )
    names: list[str] = []
    attribute: list[int] = []
    category: list[int] = []
    n_bins: list[int] = []
    edges: list[np.ndarray] = []
    for a, attr in enumerate(schema.attributes):
        if isinstance(attr, Numeric):
            names.append(attr.name)
            attribute.append(a)
            category.append(-1)
            n_bins.append(int(num_bins))
            edges.append(np.linspace(attr.lower, attr.upper, int(num_bins) + 1))
        elif isinstance(attr, Categorical) and categorical == "ordinal":
            names.append(attr.name)
            attribute.append(a)
            category.append(-2)
            n_bins.append(len(attr.labels))
            edges.append(np.arange(len(attr.labels) + 1, dtype=float))
        elif isinstance(attr, Categorical):
            for c, label in enumerate(attr.labels):
                names.append(f"{attr.name}={label}")
                attribute.append(a)
                category.append(c)
                n_bins.append(2)
                edges.append(np.array([0.0, 1.0, 2.0]))
        else:  # pragma: no cover - Schema admits only these two
            raise SchemaError(f"Unsupported attribute {attr!r}.")
    return FeatureMap(
        tuple(names),
        np.asarray(attribute, dtype=np.int64),
        np.asarray(category, dtype=np.int64),
        np.asarray(n_bins, dtype=np.int64),
        tuple(edges),
    )


def bin_frame(schema: Schema, fmap: FeatureMap, frame: object) -> np.ndarray:
    """Bin indices ``(n, n_features)`` of a frame already checked against ``schema``.

    ``frame`` is the output of ``schema.validate`` (numeric values inside the
    public bounds, categories from the public lists). The last numeric bin is
    closed on the right (it holds ``upper``).
    """
    import pandas as pd

    assert isinstance(frame, pd.DataFrame)
    n = len(frame)
    out = np.empty((n, fmap.n_features), dtype=np.int64)
    codes_of: dict[int, np.ndarray] = {}  # one coding per attribute, not per one-hot feature
    for j in range(fmap.n_features):
        attr = schema.attributes[int(fmap.attribute[j])]
        col = frame[attr.name]
        if isinstance(attr, Numeric):
            x = col.to_numpy(dtype=float)
            b = int(fmap.n_bins[j])
            idx = np.floor((x - attr.lower) / (attr.upper - attr.lower) * b).astype(np.int64)
            out[:, j] = np.clip(idx, 0, b - 1)
        else:
            assert isinstance(attr, Categorical)
            a = int(fmap.attribute[j])
            if a not in codes_of:
                codes_of[a] = np.asarray(
                    pd.Categorical(col, categories=list(attr.categories)).codes, dtype=np.int64
                )
            codes = codes_of[a]
            if int(fmap.category[j]) == -2:  # ordinal: the category code is the bin
                out[:, j] = codes
            else:
                out[:, j] = (codes == int(fmap.category[j])).astype(np.int64)
    return out


__all__ = ["CATEGORICAL", "FeatureMap", "bin_frame", "feature_map"]
