"""Host side of a federated CART protocol run (seed 003): start the owners, collect the releases.

:func:`run_protocol` writes each owner's binned rows to a private temporary
file that only that owner's process reads, launches K party processes with
:func:`privet.mpc.launch` (MPyC's TCP runtime as the channel, privet's
failure detection), and returns what the protocol released: every noisy sum
by key, identical in every party. The learner replays these releases through
the reference control flow to charge its ledger (:class:`~.reference.ReplayOps`).
A run with public testing noise has no privacy: the learner never asks for
one, and :func:`run_protocol` refuses it unless the test switch is set.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privet.errors import MPCError
from privet.learners.federated_cart.grower import CartParams, PartyRows
from privet.learners.federated_cart.reference import check_testing_noise
from privet.mpc.launcher import launch
from privet.mpc.stats import RunStats

TARGET = "privet.learners.federated_cart.party:federated_cart"


@dataclass
class ProtocolRun:
    """What a protocol run released.

    Attributes
    ----------
    releases : dict
        Every noisy sum by key (party 0's copy; all parties hold the same).
    stats : RunStats
        Wall time and traffic per party (bytes sent/received through MPyC).
    rounds : int
        Number of private sums.
    view : list of bytes
        With ``_record_view``: the masked vectors the aggregator received
        from the other parties, in order.
    signatures : list
        Each party's tree signature (they must all agree).
    """

    releases: dict[str, np.ndarray]
    stats: RunStats
    rounds: int
    view: list[bytes] = field(default_factory=list)
    signatures: list[Any] = field(default_factory=list)


def run_protocol(
    params: CartParams,
    data: PartyRows,
    *,
    timeout: float = 120.0,
    run_timeout: float | None = None,
    _testing_noise: int | None = None,
    _record_view: bool = False,
    _fail_party: int | None = None,
    _fail_round: int | None = None,
) -> ProtocolRun:
    """Run the K owners as processes; raise ``MPCPartyError`` naming a party that fails."""
    if len(data.Z) != params.parties:
        raise MPCError(f"{len(data.Z)} owners' data for a {params.parties}-party protocol.")
    args: dict[str, Any] = {"params": params.to_dict()}
    if _testing_noise is not None:
        args["_testing_noise"] = check_testing_noise(_testing_noise)
    if _record_view:
        args["_record_view"] = True
    if _fail_party is not None:
        args["_fail_party"] = int(_fail_party)
        args["_fail_round"] = int(_fail_round or 0)
    with tempfile.TemporaryDirectory(prefix="privet-owners-") as tmp:
        party_args = []
        for k, (Z, y) in enumerate(zip(data.Z, data.y, strict=True)):
            path = Path(tmp) / f"owner{k}.npz"
            np.savez(path, Z=np.asarray(Z, dtype=np.int64), y=np.asarray(y, dtype=np.int64))
            party_args.append({"data": str(path)})
        result = launch(
            TARGET,
            args,
            parties=params.parties,
            party_args=party_args,
            timeout=timeout,
            run_timeout=run_timeout,
        )
    first = result.results[0]
    signatures = [r["signature"] for r in result.results]
    if any(s != signatures[0] for s in signatures):
        raise MPCError("The parties grew different trees; the protocol is broken.")
    return ProtocolRun(
        releases={k: np.asarray(v) for k, v in first["releases"].items()},
        stats=result.stats,
        rounds=int(first["rounds"]),
        view=list(first["view"]),
        signatures=signatures,
    )


__all__ = ["TARGET", "ProtocolRun", "run_protocol"]
