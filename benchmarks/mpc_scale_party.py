"""Party-side wrapper of the MPC scaling benchmark (``benchmarks/seed000_mpc_scale.py``).

Runs a seed-000 party program unchanged and adds what the party process can
measure about itself: its CPU time (``time.process_time``: user + system of
this process, far less sensitive to the other agents' load on a shared
machine than wall time), its peak resident memory, and, in party 0 when asked,
a cProfile of the whole program (every task of the event loop).

Used as the launch target ``benchmarks/mpc_scale_party.py:profiled`` with the
real program's target in ``program``; it never changes the program's
arguments or results.
"""

from __future__ import annotations

import cProfile
import resource
import time
from typing import Any

from privet.mpc.party import PartyContext, load_target


async def profiled(
    ctx: PartyContext, program: str = "", profile_out: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """Run ``program`` with ``kwargs``; add ``cpu_seconds``, ``peak_rss_mb`` (and a profile)."""
    target = load_target(program)
    profiler = cProfile.Profile() if profile_out and ctx.pid == 0 else None
    cpu0, t0 = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        result = await target(ctx, **kwargs)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_out)
    result = dict(result)
    result["cpu_seconds"] = time.process_time() - cpu0
    result["program_seconds"] = time.perf_counter() - t0
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return result


async def noise_costs(ctx: PartyContext, values: int = 2000, scale: float = 6.0) -> dict[str, Any]:
    """CPU seconds and bytes of this party for ``values`` discrete-Laplace values, three ways.

    * ``mpyc_bits``: :class:`privet.mpc.discrete.SecureDiscreteLaplace` (MPyC's PRSS bits and
      object arithmetic: the partition-vector protocols' sampler);
    * ``engine_bits``: the same coins in the vector engine (:func:`privet.mpc.vector.discrete_laplace`);
    * ``server_shares``: the cost of a distributed noise in which every server inputs its own
      integer share (Polya differences; numpy's sampler, cost only: not a privet sampler).
    """
    import numpy as np

    from privet.mpc import field61 as F
    from privet.mpc.discrete import SecureDiscreteLaplace
    from privet.mpc.vector import Engine, discrete_laplace

    mpc = ctx.runtime
    out: dict[str, Any] = {}

    def sent() -> int:
        return sum(getattr(p.protocol, "nbytes_sent", 0) for p in mpc.parties)

    lap = SecureDiscreteLaplace(epsilon=1.0 / scale, bit_length=32)
    eng = Engine()
    for name in ("mpyc_bits", "engine_bits", "server_shares"):
        cpu, b0 = time.process_time(), sent()
        if name == "mpyc_bits":
            await mpc.output(lap.noise((values,)))
        elif name == "engine_bits":
            z = await discrete_laplace(eng, (values,), lap.coins)
            await eng.open(z, label="noise (benchmark)")
        else:
            rng = np.random.default_rng()
            p = -np.expm1(-1.0 / scale)
            mine = rng.negative_binomial(1.0 / ctx.n_parties, p, size=(2, values))
            z = await eng.sum_of_inputs(F.encode(mine[0] - mine[1]))
            await eng.open(z, label="noise (benchmark)")
        out[name] = {"cpu_s": time.process_time() - cpu, "mb_sent": (sent() - b0) / 1e6}
    return out
