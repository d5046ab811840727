"""MPC protocols of seed 000: ID3 on secret shares, with and without DP.

Protocols (MPyC coroutines on secure arrays, one module each)
    :func:`~privet.mpc.protocols.mpc_id3.mpc_id3`
        MPC-ID3: the max-operator ID3 of de Hoogh et al., no DP, tree opened.
    :func:`~privet.mpc.protocols.partial_mpc_id3.partial_mpc_id3`
        CDP+PMPC-ID3 (Algorithms 7-10): EM splits and DP leaves opened.
    :func:`~privet.mpc.protocols.oblivious_id3.oblivious_id3` and
    :func:`~privet.mpc.protocols.oblivious_id3.oblivious_predict`
        ODP+FMPC-ID3 (Algorithms 1-4): a secret complete w-ary tree with DP
        leaves; only the querier learns a prediction.

(The protocol functions share their module's name, so they are reached
through the modules, e.g. ``privet.mpc.protocols.mpc_id3.mpc_id3``.)

Running them (:mod:`privet.mpc.protocols.host`)
    :func:`run_mpc_id3`, :func:`run_partial_mpc_id3`, :func:`run_oblivious_id3`,
    :func:`run_oblivious_predict` split the host's rows over the parties (one
    data owner each), run the party programs of
    :mod:`privet.mpc.protocols.programs` with 3 (or m) real party processes
    (``backend="mpc"``) or MPyC's one-party runtime (``backend="local"``), and
    return the opened tree (:class:`TreeRun`), the parties' shares of a
    secret model (:class:`SharedModel`) or the querier's labels, with the
    run's time and traffic.

Ledger
    Every opening goes through :func:`privet.mpc.reveal` with the entry that
    pays for it (a mechanism, or :class:`~privet.ledger.NonPrivate`), and is
    logged per party (``TreeRun.reveals``). :class:`ReplayOps` charges a
    CDP+PMPC-ID3 run to a ledger through the reference control flow;
    :func:`charge_oblivious_run` charges an ODP+FMPC-ID3 run without putting
    its secret splits into the ledger.

Testing
    :mod:`privet.mpc.protocols.testing`: fixed public noise for agreement
    tests with the plaintext reference paths (refused outside tests).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "run_mpc_id3": "privet.mpc.protocols.host",
    "run_partial_mpc_id3": "privet.mpc.protocols.host",
    "run_oblivious_id3": "privet.mpc.protocols.host",
    "run_oblivious_predict": "privet.mpc.protocols.host",
    "run_program": "privet.mpc.protocols.host",
    "TreeRun": "privet.mpc.protocols.host",
    "SharedModel": "privet.mpc.protocols.host",
    "PredictRun": "privet.mpc.protocols.host",
    "ReplayOps": "privet.mpc.protocols.replay",
    "charge_oblivious_run": "privet.mpc.protocols.replay",
    "oblivious_predict": "privet.mpc.protocols.oblivious_id3",
    "SecretTree": "privet.mpc.protocols.oblivious_id3",
    "SecureNoise": "privet.mpc.protocols._noise",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'privet.mpc.protocols' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


# Forests of secret ODP+FMPC-ID3 trees (seed 000, App. D): one oblivious majority vote.
_EXPORTS.update(
    {
        "ForestPredictRun": "privet.mpc.protocols.oblivious_forest",
        "run_oblivious_forest_predict": "privet.mpc.protocols.oblivious_forest",
    }
)
__all__ = sorted(_EXPORTS)
