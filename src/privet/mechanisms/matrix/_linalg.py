"""Shared helpers of the matrix-mechanism modules: the explicit-size limit and Kronecker products."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError

EXPLICIT_LIMIT = 8192
"""Largest domain for which n x n matrices (Gram, explicit OPT_p) are formed."""


def _as_2d(x: NDArray[Any]) -> tuple[NDArray[Any], bool]:
    return (x[:, None], True) if x.ndim == 1 else (x, False)


def _explicit_ok(n: int, what: str) -> None:
    if n > EXPLICIT_LIMIT:
        raise InvalidParameterError(
            f"Forming {what} needs an n x n matrix with n={n} > {EXPLICIT_LIMIT} cells; use the "
            "Kronecker form (optimize_kronecker, KroneckerStrategy) for product domains."
        )


def _kron_apply(
    funcs: Sequence[Callable[[NDArray[np.float64]], NDArray[np.float64]]],
    x: NDArray[np.float64],
    dims: tuple[int, ...],
) -> NDArray[np.float64]:
    """(F_1 x ... x F_d) x for x of shape (prod dims, k), one mode product per factor."""
    k = x.shape[1]
    t = np.asarray(x, dtype=float).reshape(*dims, k)
    for i, f in enumerate(funcs):
        t = np.moveaxis(t, i, 0)
        rest = t.shape[1:]
        t = np.asarray(f(t.reshape(t.shape[0], -1)))
        t = np.moveaxis(t.reshape(t.shape[0], *rest), 0, i)
    return t.reshape(-1, k)
