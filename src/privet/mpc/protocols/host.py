"""Run the seed-000 protocols from a host process and turn their output into privet objects.

The host (a learner's ``fit``, a benchmark, a test) holds the training rows.
It hands each party its own block of rows (horizontal partition, one data
owner per party, written to a private temporary file that only that party
reads), runs the party program with :func:`privet.mpc.launch` (``backend=
"mpc"``: real party processes over TCP) or :func:`privet.mpc.run_local`
(``backend="local"``: MPyC's one-party runtime in this process), and
collects what the protocol opened:

* :func:`run_mpc_id3`, :func:`run_partial_mpc_id3` return a :class:`TreeRun`
  (the opened tree as ``{path: node}``, the reveal log, the run's cost);
  :meth:`TreeRun.tree` builds the privet :class:`~privet.learners._tree.Tree`
  in the node order of the plaintext learners.
* :func:`run_oblivious_id3` returns a :class:`SharedModel` (every party's
  shares of the secret tree: in a deployment each server keeps its own);
  :func:`run_oblivious_predict` runs Algorithm 4 on the querier's records.
* :class:`ReplayOps` lets :func:`privet.learners.partial_mpc_id3.grow_partial_mpc`
  replay a protocol run: the reference control flow charges the ledger
  exactly as for the reference path, and takes its choices and leaf values
  from the protocol's openings.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError, MPCError
from privet.learners._tree import Tree, TreeBuilder
from privet.mpc.launcher import launch, run_local
from privet.mpc.stats import RunResult, RunStats

PROGRAMS = "privet.mpc.protocols.programs"
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


def run_program(
    name: str,
    args: Mapping[str, Any],
    codes: np.ndarray,
    y_codes: np.ndarray,
    *,
    backend: str = "mpc",
    parties: int = 3,
    timeout: float = 60.0,
    run_timeout: float | None = None,
) -> RunResult:
    """Run party program ``name`` with the rows split over the parties as data owners.

    Raises
    ------
    MPCPartyError
        (an :class:`~privet.errors.MPCError`) if a party dies, raises or stops answering.
    """
    _check_backend(backend, parties)
    codes = np.asarray(codes, dtype=np.int64)
    y_codes = np.asarray(y_codes, dtype=np.int64)
    target = f"{PROGRAMS}:{name}"
    if backend == "local":
        local_args = {**args, "data": {"codes": codes, "y": y_codes}, "rows": [codes.shape[0]]}
        return run_local(target, local_args)
    rows = split_rows(codes.shape[0], parties)
    starts = np.concatenate(([0], np.cumsum(rows)))
    with tempfile.TemporaryDirectory(prefix="privet-owners-") as tmp:
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


# -------------------------------------------------------------- opened trees


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


def run_mpc_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    sizes: Sequence[int],
    n_classes: int,
    *,
    depth: int,
    bit_length: int | None = None,
    backend: str = "mpc",
    parties: int = 3,
    timeout: float = 60.0,
    run_timeout: float | None = None,
) -> TreeRun:
    """MPC-ID3 (max operator, no DP, tree opened) on the rows split over ``parties`` owners.

    ``bit_length=None``: the smallest exact secure-integer length for the data.
    """
    args = {
        "sizes": [int(s) for s in sizes],
        "n_classes": int(n_classes),
        "depth": int(depth),
        "bit_length": None if bit_length is None else int(bit_length),
    }
    result = run_program(
        "train_mpc_id3",
        args,
        codes,
        y_codes,
        backend=backend,
        parties=parties,
        timeout=timeout,
        run_timeout=run_timeout,
    )
    return _tree_run(result, args)


def run_partial_mpc_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    sizes: Sequence[int],
    n_classes: int,
    *,
    depth: int,
    epsilon: float,
    leaf: str = "laplace",
    bit_length: int = 32,
    frac_length: int | None = None,
    clip_threshold: float | None = None,
    laplace_sensitivity: float = 1.0,
    mpc_noise: str = "fixed_point",
    security_bits: int = 40,
    sample_rate: float | None = None,
    backend: str = "mpc",
    parties: int = 3,
    timeout: float = 60.0,
    run_timeout: float | None = None,
    _testing_noise: int | None = None,
) -> TreeRun:
    """CDP+PMPC-ID3 (Alg. 7-10); ``epsilon`` is the per-query budget epsilon / (h + 1).

    ``depth`` must already be capped at the number of attributes (the
    learner's ``plan_depth``). ``laplace_sensitivity`` is the L1 sensitivity
    of a leaf's class counts under the ledger's neighbouring relation (1 for
    add/remove, 2 for replace-one; ``partial_mpc_id3.laplace_sensitivity``).
    ``mpc_noise`` picks the samplers: ``"fixed_point"`` (the paper's Alg.
    12-13, no proven DP) or ``"discrete"`` (:mod:`privet.mpc.discrete`).
    ``sample_rate=g`` trains on a secret Poisson subsample of rate g drawn
    inside MPC (App. D.1 forests).
    """
    args: dict[str, Any] = {
        "sizes": [int(s) for s in sizes],
        "n_classes": int(n_classes),
        "depth": int(depth),
        "epsilon": float(epsilon),
        "leaf": leaf,
        "bit_length": int(bit_length),
        "frac_length": frac_length,
        "clip_threshold": clip_threshold,
        "laplace_sensitivity": float(laplace_sensitivity),
        "mpc_noise": mpc_noise,
        "security_bits": int(security_bits),
        "sample_rate": None if sample_rate is None else float(sample_rate),
    }
    if _testing_noise is not None:
        args["_testing_noise"] = int(_testing_noise)
    result = run_program(
        "train_partial_mpc_id3",
        args,
        codes,
        y_codes,
        backend=backend,
        parties=parties,
        timeout=timeout,
        run_timeout=run_timeout,
    )
    return _tree_run(result, args)


# ------------------------------------------------------------ secret models


@dataclass(frozen=True)
class SharedModel:
    """The secret ODP+FMPC-ID3 tree: every party's shares, as the servers would store them.

    Attributes
    ----------
    shares : tuple of dict
        Party i's shares (Shamir, evaluation point i + 1) and the model's
        public shape: ``width``, ``n_attributes``, ``n_classes``, ``depth``.
    reveals : tuple of dict
        Party 0's log of openings during training (empty: nothing is opened).
    stats : RunStats
    testing_noise : bool
    params : dict
        The public parameters of the run.
    """

    shares: tuple[dict[str, Any], ...]
    reveals: tuple[dict[str, Any], ...]
    stats: RunStats = field(repr=False)
    testing_noise: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_parties(self) -> int:
        return len(self.shares)

    @property
    def depth(self) -> int:
        return len(self.shares[0]["arrays"]) - 1

    def reconstruct(self) -> dict[str, Any]:
        """Recombine the secret tree: for tests and debugging only (it defeats the protocol)."""
        from privet.mpc.protocols.oblivious_id3 import reconstruct

        return reconstruct(self.shares)


def run_oblivious_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    sizes: Sequence[int],
    n_classes: int,
    *,
    depth: int,
    split: str = "exact",
    split_epsilon: float | None = None,
    leaf_epsilon: float = 1.0,
    leaf: str = "laplace",
    width: int | None = None,
    bit_length: int = 32,
    frac_length: int | None = None,
    clip_threshold: float | None = None,
    laplace_sensitivity: float = 1.0,
    mpc_noise: str = "fixed_point",
    security_bits: int = 40,
    sample_rate: float | None = None,
    backend: str = "mpc",
    parties: int = 3,
    timeout: float = 60.0,
    run_timeout: float | None = None,
    _testing_noise: int | None = None,
) -> SharedModel:
    """ODP+FMPC-ID3 (Alg. 1): train the secret complete tree; return every party's shares.

    ``split_epsilon`` is the per-level split budget of the sound variant
    (``split="exponential"``); ``leaf_epsilon`` the budget of each leaf.
    """
    args: dict[str, Any] = {
        "sizes": [int(s) for s in sizes],
        "n_classes": int(n_classes),
        "depth": int(depth),
        "width": None if width is None else int(width),
        "split": split,
        "split_epsilon": None if split_epsilon is None else float(split_epsilon),
        "leaf_epsilon": float(leaf_epsilon),
        "leaf": leaf,
        "bit_length": int(bit_length),
        "frac_length": frac_length,
        "clip_threshold": clip_threshold,
        "laplace_sensitivity": float(laplace_sensitivity),
        "mpc_noise": mpc_noise,
        "security_bits": int(security_bits),
        "sample_rate": None if sample_rate is None else float(sample_rate),
    }
    if _testing_noise is not None:
        args["_testing_noise"] = int(_testing_noise)
    result = run_program(
        "train_oblivious_id3",
        args,
        codes,
        y_codes,
        backend=backend,
        parties=parties,
        timeout=timeout,
        run_timeout=run_timeout,
    )
    return SharedModel(
        shares=tuple(r["shares"] for r in result.results),
        reveals=tuple(result.results[0]["reveals"]),
        stats=result.stats,
        testing_noise=bool(result.results[0]["testing_noise"]),
        params=dict(args),
    )


@dataclass(frozen=True)
class PredictRun:
    """Labels learnt by the querier (class indices) and the cost of Algorithm 4."""

    labels: np.ndarray
    querier: int
    stats: RunStats = field(repr=False)
    others_learnt: tuple[Any, ...] = ()


def run_oblivious_predict(
    model: SharedModel,
    query_codes: np.ndarray,
    sizes: Sequence[int],
    *,
    querier: int = 0,
    backend: str = "mpc",
    timeout: float = 60.0,
    run_timeout: float | None = None,
) -> PredictRun:
    """Algorithm 4: the querier (a party) inputs its records, only it learns the labels.

    The parties must be the ones that trained ``model`` (same number, same
    order): each loads its own shares.
    """
    parties = model.n_parties
    _check_backend(backend, parties)
    if not 0 <= querier < parties:
        raise InvalidParameterError(f"querier must be a party index < {parties}, got {querier}.")
    query_codes = np.asarray(query_codes, dtype=np.int64)
    public = {
        "n_queries": int(query_codes.shape[0]),
        "sizes": [int(s) for s in sizes],
        "querier": int(querier),
    }
    target = f"{PROGRAMS}:predict_oblivious_id3"
    if backend == "local":
        if parties != 1:
            raise InvalidParameterError(
                f"the model was trained by {parties} parties; predict with backend='mpc'."
            )
        result = run_local(target, {**public, "model": model.shares[0], "queries": query_codes})
    else:
        with tempfile.TemporaryDirectory(prefix="privet-model-") as tmp:
            party_args = []
            for i, share in enumerate(model.shares):
                path = Path(tmp) / f"model{i}.pkl"
                with open(path, "wb") as fh:
                    pickle.dump(share, fh, protocol=pickle.HIGHEST_PROTOCOL)
                extra: dict[str, Any] = {"model": str(path)}
                if i == querier:
                    qpath = Path(tmp) / "queries.npz"
                    np.savez(qpath, codes=query_codes)
                    extra["queries"] = str(qpath)
                party_args.append(extra)
            result = launch(
                target,
                public,
                parties=parties,
                party_args=party_args,
                timeout=timeout,
                run_timeout=run_timeout,
            )
    labels = result.results[querier]["labels"]
    others = tuple(r["labels"] for i, r in enumerate(result.results) if i != querier)
    return PredictRun(
        labels=np.asarray(labels, dtype=np.int64),
        querier=querier,
        stats=result.stats,
        others_learnt=others,
    )


__all__ = [
    "BACKENDS",
    "PredictRun",
    "SharedModel",
    "TreeRun",
    "run_mpc_id3",
    "run_oblivious_id3",
    "run_oblivious_predict",
    "run_partial_mpc_id3",
    "run_program",
    "split_rows",
]
