"""Run the seed-000 protocols from a host process and turn their output into privet objects.

The host (a learner's ``fit``, a benchmark, a test) holds the training rows.
It hands each party its own block of rows (horizontal partition, one data
owner per party, written to a private temporary file that only that party
reads), runs the party program with :func:`privet.mpc.launch` (``backend=
"mpc"``: real party processes over TCP) or :func:`privet.mpc.run_local`
(``backend="local"``: MPyC's one-party runtime in this process), and
collects what the protocol opened:

* each system's ``host`` module (e.g. :mod:`privet.learners.mpc_id3.host`) returns a :class:`TreeRun`
  (the opened tree as ``{path: node}``, the reveal log, the run's cost);
  :meth:`TreeRun.tree` builds the privet :class:`~privet.learners._trees.tree.Tree`
  in the node order of the plaintext learners.
* :func:`run_oblivious_id3` returns a :class:`SharedModel` (every party's
  shares of the secret tree: in a deployment each server keeps its own);
  :func:`run_oblivious_predict` runs Algorithm 4 on the querier's records.
* A system's ``ReplayOps`` lets :func:`privet.learners.partial_mpc_id3.reference.grow_partial_mpc`
  replay a protocol run: the reference control flow charges the ledger
  exactly as for the reference path, and takes its choices and leaf values
  from the protocol's openings.

This module holds what the systems share: splitting rows over owners, running a
party program, and the run objects.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from privet.errors import InvalidParameterError, MPCError
from privet.learners._trees.accounting import NoiseAccounting
from privet.learners._trees.tree import Tree, TreeBuilder
from privet.mpc.launcher import launch, run_local
from privet.mpc.stats import RunResult, RunStats

#: Prefix of the private folder (mode 0700) in which the host writes each owner's rows.
OWNER_DIR_PREFIX = "privet-owners-"
BACKENDS = ("mpc", "local")


NodePath = tuple[int, ...]


def split_rows(n: int, parties: int) -> list[int]:
    """Rows per data owner when n rows are split into contiguous blocks."""
    return [len(b) for b in np.array_split(np.arange(n), parties)]


def _check_backend(backend: str, parties: int) -> None:
    if backend not in BACKENDS:
        raise InvalidParameterError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if isinstance(parties, bool) or not isinstance(parties, int) or parties < 1:
        raise InvalidParameterError(f"parties must be an int >= 1, got {parties!r}.")


class LaunchOptions(TypedDict, total=False):
    """How a system's runner runs its program: the keywords it passes on to :func:`run_program`."""

    backend: str
    parties: int
    timeout: float
    run_timeout: float | None


def run_program(
    target: str,
    args: Mapping[str, Any],
    codes: np.ndarray,
    y_codes: np.ndarray,
    *,
    backend: str = "mpc",
    parties: int = 3,
    timeout: float = 60.0,
    run_timeout: float | None = None,
) -> RunResult:
    """Run party program ``target`` ("module:function") with the rows split over the parties as data owners.

    ``backend``: ``"mpc"`` (``parties`` real party processes, ``timeout`` and
    ``run_timeout`` as for :func:`privet.mpc.launch`) or ``"local"`` (one party
    in this process).

    Raises
    ------
    MPCPartyError
        (an :class:`~privet.errors.MPCError`) if a party dies, raises or stops answering.
    """
    _check_backend(backend, parties)
    codes = np.asarray(codes, dtype=np.int64)
    y_codes = np.asarray(y_codes, dtype=np.int64)
    if backend == "local":
        local_args = {**args, "data": {"codes": codes, "y": y_codes}, "rows": [codes.shape[0]]}
        return run_local(target, local_args)
    rows = split_rows(codes.shape[0], parties)
    starts = np.concatenate(([0], np.cumsum(rows)))
    with tempfile.TemporaryDirectory(prefix=OWNER_DIR_PREFIX) as tmp:
        party_args = []
        for i in range(parties):
            if rows[i] == 0:
                party_args.append({"data": None})
                continue
            path = Path(tmp) / f"owner{i}.npz"
            block = slice(int(starts[i]), int(starts[i + 1]))
            np.savez(path, codes=codes[block], y=y_codes[block])
            party_args.append({"data": str(path)})
        return launch(
            target,
            {**args, "rows": rows},
            parties=parties,
            party_args=party_args,
            timeout=timeout,
            run_timeout=run_timeout,
        )


@dataclass(frozen=True)
class TreeRun:
    """What a tree-opening protocol produced.

    Attributes
    ----------
    nodes : dict
        ``{path: node}``, path the tuple of branch indices from the root.
        Internal nodes have ``"split"``; leaves ``"label"`` or ``"value"``.
    reveals : tuple of dict
        Party 0's log of openings: label, shape and paying entry of each.
    stats : RunStats
        Time and traffic per party.
    testing_noise : bool
        True if the run used public testing noise (no privacy at all).
    params : dict
        The public parameters of the run (depth, budgets, sensitivities, ...).
    """

    nodes: dict[NodePath, dict[str, Any]]
    reveals: tuple[dict[str, Any], ...]
    stats: RunStats = field(repr=False)
    testing_noise: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    def tree(self, sizes: Sequence[int], n_classes: int) -> Tree:
        """The opened tree as a privet Tree, nodes numbered as the plaintext learners do.

        Leaves with a ``"label"`` get its one-hot row; leaves with a
        ``"value"`` (noisy counts) keep it.
        """
        builder = TreeBuilder(n_classes)
        eye = np.eye(n_classes)

        def build(node: int, path: NodePath) -> None:
            entry = self.nodes[path]
            if "split" not in entry:
                value = entry["value"] if "value" in entry else eye[entry["label"]]
                builder.set_leaf(node, value)
                return
            a = int(entry["split"])
            for v, kid in enumerate(builder.split(node, a, int(sizes[a]))):
                build(kid, (*path, v))

        build(builder.add_node(0), ())
        return builder.build()


def _tree_run(result: RunResult, params: Mapping[str, Any]) -> TreeRun:
    first = result.results[0]
    for other in result.results[1:]:
        if other["nodes"] != first["nodes"]:  # pragma: no cover - protocol invariant
            raise MPCError("the parties opened different trees; the run is inconsistent.")
    return TreeRun(
        nodes=first["nodes"],
        reveals=tuple(first["reveals"]),
        stats=result.stats,
        testing_noise=bool(first["testing_noise"]),
        params=dict(params),
    )


@dataclass(frozen=True)
class PredictRun:
    """Labels learnt by the querier (class indices) and the cost of Algorithm 4."""

    labels: np.ndarray
    querier: int
    stats: RunStats = field(repr=False)
    others_learnt: tuple[Any, ...] = ()

    @classmethod
    def from_result(cls, result: RunResult, querier: int, **extra: Any) -> PredictRun:
        """The labels the querier's program returned in ``result``, what the others got, the cost."""
        return cls(
            labels=np.asarray(result.results[querier]["labels"], dtype=np.int64),
            querier=querier,
            stats=result.stats,
            others_learnt=tuple(r["labels"] for i, r in enumerate(result.results) if i != querier),
            **extra,
        )


def check_noise(params: dict[str, Any], accounting: NoiseAccounting) -> None:
    """Refuse to replay a run whose MPC noise differs from what the learner charges.

    The sampler, its security bits and its form (``monotone``: the scale ceil(Δ)/ε of
    report-noisy-max, which the charges' delta follows) must all be the learner's.
    """
    made = params.get("mpc_noise", "fixed_point")
    monotone = bool(params.get("monotone", False))
    if (
        made != accounting.mpc_noise
        or int(params.get("security_bits", 40)) != int(accounting.security_bits)
        or monotone != accounting.monotone
    ):
        raise InvalidParameterError(
            f"the protocol ran with mpc_noise={made!r}, security_bits="
            f"{params.get('security_bits')}, monotone={monotone}, but the replay charges "
            f"{accounting.mpc_noise!r}, {accounting.security_bits}, monotone="
            f"{accounting.monotone}; run the protocol with the learner's noise."
        )
