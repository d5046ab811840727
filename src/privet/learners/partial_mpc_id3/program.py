"""Party program of CDP+PMPC-ID3 (seed 000, Alg. 7-10), for :func:`privet.mpc.launch`.

The arguments it shares with the other seed-000 programs (the owners' rows, the
schema's sizes, ``_testing_noise``) are described in
:mod:`privet.learners._protocols.programs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privet.errors import InvalidParameterError
from privet.learners._protocols.common import (
    check_range,
)
from privet.learners._protocols.noise import VectorNoise, make_noise
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.programs import (
    RevealLog,
    input_training_data,
    share_sorted_table,
)
from privet.learners.partial_mpc_id3.protocol import partial_mpc_id3, partial_mpc_id3_sorted
from privet.mpc.party import PartyContext


async def train_partial_mpc_id3(
    ctx: PartyContext,
    data: Any = None,
    rows: Sequence[int] = (),
    sizes: Sequence[int] = (),
    n_classes: int = 2,
    depth: int = 3,
    epsilon: float = 1.0,
    leaf: str = "laplace",
    sample_rate: float | None = None,
    owner_tables: bool = False,
    sorted_table: bool = False,
    _testing_noise: int | None = None,
    **numbers: Any,
) -> dict[str, Any]:
    """CDP+PMPC-ID3 (Alg. 7-10) at ``epsilon`` per query (the learner's epsilon / (h + 1)).

    ``numbers``: the keys of a :class:`~privet.learners._protocols.numbers.SecureNumbers`
    (secure type and samplers). ``sample_rate``: train on a secret Poisson subsample (see :func:`~privet.learners._protocols.programs.share_training_data`).
    ``owner_tables=True``: each party counts its own rows of the (public) paths
    and inputs those tables (:class:`~privet.learners._protocols.common.OwnerTables`);
    the same values are opened, at a cost that no longer grows with the rows. Not
    with ``sample_rate`` (the subsample must stay secret, from the owners too).
    ``sorted_table=True``: the outsourced rows are kept secretly sorted by node in
    the vector engine (:mod:`privet.learners._protocols.grouped`); the same secret
    tables reach the same scores, noisy selections and leaf updates, computed in the
    engine, at a cost linear in the rows whatever the number of nodes. Discrete
    samplers and depth >= 1 only; not with ``owner_tables`` or ``sample_rate``.
    """
    if sorted_table and (owner_tables or sample_rate is not None or depth < 1):
        raise InvalidParameterError(
            "sorted_table=True shares the rows in the vector engine; it needs depth >= 1 and "
            "does not combine with owner_tables or a secret subsample (sample_rate)."
        )
    if sorted_table and numbers.get("mpc_noise") != "discrete":
        raise InvalidParameterError(
            "sorted_table=True draws the discrete samplers' noise; use mpc_noise='discrete'."
        )
    if owner_tables and sample_rate is not None:
        raise InvalidParameterError(
            "owner_tables=True counts every owner's rows in the clear, so it cannot train on "
            "a secret subsample; drop sample_rate or owner_tables."
        )
    noise = make_noise(_testing_noise)
    fmt = SecureNumbers.from_args(numbers)
    split_mech, leaf_mech = fmt.mechanisms(leaf, epsilon, epsilon)
    n = sum(int(r) for r in rows)
    check_range("the class counts", n + 1, split_mech.sectype)
    if fmt.mpc_noise == "discrete":  # noisy scores and their tie-breaking keys
        bound = n + 2 * max(split_mech.noise_bound, leaf_mech.noise_bound) + 2
        check_range("the noisy-max keys", bound, split_mech.sectype)
    if sorted_table:
        with RevealLog() as log:
            eng, table, root = await share_sorted_table(
                ctx, data, rows, sizes, n_classes, depth, split_mech.sectype
            )
            if not noise.testing:
                noise = VectorNoise(eng)  # the same coins, drawn in the vector engine
            nodes = await partial_mpc_id3_sorted(
                table,
                root,
                sizes,
                n_classes,
                n,
                depth,
                split_mechanism=split_mech,
                leaf_mechanism=leaf_mech,
                leaf=leaf,
                noise=noise,
            )
        return {"nodes": nodes, "reveals": log.events, "testing_noise": noise.testing}
    with RevealLog() as log:
        D, C, tables = await input_training_data(
            ctx,
            data,
            rows,
            sizes,
            n_classes,
            split_mech.sectype,
            owner_tables=owner_tables,
            sample_rate=sample_rate,
        )
        nodes = await partial_mpc_id3(
            D,
            C,
            sizes,
            depth,
            split_mechanism=split_mech,
            leaf_mechanism=leaf_mech,
            leaf=leaf,
            noise=noise,
            tables=tables,
        )
    return {"nodes": nodes, "reveals": log.events, "testing_noise": noise.testing}
