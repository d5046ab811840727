"""The whole peers benchmark in one command: learners, accounting, MPC.

Run from the repository root, with the peers installed in their own virtual
environments and fetched checkouts outside the repository (see ``docs/peers.md``)::

    python benchmarks/peers/all.py \\
        --diffprivlib-python /tmp/peers/dpl/bin/python \\
        --ebm-python /tmp/peers/ebm/bin/python \\
        --fbdt-python /tmp/peers/fbdtenv/bin/python --fbdt /tmp/peers/fbdt \\
        --mpyc-repo /work/.mirror/lschoe+mpyc/repo

Each part writes its CSV, PNG and markdown under ``benchmarks/results/peers/``;
a peer whose option is left out is skipped by that part and the tables say so.
The accounting part needs the ``peers`` extra (``pip install -e ".[peers]"``:
Google's dp_accounting).
The parts run one after another (about 25 + 2 + 15 minutes on a loaded 2-core
machine); ``--parts`` runs a subset.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", default=["learners", "accounting", "mpc"],
                    choices=["learners", "accounting", "mpc"])  # fmt: skip
    ap.add_argument("--diffprivlib-python")
    ap.add_argument("--ebm-python")
    ap.add_argument("--fbdt-python")
    ap.add_argument("--fbdt", help="checkout of Samuel-Maddock/federated-boosted-dp-trees")
    ap.add_argument("--mpyc-repo", help="git directory of lschoe/mpyc (for its demos)")
    args = ap.parse_args()

    def given(*names: str) -> list[str]:
        out: list[str] = []
        for name in names:
            value = getattr(args, name.replace("-", "_"))
            if value:
                out += [f"--{name}", value]
        return out

    commands = {
        "learners": [
            "learners.py",
            *given("diffprivlib-python", "ebm-python", "fbdt-python", "fbdt"),
        ],
        "accounting": ["accounting.py", *given("diffprivlib-python")],
        "mpc": ["mpc.py", *given("mpyc-repo"), "--max-depth", "5"],
    }
    status = 0
    for part in args.parts:
        if part == "mpc" and not args.mpyc_repo:
            print("peers: skipping mpc (no --mpyc-repo)", flush=True)
            continue
        script, *rest = commands[part]
        print(f"peers: {part}", flush=True)
        status |= subprocess.call([sys.executable, str(HERE / script), *rest])
    return status


if __name__ == "__main__":
    sys.exit(main())
