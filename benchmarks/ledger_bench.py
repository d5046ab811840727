"""Ledger speed: charges per second (memory, SQLite) and composing 100,000 charges.

Run from the repository root::

    python benchmarks/ledger_bench.py            # full run, ~1-2 minutes
    python benchmarks/ledger_bench.py --quick    # smoke run, a few seconds

Writes ``benchmarks/results/ledger_bench.csv`` (one row per measurement) and
``benchmarks/results/ledger_bench.md`` (the same as a table, next to the
previous run's figures when a previous CSV exists).

What is measured
----------------
* charges per second, 2,000 charges, in memory and in SQLite (real disk, where
  every commit is fsynced; and a RAM disk, which leaves the CPU cost), in one
  scope and spread over a depth-4 binary partition tree (31 scopes);
* a scope tree holding 100,000 charges (depth-8 binary tree, 511 scopes): the
  time to build it, ``spent()`` from a cold cache, and the per-charge cost at
  that size compared with an empty ledger;
* how the per-charge cost grows with the ledger: charges already present
  (one scope), the width of the partition charged into, the depth of the scope
  charged into, the number of reservations opened and closed before, and the
  number of DP-SGD steps (a Poisson batch and a Gaussian each) already taken,
  next to the same steps with the rows summed whole (``privet.ledger.tree.BLOCK``
  out of reach) and summed batch by batch (``privet.ledger.tree.WIDE`` out of
  reach, as before the ledger kept many groups in arrays);
* SQLite: re-opening a file of 100,000 charges (every process replays them);
* the PLD accountant on a DP-SGD run: per-charge cost with 10,000 steps present (far
  from the budget, and where only the PLD proves the run fits), spent() from a cold
  cache next to dp_accounting's time for the same composition, the memory of 100,000
  steps.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from privet.ledger import Gaussian, Guarantee, Ledger
from privet.ledger import tree as ledger_tree
from privet.ledger.tree import MAX_DEPTH

RESULTS = Path(__file__).resolve().parent / "results"
BIG = Guarantee(1e12)  # never the limit: we measure accounting, not refusals


def timed(fn: Callable[..., object], *args: object) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def tree(root, depth: int) -> list:
    """A full binary partition tree under ``root``; all its scopes, root first."""
    scopes, level = [root], [root]
    for _ in range(depth):
        level = [c for s in level for c in s.partition(2)]
        scopes += level
    return scopes


def sgd_steps(led: Ledger, n: int) -> None:
    """n DP-SGD steps: a Poisson batch at rate 0.01 under the root, a Gaussian on it."""
    for _ in range(n):
        batch = led.root.subsample(0.01, "poisson")
        batch.charge(Gaussian(sigma=1.0, sensitivity=1.0), mechanism="gaussian")


def charge_many(scopes: list, n: int, eps: float = 1e-6) -> None:
    k = len(scopes)
    for i in range(n):
        scopes[i % k].charge(eps, mechanism="laplace", step="bench")


class Bench:
    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.rows: list[dict[str, object]] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="privet-bench-"))
        shm = Path("/dev/shm")
        self.ram = (
            Path(tempfile.mkdtemp(prefix="privet-bench-", dir=shm))
            if shm.is_dir() and os.access(shm, os.W_OK)
            else None
        )

    def add(self, group: str, name: str, value: float, unit: str, note: str = "") -> None:
        self.rows.append(
            {"group": group, "measurement": name, "value": value, "unit": unit, "note": note}
        )
        print(f"{group:>10} | {name:<58} {value:>14.4g} {unit} {note}", flush=True)

    def file(self, where: Path, name: str) -> Path:
        return where / f"{name}-{len(self.rows)}.sqlite"

    # ---------------------------------------------------------------- throughput
    def throughput(self) -> None:
        n = 300 if self.quick else 2000
        stores: list[tuple[str, Callable[[], Ledger]]] = [("memory", lambda: Ledger(BIG))]
        stores.append(("sqlite-disk", lambda: Ledger.open(self.file(self.tmp, "t"), "bench", BIG)))
        if self.ram is not None:
            stores.append(
                ("sqlite-ram", lambda: Ledger.open(self.file(self.ram, "t"), "bench", BIG))
            )
        for store, make in stores:
            n_here = min(n, 300) if (store == "sqlite-disk" and self.quick) else n
            led = make()
            secs = timed(charge_many, [led.root], n_here)
            self.add("charges/s", f"{store}: {n_here} charges in one scope", n_here / secs, "1/s")
            led = make()
            scopes = tree(led.root, 4)
            secs = timed(charge_many, scopes, n_here)
            self.add(
                "charges/s", f"{store}: {n_here} charges over a depth-4 tree", n_here / secs, "1/s"
            )
            with led.reserve(Guarantee(1.0)):
                secs = timed(charge_many, scopes, n_here)
            self.add(
                "charges/s",
                f"{store}: {n_here} charges in a reservation, depth-4 tree",
                n_here / secs,
                "1/s",
            )

    # ---------------------------------------------------------------- 100k charges
    def compose_100k(self) -> None:
        n = 20_000 if self.quick else 100_000
        led = Ledger(BIG)
        scopes = tree(led.root, 8)
        build = timed(charge_many, scopes, n)
        self.add(
            "100k", f"build: {n} charges over a depth-8 tree ({len(scopes)} scopes)", build, "s"
        )
        led._cache.clear()  # cold: nothing composed yet
        self.add("100k", "spent() from a cold cache", timed(led.spent), "s")
        self.add("100k", "spent() again (warm cache)", timed(led.spent), "s")
        per_big = timed(charge_many, scopes, 1000) / 1000
        empty = Ledger(BIG)
        small = tree(empty.root, 8)
        per_empty = timed(charge_many, small, 1000) / 1000
        self.add("100k", "per charge on the empty tree", per_empty * 1e6, "µs")
        self.add("100k", f"per charge with {n} charges present", per_big * 1e6, "µs")
        self.add("100k", "to_json()", timed(led.to_json), "s")
        text = led.to_json()
        self.add("100k", "from_json()", timed(Ledger.from_json, text), "s")
        console = Console(file=io.StringIO(), width=120)
        self.add(
            "100k", "report() rendered to text", timed(lambda: console.print(led.report())), "s"
        )

    # ---------------------------------------------------------------- scaling
    def scaling(self) -> None:
        sizes = [0, 1_000, 10_000] if self.quick else [0, 1_000, 10_000, 100_000]
        led = Ledger(BIG)
        present = 0
        for size in sizes:
            charge_many([led.root], size - present)
            present = size
            per = timed(charge_many, [led.root], 500) / 500
            present += 500
            self.add("scaling", f"one scope, {size} charges present", per * 1e6, "µs/charge")
        for width in [2, 100, 1_000]:
            led = Ledger(BIG)
            parts = led.root.partition(width)
            fill = timed(charge_many, list(parts), width)  # one charge in every part
            per = timed(charge_many, [parts[0]], 300) / 300
            self.add("scaling", f"charge into a partition of {width} parts", per * 1e6, "µs/charge")
            self.add("scaling", f"one charge in each of {width} parts (quadratic)", fill, "s")
        for depth in [1, 10, 100, MAX_DEPTH]:  # deeper is refused (privet.ledger.tree)
            led = Ledger(BIG)
            node = led.root
            for _ in range(depth):
                node.charge(1e-6, mechanism="m")
                node = node.partition(2)[0]
            per = timed(charge_many, [node], 300) / 300
            self.add("scaling", f"charge at depth {depth}", per * 1e6, "µs/charge")
        for closed in [0, 100, 1_000] if self.quick else [0, 100, 1_000, 5_000]:
            led = Ledger(BIG)
            scopes = tree(led.root, 8)
            for i in range(closed):
                with led.reserve(Guarantee(1.0)):
                    scopes[i % len(scopes)].charge(1e-6, mechanism="m")
            per = timed(charge_many, scopes, 300) / 300

            def one_fit(scopes: list = scopes, led: Ledger = led) -> None:
                with led.reserve(Guarantee(1.0)):
                    charge_many(scopes[:5], 5)

            fit = timed(lambda: [one_fit() for _ in range(20)]) / 20  # one alone is noisy
            self.add(
                "scaling",
                f"charge after {closed} reservations (511 scopes)",
                per * 1e6,
                "µs/charge",
            )
            self.add(
                "scaling",
                f"reserve + 5 charges + close after {closed} reservations",
                fit * 1e3,
                "ms",
            )
        self.sgd_scaling()
        # SQLite: a process joining a long-lived ledger replays every charge.
        where = self.ram or self.tmp
        n = 10_000 if self.quick else 100_000
        path = self.file(where, "big")
        led = Ledger.open(path, "bench", BIG)
        scopes = tree(led.root, 8)
        build = timed(charge_many, scopes, n)
        self.add(
            "sqlite",
            f"build {n} charges ({'RAM disk' if self.ram else 'disk'})",
            n / build,
            "1/s",
        )
        led.close()
        self.add(
            "sqlite",
            f"Ledger.open of a file with {n} charges",
            timed(Ledger.open, path, "bench"),
            "s",
        )
        again = Ledger.open(path, "bench")
        per = timed(charge_many, [again.root], 300) / 300
        self.add("sqlite", f"per charge with {n} charges present", per * 1e6, "µs/charge")
        other = Ledger.open(path, "bench")
        charge_many([other.root], 1000)
        self.add(
            "sqlite",
            "catch up on 1,000 charges by another handle",
            timed(again.spent),
            "s",
        )

    def sgd_scaling(self) -> None:
        """Per-step cost after k DP-SGD steps: rows summed in blocks (the ledger), rows
        summed whole and batch by batch (the two references)."""
        sizes = [100, 1_000, 3_000] if self.quick else [100, 1_000, 3_000, 10_000, 30_000]
        saved = ledger_tree.WIDE, ledger_tree.BLOCK
        variants = [  # label, WIDE, BLOCK, the largest size (the references grow faster)
            ("rows", saved[0], saved[1], 30_000),
            ("rows in one sum", saved[0], 10**9, 10_000),
            ("batch by batch", 10**9, saved[1], 3_000),  # quadratic: minutes per size
        ]
        try:
            for label, wide, block, largest in variants:
                ledger_tree.WIDE, ledger_tree.BLOCK = wide, block
                led = Ledger(Guarantee(1e6, 1e-5))
                present = 0
                for size in (s for s in sizes if s <= largest):
                    build = timed(sgd_steps, led, size - present)
                    per = timed(sgd_steps, led, 100) / 100
                    present = size + 100
                    self.add(
                        "sgd",
                        f"{label}: per step after {size} steps",
                        per * 1e6,
                        "µs/charge",
                        f"built in {build:.2f} s",
                    )
        finally:
            ledger_tree.WIDE, ledger_tree.BLOCK = saved

    def pld(self) -> None:
        """The PLD accountant on a DP-SGD run (issue 31): the per-charge cost with 10,000
        steps present, when the other views decide the check (a budget far away) and when
        only the PLD proves the run fits (a budget of 3.54 at 1e-5, the run's PLD figure
        being 3.536 at 10,000 steps); spent() composed from a cold cache, next to
        dp_accounting's PLD accountant on the same composition when it is installed;
        and the memory of 100,000 steps, their figure included."""
        import gc
        import statistics
        import tracemalloc

        from privet.errors import BudgetExceededError

        steps = 2_000 if self.quick else 10_000

        def step(led: Ledger) -> None:
            led.root.subsample(0.004).charge(Gaussian(sigma=0.8, sensitivity=1.0), mechanism="g")

        for label, budget in (("far from the budget", Guarantee(1e6, 1e-5)),
                              ("the PLD decides", Guarantee(3.54, 1e-5))):  # fmt: skip
            led = Ledger(budget)
            times = []
            for _ in range(steps + 20):
                t = time.perf_counter()
                try:
                    step(led)
                except BudgetExceededError:
                    break
                times.append(time.perf_counter() - t)
            tail = times[steps // 2 : steps]
            self.add("pld", f"{label}: median per DP-SGD charge, steps {steps // 2}..{steps}",
                     statistics.median(tail) * 1e3, "ms", f"99th percentile {sorted(tail)[int(0.99 * len(tail))] * 1e3:.2f} ms; {len(times)} charged")  # fmt: skip
            self.add("pld", f"{label}: the whole run of {len(times)} charges", sum(times), "s")
        led = Ledger(Guarantee(1e6, 1e-5))
        for _ in range(steps):
            step(led)
        cold = timed(led.spent)
        self.add("pld", f"spent() of {steps} DP-SGD steps from a cold cache", cold, "s",
                 f"{led.spent_bound().method}: {led.spent().epsilon:.4f}")  # fmt: skip
        try:
            import dp_accounting as dpa

            def peer() -> float:
                acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
                ev = dpa.PoissonSampledDpEvent(0.004, dpa.GaussianDpEvent(0.8))
                acc.compose(dpa.SelfComposedDpEvent(ev, steps))
                return acc.get_epsilon(1e-5)

            t = time.perf_counter()
            eps = peer()
            self.add(
                "pld",
                f"dp_accounting PLDAccountant, the same {steps} steps",
                time.perf_counter() - t,
                "s",
                f"{eps:.4f}",
            )
        except ImportError:
            self.add(
                "pld",
                f"dp_accounting PLDAccountant, the same {steps} steps",
                float("nan"),
                "s",
                "not installed",
            )
        big = 20_000 if self.quick else 100_000
        gc.collect()
        tracemalloc.start()
        led = Ledger(Guarantee(1e6, 1e-5))
        for _ in range(big):
            step(led)
        led.spent()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.add(
            "pld", f"memory of {big} DP-SGD steps with their PLD figure (peak)", peak / 2**20, "MiB"
        )

    # ---------------------------------------------------------------- output
    def write(self) -> None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        csv_path, md_path = RESULTS / "ledger_bench.csv", RESULTS / "ledger_bench.md"
        previous: dict[tuple[str, str], str] = {}
        if csv_path.exists():
            with csv_path.open() as f:
                for row in csv.DictReader(f):
                    previous[(row["group"], row["measurement"])] = row["value"]
        with csv_path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["group", "measurement", "value", "unit", "note"])
            w.writeheader()
            w.writerows(self.rows)
        lines = [
            "# Ledger benchmark",
            "",
            f"python {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end, "
            f"{'quick' if self.quick else 'full'} run, {time.strftime('%Y-%m-%d %H:%M')}.",
            "Produced by `python benchmarks/ledger_bench.py`; the previous column is the "
            "run before this one, if any.",
            "",
            "| group | measurement | value | unit | previous |",
            "|---|---|---:|---|---:|",
        ]
        for r in self.rows:
            prev = previous.get((str(r["group"]), str(r["measurement"])), "")
            prev = f"{float(prev):.4g}" if prev else ""
            lines.append(
                f"| {r['group']} | {r['measurement']} | {float(r['value']):.4g} | "
                f"{r['unit']} | {prev} |"
            )
        md_path.write_text("\n".join(lines) + "\n")
        print(f"wrote {csv_path} and {md_path}")

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.ram is not None:
            shutil.rmtree(self.ram, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args(argv)
    bench = Bench(args.quick)
    try:
        bench.throughput()
        bench.compose_100k()
        bench.scaling()
        bench.pld()
        bench.write()
    finally:
        bench.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
