"""What the Markdown reports of the peers benchmarks (learners, accounting, MPC) share."""

from __future__ import annotations

import sys


def command_block(script: str) -> list[str]:
    """The report's lines that show the command which made it, then a blank line.

    ``python benchmarks/peers/SCRIPT`` with this run's arguments, in a code block.
    """
    return ["```", f"python benchmarks/peers/{script} " + " ".join(sys.argv[1:]), "```", ""]
