"""``privet ledger show|verify|export|history|copy|init``: read a ledger, copy it, or give a
dataset its lifetime budget on purpose (``init``).

Each dataset is opened with :meth:`privet.ledger.Ledger.open` and the ledger
argument exactly as the user gave it; without ``--dataset`` the file's
datasets are listed first (:func:`datasets_in`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from privet.cli._output import console, print_json, print_table
from privet.errors import PrivetError

__all__ = ["add_parser", "datasets_in"]


def datasets_in(target: str) -> list[str]:
    """The dataset names a ledger file or database holds (the one place that lists them)."""
    from privet.ledger import list_datasets

    return [d["name"] for d in list_datasets(target)]


def _chosen(args: argparse.Namespace) -> list[str]:
    names = datasets_in(args.file)
    if args.dataset is not None and args.dataset not in names:
        raise PrivetError(
            f"Dataset {args.dataset!r} is not in {args.file}; it holds {', '.join(names) or 'none'}."
        )
    return [args.dataset] if args.dataset else names


@contextmanager
def _opened(target: str, dataset: str) -> Iterator[Any]:
    from privet.ledger import Ledger

    led = Ledger.open(target, dataset=dataset)
    try:
        yield led
    finally:
        led.close()


def cmd_ledger_show(args: argparse.Namespace) -> int:
    names = _chosen(args)
    if not names:
        print(f"{args.file} holds no dataset budgets yet.")
        return 0
    for name in names:
        with _opened(args.file, name) as led:
            if args.json:
                print(led.to_json())
                continue
            report = led.report(
                max_parts=None if args.all else args.max_parts,
                max_depth=args.depth,
                collapse=not args.all,
            )
            console().print(report)  # piped: no line is cut (privet.cli._output.console)
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    """Check every dataset of a ledger file: integrity, hash chain, rows against the chain."""
    from privet.errors import LedgerCorruptError

    con = console()
    names = datasets_in(args.file)
    results = []
    for name in names:
        try:
            with _opened(args.file, name) as led:
                events = led.verify()
        except LedgerCorruptError as exc:
            results.append({"dataset": name, "ok": False, "error": str(exc)})
            if not args.json:
                con.print(f"[red]FAILED[/red] dataset {name!r}: {exc}", markup=True)
            continue
        results.append({"dataset": name, "ok": True, "events": events})
        if not args.json:
            con.print(f"[green]OK[/green] dataset {name!r}: {events} events, hash chain intact")
    if args.json:
        print_json(results)
    elif not names:
        con.print(f"{args.file} holds no dataset budgets yet.")
    return 0 if all(r["ok"] for r in results) else 1


def cmd_ledger_export(args: argparse.Namespace) -> int:
    names = _chosen(args)
    if args.format == "json":
        docs = []
        for name in names:
            with _opened(args.file, name) as led:
                docs.append(json.loads(led.to_json()))
        text = json.dumps(docs[0] if len(docs) == 1 else docs, indent=1)
    else:
        rows: list[dict[str, Any]] = []
        for name in names:
            with _opened(args.file, name) as led:
                rows += led.charge_rows()
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buf.getvalue().rstrip("\n")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(f"Exported {', '.join(names)} to {args.output}.", file=sys.stderr)
    else:
        print(text)
    return 0


_FIELDS = [
    "dataset",
    "id",
    "time",
    "caller",
    "step",
    "scope",
    "mechanism",
    "entry",
    "epsilon",
    "delta",
    "accountant",
    "at_delta",
    "sigma",
    "scale",
    "rho",
    "mu",
    "noise",
    "parameters",
    "relation",
    "sensitivity",
    "claim_epsilon",
    "claim_delta",
    "claim_source",
    "claim_note",
]
"""The CSV columns: ``epsilon`` and ``delta`` are what the ledger proves for the charge
alone at the budget's delta (``at_delta``, by ``accountant``), next to the noise's own
parameters (:meth:`privet.ledger.ChargeRecord.to_row`)."""


def _eps(v: float) -> str:
    return "∞" if v == float("inf") else f"{v:.6g}"


def cmd_ledger_history(args: argparse.Namespace) -> int:
    names = _chosen(args)
    rows: list[dict[str, Any]] = []
    for name in names:
        with _opened(args.file, name) as led:
            rows += led.charge_rows()
    rows.sort(key=lambda r: (r["time"], r["dataset"], r["id"]))
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print(f"{args.file} holds no charges yet.")
        return 0
    table = []
    for r in rows:
        proven = f"ε={_eps(r['epsilon'])}" + (f", δ={r['delta']:.2g}" if r["delta"] else "")
        claim = "—"
        if r["claim_epsilon"] is not None:
            claim = f"ε={_eps(r['claim_epsilon'])}" + (
                f" ({r['claim_source']})" if r["claim_source"] else ""
            )
        table.append(
            [
                r["time"],
                r["dataset"],
                r["caller"],
                r["step"] or r["mechanism"],
                r["scope"],
                proven,
                r["noise"] or "—",
                claim,
            ]
        )
    print_table(
        ["time", "dataset", "caller", "step", "scope", "proven alone", "noise", "claimed"],
        table,
        title=f"Every charge in {args.file}",
    )
    return 0


def cmd_ledger_init(args: argparse.Namespace) -> int:
    """Write a dataset's lifetime budget into a ledger file on purpose (before any charge)."""
    from privet.cli._output import UsageError
    from privet.ledger import Guarantee, Ledger

    budget = Guarantee(args.budget, args.budget_delta)
    if args.dataset in datasets_in_or_none(args.file):
        with _opened(args.file, args.dataset) as led:
            stored, relation = led.budget, led.relation.value
        if stored != budget or relation != args.relation:
            raise UsageError(
                f"Dataset {args.dataset!r} in {args.file} has the lifetime budget {stored} "
                f"({relation} neighbours), not {budget} ({args.relation}); they cannot be "
                "changed."
            )
        created = False
    else:
        Ledger.open(args.file, args.dataset, budget, relation=args.relation).close()
        created = True
    if args.json:
        print_json(
            {
                "ledger": args.file,
                "dataset": args.dataset,
                "budget": str(budget),
                "created": created,
            }
        )
    elif created:
        print(f"Dataset {args.dataset!r} in {args.file}: lifetime budget {budget}.")
    else:
        print(f"Dataset {args.dataset!r} in {args.file} already has the lifetime budget {budget}.")
    return 0


def datasets_in_or_none(target: str) -> list[str]:
    """:func:`datasets_in`, or no dataset where no ledger file exists yet."""
    import os

    from privet.ledger.postgres_store import is_postgres_url

    if not is_postgres_url(target) and not os.path.isfile(target):
        return []
    return datasets_in(target)


def cmd_ledger_copy(args: argparse.Namespace) -> int:
    from privet.ledger import copy_ledger

    copied = copy_ledger(args.source, args.destination, dataset=args.dataset)
    rows = [{"dataset": c.dataset, "events": c.events, "head": c.head} for c in copied]
    if args.json:
        print_json(rows)
    else:
        print_table(
            ["dataset", "events", "head of the hash chain"],
            [[r["dataset"], r["events"], r["head"][:16] + "..."] for r in rows],
            title="Copied and verified",
        )
    return 0


def add_parser(sub: Any) -> None:
    ledger = sub.add_parser(
        "ledger", help="inspect a ledger (show, verify, export, history), or init a dataset"
    )
    lsub = ledger.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")

    def target(p: argparse.ArgumentParser, *, dataset: bool = True) -> None:
        p.add_argument("file", help="the ledger: a SQLite file or a postgresql:// URL")
        if dataset:
            p.add_argument("--dataset", help="only this dataset")

    show = lsub.add_parser(
        "show",
        help="print a ledger's scope tree, costs and claims",
        description="Print a ledger: scopes, costs, charges and the papers' claims. Repeated "
        "scopes (a boosted model's trees, a forest's trees, identical leaves) are shown once "
        "with how many there are; --all shows each. Piped output is never cut. "
        "Example: privet ledger show budget.sqlite --dataset car",
    )
    target(show)
    show.add_argument("--json", action="store_true", help="print JSON instead of a tree")
    show.add_argument(
        "--all",
        action="store_true",
        help="every scope, part and charge (default: repeated siblings are shown once, "
        "with how many there are)",
    )
    show.add_argument(
        "--depth", type=int, default=None, help="show at most this many nested scopes"
    )
    show.add_argument(
        "--max-parts", type=int, default=3, help="kinds of part shown per partition (default 3)"
    )
    show.set_defaults(func=cmd_ledger_show)

    verify = lsub.add_parser(
        "verify",
        help="check a ledger's integrity and hash chain",
        description="Re-read every stored event of every dataset in a ledger and check "
        "the hash chain and the stored rows; exit 1 if any dataset was damaged or edited "
        "outside privet. Example: privet ledger verify budget.sqlite",
    )
    target(verify, dataset=False)
    verify.add_argument("--json", action="store_true", help="print JSON")
    verify.set_defaults(func=cmd_ledger_verify)

    export = lsub.add_parser(
        "export",
        help="export a ledger as JSON (the full document) or CSV (one row per charge)",
        description="Export a ledger: --format json writes Ledger.to_json()'s document (a list "
        "of them for several datasets), --format csv one row per charge. "
        "Example: privet ledger export budget.sqlite --format csv -o charges.csv",
    )
    target(export)
    export.add_argument("--format", choices=["json", "csv"], default="json")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    export.set_defaults(func=cmd_ledger_export)

    history = lsub.add_parser(
        "history",
        help="every charge with its time, caller, step, proven cost and the paper's claim",
        description="List every charge of a ledger, oldest first: time (UTC), dataset, caller, "
        "step, scope, the (epsilon, delta) proven for the charge alone at the budget's delta, "
        "its noise's parameters (sigma and sensitivity, rho, mu) and the paper's claim. "
        "Example: privet ledger history budget.sqlite --json",
    )
    target(history)
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(func=cmd_ledger_history)

    init = lsub.add_parser(
        "init",
        help="give a dataset its lifetime budget in a ledger file, before any charge",
        description="Write a dataset's lifetime budget (and neighbouring relation) into a ledger "
        "file or database, creating it if needed. privet train writes it only when a call goes "
        "through; init does it on purpose, e.g. for scripts that later omit --budget. Running it "
        "again with the same budget changes nothing. "
        "Example: privet ledger init budget.sqlite --dataset credit --budget 2 --budget-delta 1e-5",
    )
    init.add_argument("file", help="the ledger: a SQLite file or a postgresql:// URL")
    init.add_argument("--dataset", required=True, help="the dataset's name")
    init.add_argument("--budget", type=float, required=True, help="lifetime epsilon")
    init.add_argument("--budget-delta", type=float, default=0.0, help="lifetime delta (default 0)")
    init.add_argument(
        "--relation",
        choices=["add_remove", "replace_one"],
        default="add_remove",
        help="neighbouring relation of every charge (default add_remove)",
    )
    init.add_argument("--json", action="store_true", help="print JSON")
    init.set_defaults(func=cmd_ledger_init)

    copy = lsub.add_parser(
        "copy",
        help="copy a ledger between a SQLite file and a PostgreSQL database, verified",
        description="Copy every dataset (or --dataset) of SRC into DST, each a SQLite file or "
        "a postgresql:// URL, with the same ids and hash chain; the copy is then verified "
        "event by event against the original. A dataset DST already holds is refused "
        "(budgets are never merged). Example: privet ledger copy budget.sqlite "
        "postgresql://privet@db.internal/ledgers",
    )
    copy.add_argument("source", help="the ledger to copy: a SQLite file or a postgresql:// URL")
    copy.add_argument("destination", help="where to copy it: a SQLite file or a postgresql:// URL")
    copy.add_argument("--dataset", help="only this dataset")
    copy.add_argument("--json", action="store_true", help="print JSON")
    copy.set_defaults(func=cmd_ledger_copy)
    ledger.set_defaults(func=lambda a: (ledger.print_help(), 2)[1])
