"""``privet demo``: the whole story on a bundled dataset.

``privet demo`` runs the whole story on the bundled Car dataset in a few
seconds: a privacy plan printed before any data is read, a budget-checked
training call charged to a SQLite ledger, accuracy against the non-private
tree, the ledger, a refused over-budget call, and a short audit.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table


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
    """The white-box audit of the DP tree (every noisy value its mechanisms release,
    on the worst-case neighbours built from the public schema), then the black-box
    lone-leaf test of the non-private tree for contrast (it releases nothing
    through privet's mechanisms, so only its predictions can be tested)."""
    from privet.audits import audit_learner
    from privet.audits.learner_audit import audit_learner_leaf

    con.print(
        f"   White box: {args.audit_trials} trainings of the DP tree on each of D and D' "
        "(worst-case neighbours built from the public schema, no private row read); the "
        "test reads every noisy value the mechanisms release. Lower bound on epsilon: "
        "Clopper-Pearson at 95%."
    )
    result = audit_learner(
        "dp_id3",
        ds.schema,
        epsilon=args.epsilon,
        trials=args.audit_trials,
        confidence=0.95,
        max_depth=args.depth,
        output="releases",
        one_run=False,
        curve=False,
        random_state=args.seed,
    )
    con.print(f"   {result.summary()}")
    con.print(
        f"   Black box, for contrast: {args.audit_trials} trainings of the non-private tree "
        "on D and on D + a canary alone in its leaf; the canary's predicted label is the output."
    )
    result = audit_learner_leaf(
        ds,
        epsilon=args.epsilon,
        max_depth=args.depth,
        trials=args.audit_trials,
        confidence=0.95,
        seed=args.seed,
        learner="id3",
    )
    con.print(f"   {result.summary()}")


# -------------------------------------------------------------------- parser
def _positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (checked before anything is charged)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def add_parser(sub: Any) -> None:
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
