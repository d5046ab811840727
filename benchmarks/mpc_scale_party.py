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
