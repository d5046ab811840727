"""Randomness for the numpy-vectorised samplers (local randomisers, gamma shares).

Central noise is drawn by OpenDP's samplers, which use the operating system's
CSPRNG and cannot be seeded. The local randomisers and the gamma shares of the
distributed Laplace are vectorised numpy; they draw from one module-wide
:class:`numpy.random.Generator` (PCG64DXSM) seeded with 256 bits from the
operating system (:mod:`secrets`). PCG64DXSM is a fast statistical generator, not
a cryptographic one: an adversary who saw enough raw outputs could in principle
predict later ones. OpenDP's own bridge (``opendp.prelude.get_np_csprng``)
needs the optional ``randomgen`` package and makes one Python call per 64 bits,
about a thousand times slower, so it is not used. Use :func:`use_csprng` to opt
into it where ``randomgen`` is installed.

Privacy noise is not seeded except in tests, through the explicit hook
:func:`seed_for_tests`.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator

import numpy as np

from privet.errors import InvalidParameterError

_state: dict[str, np.random.Generator] = {}


def _fresh() -> np.random.Generator:
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))


def local_rng() -> np.random.Generator:
    """The generator the numpy samplers draw from (seeded from OS entropy)."""
    rng = _state.get("rng")
    if rng is None:
        rng = _state["rng"] = _fresh()
    return rng


def use_csprng() -> None:
    """Draw the numpy samplers' randomness from OpenDP's CSPRNG (needs ``randomgen``)."""
    import opendp.prelude as dp

    try:
        _state["rng"] = dp.get_np_csprng()
    except Exception as exc:  # ImportError wrapped by OpenDP
        raise InvalidParameterError(
            "OpenDP's numpy CSPRNG needs the optional package 'randomgen'; install it with "
            f"`pip install randomgen` ({exc})."
        ) from None


@contextlib.contextmanager
def seed_for_tests(seed: int) -> Iterator[np.random.Generator]:
    """Testing hook: seed the numpy samplers inside the block, then restore.

    OpenDP's central samplers are unaffected (they cannot be seeded). Never use
    this outside tests: seeded noise is predictable noise.
    """
    old = _state.get("rng")
    _state["rng"] = np.random.default_rng(seed)
    try:
        yield _state["rng"]
    finally:
        if old is None:
            _state.pop("rng", None)
        else:
            _state["rng"] = old
