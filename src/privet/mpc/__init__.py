"""MPC runtime layer: MPyC parties, secret sharing, traffic counters, MPC mechanisms.

Launching parties
    :func:`launch` runs a party program as m OS processes on localhost through
    MPyC's own TCP runtime (``-P host:port`` per party, free ports chosen at
    launch) and returns each party's result with :class:`RunStats`;
    :func:`spawn` does the same without waiting; :func:`run_local` runs the
    program in this process with MPyC's one-party runtime (unit tests). On
    real hosts, start ``python -m privet.mpc.party TARGET ... -P a:port -P b:port
    -P c:port -I i`` on each host (see :mod:`privet.mpc.party`).

Failures
    A party that dies, raises, or stops answering makes the others exit
    within ``timeout``; the launcher raises :class:`MPCPartyError` naming it.

Costs
    :class:`PartyStats` per party: program wall time, MPyC message bytes sent
    and received, messages, and message batches (an upper bound on rounds).

Data
    :func:`share_horizontal`, :func:`share_vertical`, :func:`share_array` input
    numpy arrays as MPyC secure arrays; :func:`reveal` is the only opening,
    with hooks (:func:`add_reveal_hook`) for the ledger.

Mechanisms (seed 000, App. C.3)
    :class:`SecureLaplace` (Algorithm 12) and :class:`SecureExponentialMechanism`
    (Algorithm 13) on secure fixed-point arrays, built on the secure log/exp
    of :mod:`privet.mpc.fixedpoint`.

Example
-------
::

    from privet.mpc import launch

    run = launch("privet.mpc.programs:laplace_counts", {"n_counts": 100, "epsilon": 0.5})
    noisy = run.results[0]["noisy"]          # identical in every party
    for p in run.stats.parties:
        print(p.party, p.seconds, p.bytes_sent, p.bytes_received, p.message_batches)

Importing this package does not import MPyC; the submodules that need its
runtime load it on first use (see :mod:`privet.mpc._runtime` for which
command line MPyC then reads).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "launch": "privet.mpc.launcher",
    "spawn": "privet.mpc.launcher",
    "run_local": "privet.mpc.launcher",
    "free_ports": "privet.mpc.launcher",
    "MPCPartyError": "privet.mpc.launcher",
    "PartyGroup": "privet.mpc.launcher",
    "PartyContext": "privet.mpc.party",
    "load_target": "privet.mpc.party",
    "PartyStats": "privet.mpc.stats",
    "RunStats": "privet.mpc.stats",
    "RunResult": "privet.mpc.stats",
    "share_array": "privet.mpc.sharing",
    "share_horizontal": "privet.mpc.sharing",
    "share_vertical": "privet.mpc.sharing",
    "exchange_shapes_public": "privet.mpc.sharing",
    "to_fixed_point": "privet.mpc.sharing",
    "reveal": "privet.mpc.sharing",
    "add_reveal_hook": "privet.mpc.sharing",
    "RevealEvent": "privet.mpc.sharing",
    "secfxp_type": "privet.mpc.fixedpoint",
    "secure_log2": "privet.mpc.fixedpoint",
    "secure_ln": "privet.mpc.fixedpoint",
    "secure_exp": "privet.mpc.fixedpoint",
    "SecureLaplace": "privet.mpc.mechanisms",
    "SecureExponentialMechanism": "privet.mpc.mechanisms",
    "PAPER_CLIP_THRESHOLD": "privet.mpc.mechanisms",
    "get_runtime": "privet.mpc._runtime",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'privet.mpc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
