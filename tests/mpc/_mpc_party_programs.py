"""Party programs used by the multi-party tests (loaded by file path in each party)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np

from privet.mpc import (
    SecureLaplace,
    reveal,
    secfxp_type,
    share_horizontal,
    share_vertical,
)
from privet.mpc.progress import mark_step


async def loop_rounds(ctx: Any, rounds: int = 1_000_000, marker: str | None = None) -> int:
    """Open a secret counter again and again; write ``marker.<pid>`` after 5 rounds."""
    mpc = ctx.runtime
    x = mpc.input(mpc.SecInt(32)(0), senders=0)
    for i in range(rounds):
        x = x + 1
        await reveal(x, label="loop counter")
        if marker is not None and i == 5:
            Path(f"{marker}.{ctx.pid}").write_text("started")
    return rounds


async def busy_rounds(
    ctx: Any,
    rounds: int = 1_000_000,
    block: float = 1.0,
    marker: str | None = None,
    mark_at: int = 3,
    log: str | None = None,
) -> int:
    """Open a counter again and again; between scheduling an opening and awaiting it, each
    party computes ``block`` seconds with its event loop blocked (local work); writes
    ``marker.<pid>`` when round ``mark_at`` has started, and appends each round whose
    opening completed, with the time, to ``log.<pid>``."""
    mpc = ctx.runtime
    x = mpc.input(mpc.SecInt(32)(0), senders=0)
    for i in range(rounds):
        x = x + 1
        opened = asyncio.ensure_future(reveal(x, label="busy counter"))
        await asyncio.sleep(0)  # the opening's messages leave
        if marker is not None and i == mark_at:
            Path(f"{marker}.{ctx.pid}").write_text("started")
        time.sleep(block)  # local work: the event loop is blocked
        await opened
        if log is not None:
            with open(f"{log}.{ctx.pid}", "a") as fh:
                fh.write(f"{i} {time.time()}\n")
    return rounds


async def paced_openings(ctx: Any, rounds: int = 4, pause: float = 0.75) -> int:
    """Open a counter ``rounds`` times, ``pause`` seconds apart (a slow protocol's levels)."""
    mpc = ctx.runtime
    x = mpc.input(mpc.SecInt(32)(0), senders=0)
    for i in range(rounds):
        x = x + 1
        await reveal(x, label=f"level {i + 1}")
        time.sleep(pause)  # local work between two openings
    return rounds


async def paced_steps(ctx: Any, rounds: int = 4, pause: float = 0.75) -> int:
    """Add up ``rounds`` secret inputs of party 1, which gives one every ``pause`` seconds,
    marking each sum as a step (a secret protocol's levels, scheduled at once and done one
    by one): party 0 awaits nothing before the last."""
    mpc = ctx.runtime
    secint = mpc.SecInt(32)
    x = secint(0)
    for i in range(rounds):
        if ctx.pid == 1:  # party 1 is slow to give its input of this level
            await asyncio.sleep(pause)  # (its messages leave when its event loop runs)
        x = x + mpc.input(secint(1), senders=1)
        mark_step(x, f"level {i + 1}")
    return int(await reveal(x, label="total"))


async def raise_in_party(ctx: Any, culprit: int = 1, after: int = 3) -> int:
    """Party ``culprit`` raises ValueError after ``after`` rounds; the others keep going."""
    mpc = ctx.runtime
    x = mpc.input(mpc.SecInt(32)(0), senders=0)
    for i in range(1000):
        if ctx.pid == culprit and i == after:
            raise ValueError(f"deliberate failure in party {culprit}")
        x = x + 1
        await reveal(x, label="counter")
    return 0


async def share_and_compute(ctx: Any, seed: int = 3) -> dict[str, Any]:
    """Horizontal and vertical sharing, a secure sum, and secure Laplace with 3 parties."""
    mpc = ctx.runtime
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, 2, size=(n, 4)) for n in (3, 0, 5)][: ctx.n_parties]
    cols = [rng.integers(-50, 50, size=(6, d)) for d in (2, 1, 3)][: ctx.n_parties]
    secint = mpc.SecInt(32)
    horizontal = await share_horizontal(rows[ctx.pid], secint)  # shapes exchanged publicly
    vertical = await share_vertical(cols[ctx.pid], secint, shapes=[c.shape for c in cols])
    column_sums = await reveal(mpc.np_sum(horizontal, axis=0), label="column sums")
    lap = SecureLaplace(epsilon=1.0, bit_length=32)
    counts = await share_horizontal(
        np.array([[10, 20, 30]]) * (ctx.pid + 1), lap.sectype, shapes=[(1, 3)] * ctx.n_parties
    )
    noisy = await lap.release(mpc.np_sum(counts, axis=0))
    return {
        "horizontal": await reveal(horizontal, label="test only"),
        "vertical": await reveal(vertical, label="test only"),
        "expected_horizontal": np.vstack(rows),
        "expected_vertical": np.hstack(cols),
        "column_sums": column_sums,
        "noisy": noisy,
        "fxp": secfxp_type(32).__name__,
    }


async def vector_engine_checks(ctx: Any, n: int = 2000, trials: int = 200) -> dict[str, Any]:
    """Exercise the vector engine (privet.mpc.vector); every party returns what it opened."""
    from privet.mpc import field61 as F
    from privet.mpc.vector import Engine

    mpc = ctx.runtime
    eng = Engine()
    rng = np.random.default_rng(11)  # the same public test data in every party
    a = rng.integers(-1000, 1000, size=n)
    b = rng.integers(-1000, 1000, size=n)
    A = await eng.input(F.encode(a) if ctx.pid == 0 else None, 0, (n,))
    B = await eng.input(
        F.encode(b) if ctx.pid == ctx.n_parties - 1 else None, ctx.n_parties - 1, (n,)
    )
    out: dict[str, Any] = {}
    out["sum"] = (await eng.open(F.add(A, B), label="sum")).tolist()
    out["prod"] = (await eng.open(await eng.mul(A, B), label="prod")).tolist()
    out["cumsum"] = (await eng.open(F.cumsum(A), label="cumsum")).tolist()
    total = await eng.sum_of_inputs(F.encode(np.full(3, ctx.pid + 1)))
    out["sum_of_inputs"] = (await eng.open(total, label="inputs")).tolist()
    table = np.stack([A, B], axis=1)
    shuffled, key = await eng.shuffle(table)
    out["shuffled"] = (await eng.open(shuffled, label="shuffled")).tolist()
    back = await eng.unshuffle(key, shuffled)
    out["unshuffled"] = (await eng.open(back, label="unshuffled")).tolist()
    # many shuffles of 0..4: the position of 0 should be uniform
    small = await eng.input(F.encode(np.arange(5)) if ctx.pid == 0 else None, 0, (5,))
    firsts = []
    for _ in range(trials):  # independent shuffles of 0..4: where does 0 go?
        perm, _ = await eng.shuffle(small)
        firsts.append(int(np.flatnonzero(await eng.open(perm, label="small") == 0)[0]))
    out["small"] = firsts
    from privet.mpc.vector import argmax_onehot, discrete_laplace, maximum, non_negative

    ge = await non_negative(eng, F.sub(A, B), 12, label="cmp")
    out["ge"] = (await eng.open(ge, label="ge")).tolist()
    edge = await eng.input(
        F.encode(np.array([0, -1, 1, 2047, -2047])) if ctx.pid == 0 else None, 0, (5,)
    )
    out["edge"] = (await eng.open(await non_negative(eng, edge, 11, label="e"), label="e")).tolist()
    grid = F.add(A[: n - n % 5].reshape(-1, 5), F.const(1000))  # non-negative
    out["max"] = (await eng.open(await maximum(eng, grid, 12, label="m"), label="m")).tolist()
    keys = F.add(F.mul(grid, F.const(8)), np.arange(5, 0, -1, dtype=np.uint64))  # distinct keys
    out["argmax"] = (
        await eng.open(await argmax_onehot(eng, keys, 16, label="a"), label="a")
    ).tolist()

    from privet.mechanisms.bitwise_geometric import geometric_coins

    z = await discrete_laplace(eng, (trials * 20,), geometric_coins(2.0, 20))
    out["laplace"] = (await eng.open(z, label="z")).tolist()
    sectype = mpc.SecFxp(32)
    xm = await eng.to_mpyc(A, sectype, lower=-1000, upper=1000, label="to mpyc")
    out["to_mpyc"] = [round(v) for v in await mpc.output(xm * 3)]
    back_e = await eng.from_mpyc(xm * 2, lower=-2000, upper=2000, label="from mpyc")
    out["from_mpyc"] = (await eng.open(back_e, label="back")).tolist()
    return out


async def masked_comparison_openings(
    ctx: Any, bits: int = 16, n: int = 4000, xs: tuple[int, ...] = (0, 32767, -32767)
) -> dict[str, Any]:
    """Every value :func:`privet.mpc.vector.non_negative` opens, for ``n`` comparisons of
    each ``x`` in ``xs``: bit j of each, j = 0 .. bits (the test checks they are fair coins
    whatever x), and whether the comparisons were right."""
    from privet.mpc import field61 as F
    from privet.mpc import vector as V

    eng = V.Engine()
    seen: list[np.ndarray] = []
    opener = eng.open

    async def spy(x: Any, **kw: Any) -> Any:
        out = await opener(x, **kw)
        if "masked comparison" in kw["label"]:
            seen.append(np.asarray(out, dtype=np.int64))
        return out

    eng.open = spy  # type: ignore[method-assign]
    result: dict[str, Any] = {}
    for x in xs:
        X = await eng.input(F.encode(np.full(n, x)) if ctx.pid == 0 else None, 0, (n,))
        ge = await eng.open(await V.non_negative(eng, X, bits, label="cmp"), label="result")
        c = seen[-1]
        result[str(x)] = {
            "correct": bool(np.all(np.asarray(ge, dtype=np.int64) == int(x >= 0))),
            "ones": [int(np.sum((c >> j) & 1)) for j in range(bits + 1)],
        }
    return result


async def engine_rounds(ctx: Any, rounds: int = 1_000_000, marker: str | None = None) -> int:
    """Shuffle and multiply in the vector engine again and again; write ``marker.<pid>`` after 5."""
    from privet.mpc import field61 as F
    from privet.mpc.vector import Engine

    eng = Engine()
    x = await eng.input(F.encode(np.arange(64)) if ctx.pid == 0 else None, 0, (64,))
    for i in range(rounds):
        x, _ = await eng.shuffle(x)
        x = await eng.mul(x, x)
        if marker is not None and i == 5:
            Path(f"{marker}.{ctx.pid}").write_text("started")
    return rounds
