"""Run MPC-ID3 from the host: split the rows over the owners, launch, collect the tree."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import numpy as np

from privet.learners._protocols.host import (
    LaunchOptions,
    TreeRun,
    _tree_run,
    run_program,
)

PROGRAMS = "privet.learners.mpc_id3.program"


def run_mpc_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    sizes: Sequence[int],
    n_classes: int,
    *,
    depth: int,
    bit_length: int | None = None,
    owner_tables: bool = False,
    **launch: Unpack[LaunchOptions],
) -> TreeRun:
    """MPC-ID3 (max operator, no DP, tree opened) on the rows split over ``parties`` owners.

    ``bit_length=None``: the smallest exact secure-integer length for the data.
    ``owner_tables=True``: owners input their local counts of the public paths
    (same openings, cost independent of the rows; see ``train_mpc_id3``).
    ``launch``: ``backend``, ``parties``, ``timeout``, ``run_timeout`` of
    :func:`~privet.learners._protocols.host.run_program`.
    """
    args = {
        "sizes": [int(s) for s in sizes],
        "n_classes": int(n_classes),
        "depth": int(depth),
        "bit_length": None if bit_length is None else int(bit_length),
    }
    if owner_tables:
        args["owner_tables"] = True
    result = run_program(f"{PROGRAMS}:train_mpc_id3", args, codes, y_codes, **launch)
    return _tree_run(result, args)
