"""The data owner's program of the federated CART protocol (seed 003), one OS process each.

Run by :func:`privet.mpc.launch` (see :mod:`.protocol`): each party loads its
own rows, agrees pairwise keys with every other party (X25519 over MPyC's
channels, :mod:`.masking`), then runs the same tree-growing control flow as
the reference path (:func:`~.grower.grow_async`) with :class:`PartyOps`:

* party k computes its local vector (histograms, Alg. 6 bounds, leaf
  counts) on its own rows only, adds its noise share (Polya or Gamma differences: gamma
  DLPA, Alg. 3), encodes the noisy vector in fixed point in Z_{2^64}, adds its
  pairwise masks (Alg. 1), and sends the masked words to the aggregator
  (party 0) with ``mpc.transfer``;
* the aggregator adds the K masked vectors mod 2^64 (the masks cancel) and
  sends the noisy sum back to every party; all parties then take the same
  next step, since every decision depends only on released sums.

MPyC's runtime is only the message channel (no secret sharing is used). A
party that dies or stops answering ends the run; the launcher names it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from privet.errors import MPCError
from privet.learners.federated_cart.grower import CartParams, PartyRows, grow_async
from privet.learners.federated_cart.masking import PairwiseMasker
from privet.learners.federated_cart.reference import (
    check_testing_noise,
    from_ring,
    gamma_shares,
    ring_sum,
    testing_share,
    to_ring,
)
from privet.mpc.party import PartyContext


class PartyOps:
    """Alg. 1 + Alg. 3 for one party over MPyC's channels (see module docstring)."""

    def __init__(
        self,
        ctx: PartyContext,
        masker: PairwiseMasker,
        *,
        testing_seed: int | None = None,
        record_view: bool = False,
        fail_round: int | None = None,
        discrete: bool = True,
    ) -> None:
        self.ctx = ctx
        self.masker = masker
        self.testing_seed = testing_seed
        self.discrete = discrete
        self.record_view = record_view
        self.fail_round = fail_round
        self.round = 0
        self.releases: dict[str, np.ndarray] = {}
        self.view: list[bytes] = []  # what the aggregator received from the others

    async def noisy_sum(self, key: str, local: np.ndarray, scale: float) -> np.ndarray:
        mpc, pid, K = self.ctx.runtime, self.ctx.pid, self.ctx.n_parties
        r = self.round
        self.round += 1
        if self.fail_round is not None and r == self.fail_round:
            os._exit(17)  # testing hook: this owner drops out mid-protocol
        x = np.asarray(local, dtype=float).reshape(local.shape[1:])
        shape = x.shape
        if self.testing_seed is None:  # this party's own share (of K drawn here)
            share = gamma_shares(K, scale, shape, discrete=self.discrete)[0]
        else:
            share = testing_share(self.testing_seed, key, pid, shape, discrete=self.discrete)
        words = to_ring(x + share).ravel()
        with np.errstate(over="ignore"):
            masked = words + self.masker.mask(r, words.size)
        received = await mpc.transfer((key, masked.tobytes()), senders=range(K), receivers=0)
        total_bytes = None
        if pid == 0:
            vectors = []
            for sender, (their_key, blob) in enumerate(received):
                if their_key != key:
                    raise MPCError(
                        f"Party {sender} sent sum {their_key!r} while the aggregator expected "
                        f"{key!r}: the parties' control flows diverged."
                    )
                vectors.append(np.frombuffer(blob, dtype=np.uint64))
                if self.record_view and sender != 0:
                    self.view.append(blob)
            total_bytes = ring_sum(np.stack(vectors)).tobytes()
        total_bytes = await mpc.transfer(total_bytes, senders=0)
        total = from_ring(np.frombuffer(total_bytes, dtype=np.uint64)).reshape(shape)
        self.releases[key] = total
        return total


async def federated_cart(
    ctx: PartyContext,
    params: dict[str, Any],
    data: str,
    _testing_noise: int | None = None,
    _record_view: bool = False,
    _fail_party: int | None = None,
    _fail_round: int | None = None,
) -> dict[str, Any]:
    """Party program: grow the federated DP tree; return the released sums.

    ``data`` is the path of this owner's ``.npz`` (``Z``: binned rows, ``y``:
    label codes). The underscored arguments are testing hooks: public noise
    (refused unless the test switch is set), recording the aggregator's view,
    and making party ``_fail_party`` exit at sum number ``_fail_round``.
    """
    cart = CartParams.from_dict(params)
    if cart.parties != ctx.n_parties:
        raise MPCError(f"params are for {cart.parties} parties but {ctx.n_parties} run.")
    seed = None if _testing_noise is None else check_testing_noise(_testing_noise)
    with np.load(data) as f:
        Z, y = f["Z"].astype(np.int64), f["y"].astype(np.int64)
    masker = PairwiseMasker(ctx.pid, ctx.n_parties)
    publics = await ctx.runtime.transfer(masker.public_bytes())
    masker.agree(list(publics))
    ops = PartyOps(
        ctx,
        masker,
        testing_seed=seed,
        record_view=_record_view and ctx.pid == 0,
        fail_round=_fail_round if _fail_party == ctx.pid else None,
        discrete=cart.noise == "discrete",
    )
    tree = await grow_async(cart, PartyRows([Z], [y]), ops)
    return {
        "releases": ops.releases,
        "rounds": ops.round,
        "view": ops.view,
        "signature": tree.signature(),
    }


__all__ = ["PartyOps", "federated_cart"]
