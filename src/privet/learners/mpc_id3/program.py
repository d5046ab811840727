"""Party program of MPC-ID3 (seed 000, the no-DP baseline), for :func:`privet.mpc.launch`.

Run by hand on three hosts, e.g.::

    python -m privet.mpc.party privet.learners.mpc_id3.program:train_mpc_id3 \
        --args '{"data": "mine.npz", "rows": [600, 600, 528], "sizes": [4,4,4,3,3,3],
                 "n_classes": 4, "depth": 3}' -P a:11365 -P b:11365 -P c:11365 -I 0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privet.learners._protocols.common import (
    bits_needed,
    check_range,
)
from privet.learners._protocols.programs import (
    RevealLog,
    input_training_data,
)
from privet.learners.mpc_id3.protocol import mpc_id3
from privet.mpc.party import PartyContext


async def train_mpc_id3(
    ctx: PartyContext,
    data: Any = None,
    rows: Sequence[int] = (),
    sizes: Sequence[int] = (),
    n_classes: int = 2,
    depth: int = 3,
    bit_length: int | None = None,
    owner_tables: bool = False,
) -> dict[str, Any]:
    """MPC-ID3 (max operator, tree opened); see :func:`privet.learners.mpc_id3.protocol.mpc_id3`.

    ``bit_length=None`` takes the smallest secure-integer length whose
    comparisons are exact for this data (the largest value compared is a
    split key, below (n + 1) * m + m): comparisons cost about one secret random
    bit per bit of length, so this is 2x faster than the paper's 32 bits on Car.

    ``owner_tables=True``: each party counts its own rows of the (public) paths
    and inputs those tables (:class:`~privet.learners._protocols.common.OwnerTables`)
    instead of its one-hot rows; the same values are opened, at a cost that no
    longer grows with the rows (needs every data owner to be a party).
    """
    n = sum(int(r) for r in rows)
    largest = (n + 1) * len(sizes) + len(sizes)
    secint = ctx.runtime.SecInt(bits_needed(largest) if bit_length is None else int(bit_length))
    check_range("the split keys (n + 1) * m + m", largest, secint)
    with RevealLog() as log:
        D, C, tables = await input_training_data(
            ctx, data, rows, sizes, n_classes, secint, owner_tables=owner_tables
        )
        nodes = await mpc_id3(D, C, sizes, depth, tables=tables)
    return {"nodes": nodes, "reveals": log.events, "testing_noise": False}
