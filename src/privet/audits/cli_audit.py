"""``privet audit``: membership inference and empirical DP tests from the command line.

::

    privet audit list
    privet audit learner dpid3 --depth 1 --trials 2000        # white box: the releases
    privet audit dp --mechanism laplace_half_scale            # one bug-zoo entry
    privet audit dp --mechanism all --trials benchmark        # the whole zoo
    privet audit dp --learner oblivious_id3_exact --dataset car --trials 300
    privet audit mia --learner dp_id3 --dataset car --epsilon 1 --shadows 8

Each command shows rich progress bars, prints a summary and writes
``audit.html``, ``audit.md`` and ``audit.json`` into ``--out`` (see
:mod:`privet.audits.report`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from privet.audits.formatting import format_epsilon
from privet.errors import InvalidParameterError

__all__ = [
    "add_audit_parser",
    "cmd_audit_dp",
    "cmd_audit_learner",
    "cmd_audit_list",
    "cmd_audit_mia",
]


def _console() -> Console:
    return Console(highlight=False)


def _progress(console: Console) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


@contextmanager
def _stages(console: Console) -> Iterator[Callable[[str, int, int], None]]:
    """A ``progress(stage, done, total)`` callback drawing one bar per stage."""
    with _progress(console) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update


def _verdict(v: str | None) -> str:
    if v is None:
        return "—"
    colour = {"PASS": "green", "FAIL": "bold red"}.get(v, "yellow")
    return f"[{colour}]{v}[/]"


def _written(console: Console, files: Any) -> None:
    console.print("Report:", soft_wrap=True)
    for path in files:
        console.print(f"  [bold]{path}[/bold]", soft_wrap=True)  # paths are never wrapped


# ----------------------------------------------------------------------- list


def cmd_audit_list(args: argparse.Namespace) -> int:
    from privet.audits.learners import LEARNERS, learner_names
    from privet.audits.zoo import ZOO

    con = _console()
    zoo = Table("mechanism", "claimed ε", "true ε", "what is wrong", title="Bug zoo (--mechanism)")
    for e in ZOO.values():
        zoo.add_row(
            e.name, format_epsilon(e.claimed_epsilon), format_epsilon(e.true_epsilon), e.bug
        )
    con.print(zoo)
    aliases = {n.configuration: f"{n.class_name} / {n.short_name}" for n in learner_names()}
    learners = Table(title="Learners (--learner: a name, class name or short name)")
    learners.add_column("learner", no_wrap=True)
    learners.add_column("class name / short name", overflow="fold")
    learners.add_column("path", no_wrap=True)
    learners.add_column("what it is")
    for s in LEARNERS.values():
        path = s.path + (" (slow)" if s.slow else "")
        learners.add_row(s.name, aliases.get(s.name, ""), path, s.title)
    con.print(learners)
    return 0


# ------------------------------------------------------------------------- dp


def _zoo_table(results: list[Any]) -> Table:
    from privet.audits.report import zoo_rows

    head, rows = zoo_rows(results)
    t = Table(*head, title="Bug zoo: empirical DP tests")
    verdicts = [i for i, h in enumerate(head) if h == "verdict"]
    for row in rows:
        t.add_row(*(_verdict(c) if i in verdicts and c != "—" else c for i, c in enumerate(row)))
    return t


def _learner_table(audits: list[Any]) -> Table:
    """Claimed, proven, measured and estimate per learner, narrow enough for 80 columns.

    Short names and numbers only (the full titles are printed above the table
    and in the report); the learner column never wraps.
    """
    from rich import box

    t = Table(title="Claimed, proven and measured epsilon", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("learner", no_wrap=True)
    t.add_column("claimed ε", justify="right")
    t.add_column("proven ε", justify="right")
    t.add_column("measured ε", justify="right")
    t.add_column("estimate", justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for a in audits:
        m = a.measured_epsilon
        measured = "not measured" if m is None else f"≥ {m:.3g}"
        best = a.best_release_test
        if best is None:
            estimate = "—"
        else:
            lo, hi = best.estimate_interval
            estimate = (
                f"{format_epsilon(best.estimate)} [{format_epsilon(lo, 2)}, "
                f"{format_epsilon(hi, 2)}]"
            )
        proven = format_epsilon(a.proven_epsilon)
        if a.proven_delta:
            proven += f" (δ {a.proven_delta:.0e})"
        verdict = _verdict(a.verdict)
        if not a.consistent:
            verdict += " [bold red](> proven: bug)[/]"
        t.add_row(a.learner, format_epsilon(a.claimed_epsilon), proven, measured, estimate, verdict)
    return t


def _trials(value: str) -> int | str:
    if value in ("ci", "benchmark"):
        return value
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--trials must be an integer, 'ci' or 'benchmark'; got {value!r}."
        ) from None
    if n < 4:
        raise argparse.ArgumentTypeError(f"--trials must be at least 4; got {n}.")
    return n


def cmd_audit_dp(args: argparse.Namespace) -> int:
    from privet.audits.report import write_report

    con = _console()
    if args.mechanism is not None:
        from privet.audits.zoo import ZOO, get_entry

        names = list(ZOO) if args.mechanism == "all" else [get_entry(args.mechanism).name]
        trials = args.trials if args.trials is not None else "ci"
        which = ("broken", "correct") if args.which == "both" else (args.which,)
        with _progress(con) as bar:
            task = bar.add_task("DP tests", total=len(names) * len(which))

            def step(name: str, version: str) -> None:
                bar.update(task, description=f"{name} ({version})")

            results = []
            for name in names:
                entry = ZOO[name]
                n = entry.trials_for(trials)
                tests: dict[str, Any] = {}
                for version in which:
                    step(name, version)
                    tests[version] = entry.test(
                        version,  # type: ignore[arg-type]
                        confidence=args.confidence,
                        trials=n,
                        n_jobs=args.n_jobs,
                        backend=args.scheduler,
                        random_state=args.seed,
                    )
                    bar.advance(task)
                results.append(_zoo_result(entry, tests))
            bar.update(task, description="DP tests done")
        con.print(_zoo_table(results))
        files = write_report(
            args.out, title=f"privet audit dp: {args.mechanism}", name=args.name, zoo=results
        )
        _written(con, files)
        return 0

    from privet.audits.learners import resolve_learner
    from privet.data import load_dataset

    spec = resolve_learner(args.learner)
    ds = load_dataset(args.dataset)
    trials = args.trials if args.trials is not None else (30 if spec.slow else 200)
    if isinstance(trials, str):
        trials = 30 if spec.slow else (200 if trials == "ci" else 2000)
    pairs = ("near_tie", "lone_leaf") if args.pair == "both" else (args.pair,)
    title = f"privet audit dp: {spec.name} on {ds.name}"
    return _audit_and_report(con, args, spec, ds, int(trials), title, pairs=pairs)


def _zoo_result(entry: Any, tests: dict[str, Any]) -> Any:
    from privet.audits.zoo import ZooResult

    if "broken" in tests:
        return ZooResult(entry=entry, broken=tests["broken"], correct=tests.get("correct"))
    # Only the correct version was asked for: report it in the broken slot's place.
    return ZooResult(entry=entry, broken=tests["correct"], correct=None)


# -------------------------------------------------------------------- learner


def cmd_audit_learner(args: argparse.Namespace) -> int:
    """``privet audit learner NAME``: the white-box audit (by default) on schema neighbours."""
    from privet.audits.learners import resolve_learner
    from privet.data import load_dataset

    con = _console()
    spec = resolve_learner(args.learner)
    ds = load_dataset(args.dataset)
    trials = args.trials if args.trials is not None else (30 if spec.slow else 1000)
    title = f"privet audit learner: {spec.name} on {ds.name}'s schema"
    # only the dataset's public schema is read (neighbours="schema")
    return _audit_and_report(
        con, args, spec, ds, int(trials), title, output=args.output, time_limit=args.time_limit
    )


def _audit_and_report(
    con: Console, args: argparse.Namespace, spec: Any, ds: Any, trials: int, title: str, **kw: Any
) -> int:
    """One learner audit with the command's common options, printed and written as a report."""
    from privet.audits.learners import audit_learner
    from privet.audits.report import write_report

    with _stages(con) as progress:
        audit = audit_learner(
            spec,
            ds,
            epsilon=args.epsilon,
            trials=trials,
            confidence=args.confidence,
            max_depth=args.depth,
            one_run=args.one_run,
            n_jobs=args.n_jobs,
            backend=args.scheduler,
            random_state=args.seed,
            progress=progress,
            **kw,
        )
    con.print(audit)
    con.print(_learner_table([audit]))
    files = write_report(args.out, title=title, name=args.name, learners=[audit])
    _written(con, files)
    return 0


# ------------------------------------------------------------------------ mia


def cmd_audit_mia(args: argparse.Namespace) -> int:
    from privet.audits.learners import learner_mia, resolve_learner
    from privet.audits.report import write_report
    from privet.data import load_dataset

    con = _console()
    spec = resolve_learner(args.learner)
    ds = load_dataset(args.dataset)
    attacks = tuple(args.attacks.split(",")) if args.attacks else None
    with _stages(con) as progress:
        res = learner_mia(
            spec,
            ds,
            epsilon=args.epsilon,
            max_depth=args.depth,
            confidence=args.confidence,
            n_shadows=args.shadows,
            rows=args.rows or None,
            attacks=attacks,
            n_jobs=args.n_jobs,
            backend=args.scheduler,
            random_state=args.seed,
            progress=progress,
        )
    table = Table(
        "attack",
        "AUC [CI]",
        "TPR@1% FPR",
        "implied ε @1%",
        "held-out ε lower @1%",
        title=(
            f"Membership inference on {spec.title} ({ds.name}, ε={args.epsilon:g}): "
            f"claimed {format_epsilon(res.claimed_epsilon)}, proven {format_epsilon(res.proven_epsilon)}"
        ),
    )
    for a in res.attacks:
        lo, hi = a.auc.interval
        try:
            tpr = f"{a.operating_point(0.01).tpr:.4f}"
            imp = format_epsilon(a.implied_at(0.01).estimate)
            held = format_epsilon(a.heldout_at(0.01).epsilon_lower)
        except InvalidParameterError:
            tpr = imp = held = "—"
        table.add_row(a.attack, f"{a.metrics.auc:.3f} [{lo:.3f}, {hi:.3f}]", tpr, imp, held)
    con.print(table)
    con.print(
        f"Empirical ε lower bound (held-out, best attack): {res.epsilon_lower:.3g}; "
        f"train/test accuracy {res.train_accuracy:.3f}/{res.test_accuracy:.3f}"
    )
    if res.exceeds_proven:
        con.print(
            f"[bold red]Held-out bound exceeds the proven ε for {', '.join(res.exceeds_proven)}: "
            "a privet bug[/]"
        )
    files = write_report(
        args.out,
        title=f"privet audit mia: {spec.name} on {ds.name}",
        name=args.name,
        mias={f"{spec.name} on {ds.name}": res},
    )
    _written(con, files)
    return 0


# --------------------------------------------------------------------- parser


def add_audit_parser(sub: Any) -> tuple[argparse.ArgumentParser, Any]:
    """Register ``privet audit {list,dp,mia}``; return the parser and its subcommands."""
    audit = sub.add_parser(
        "audit",
        help="membership inference and empirical DP tests, with HTML/markdown/JSON reports",
        description="Audit privet's learners and the bug zoo's mechanisms.",
    )
    asub = audit.add_subparsers(dest="audit_command", metavar="SUBCOMMAND")

    lst = asub.add_parser("list", help="list the zoo mechanisms and the learners")
    lst.set_defaults(func=cmd_audit_list)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--confidence", type=float, default=0.95, help="default: 0.95")
        p.add_argument("--out", default="privet-audit", help="report directory")
        p.add_argument("--name", default="audit", help="report file stem (default: audit)")
        p.add_argument("--n-jobs", type=int, default=None, help="joblib workers")
        p.add_argument(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="run the trainings on this Dask cluster (tcp://HOST:8786) instead of locally",
        )
        p.add_argument("--seed", type=int, default=0, help="seed of the auditor's choices")

    dp = asub.add_parser(
        "dp",
        help="empirical DP test of a zoo mechanism or a learner",
        description="Run many trials on neighbouring inputs and bound epsilon from below "
        "(Clopper-Pearson). A mechanism is a bug-zoo entry (tested with its correct "
        "counterpart); a learner is trained once per trial on a near-tie and a lone-leaf "
        "pair, with its claimed and proven epsilon alongside.",
    )
    what = dp.add_mutually_exclusive_group(required=True)
    what.add_argument("--mechanism", help="bug-zoo entry, or 'all' (see `privet audit list`)")
    what.add_argument("--learner", help="learner name (see `privet audit list`)")
    dp.add_argument(
        "--trials",
        type=_trials,
        default=None,
        help="runs per input: an integer, 'ci' or 'benchmark' (default: ci, or 200 trainings)",
    )
    dp.add_argument(
        "--which", choices=["broken", "correct", "both"], default="both", help="mechanism version"
    )
    dp.add_argument("--dataset", default="car", help="learner: dataset (default: car)")
    dp.add_argument("--epsilon", type=float, default=1.0, help="learner: epsilon (default: 1)")
    dp.add_argument("--depth", type=int, default=3, help="learner: depth of the lone-leaf test")
    dp.add_argument(
        "--pair", choices=["near_tie", "lone_leaf", "both"], default="both", help="learner pairs"
    )
    dp.add_argument(
        "--one-run", action="store_true", help="learner: also the one-run audit (m canaries)"
    )
    common(dp)
    dp.set_defaults(func=cmd_audit_dp)

    lrn = asub.add_parser(
        "learner",
        help="white-box audit of a learner: the releases its mechanisms record",
        description="Train the learner many times on each side of its worst-case "
        "neighbouring pair, built from the dataset's public schema alone (no row is read), "
        "replay each training on the other side, and bound epsilon from below with the exact "
        "likelihood ratio of every release the mechanisms recorded (Clopper-Pearson), next "
        "to an estimate with its interval and the epsilon the ledger proves. "
        "Example: privet audit learner dpid3 --depth 1 --trials 2000",
    )
    lrn.add_argument("learner", help="learner name (see `privet audit list`)")
    lrn.add_argument("--dataset", default="car", help="whose public schema (default: car)")
    lrn.add_argument("--epsilon", type=float, default=1.0, help="the learner's epsilon")
    lrn.add_argument("--depth", type=int, default=1, help="tree depth (default: 1)")
    lrn.add_argument(
        "--trials", type=int, default=None, help="trainings per side (default 1000; 30 for MPC)"
    )
    lrn.add_argument(
        "--output",
        choices=["releases", "labels", "proba"],
        default="releases",
        help="what a training shows the test (default: releases, the white box)",
    )
    lrn.add_argument("--one-run", action="store_true", help="also the one-run audit")
    lrn.add_argument(
        "--time-limit", type=float, default=None, help="seconds after which no training starts"
    )
    common(lrn)
    lrn.set_defaults(func=cmd_audit_learner)

    mia = asub.add_parser(
        "mia",
        help="membership-inference attacks on a learner",
        description="Train shadow and target models on a dataset and run the loss, "
        "shadow-model, LiRA and RMIA attacks; ROC curves (log-log) in the report.",
    )
    mia.add_argument("--learner", required=True, help="learner name (see `privet audit list`)")
    mia.add_argument("--dataset", default="car", help="dataset (default: car)")
    mia.add_argument("--epsilon", type=float, default=1.0, help="the learner's epsilon")
    mia.add_argument("--depth", type=int, default=3, help="tree depth (default: 3)")
    mia.add_argument("--shadows", type=int, default=8, help="shadow models (default: 8)")
    mia.add_argument(
        "--rows", type=int, default=600, help="population size (default: 600; 0 = all rows)"
    )
    mia.add_argument("--attacks", help="comma-separated attacks (default: all)")
    common(mia)
    mia.set_defaults(func=cmd_audit_mia)

    audit.set_defaults(func=lambda a: (audit.print_help(), 2)[1])
    return audit, asub
