"""``privet``'s parser and its error handling: one line per error, a traceback with --debug."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from privet.cli import audit, datasets, demo, learners, ledger, predict, schema, train
from privet.cli._checks import check_args
from privet.cli._output import EXIT_USAGE, exit_code

__all__ = ["build_parser", "main"]

_GROUPS = (demo, learners, datasets, schema, train, predict, ledger, audit)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; ``command`` given, the other groups' heavy parsers are stubs.

    ``privet audit``'s parser imports the audits (about a second); a call of
    another command only needs its name and help line.
    """
    parser = argparse.ArgumentParser(
        prog="privet",
        description="Privacy accounting and auditing for decision-tree learning "
        "under differential privacy, local DP and MPC. Exit codes: 0 ok, 2 usage, "
        "3 budget refused, 4 data invalid, 1 any other error.",
        epilog="Start with `privet demo`, then `privet learners` and `privet train --help`.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (anywhere on the line)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in _GROUPS:
        if group is audit and command not in (None, "audit"):
            sub.add_parser("audit", help=audit.HELP, add_help=False)
            continue
        group.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    command = next((a for a in argv if not a.startswith("-")), "")
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        check_args(parser, args, argv)  # negative counts, empty text, a path as a name (issue 37)
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `privet ... | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("privet: interrupted.", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            traceback.print_exc()
        name = type(exc).__name__
        text = " ".join(str(exc).split())
        if exit_code(exc) == 1 and not _is_privet(exc):
            text += " (unexpected; rerun with --debug for the traceback and report it)"
        print(f"privet: {name}: {text}", file=sys.stderr)
        return exit_code(exc)


def _is_privet(exc: BaseException) -> bool:
    from privet.errors import PrivetError

    return isinstance(exc, PrivetError)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
