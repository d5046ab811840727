"""The owners' local randomisers for seed 004, on :mod:`privet.mechanisms`.

Every data owner's share is a vector in [-1, 1]^D (Sec. 3.4: inputs scaled with
public bounds). :func:`perturb` perturbs the shares of one group of owners in one
vectorised call of the chosen multi-dimensional randomiser and charges the
group's ledger scope once: each owner's record is perturbed once with an
epsilon-LDP randomiser (replace-one relation, :class:`~privet.ledger.LocalRandomiser`).

- ``"piecewise"``: Alg. 4 of seed 004 (:class:`~privet.mechanisms.PiecewiseMultiMechanism`,
  k = max(1, min(D, floor(eps / 2.5))) attributes sampled, each by Alg. 3 at eps / k);
- ``"duchi"``: Duchi et al.'s multi-dimensional mechanism
  (:class:`~privet.mechanisms.DuchiMultiMechanism`);
- ``"laplace"``: Laplace per attribute with the budget split over the D attributes
  (:class:`~privet.mechanisms.LocalLaplace`, Sec. 4: "each attribute ... eps/d").

No batch API is missing from :mod:`privet.mechanisms`: the Multi mechanisms
already perturb an (n, D) array in one call, so this module only chooses the
mechanism, builds its ledger entry for the privacy plan, and holds the testing
hook that switches the noise off (:func:`without_noise`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.ledger import Claim, Entry, NonPrivate, Scope
from privet.mechanisms import (
    DuchiMultiMechanism,
    LocalLaplace,
    LocalMechanism,
    PiecewiseMultiMechanism,
)

MECHANISMS = ("piecewise", "duchi", "laplace")
NOISE_OFF_REASON = (
    "testing hook without_noise(): the owners' shares were released unperturbed (no DP)"
)

_state = {"noise_off": False}


@functools.lru_cache(maxsize=256)
def make_randomiser(name: str, epsilon: float, dimension: int) -> LocalMechanism:
    """The epsilon-LDP randomiser for a record in [-1, 1]^dimension."""
    if name == "piecewise":
        return PiecewiseMultiMechanism(epsilon=epsilon, dimension=dimension)
    if name == "duchi":
        return DuchiMultiMechanism(epsilon=epsilon, dimension=dimension)
    if name == "laplace":
        return LocalLaplace(epsilon=epsilon, dimension=dimension)
    raise InvalidParameterError(
        f"Unknown local randomiser {name!r}; use one of {list(MECHANISMS)}."
    )


def randomiser_entry(name: str, epsilon: float, dimension: int) -> Entry:
    """The ledger entry one call of :func:`perturb` charges (for the privacy plan)."""
    if _state["noise_off"]:
        return NonPrivate(reason=NOISE_OFF_REASON)
    return make_randomiser(name, float(epsilon), int(dimension)).entry()


def noise_is_off() -> bool:
    return _state["noise_off"]


@contextlib.contextmanager
def without_noise(*, i_understand_this_is_not_private: bool = False) -> Iterator[None]:
    """Testing hook: inside the block the owners' shares are NOT perturbed.

    For checking the boosting arithmetic against scikit-learn's SAMME. Each
    unperturbed release is charged as :class:`~privet.ledger.NonPrivate`, so a
    fit inside the block needs a ledger with an unbounded budget and reports
    epsilon = infinity. Refused unless the keyword acknowledgement is given.
    """
    if i_understand_this_is_not_private is not True:
        raise InvalidParameterError(
            "without_noise() releases the owners' data unperturbed; it is a testing hook. "
            "Call without_noise(i_understand_this_is_not_private=True) in tests only."
        )
    old = _state["noise_off"]
    _state["noise_off"] = True
    try:
        yield
    finally:
        _state["noise_off"] = old


def perturb(
    name: str,
    epsilon: float,
    records: np.ndarray,
    *,
    scope: Scope,
    caller: str,
    step: str,
    claim: Claim | None = None,
) -> np.ndarray:
    """Charge ``scope`` once, then perturb each row of ``records`` (n, D) in [-1, 1]^D.

    Values outside [-1, 1] are refused before the charge (the randomiser checks).
    """
    records = np.asarray(records, dtype=float)
    if records.ndim != 2:
        raise InvalidParameterError(f"records must be 2-D (owners, D); got {records.shape}.")
    if _state["noise_off"]:
        if np.any(np.abs(records) > 1.0):
            raise InvalidParameterError("records must lie in [-1, 1].")
        scope.charge(
            NonPrivate(reason=NOISE_OFF_REASON),
            mechanism="no noise (testing hook)",
            caller=caller,
            step=step,
            claim=claim,
        )
        return records.copy()
    mech = make_randomiser(name, float(epsilon), int(records.shape[1]))
    out: Any = mech(records, scope=scope, caller=caller, step=step, claim=claim)
    return np.asarray(out, dtype=float).reshape(records.shape)


__all__ = [
    "MECHANISMS",
    "make_randomiser",
    "noise_is_off",
    "perturb",
    "randomiser_entry",
    "without_noise",
]
