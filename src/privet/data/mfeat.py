"""Public bounds and bins of the Multiple Features (mfeat) datasets, and how they were made.

UCI's Multiple Features data (2,000 handwritten digits, 200 per class) come in
six numeric feature sets. Only one has bounds that follow from its definition:

- ``pix``: 240 pixel averages over 2 x 3 windows, i.e. counts of black pixels
  in 6 pixels -- the range is exactly [0, 6].

For ``fac`` (216 profile correlations), ``fou`` (76 Fourier coefficients),
``kar`` (64 Karhunen-Loeve coefficients), ``mor`` (6 morphological features)
and ``zer`` (47 Zernike moments) the UCI documentation gives no ranges. Their
bounds were therefore fixed **once**, from the public 2,000-row UCI release,
by :func:`release_bounds`: per feature, the observed minimum and maximum
rounded outward to two significant digits of the feature's range (e.g.
[0.00017, 0.796] -> [0, 0.8]). The resulting bounds are hard-coded in the
shipped schemas ``schemas/mfeat_<kind>.json`` and never recomputed when data
are loaded; a test checks that the shipped files match this procedure.

Every feature is cut into :data:`N_BINS` equal-width bins over its bounds.

Caveat: bounds taken from the released data are public only because the
release is; they are *not* a sound choice for private data, where bounds
must come from knowledge that does not depend on the records. mfeat is used
here to reproduce seed 001 (secure-summation ID3 over 128 parties, no DP), in
which the discretisation is simply the parties' shared preprocessing.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from privet.data.attributes import Categorical, Numeric
from privet.data.schema import Schema
from privet.errors import InvalidParameterError

__all__ = ["MFEAT_KINDS", "N_BINS", "mfeat_schema", "release_bounds"]

#: Feature set -> (number of features, description).
MFEAT_KINDS: dict[str, tuple[int, str]] = {
    "fac": (216, "profile correlations"),
    "fou": (76, "Fourier coefficients of the character shapes"),
    "kar": (64, "Karhunen-Loeve coefficients"),
    "mor": (6, "morphological features"),
    "pix": (240, "pixel averages in 2 x 3 windows"),
    "zer": (47, "Zernike moments"),
}

#: Equal-width bins per feature.
N_BINS = 5

_PIX_BOUNDS = (0.0, 6.0)


def _round_out(lo: float, hi: float) -> tuple[float, float]:
    span = hi - lo
    if span <= 0:
        return float(math.floor(lo)), float(math.floor(lo) + 1)
    exponent = math.floor(math.log10(span)) - 1  # two significant digits of the span
    step = 10.0**exponent
    digits = max(0, -exponent)
    return (
        round(math.floor(lo / step) * step, digits),
        round(math.ceil(hi / step) * step, digits),
    )


def release_bounds(values: np.ndarray) -> list[tuple[float, float]]:
    """Per-column bounds: observed range rounded outward (see the module docstring).

    This is how the shipped bounds were made from the public release; privet
    never calls it when loading data.
    """
    v = np.asarray(values, dtype=np.float64)
    return [
        _round_out(float(lo), float(hi))
        for lo, hi in zip(v.min(axis=0), v.max(axis=0), strict=True)
    ]


def mfeat_schema(kind: str, release: pd.DataFrame | None = None) -> Schema:
    """The schema of ``mfeat_<kind>``; for kinds other than ``pix`` pass the UCI release.

    Parameters
    ----------
    kind : {"fac", "fou", "kar", "mor", "pix", "zer"}
    release : pandas.DataFrame, optional
        The full public release (features only, in file order). Not needed
        for ``pix``.
    """
    if kind not in MFEAT_KINDS:
        raise InvalidParameterError(
            f"mfeat kind {kind!r} is unknown; use one of {list(MFEAT_KINDS)}."
        )
    n, what = MFEAT_KINDS[kind]
    if kind == "pix":
        bounds = [_PIX_BOUNDS] * n
    else:
        if release is None or release.shape[1] != n:
            raise InvalidParameterError(
                f"mfeat_{kind} bounds come from the public release: pass its {n} feature "
                f"columns as release=..., got {None if release is None else release.shape}."
            )
        bounds = release_bounds(release.to_numpy())
    attrs = [
        Numeric.equal_width(f"{kind}_{j}", lo, hi, N_BINS) for j, (lo, hi) in enumerate(bounds)
    ]
    how = (
        "bounds [0, 6] by definition (black pixels in a 2x3 window)"
        if kind == "pix"
        else "bounds: observed range of the public UCI release rounded outward to two "
        "significant digits of the span (privet.data.mfeat.release_bounds)"
    )
    return Schema(
        tuple(attrs),
        Categorical("digit", list(range(10))),
        f"UCI Multiple Features, {kind}: {n} {what}; {how}; {N_BINS} equal-width bins.",
    )
