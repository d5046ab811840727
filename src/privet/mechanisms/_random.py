"""Randomness for the numpy-vectorised samplers (local randomisers, gamma shares).

Central noise is drawn by OpenDP's samplers, which use the operating system's
CSPRNG and cannot be seeded. The local randomisers and the gamma shares of the
distributed Laplace are vectorised numpy; each call draws from a fresh
:class:`numpy.random.Generator` (PCG64DXSM) seeded with 256 bits from the
operating system's CSPRNG (:mod:`secrets`).

Threat model. PCG64DXSM is a fast statistical generator, not a cryptographic
one: an adversary who saw enough *raw* outputs of one generator could in
principle reconstruct its state and predict its other outputs. privet's
releases are not raw outputs (each is a many-to-one function of several draws
and the private value), and because the generator is reseeded from the OS on
every mechanism call, a state recovered from one call says nothing about any
other call. What is not covered: an adversary who learns the raw outputs of a
call (e.g. by reading the process memory) learns that call's noise; so does
anyone who can read the memory anyway. A CSPRNG for every draw was measured
(``benchmarks/mechanisms_csprng.py``, results in ``benchmarks/results/
mechanisms_csprng.md``): reading ``os.urandom`` costs 7-40x the numpy draws
and 2.5-3.6x a whole piecewise-mechanism call (above the 2x the issue allowed),
while reseeding per call costs about 5-15% of the draws. OpenDP's bridge
(``opendp.prelude.get_np_csprng``) needs the optional ``randomgen`` package and
makes one Python call per 64 bits; :func:`use_csprng` opts into it where
``randomgen`` is installed.

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
    """The generator one mechanism call draws from: fresh, seeded from OS entropy.

    Inside :func:`seed_for_tests` (or after :func:`use_csprng`) the one
    installed generator instead.
    """
    rng = _state.get("rng")
    return _fresh() if rng is None else rng


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
