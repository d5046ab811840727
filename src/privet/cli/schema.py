"""``privet schema infer`` (a draft to review) and ``privet schema check`` (every violation)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import pandas as pd

from privet.cli._io import add_data_options, count, read_csv, read_schema, violations
from privet.cli._output import (
    EXIT_DATA,
    DataInvalid,
    UsageError,
    console,
    interactive,
    print_json,
    print_table,
)

__all__ = ["DRAFT_WARNING", "add_parser", "cmd_schema_check", "cmd_schema_infer", "draft_schema"]

DRAFT_WARNING = (
    "DRAFT schema read from the private data. The categories, bounds and bins below are "
    "functions of the data, NOT public knowledge: a model trained with them reveals them and "
    "no privacy guarantee covers them. Review every attribute and replace what came from the "
    "data by public knowledge (code books, legal ranges, round bounds) before training."
)


def draft_schema(path: str, target: str, *, max_categories: int, bins: int) -> Any:
    """A schema read from the CSV itself, with the class column ``target`` (not private)."""
    from privet.data import Categorical, Schema
    from privet.learners._base import infer_schema

    if not os.path.isfile(path):
        raise DataInvalid(f"No data file at {path!r}; check the path (a CSV with a header row).")
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataInvalid(
            f"Cannot read {path!r} as CSV ({' '.join(str(exc).split())}); save it as UTF-8 "
            "comma-separated text with one header row."
        ) from None
    if target not in frame.columns:
        raise UsageError(
            f"--target {target!r} is not a column of {path!r}; its columns are "
            f"{list(frame.columns)}."
        )
    y = frame[target].dropna()
    X = frame.drop(columns=[target])
    draft = infer_schema(X, y, max_categories=max_categories, n_bins=bins)
    cls = Categorical(target, list(draft.target.categories))
    return Schema(list(draft.attributes), cls, DRAFT_WARNING)


def _warn_loudly() -> None:
    if sys.stderr.isatty():
        from rich.panel import Panel

        console(stderr=True).print(
            Panel(DRAFT_WARNING, title="[bold red]WARNING: not public[/]", border_style="red")
        )
    else:
        print(f"WARNING: {DRAFT_WARNING}", file=sys.stderr)


def cmd_schema_infer(args: argparse.Namespace) -> int:
    schema = draft_schema(
        args.data, args.target, max_categories=args.max_categories, bins=args.bins
    )
    _warn_loudly()
    text = schema.to_json()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(
            f"Draft schema written to {args.output} ({schema.n_features} attributes, class "
            f"{schema.target.name!r} with {schema.n_classes} classes). Review it, then "
            f"`privet schema check {args.data} {args.output}`.",
            file=sys.stderr,
        )
    else:
        print(text)
    return 0


def _schema_file_problems(args: argparse.Namespace) -> int | None:
    """Check the schema file itself first; print every problem (exit 4) or nothing."""
    from privet.data.schema_file import schema_file_problems

    if not os.path.isfile(args.schema):
        return None  # a shipped schema's name, or a missing file: read_schema says which
    try:
        with open(args.schema, "rb") as fh:
            found = schema_file_problems(fh.read())
    except OSError as exc:
        raise DataInvalid(f"Cannot read schema file {args.schema!r}: {exc}.") from None
    if not found:
        return None
    if args.json:
        print_json({"schema": args.schema, "valid": False, "schema_problems": found})
        return EXIT_DATA
    print_table(
        ["where", "problem"],
        [p.split(": ", 1) if ": " in p else ["the file", p] for p in found],
        title=f"{args.schema} is not a valid privet schema",
    )
    print(
        f"{'' if interactive() else '# '}{count(len(found), 'problem')} in {args.schema}: "
        "the format is in docs/schema.md (JSON Schema: privet/data/schema.schema.json). "
        "The data was not read.",
        file=sys.stderr,
    )
    return EXIT_DATA


def cmd_schema_check(args: argparse.Namespace) -> int:
    bad = _schema_file_problems(args)
    if bad is not None:
        return bad
    schema = read_schema(args.schema)
    if args.data is None:
        if args.json:
            print_json({"schema": args.schema, "valid": True, "schema_problems": []})
        else:
            print(
                f"{args.schema}: a valid privet schema ({schema.n_features} attributes, class "
                f"{schema.target.name!r} with {schema.n_classes} classes)."
            )
        return 0
    frame = read_csv(args.data)
    found = violations(
        frame,
        schema,
        target="required" if not args.no_target else "optional",
        extra=args.extra,
        missing=args.missing,
    )
    if args.json:
        print_json(
            {
                "data": args.data,
                "schema": args.schema,
                "rows": len(frame),
                "violations": [v.to_dict() for v in found],
            }
        )
        return EXIT_DATA if found else 0
    if not found:
        print(f"{args.data}: {len(frame)} rows match {args.schema}.")
        return 0
    shown = found if args.max is None or args.max <= 0 else found[: args.max]
    print_table(
        ["row", "column", "value", "problem"],
        [
            [
                "-" if v.row is None else v.row,
                v.column,
                "" if v.value is None else v.value,
                v.problem,
            ]
            for v in shown
        ],
        title=f"{count(len(found), 'violation')} of {args.schema} in {args.data}",
    )
    more = len(found) - len(shown)
    tail = f" ({more} more not shown; --max 0 shows all)" if more else ""
    where = "" if interactive() else "# "
    print(
        f"{where}{count(len(found), 'violation')}{tail}: fix the data, or the schema from public "
        "knowledge only.",
        file=sys.stderr,
    )
    return EXIT_DATA


def add_parser(sub: Any) -> None:
    schema = sub.add_parser(
        "schema",
        help="draft a schema from a CSV (to review), or check a CSV against a schema",
        description="Public schemas: the domain of every attribute, fixed without the data.",
    )
    ssub = schema.add_subparsers(dest="schema_command", metavar="SUBCOMMAND")
    infer = ssub.add_parser(
        "infer",
        help="write a DRAFT schema read from the data (not public: review it)",
        description="Write a draft schema (categories, numeric bounds, suggested equal-width "
        "bins) read from DATA.csv. Everything in it comes from the private data and must be "
        "reviewed or replaced by public knowledge before training. "
        "Example: privet schema infer patients.csv --target outcome -o schema.json",
    )
    infer.add_argument("data", help="the CSV (a header row, one record per line)")
    infer.add_argument("--target", required=True, help="the class column")
    infer.add_argument("-o", "--output", help="schema file to write (default: standard output)")
    infer.add_argument(
        "--max-categories",
        type=int,
        default=16,
        help="integer columns with at most this many values become categorical (default 16)",
    )
    infer.add_argument("--bins", type=int, default=8, help="bins per numeric column (default 8)")
    infer.set_defaults(func=cmd_schema_infer)

    check = ssub.add_parser(
        "check",
        help="check a schema file, then list every cell of a CSV it refuses (row, column, value)",
        description="Check the schema file itself first (every problem, with its place; the "
        "format is in docs/schema.md), then DATA.csv against it without training: every "
        "violation with its row (1 = first data row), column, value and problem. Exit 4 if "
        "there is any. Example: privet schema check patients.csv schema.json (or "
        "privet schema check schema.json for the file alone)",
    )
    check.add_argument("data", nargs="?", help="the CSV (omit it to check the schema file alone)")
    check.add_argument(
        "schema", help="schema file, or the name of a shipped schema (car, adult...)"
    )
    check.add_argument("--no-target", action="store_true", help="the data has no class column")
    check.add_argument("--max", type=int, default=50, help="rows of the table (0: all; default 50)")
    check.add_argument("--json", action="store_true", help="print JSON (every violation)")
    add_data_options(check)
    check.set_defaults(func=cmd_schema_check)
    schema.set_defaults(func=lambda a: (schema.print_help(), 2)[1])
