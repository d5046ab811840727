"""Seed 001 (Emekci et al.): the parties' side of privacy-preserving ID3 by secure summation.

The party program :func:`program` for :func:`privet.mpc.launch`: Alg. 3
level by level (:mod:`.grower`), each round's counts summed over the parties
by Alg. 1-2 with the verification of Sec. 4.3 (:mod:`.sharing`, in the
prime field of :mod:`.field`) or by MPyC's own Shamir sharing, in chunks of
bounded size for memory (:func:`chunks`); the DP variant adds each party's
noise share before summation.

This module and its siblings :mod:`.field`, :mod:`.sharing` and
:mod:`.grower` are self-contained (numpy, hashlib, ``cryptography``'s ChaCha20,
:mod:`privet.errors` and, in a party process, MPyC's runtime) so that each of up
to 128 party processes loads this file by file path without importing the rest of
:mod:`privet.learners` (scikit-learn, pandas): a party then needs about 45 MB
instead of 175 MB. They import each other relatively, which
:func:`privet.mpc.party.load_target` resolves in the file's own directory
without running the package's ``__init__``.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from typing import Any

import numpy as np

from .field import DEFAULT_PRIME, FieldSampler
from .grower import Level, LevelGrower, TreeArrays, local_counts, route
from .sharing import SharingPlan, agree_points, mpyc_sum, noise_shares, shamir_sum
from .verified import setup as verified_setup
from .verified import verified_sum

CHUNK_ELEMENTS = 2_000_000
"""Field elements per party and summation chunk (counts x 2n): bounds memory."""


def chunks(length: int, n_parties: int) -> list[tuple[int, int]]:
    """Split a round of ``length`` counts so that a party holds <= CHUNK_ELEMENTS shares."""
    size = max(1, CHUNK_ELEMENTS // (2 * n_parties))
    return [(a, min(a + size, length)) for a in range(0, max(length, 1), size)] or [(0, 0)]


def peak_rss_kb() -> int:
    """This process's peak resident memory (VmHWM; 0 where /proc is missing).

    Not ``getrusage``: on Linux its ``ru_maxrss`` survives ``exec`` and so
    reports the launching process's peak for a freshly started party.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0


TREE_FIELDS = ("feature", "child_start", "children", "value", "depth", "parent", "rounds", "opened")


def _tree_digest(tree: TreeArrays) -> str:
    h = hashlib.sha256()
    for part in (tree.feature, tree.child_start, tree.children, tree.value):
        h.update(repr(part).encode())
    return h.hexdigest()


async def program(
    ctx: Any,
    *,
    data: str,
    sizes: list[int],
    n_classes: int,
    max_depth: int,
    backend: str = "shamir",
    prime: int = DEFAULT_PRIME,
    verify: str = "two",
    scales: list[float] | None = None,
    tamper: dict | None = None,
    bit_length: int = 40,
) -> dict[str, Any]:
    """Party program: seed 001's ID3 (Alg. 3) with one summation round per level.

    Each party reads only its own rows (``data``: an ``.npz`` with ``codes``
    and ``y``), computes its local counts, and learns only the sums and the
    public tree. ``scales`` (one per level) turns on the DP variant: the party
    adds its share of discrete-Laplace noise to its counts before summation.
    ``verify="malicious"`` runs every summation with :func:`.verified.verified_sum`
    (degree 2n - 3, masked linear checks, signed messages; needs n >= 3).
    ``tamper={"party": i, "round": r, "kind": ...}`` is the testing hook of a
    malicious party i in round r (see :func:`shamir_sum` and
    :func:`.verified.verified_sum` for the kinds; ``"stall"`` hangs there).
    """
    import time

    mpc = ctx.runtime
    n, me = ctx.n_parties, ctx.pid
    with np.load(data) as f:
        codes, y = f["codes"].astype(np.int64), f["y"].astype(np.int64)
    rng = np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))  # DP noise shares
    sampler = FieldSampler(prime)  # the sharing polynomials' coefficients
    noisy = scales is not None
    grower = LevelGrower(sizes, n_classes, max_depth, marginals=not noisy, noisy=noisy)
    plan: Any = None
    keys = None
    if backend == "shamir" and verify == "malicious":
        plan, keys = await verified_setup(mpc, n, prime)
    elif backend == "shamir":
        plan = SharingPlan(n, await agree_points(mpc, n, prime), prime)
    slot = np.zeros(y.shape[0], dtype=np.int64)
    level: Level | None = grower.root()
    rounds, counts_summed, t_local = 0, 0, 0.0
    opened_sums: list[list[int]] = []  # what every party sees, level by level (for audits)
    own_shares: list[list[int]] = []  # this party's noise shares, level by level (for audits)
    while level is not None:
        t0 = time.perf_counter()
        vec = local_counts(grower, level, codes, y, slot)
        if noisy:
            share = noise_shares(vec.shape, float(scales[level.depth]), n, rng)
            own_shares.append(share.tolist())
            vec = vec + share
        t_local += time.perf_counter() - t0
        total = np.zeros_like(vec)
        for a, b in chunks(level.length, n):
            bad = None
            if tamper and tamper["party"] == me and tamper.get("round", 0) == rounds:
                bad = tamper.get("kind", "result")
                if bad == "stall":  # a party that hangs (killed by the test)
                    await asyncio.sleep(3600)
            if keys is not None:
                total[a:b] = await verified_sum(mpc, plan, keys, vec[a:b], sampler, tamper=bad)
            elif backend == "shamir":
                total[a:b] = await shamir_sum(
                    mpc, plan, vec[a:b], sampler, verify=verify, tamper=bad
                )
            else:
                total[a:b] = await mpyc_sum(mpc, vec[a:b], bit_length=bit_length)
            rounds += 1
        counts_summed += level.length
        opened_sums.append(np.asarray(total).tolist())
        level, routes = grower.decide(level, total)
        slot = route(codes, slot, routes)
    tree = grower.tree
    out: dict[str, Any] = {
        "digest": _tree_digest(tree),
        "rounds": rounds,
        "counts_summed": counts_summed,
        "local_seconds": t_local,
    }
    if me == 0:  # plain types: the launcher unpickles it where this module has another name
        out["tree"] = {k: getattr(tree, k) for k in TREE_FIELDS}
        out["opened_sums"] = opened_sums
        out["own_noise_shares"] = own_shares  # party 0's: what it knows besides the sums
    out["max_rss_kb"] = peak_rss_kb()
    return out
