"""The switch that allows public testing noise, for every protocol with a testing hook.

Public noise is no noise: a run with it has no privacy at all. A process may use it
only when the environment variable ``PRIVET_TESTING_NOISE`` is set to
``"fixed-noise-breaks-privacy"`` (party processes inherit the launcher's
environment); :func:`testing_seed` is the one check, made by seed 000's
:class:`~privet.learners._protocols.noise.FixedNoise` and by the federated CART
(seed 003). This module imports nothing from :mod:`privet.mpc`, so plaintext
reference paths use it without starting an MPC runtime.
"""

from __future__ import annotations

import os

import numpy as np

from privet.errors import PrivetError

ENV_VAR = "PRIVET_TESTING_NOISE"
ENV_ALLOW = "fixed-noise-breaks-privacy"


def testing_noise_allowed() -> bool:
    """Whether this process may use public testing noise (see module docstring)."""
    return os.environ.get(ENV_VAR) == ENV_ALLOW


def testing_seed(seed: object, refused: type[PrivetError], advice: str) -> int:
    """``seed`` as an int, if this process may use public testing noise; else raise ``refused``.

    ``advice`` ends the refusal's message: how a test switches the noise on, or
    how to do without it. A seed that is not an int is refused too.
    """
    if not testing_noise_allowed():
        raise refused(
            "Public testing noise was requested (_testing_noise=...), which removes all "
            "privacy from the run; it is only for agreement tests. Set the environment "
            f"variable {ENV_VAR}={ENV_ALLOW} in a test {advice}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise refused(f"_testing_noise must be an int seed, got {seed!r}.")
    return int(seed)
