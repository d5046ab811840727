"""``privet datasets``: the datasets privet loads, with their shipped public schemas."""

from __future__ import annotations

import argparse
from typing import Any

from privet.cli._output import print_json, print_table

__all__ = ["add_parser", "cmd_datasets"]


def cmd_datasets(args: argparse.Namespace) -> int:
    from privet.data import list_datasets, load_schema

    rows = []
    for name in list_datasets():
        s = load_schema(name)
        rows.append(
            {
                "name": name,
                "attributes": s.n_features,
                "domain_sizes": list(s.domain_sizes),
                "target": s.target.name,
                "classes": s.n_classes,
            }
        )
    if args.json:
        print_json(rows)
        return 0
    print_table(
        ["name", "attributes", "domain sizes", "class column", "classes"],
        [[r["name"], r["attributes"], r["domain_sizes"], r["target"], r["classes"]] for r in rows],
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "datasets",
        help="list the datasets privet can load (their schemas are usable as --schema NAME)",
        description="List the datasets privet loads and their shipped public schemas; a name "
        "is accepted wherever a schema file is (privet train --schema car). "
        "Example: privet datasets --json",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_datasets)
