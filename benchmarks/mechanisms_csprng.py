"""Cost of a cryptographic generator for the local randomisers (issue 11, CSPRNG item).

Compares, for the draws one piecewise-mechanism call makes on n records (one
float for the input rounding, one exact 62-bit coin, two bounded integers per
record), and for a whole ``PiecewiseMechanism`` call:

* ``pcg64dxsm``: privet's numpy generator (PCG64DXSM seeded with 256 bits from
  the OS), a statistical generator;
* ``pcg64dxsm_reseeded``: the same, reseeded from :mod:`secrets` on every call;
* ``os_urandom``: the kernel's CSPRNG (``os.urandom``, ChaCha20 on Linux) read
  as uint64 words and turned into the same draws with numpy (floats from the
  top 53 bits, bounded integers by rejection), i.e. a cryptographic path.

Neither ``randomgen`` nor ``cryptography`` is installed here (AES-CTR would be
the other candidate); ``os.urandom`` is the CSPRNG every Python has.

Run: ``python benchmarks/mechanisms_csprng.py`` (about a minute); writes
``benchmarks/results/mechanisms_csprng.{csv,md}``.
"""

from __future__ import annotations

import csv
import os
import secrets
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from privet.ledger import Guarantee, Ledger
from privet.mechanisms import PiecewiseMechanism
from privet.mechanisms import _random as privet_random

OUT = Path(__file__).parent / "results"
SIZES = (10_000, 100_000, 1_000_000)
REPEATS = 7


class UrandomDraws:
    """The draws of a piecewise call from os.urandom (a CSPRNG), vectorised with numpy."""

    def words(self, n: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64)

    def random(self, size: int) -> np.ndarray:
        return (self.words(size) >> np.uint64(11)) * (1.0 / 2**53)

    def integers(self, high: int, size: int) -> np.ndarray:
        """Uniform on [0, high) by rejection: exact, like numpy's bounded integers."""
        limit = np.uint64((2**64 // high) * high - 1)
        out = np.empty(size, dtype=np.uint64)
        todo = np.arange(size)
        while todo.size:
            w = self.words(todo.size)
            ok = w <= limit
            out[todo[ok]] = w[ok] % np.uint64(high)
            todo = todo[~ok]
        return out.astype(np.int64)


def draws_numpy(rng: np.random.Generator, n: int) -> None:
    rng.random(n)
    rng.integers(0, 2**62, size=n, dtype=np.int64)
    rng.integers(0, 2**19, size=n)
    rng.integers(0, 2**20, size=n)


def draws_urandom(src: UrandomDraws, n: int) -> None:
    src.random(n)
    src.integers(2**62, n)
    src.integers(2**19, n)
    src.integers(2**20, n)


def timed(fn: Callable[[], None]) -> float:
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    load = Path("/proc/loadavg").read_text().split()[:3]
    shared = np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))
    src = UrandomDraws()
    led = Ledger(Guarantee.unbounded(), relation="replace_one", dataset="bench")
    mech = PiecewiseMechanism(epsilon=1.0)
    rows = []
    for n in SIZES:
        base = timed(lambda n=n: draws_numpy(shared, n))
        reseed = timed(
            lambda n=n: draws_numpy(
                np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256))), n
            )
        )
        urand = timed(lambda n=n: draws_urandom(src, n))
        zeros = np.zeros(n)
        call = timed(lambda z=zeros: mech(z, scope=led))
        rows.append(
            {
                "n": n,
                "pcg64dxsm_s": base,
                "pcg64dxsm_reseeded_s": reseed,
                "os_urandom_s": urand,
                "urandom_over_pcg": urand / base,
                "piecewise_call_s": call,
                "piecewise_call_with_urandom_draws_s": call - base + urand,
                "call_ratio": (call - base + urand) / call,
            }
        )
        print(rows[-1])
    with (OUT / "mechanisms_csprng.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# Cost of a CSPRNG for the local randomisers",
        "",
        f"Shared machine (2 cores, ~7 agents): load average {' '.join(load)} at the start. "
        f"Median of {REPEATS} runs. Draws = those of one `PiecewiseMechanism` call on n records "
        "(one float, one exact 62-bit coin, two bounded integers per record).",
        "",
        "| n | PCG64DXSM (s) | reseeded per call (s) | os.urandom (s) | urandom / PCG | "
        "piecewise call (s) | call with urandom draws (s) | call ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['pcg64dxsm_s']:.4f} | {r['pcg64dxsm_reseeded_s']:.4f} | "
            f"{r['os_urandom_s']:.4f} | {r['urandom_over_pcg']:.2f}x | {r['piecewise_call_s']:.4f} | "
            f"{r['piecewise_call_with_urandom_draws_s']:.4f} | {r['call_ratio']:.2f}x |"
        )
    lines += [
        "",
        "No paper figure to compare with (the seed papers do not discuss generators).",
        f"privet's default at the time of the run: {privet_random.__doc__.splitlines()[0]}",
    ]
    (OUT / "mechanisms_csprng.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
