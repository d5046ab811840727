"""``privet audit``: the audits' commands, plus ``privet audit model DIR``.

``list``, ``dp`` and ``mia`` are :mod:`privet.audits.cli_audit` (they accept a
class name, a short name or a configuration, see ``privet learners``).
``model`` audits the configuration of a trained model directory: the same
class and parameters, retrained on its data (or ``--data``) many times.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from privet.cli._io import read_csv, require_valid, typed
from privet.cli._model import load_model
from privet.cli._output import DataInvalid, console, print_json

__all__ = ["add_parser", "cmd_audit_model", "mia_summary"]

HELP = "membership inference and empirical DP tests, with HTML/markdown/JSON reports"
_BUILD_ARGS = ("epsilon", "max_depth", "schema", "ledger", "random_state")


def _spec_of(est: Any) -> Any:
    from privet.audits import LEARNERS, SHORT_NAMES
    from privet.audits.learners import CLASS_CONFIGURATIONS, LearnerBuilder, LearnerSpec

    cls = type(est).__name__
    params = est.get_params(deep=False)
    options = tuple((k, v) for k, v in params.items() if k not in _BUILD_ARGS)
    base = LEARNERS.get(CLASS_CONFIGURATIONS.get(cls, ""))
    shown = ", ".join(f"{k}={v!r}" for k, v in options)
    backend = params.get("backend", "reference")
    return LearnerSpec(
        name=f"model:{SHORT_NAMES.get(cls, cls)}",
        title=f"{cls}({shown}) from a model directory",
        build=LearnerBuilder(cls, options),
        path="reference" if backend in (None, "reference") else "mpc",
        slow=backend == "mpc",
        relation=base.relation if base is not None else "add_remove",
    )


def _private_rows(args: argparse.Namespace, meta: dict[str, Any], schema: Any) -> tuple[Any, Any]:
    """The model's private rows and its ledger, for ``--on-private-rows`` (read after the charge)."""
    from privet.data import Dataset
    from privet.ledger import Ledger

    path = meta.get("ledger")
    if not path:
        raise DataInvalid(
            f"{args.model} was trained without a ledger file, so an audit on its private rows "
            "cannot be recorded anywhere. Audit without --on-private-rows (neighbours from the "
            "public schema alone, nothing charged)."
        )
    dataset = str(meta.get("dataset") or "data")
    ledger = Ledger.open(path, dataset=dataset)

    def load() -> Any:
        data = args.data or meta.get("data")
        if not data:
            raise DataInvalid(f"{args.model} does not record its data; pass --data DATA.csv.")
        raw = read_csv(data)
        require_valid(raw, schema, data=data, schema_ref=f"{args.model}/schema.json")
        frame = typed(raw, schema)[list(schema.columns)].reset_index(drop=True)
        return Dataset(
            dataset,
            schema.validate(frame, target="required"),
            schema,
            schema.target.name,
            f"the data of model {args.model}",
            "",
            data,
        )

    return ledger, load


def mia_summary(result: Any) -> str:
    """The one line ``privet audit model --kind mia`` prints (epsilons as in the reports)."""
    from privet.audits.formatting import format_epsilon

    claim = "none" if result.claimed_epsilon is None else format_epsilon(result.claimed_epsilon)
    return (
        f"Membership inference: held-out ε lower bound {format_epsilon(result.epsilon_lower)} "
        f"(claimed {claim}, proven {format_epsilon(result.proven_epsilon)}); INTERNAL report: "
        "it states facts about the private rows"
    )


def cmd_audit_model(args: argparse.Namespace) -> int:
    """Audit a trained model's learner and parameters (white-box by default, schema neighbours).

    By default every dataset the audit trains on is built from the model's
    public schema: no private row is read and nothing is charged. The claim
    is the epsilon the model was trained at. ``--on-private-rows`` audits on
    the model's data instead: the audit is charged to the model's ledger as a
    non-private release first (refused on a finite budget) and the report is
    marked internal.
    """
    from privet.audits.cli_audit import _learner_table, _stages, _written
    from privet.audits.learners import audit_learner, learner_mia
    from privet.audits.learners.audit import charge_private_audit
    from privet.audits.report import write_report
    from privet.data import Schema

    est, meta = load_model(args.model)
    schema = Schema.from_dict(meta["schema"])
    spec = _spec_of(est)
    params = est.get_params(deep=False)
    epsilon = float(params.get("epsilon") or 1.0)
    claimed = params.get("epsilon")
    depth = int(params.get("max_depth") or 3)
    name = str(meta.get("dataset") or "data")
    if args.kind == "mia" and not args.on_private_rows:
        raise DataInvalid(
            "Membership inference trains on a population of the model's records: pass "
            "--on-private-rows (charged to the model's ledger as a non-private release; refused "
            "on a finite budget), or use --kind dp (neighbours from the public schema)."
        )
    data: Any = schema
    ledger = None
    if args.on_private_rows:
        ledger, load = _private_rows(args, meta, schema)
        if args.kind == "mia":  # audit_learner charges its own audits; this one is ours
            what = "a membership-inference population of its rows and the attacks' results"
            charge_private_audit(ledger, name, what)
        data = load()
    con = console(stderr=args.json)  # progress bars never mix with the JSON
    with _stages(con) as progress:
        shared = {
            "epsilon": epsilon,
            "max_depth": depth,
            "confidence": args.confidence,
            "n_jobs": args.n_jobs,
            "random_state": args.seed,
            "progress": progress,
        }
        if args.kind == "dp":
            result = audit_learner(
                spec,
                data,
                trials=args.trials,
                one_run=False,
                output=args.output,
                neighbours="private_rows" if args.on_private_rows else "schema",
                ledger=ledger,
                claimed_epsilon=None if claimed is None else float(claimed),
                time_limit=args.time_limit,
                **shared,
            )
        else:
            result = learner_mia(
                spec, data, n_shadows=args.shadows, rows=args.rows or None, **shared
            )
    title = f"privet audit model: {spec.title} on {name}"
    if args.kind == "dp":
        files = write_report(args.out, title=title, name=args.name, learners=[result])
        summary = {
            "claimed_epsilon": result.claimed_epsilon,
            "proven_epsilon": result.proven_epsilon,
            "proven_delta": result.proven_delta,
            "measured_epsilon_lower": result.measured_epsilon,
            "estimate": result.estimate,
            "mode": result.mode,
            "neighbours": result.neighbours,
            "internal": result.internal,
            "verdict": result.verdict,
        }
    else:
        files = write_report(args.out, title=title, name=args.name, mias={title: result})
        summary = {
            "claimed_epsilon": result.claimed_epsilon,
            "proven_epsilon": result.proven_epsilon,
            "mia_epsilon_lower": result.epsilon_lower,
            "internal": True,
        }
    if args.json:
        print_json(
            {"model": args.model, "kind": args.kind, **summary, "report": [str(f) for f in files]}
        )
        return 0
    if args.kind == "dp":
        con.print(result.summary(), soft_wrap=False)
        con.print(_learner_table([result]))
    else:
        con.print(mia_summary(result))
    _written(con, files)
    return 0


def _json_report(func: Any) -> Any:
    """``--json`` for ``audit dp|mia``: the tables go to stderr, the report's JSON to stdout."""

    def run(args: argparse.Namespace) -> int:
        if not args.json:
            return int(func(args) or 0)
        with contextlib.redirect_stdout(sys.stderr):
            code = int(func(args) or 0)
        print((Path(args.out) / f"{args.name}.json").read_text(encoding="utf-8"))
        return code

    return run


def cmd_audit_list_json(args: argparse.Namespace) -> int:
    """``privet audit list --json``: the zoo's entries and the learners' names."""
    from privet.audits import LEARNERS
    from privet.audits.learners import learner_names
    from privet.audits.zoo import ZOO

    print_json(
        {
            "mechanisms": [
                {
                    "name": e.name,
                    "claimed_epsilon": e.claimed_epsilon,
                    "true_epsilon": e.true_epsilon,
                    "bug": e.bug,
                }
                for e in ZOO.values()
            ],
            "learners": [
                {"configuration": s.name, "title": s.title, "path": s.path, "slow": s.slow}
                for s in LEARNERS.values()
            ],
            "names": [n._asdict() for n in learner_names()],
        }
    )
    return 0


def add_parser(sub: Any) -> None:
    from privet.audits.cli_audit import add_audit_parser

    _, asub = add_audit_parser(sub)
    for name in ("dp", "mia", "learner"):
        p = asub.choices[name]
        p.add_argument("--json", action="store_true", help="print the report's JSON")
        p.set_defaults(func=_json_report(p.get_default("func")))
    lst = asub.choices["list"]
    lst.add_argument("--json", action="store_true", help="print JSON")
    plain = lst.get_default("func")
    lst.set_defaults(func=lambda a: cmd_audit_list_json(a) if a.json else plain(a))
    m = asub.add_parser(
        "model",
        help="audit a trained model directory's learner and parameters on its data",
        description="Retrain the model's learner with its parameters many times on "
        "neighbouring datasets built from its public schema (no private row is read) and "
        "bound epsilon from below with the white-box audit of its releases, next to the "
        "epsilon it was trained at and the epsilon its ledger proves. --output labels audits "
        "the predictions instead; --on-private-rows uses the model's data (charged). "
        "Example: privet audit model privet-model --trials 1000",
    )
    m.add_argument("model", help="model directory written by privet train")
    m.add_argument("--data", help="CSV to audit on (default: the data the model was trained on)")
    m.add_argument("--kind", choices=["dp", "mia"], default="dp", help="default: dp")
    m.add_argument(
        "--output",
        choices=["releases", "labels", "proba"],
        default="releases",
        help="dp: what a training shows the test: every release the mechanisms record "
        "(white box, default) or the predictions (black box)",
    )
    m.add_argument(
        "--on-private-rows",
        action="store_true",
        help="audit on the model's data rather than on neighbours built from its public "
        "schema; charged to its ledger as a non-private release (refused on a finite "
        "budget), report marked internal",
    )
    m.add_argument(
        "--time-limit", type=float, default=None, help="dp: seconds after which no training starts"
    )
    m.add_argument("--trials", type=int, default=100, help="dp: trainings per input (default 100)")
    m.add_argument("--shadows", type=int, default=4, help="mia: shadow models (default 4)")
    m.add_argument("--rows", type=int, default=300, help="mia: population size (0 = all rows)")
    m.add_argument("--confidence", type=float, default=0.95, help="default: 0.95")
    m.add_argument("--out", default="privet-audit", help="report directory")
    m.add_argument("--name", default="audit", help="report file stem (default: audit)")
    m.add_argument("--n-jobs", type=int, default=None, help="joblib workers")
    m.add_argument("--seed", type=int, default=0, help="seed of the auditor's choices")
    m.add_argument("--json", action="store_true", help="print a JSON summary")
    m.set_defaults(func=cmd_audit_model)
