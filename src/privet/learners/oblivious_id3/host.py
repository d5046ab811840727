"""Run ODP+FMPC-ID3 from the host: train a secret-shared model, predict obliviously."""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from privet.errors import InvalidParameterError
from privet.learners._protocols.host import (
    LaunchOptions,
    PredictRun,
    _check_backend,
    run_program,
)
from privet.learners._protocols.numbers import SecureNumbers
from privet.mpc.launcher import launch, run_local
from privet.mpc.stats import RunStats

PROGRAMS = "privet.learners.oblivious_id3.program"


@dataclass(frozen=True)
class SharedModel:
    """The secret ODP+FMPC-ID3 tree: every party's shares, as the servers would store them.

    Attributes
    ----------
    shares : tuple of dict
        Party i's shares (Shamir, evaluation point i + 1) and the model's
        public shape: ``width``, ``n_attributes``, ``n_classes``, ``depth``.
    reveals : tuple of dict
        Party 0's log of openings during training: empty on the partition-vector path; on
        the sorted table only openings labelled ``[data-independent]`` (no data, no charge).
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
        from privet.learners.oblivious_id3.protocol import reconstruct

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
    numbers: SecureNumbers | None = None,
    sample_rate: float | None = None,
    sorted_table: bool = False,
    _testing_noise: int | None = None,
    **launch: Unpack[LaunchOptions],
) -> SharedModel:
    """ODP+FMPC-ID3 (Alg. 1): train the secret complete tree; return every party's shares.

    ``split_epsilon`` is the per-level split budget of the sound variant
    (``split="exponential"``); ``leaf_epsilon`` the budget of each leaf.
    ``numbers``: the secure type and the samplers
    (:class:`~privet.learners._protocols.numbers.SecureNumbers`).
    ``sorted_table=True``: the rows kept secretly sorted in the vector engine (the same
    secret tree, a cost linear in the rows; discrete samplers, depth >= 1).
    ``launch``: ``backend``, ``parties``, ``timeout``, ``run_timeout`` of
    :func:`~privet.learners._protocols.host.run_program`.
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
        **(numbers if numbers is not None else SecureNumbers()).args(),
        "sample_rate": None if sample_rate is None else float(sample_rate),
    }
    if sorted_table:
        args["sorted_table"] = True
    if _testing_noise is not None:
        args["_testing_noise"] = int(_testing_noise)
    result = run_program(f"{PROGRAMS}:train_oblivious_id3", args, codes, y_codes, **launch)
    return SharedModel(
        shares=tuple(r["shares"] for r in result.results),
        reveals=tuple(result.results[0]["reveals"]),
        stats=result.stats,
        testing_noise=bool(result.results[0]["testing_noise"]),
        params=dict(args),
    )


def launch_prediction(
    target: str,
    key: str,
    shares: Sequence[Any],
    query_codes: np.ndarray,
    sizes: Sequence[int],
    querier: int,
    backend: str,
    timeout: float,
    run_timeout: float | None,
    extra_args: dict[str, Any] | None = None,
) -> Any:
    """Run an oblivious prediction program: party ``i`` gets ``shares[i]`` as ``key``.

    Only the querier gets the query codes. With ``backend="mpc"`` each party's
    shares and the queries go through files in a private temporary folder,
    removed on every exit path; ``"local"`` runs the one-party runtime in this
    process. Returns the launcher's result.
    """
    parties = len(shares)
    _check_backend(backend, parties)
    if not 0 <= querier < parties:
        raise InvalidParameterError(f"querier must be a party index < {parties}, got {querier}.")
    query_codes = np.asarray(query_codes, dtype=np.int64)
    bounds = np.asarray([int(v) for v in sizes], dtype=np.int64)
    if query_codes.ndim != 2 or query_codes.shape[1] != bounds.size:
        raise InvalidParameterError(
            f"queries must be codes of shape (n, {bounds.size}), got {query_codes.shape}."
        )
    if query_codes.size and ((query_codes < 0) | (query_codes >= bounds)).any():
        raise InvalidParameterError(
            "a query code lies outside its attribute's domain (the schema's sizes); encode the "
            "queries with the schema the model was trained with."
        )
    public = {
        "n_queries": int(query_codes.shape[0]),
        "sizes": [int(s) for s in sizes],
        "querier": int(querier),
        **(extra_args or {}),
    }
    if backend == "local":
        if parties != 1:
            raise InvalidParameterError(
                f"the model was trained by {parties} parties; predict with backend='mpc'."
            )
        return run_local(target, {**public, key: shares[0], "queries": query_codes})
    with tempfile.TemporaryDirectory(prefix="privet-model-") as tmp:
        party_args = []
        for i, share in enumerate(shares):
            path = Path(tmp) / f"{key}{i}.pkl"
            with open(path, "wb") as fh:  # party i's shares, nothing else
                pickle.dump(share, fh, protocol=pickle.HIGHEST_PROTOCOL)
            extra: dict[str, Any] = {key: str(path)}
            if i == querier:
                qpath = Path(tmp) / "queries.npz"
                np.savez(qpath, codes=query_codes)
                extra["queries"] = str(qpath)
            party_args.append(extra)
        return launch(
            target,
            public,
            parties=parties,
            party_args=party_args,
            timeout=timeout,
            run_timeout=run_timeout,
        )


def run_oblivious_predict(
    model: SharedModel,
    query_codes: np.ndarray,
    sizes: Sequence[int],
    *,
    querier: int = 0,
    backend: str = "mpc",
    timeout: float = 60.0,
    run_timeout: float | None = None,
    method: str = "sorted",
) -> PredictRun:
    """Algorithm 4: the querier (a party) inputs its records, only it learns the labels.

    The parties must be the ones that trained ``model`` (same number, same
    order): each loads its own shares. ``method``: ``"sorted"`` (path evaluation
    in the vector engine, cost independent of the number of leaves) or
    ``"leaves"`` (every leaf for every query, Alg. 4 unrolled); the same labels.
    """
    if method not in ("sorted", "leaves"):
        raise InvalidParameterError(f"method must be 'sorted' or 'leaves', got {method!r}.")
    target = f"{PROGRAMS}:predict_oblivious_id3"
    args = (query_codes, sizes, querier, backend, timeout, run_timeout, {"method": method})
    result = launch_prediction(target, "model", list(model.shares), *args)
    return PredictRun.from_result(result, querier)
