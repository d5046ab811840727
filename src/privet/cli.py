"""The ``privet`` command.

``privet demo`` runs the whole story on the bundled Car dataset in a few
seconds: a privacy plan printed before any data is read, a budget-checked
training call charged to a SQLite ledger, accuracy against the non-private
tree, the ledger, a refused over-budget call, and a short audit.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from privet.errors import PrivetError


def _console() -> Console:
    return Console(highlight=False)


# ---------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    import numpy as np

    from privet.data import load_dataset
    from privet.learners import DPID3Classifier, ID3Classifier
    from privet.ledger import BudgetExceededError, Guarantee, Ledger

    con = _console()
    ds = load_dataset(args.dataset)
    con.print(
        Panel.fit(
            f"[bold]privet demo[/bold] — DP ID3 (seed 000, Alg. 6) on [cyan]{ds.name}[/cyan] "
            f"({ds.n_rows} rows, {ds.schema.n_features} attributes, source {ds.source})"
        )
    )
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(ds.n_rows)
    cut = int(0.8 * ds.n_rows)
    train, test = ds.frame.iloc[order[:cut]], ds.frame.iloc[order[cut:]]
    X_tr, y_tr = train[list(ds.schema.feature_names)], train[ds.target]
    X_te, y_te = test[list(ds.schema.feature_names)], test[ds.target]

    ledger_path = args.ledger or os.path.join(
        tempfile.mkdtemp(prefix="privet-demo-"), "ledger.sqlite"
    )
    budget = Guarantee(args.budget)
    led = Ledger.open(ledger_path, dataset=ds.name, budget=budget)
    con.print(f"Ledger: [bold]{ledger_path}[/bold] (dataset {ds.name!r}, lifetime budget {budget})")

    model = DPID3Classifier(
        epsilon=args.epsilon, max_depth=args.depth, schema=ds.schema, ledger=led, leaf=args.leaf
    )
    plan = model.privacy_plan()
    con.print(
        "\n[bold]1. Privacy plan[/bold] (from parameters and the public schema; no data read)"
    )
    con.print(f"   {plan.description}")
    con.print(
        f"   the ledger proves: {led.plan_cost(plan)};  the paper claims: ε={plan.claim.epsilon:g}"
    )

    con.print("\n[bold]2. Budget-checked training call[/bold]")
    model.fit(X_tr, y_tr)
    base = ID3Classifier(max_depth=args.depth, schema=ds.schema).fit(X_tr, y_tr)
    table = Table("model", "test accuracy", "privacy")
    table.add_row(
        f"DPID3Classifier(ε={args.epsilon:g}, depth {args.depth})",
        f"{np.mean(model.predict(X_te) == y_te.to_numpy()):.3f}",
        str(model.privacy_spent_),
    )
    table.add_row(
        f"ID3Classifier (non-private, depth {args.depth})",
        f"{np.mean(base.predict(X_te) == y_te.to_numpy()):.3f}",
        "none (ε=∞)",
    )
    con.print(table)

    con.print("\n[bold]3. The ledger[/bold]")
    con.print(led.report(max_parts=1, max_depth=2))

    con.print("\n[bold]4. An over-budget call is refused before any data is read[/bold]")
    greedy = DPID3Classifier(
        epsilon=args.budget, max_depth=args.depth, schema=ds.schema, ledger=led
    )
    try:
        greedy.fit(X_tr, y_tr)
        con.print("[red]   not refused: this is a bug[/red]")
        return 1
    except BudgetExceededError as exc:
        con.print(f"   [yellow]BudgetExceededError[/yellow]: {exc}")
    con.print(f"   spent is still {led.spent()}; remaining {led.remaining()}")

    con.print("\n[bold]5. A short audit[/bold]")
    _demo_audit(con, ds, args)
    led.close()
    return 0


def _demo_audit(con: Console, ds, args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    """Empirical DP test on a canary alone in its leaf: the DP tree, then the
    non-private tree for contrast (trainings on D and on D + canary)."""
    from privet.audits.learner_audit import audit_learner_leaf

    con.print(
        f"   {args.audit_trials} trainings on D and on D + a canary record alone in its "
        "leaf; the lower bound on epsilon is from Clopper-Pearson intervals at 95%."
    )
    for learner in ("dp_id3", "id3"):
        result = audit_learner_leaf(
            ds,
            epsilon=args.epsilon,
            max_depth=args.depth,
            trials=args.audit_trials,
            confidence=0.95,
            seed=args.seed,
            learner=learner,
        )
        con.print(f"   {result.summary()}")


# -------------------------------------------------------------------- ledger
def cmd_ledger_show(args: argparse.Namespace) -> int:
    from privet.ledger import Ledger
    from privet.ledger.sqlite_store import list_datasets

    con = _console()
    datasets = list_datasets(args.file)
    if not datasets:
        con.print(f"{args.file} holds no dataset budgets yet.")
        return 0
    names = [d["name"] for d in datasets]
    if args.dataset is not None and args.dataset not in names:
        raise PrivetError(
            f"Dataset {args.dataset!r} is not in {args.file}; it holds {', '.join(names)}."
        )
    for name in [args.dataset] if args.dataset else names:
        led = Ledger.open(args.file, dataset=name)
        try:
            if args.json:
                print(led.to_json())
            else:
                con.print(led.report(max_parts=args.max_parts))
        finally:
            led.close()
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    """Check every dataset of a ledger file: integrity, hash chain, rows against the chain."""
    from privet.errors import LedgerCorruptError
    from privet.ledger import Ledger
    from privet.ledger.sqlite_store import list_datasets

    con = _console()
    names = [d["name"] for d in list_datasets(args.file)]
    if not names:
        con.print(f"{args.file} holds no dataset budgets yet.")
        return 0
    bad = 0
    for name in names:
        try:
            led = Ledger.open(args.file, dataset=name)
            try:
                events = led.verify()
            finally:
                led.close()
        except LedgerCorruptError as exc:
            bad += 1
            con.print(f"[red]FAILED[/red] dataset {name!r}: {exc}")
            continue
        con.print(f"[green]OK[/green] dataset {name!r}: {events} events, hash chain intact")
    return 1 if bad else 0


def cmd_datasets(args: argparse.Namespace) -> int:
    from privet.data import list_datasets, load_schema

    con = _console()
    table = Table("name", "attributes", "domain sizes", "classes")
    for name in list_datasets():
        s = load_schema(name)
        table.add_row(name, str(s.n_features), str(list(s.domain_sizes)), str(s.n_classes))
    con.print(table)
    return 0


# ---------------------------------------------------------------------- main
def _positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (checked before anything is charged)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privet",
        description="Privacy accounting and auditing for decision-tree learning "
        "under differential privacy, local DP and MPC.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="train a DP tree on a bundled dataset with a budget-checked call, show its "
        "ledger and a short audit",
        description="Train DP ID3 on a bundled dataset under a SQLite ledger, compare with "
        "the non-private tree, show the ledger, a refused over-budget call and a short audit.",
    )
    demo.add_argument("--dataset", default="car", help="bundled dataset (default: car)")
    demo.add_argument("--epsilon", type=float, default=1.0, help="budget of the training call")
    demo.add_argument("--budget", type=float, default=2.0, help="lifetime budget of the dataset")
    demo.add_argument("--depth", type=int, default=3, help="tree depth (default: 3)")
    demo.add_argument("--leaf", choices=["laplace", "exponential"], default="laplace")
    demo.add_argument("--ledger", help="SQLite ledger file (default: a new temporary file)")
    demo.add_argument(
        "--audit-trials",
        type=_positive_int,
        default=200,
        help="trainings per dataset in the audit (a whole number >= 1)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed for the train/test split")
    demo.set_defaults(func=cmd_demo)

    ledger = sub.add_parser("ledger", help="inspect a ledger file")
    lsub = ledger.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")
    show = lsub.add_parser(
        "show", help="print a SQLite ledger", description="Print a SQLite ledger."
    )
    show.add_argument("file", help="the ledger file")
    show.add_argument("--dataset", help="only this dataset")
    show.add_argument("--json", action="store_true", help="print JSON instead of a tree")
    show.add_argument("--max-parts", type=int, default=3, help="parts shown per partition")
    show.set_defaults(func=cmd_ledger_show)
    verify = lsub.add_parser(
        "verify",
        help="check a ledger file's integrity and hash chain",
        description="Re-read every stored event of every dataset in a SQLite ledger and check "
        "the hash chain and the stored rows; exit 1 if any dataset was damaged or edited "
        "outside privet. Example: privet ledger verify budget.sqlite",
    )
    verify.add_argument("file", help="the ledger file")
    verify.set_defaults(func=cmd_ledger_verify)
    ledger.set_defaults(func=lambda a: (ledger.print_help(), 2)[1])

    datasets = sub.add_parser("datasets", help="list the datasets privet can load")
    datasets.set_defaults(func=cmd_datasets)

    from privet.audits.cli_audit import add_audit_parser

    add_audit_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PrivetError as exc:
        _console().print(f"[red]privet: {type(exc).__name__}:[/red] {exc}")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
