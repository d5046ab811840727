"""Run CDP+PMPC-ID3 from the host: split the rows over the owners, launch, collect the openings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np

from privet.learners._protocols.host import (
    LaunchOptions,
    TreeRun,
    _tree_run,
    run_program,
)
from privet.learners._protocols.numbers import SecureNumbers

PROGRAMS = "privet.learners.partial_mpc_id3.program"


def run_partial_mpc_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    sizes: Sequence[int],
    n_classes: int,
    *,
    depth: int,
    epsilon: float,
    leaf: str = "laplace",
    numbers: SecureNumbers | None = None,
    sample_rate: float | None = None,
    owner_tables: bool = False,
    sorted_table: bool = False,
    _testing_noise: int | None = None,
    **launch: Unpack[LaunchOptions],
) -> TreeRun:
    """CDP+PMPC-ID3 (Alg. 7-10); ``epsilon`` is the per-query budget epsilon / (h + 1).

    ``depth`` must already be capped at the number of attributes (the
    learner's ``plan_depth``). ``numbers``: the secure type and the samplers
    (:class:`~privet.learners._protocols.numbers.SecureNumbers`; its
    ``laplace_sensitivity`` must be the ledger's, which the replay checks).
    ``sample_rate=g`` trains on a secret Poisson subsample of rate g drawn
    inside MPC (App. D.1 forests). ``owner_tables=True``: owners input their
    local counts of the public paths (same openings, cost independent of the
    rows; see ``train_partial_mpc_id3``). ``sorted_table=True``: the rows are kept
    secretly sorted by node in the vector engine (same openings of DP values, plus
    data-independent openings; cost linear in the rows). ``launch``: ``backend``, ``parties``,
    ``timeout``, ``run_timeout`` of :func:`~privet.learners._protocols.host.run_program`.
    """
    args: dict[str, Any] = {
        "sizes": [int(s) for s in sizes],
        "n_classes": int(n_classes),
        "depth": int(depth),
        "epsilon": float(epsilon),
        "leaf": leaf,
        **(numbers if numbers is not None else SecureNumbers()).args(),
        "sample_rate": None if sample_rate is None else float(sample_rate),
    }
    if owner_tables:
        args["owner_tables"] = True
    if sorted_table:
        args["sorted_table"] = True
    if _testing_noise is not None:
        args["_testing_noise"] = int(_testing_noise)
    result = run_program(f"{PROGRAMS}:train_partial_mpc_id3", args, codes, y_codes, **launch)
    return _tree_run(result, args)
