"""One-hot encoding with dummy zero columns, for the MPC learners.

Seed 000 (Sec. 3.1 and App. C.1, Alg. 11) hides the tree's shape by giving
every attribute the same number of branches ``w = max_i |dom(A_i)|``. Each
data owner one-hot encodes each attribute over its public domain and pads it
with all-zero *dummy* columns up to ``w``; the dummy columns come after the
real ones ("placed at the end of the encoding list for that attribute"). A
dummy value never occurs, so its column is zero and contributes nothing to
any count or score.

Layout of :func:`one_hot` (``n`` records, ``d`` features, width ``w``)::

    H[i, j, k] = 1  if record i has code k for feature j      (k < |dom(A_j)|)
    H[i, j, k] = 0  for every dummy column k >= |dom(A_j)|

With ``flat=True`` the same array is reshaped (C order) to ``(n, d * w)``:
feature ``j`` occupies columns ``j*w .. j*w + w - 1``. The paper indexes its
``D`` as ``D[attribute][value][record]``; that is ``H.transpose(1, 2, 0)``.
Class labels are encoded by :func:`one_hot_target` as ``(n, c)`` without
padding (the leaves have ``|dom(A_0)|`` labels, not ``w``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.data.schema import Schema
from privet.errors import InvalidParameterError, SchemaError

__all__ = ["codes_from_one_hot", "dummy_mask", "one_hot", "one_hot_target"]


def _sizes(domain: Schema | Sequence[int]) -> tuple[int, ...]:
    if isinstance(domain, Schema):
        return domain.domain_sizes
    try:
        if isinstance(domain, str | bytes):
            raise TypeError
        if any(isinstance(s, bool) or not isinstance(s, int | np.integer) for s in domain):
            raise TypeError
        sizes = tuple(int(s) for s in domain)
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameterError(
            f"domain must be a Schema or a list of positive integer domain sizes, got "
            f"{domain!r}; pass the Schema or schema.domain_sizes."
        ) from None
    if not sizes or min(sizes) < 1:
        raise InvalidParameterError(
            f"domain sizes must be a non-empty list of positive integers, got {list(domain)}; "
            "pass the Schema or schema.domain_sizes."
        )
    return sizes


def _width(sizes: tuple[int, ...], width: int | None) -> int:
    w = max(sizes)
    if width is None:
        return w
    if isinstance(width, bool) or not isinstance(width, int | np.integer) or width < w:
        raise InvalidParameterError(
            f"width={width!r} is smaller than the largest domain size {w} (or not an int); "
            f"use width=None or an integer >= {w}."
        )
    return int(width)


def dummy_mask(domain: Schema | Sequence[int], *, width: int | None = None) -> np.ndarray:
    """Boolean ``(d, w)`` array, True where a one-hot column is a dummy (always zero)."""
    sizes = _sizes(domain)
    w = _width(sizes, width)
    return np.arange(w)[None, :] >= np.asarray(sizes)[:, None]


def one_hot(
    X_codes: Any,
    domain: Schema | Sequence[int],
    *,
    width: int | None = None,
    flat: bool = False,
    dtype: Any = np.uint8,
) -> np.ndarray:
    """Pad-to-``w`` one-hot encoding of integer codes (see the module docstring).

    Parameters
    ----------
    X_codes : array of int, shape (n, d)
        Codes from :meth:`Schema.encode` or :func:`~privet.data.to_codes`.
    domain : Schema or sequence of int
        The schema, or the domain size of each of the ``d`` features.
    width : int, optional
        Common width ``w``; defaults to the largest domain size. A larger width
        adds more dummy columns (e.g. to match another party's schema).
    flat : bool, default=False
        Return ``(n, d * w)`` instead of ``(n, d, w)``.
    dtype : numpy dtype, default=numpy.uint8

    Returns
    -------
    numpy.ndarray of 0/1, shape (n, d, w) or (n, d * w)

    Raises
    ------
    SchemaError
        If a code is outside its feature's domain or the shape is wrong.
    InvalidParameterError
        If ``width`` is smaller than a domain size.
    """
    sizes = _sizes(domain)
    w = _width(sizes, width)
    try:
        X = np.asarray(X_codes)
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchemaError(f"X_codes must be an integer array of codes: {exc}") from None
    if X.ndim != 2 or X.shape[1] != len(sizes):
        raise SchemaError(
            f"X_codes must have shape (n, {len(sizes)}), one column per feature, got {X.shape}."
        )
    if X.size and X.dtype.kind not in "iu":
        raise SchemaError(f"X_codes must hold integer codes, got dtype {X.dtype}.")
    bad = (X < 0) | (X >= np.asarray(sizes))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise SchemaError(
            f"X_codes[{i}, {j}] = {X[i, j]} is outside the domain 0..{sizes[j] - 1} of "
            f"feature {j}; the codes and the domain sizes must come from the same schema."
        )
    n, d = X.shape
    H = np.zeros((n, d, w), dtype=dtype)
    H[np.arange(n)[:, None], np.arange(d)[None, :], X] = 1
    return H.reshape(n, d * w) if flat else H


def one_hot_target(y_codes: Any, n_classes: int | Schema, *, dtype: Any = np.uint8) -> np.ndarray:
    """One-hot class labels, ``(n, c)``, no padding.

    Column ``k`` is the paper's class-partition vector ``C_k`` (seed 000,
    Alg. 1 steps 5-8): ``C[i, k] = 1`` iff record ``i`` has class ``k``.
    """
    c = n_classes.n_classes if isinstance(n_classes, Schema) else int(n_classes)
    y = np.asarray(y_codes)
    if y.ndim != 1:
        raise SchemaError(f"y_codes must be 1-D, got shape {y.shape}.")
    if y.size and y.dtype.kind not in "iu":
        raise SchemaError(f"y_codes must hold integer codes, got dtype {y.dtype}.")
    bad = (y < 0) | (y >= c)
    if bad.any():
        i = int(np.argmax(bad))
        raise SchemaError(
            f"y_codes[{i}] = {y[i]} is outside 0..{c - 1}; the codes must come from a schema "
            f"with {c} classes."
        )
    C = np.zeros((y.shape[0], c), dtype=dtype)
    C[np.arange(y.shape[0]), y] = 1
    return C


def codes_from_one_hot(H: Any, domain: Schema | Sequence[int]) -> np.ndarray:
    """Inverse of :func:`one_hot`: ``(n, d, w)`` or ``(n, d*w)`` back to ``(n, d)`` codes.

    Raises
    ------
    SchemaError
        If a block does not hold exactly one 1 in a real (non-dummy) column.
    """
    sizes = _sizes(domain)
    A = np.asarray(H)
    d = len(sizes)
    if A.ndim == 2 and A.shape[1] % d == 0:
        A = A.reshape(A.shape[0], d, A.shape[1] // d)
    if A.ndim != 3 or A.shape[1] != d or A.shape[2] < max(sizes):
        raise SchemaError(
            f"Expected a one-hot array of shape (n, {d}, w) or (n, {d}*w) with "
            f"w >= {max(sizes)}, got {np.shape(H)}."
        )
    mask = dummy_mask(sizes, width=A.shape[2])
    ok = (A.sum(axis=2) == 1) & ~(A.astype(bool) & mask[None]).any(axis=2)
    if not ok.all():
        i, j = np.argwhere(~ok)[0]
        raise SchemaError(
            f"Record {i}, feature {j} is not a valid one-hot block ({A[i, j].tolist()}): "
            "it needs exactly one 1, in a non-dummy column."
        )
    return A.argmax(axis=2).astype(np.int64)
