"""mkdocs hook: the command reference page shows ``privet ... --help`` as the code prints it.

``docs/cli.md`` holds the marker ``<!-- privet --help -->``; at build time it becomes
one section per command with its help text, taken from :func:`privet.cli.build_parser`, so
the page cannot drift from the command line.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- privet --help -->"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _sections(parser: argparse.ArgumentParser, prog: str) -> list[str]:
    out = [f"## `{prog}`\n\n```text\n{parser.format_help().rstrip()}\n```\n"]
    for name, sub in _subcommands(parser).items():
        out += _sections(sub, f"{prog} {name}")
    return out


def on_page_markdown(markdown, page, config, files):  # type: ignore[no-untyped-def]
    if MARKER not in markdown:
        return markdown
    from privet.cli import build_parser

    os.environ["COLUMNS"] = "96"  # argparse wraps at the terminal width
    parser = build_parser()
    parser.prog = "privet"
    sections = []
    for name, sub in _subcommands(parser).items():
        sections += _sections(sub, f"privet {name}")
    return markdown.replace(MARKER, "\n".join(sections))
