"""Ready-made party programs: examples, diagnostics, and the benchmark's workloads.

Each is a party program for :func:`privet.mpc.launch` / :func:`privet.mpc.run_local`
(``function(ctx, **json_args)``). The data are synthetic and drawn from a seed
so that every party can also compute the plaintext answer for checking; in a
real deployment each data owner reads its own file instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privet.mpc.mechanisms import SecureExponentialMechanism, SecureLaplace
from privet.mpc.party import PartyContext
from privet.mpc.sharing import reveal, share_array, share_horizontal


def _split(n: int, m: int) -> list[int]:
    """Rows per owner when n rows are split as evenly as possible over m owners."""
    return [n // m + (1 if i < n % m else 0) for i in range(m)]


async def ping(ctx: PartyContext, rounds: int = 10) -> dict[str, Any]:
    """Open a secret counter ``rounds`` times, one communication round each.

    A diagnostic: its ``message_batches`` is ``rounds`` plus one for the
    input, and its time per round is the network round-trip latency.
    """
    mpc = ctx.runtime
    secint = mpc.SecInt(32)
    x = mpc.input(secint(ctx.pid), senders=0)
    value = 0
    for _ in range(rounds):
        x = x + 1
        value = await reveal(x, label="ping counter")
    return {"rounds": rounds, "value": int(value)}


async def secure_sum(
    ctx: PartyContext, n: int = 100_000, seed: int = 0, bit_length: int = 32
) -> dict[str, Any]:
    """Secure sum of n integers in [0, 1000), horizontally split over all parties.

    Party i inputs its own block of the values (``share_horizontal`` with
    public block sizes); the parties add the secret array and open the sum.
    """
    mpc = ctx.runtime
    secint = mpc.SecInt(bit_length)
    values = np.random.default_rng(seed).integers(0, 1000, size=n)
    sizes = _split(n, ctx.n_parties)
    start = sum(sizes[: ctx.pid])
    mine = values[start : start + sizes[ctx.pid]]
    shared = await share_horizontal(mine, secint, shapes=[(s,) for s in sizes])
    total = await reveal(mpc.np_sum(shared), label="sum")
    return {"sum": int(total), "expected": int(values.sum())}


async def laplace_counts(
    ctx: PartyContext,
    n_counts: int = 1000,
    epsilon: float = 1.0,
    bit_length: int = 32,
    seed: int = 0,
    method: str = "difference",
) -> dict[str, Any]:
    """Each party holds a histogram; release the secure sum with secure Laplace noise.

    Party i inputs its local counts (one row of ``n_counts`` bins); the counts
    are summed on secret shares and opened only with Laplace(1/epsilon) noise
    (sensitivity 1 under add/remove of one record).
    """
    mech = SecureLaplace(epsilon=epsilon, bit_length=bit_length, method=method)
    rng = np.random.default_rng(seed)
    local = rng.integers(0, 50, size=(ctx.n_parties, n_counts))
    rows = await share_horizontal(
        local[ctx.pid][None, :], mech.sectype, shapes=[(1, n_counts)] * ctx.n_parties
    )
    counts = ctx.runtime.np_sum(rows, axis=0)
    noisy = await mech.release(counts, label="noisy histogram")
    return {"noisy": np.asarray(noisy), "true": local.sum(axis=0)}


async def exponential_choice(
    ctx: PartyContext,
    n_candidates: int = 16,
    epsilon: float = 1.0,
    bit_length: int = 32,
    seed: int = 0,
    draws: int = 1,
    clip_threshold: float | None = None,
) -> dict[str, Any]:
    """Party 0 inputs scores of ``n_candidates``; choose one with the secure exponential mechanism.

    ``draws`` independent choices are made in one batch; only the indices are opened.
    """
    mech = SecureExponentialMechanism(
        epsilon=epsilon, bit_length=bit_length, clip_threshold=clip_threshold
    )
    scores = np.random.default_rng(seed).integers(0, 20, size=n_candidates)
    shared = share_array(
        scores if ctx.pid == 0 else None, mech.sectype, owner=0, shape=(n_candidates,)
    )
    batch = (
        shared
        if draws == 1
        else shared.reshape((1, n_candidates)) + np.zeros((draws, n_candidates), dtype=np.int64)
    )
    index = await mech.select_index(batch)
    return {
        "index": index if draws == 1 else np.asarray(index),
        "probabilities": mech.probabilities(scores),
    }
