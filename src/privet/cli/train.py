"""``privet train``: a CSV and its public schema to a saved, budget-checked model.

The order is the privacy contract: the schema and the learner's parameters give
the privacy plan and what the ledger proves for it, printed before the learner
reads any private value; a persistent ledger asks for confirmation (``--yes``
in scripts); an over-budget call is refused before training and charges
nothing; the model is saved (one share file per party for a secret-shared
model) with the ledger's account of the call.
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from pathlib import Path
from typing import Any

import numpy as np

from privet.cli._io import (
    add_data_options,
    drop_missing,
    read_csv,
    read_schema,
    require_valid,
    typed,
)
from privet.cli._model import check_out_dir, save_model
from privet.cli._output import (
    DataInvalid,
    UsageError,
    console,
    interactive,
    print_json,
    working,
)
from privet.cli._scores import Score
from privet.cli.learners import choose_learner
from privet.learners._base import proven_guarantee

__all__ = ["add_parser", "cmd_train", "parse_option"]


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as a number, a boolean, ``none`` or else text."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    low = value.strip().lower()
    parsed: Any
    if low in ("true", "false"):
        parsed = low == "true"
    elif low in ("none", "null"):
        parsed = None
    else:
        try:
            parsed = int(value)
        except ValueError:
            try:
                parsed = float(value)
            except ValueError:
                parsed = value
    return key.strip().replace("-", "_"), parsed


def _build(args: argparse.Namespace, schema: Any, ledger: Any) -> tuple[Any, Any]:
    """The estimator the options describe (unfitted), and the learner choice."""
    import inspect

    choice = choose_learner(args.learner)
    klass = choice.klass()
    accepted = set(inspect.signature(klass.__init__).parameters) - {"self"}
    kwargs: dict[str, Any] = {**choice.options}
    kwargs["schema"] = schema
    if "ledger" in accepted:
        kwargs["ledger"] = ledger
    if "epsilon" in accepted:
        if args.epsilon is None:
            raise UsageError(f"{choice.class_name} needs --epsilon E (the budget of this call).")
        kwargs["epsilon"] = args.epsilon
    elif args.epsilon is not None:
        raise UsageError(
            f"{choice.class_name} is not differentially private and takes no epsilon; drop "
            "--epsilon, or pick a private learner (`privet learners`)."
        )
    if args.max_depth is not None:
        kwargs["max_depth"] = args.max_depth
    if args.parties is not None:
        key = "parties" if "parties" in accepted else "n_parties"
        if key not in accepted:
            raise UsageError(f"{choice.class_name} has no parties; drop --parties.")
        kwargs[key] = args.parties
    if args.backend is not None:
        key = next((k for k in ("backend", "secure_sum") if k in accepted), None)
        if key is None:
            raise UsageError(f"{choice.class_name} has a single path; drop --backend.")
        kwargs[key] = args.backend
    if args.seed is not None and "random_state" in accepted:
        kwargs["random_state"] = args.seed
    for key, value in args.option or []:
        if key not in accepted or key in ("schema", "ledger"):
            raise UsageError(
                f"{choice.class_name} has no option {key!r}; its options are "
                f"{sorted(accepted - {'schema', 'ledger'})}."
            )
        kwargs[key] = value
    try:
        est = klass(**kwargs)
    except TypeError as exc:
        raise UsageError(f"Cannot build {choice.class_name}: {exc}.") from None
    return est, choice


def _holds(where: str, dataset: str) -> bool:
    """Whether the ledger at ``where`` holds ``dataset`` already (a missing file holds none)."""
    import os

    from privet.ledger import list_datasets
    from privet.ledger.postgres_store import is_postgres_url

    if not is_postgres_url(where) and not os.path.isfile(where):
        return False
    return dataset in {d["name"] for d in list_datasets(where)}


def _open_ledger(args: argparse.Namespace, dataset: str) -> tuple[Any, Any]:
    """The ledger the plan is checked against, and the budget of a dataset still to create.

    A dataset the ledger file already holds is opened. A new one is *not* created
    yet: the plan is checked against an in-memory stand-in with the budget given,
    and the dataset is written only when the call goes through (:func:`_create`).
    """
    from privet.errors import InvalidParameterError
    from privet.ledger import Guarantee, Ledger
    from privet.ledger.budget import check_budget

    if args.ledger is None:
        if args.budget is not None:
            raise UsageError(
                "--budget is the lifetime budget of a dataset in a ledger file; give "
                "--ledger FILE with it (without --ledger the call gets a ledger of its own)."
            )
        return None, None
    budget = None if args.budget is None else Guarantee(args.budget, args.budget_delta)
    if _holds(args.ledger, dataset):
        try:
            return Ledger.open(args.ledger, dataset=dataset, budget=budget), None
        except InvalidParameterError as exc:
            if budget is not None and "cannot be changed" in str(exc):
                led = Ledger.open(args.ledger, dataset=dataset)
                stored = led.budget
                led.close()
                raise UsageError(
                    f"Dataset {dataset!r} in {args.ledger} has the lifetime budget {stored}, "
                    f"not {budget}; a lifetime budget cannot be changed. Omit --budget and "
                    "--budget-delta to use the stored one. Nothing was charged."
                ) from None
            raise
    if budget is None:
        raise UsageError(
            f"Dataset {dataset!r} has no budget in {args.ledger} yet: give its lifetime "
            "budget the first time, e.g. --budget 3 (later calls may omit it)."
        )
    return Ledger(budget=check_budget(budget), dataset=dataset), budget


def _create(args: argparse.Namespace, dataset: str, budget: Any) -> Any:
    """Write the new dataset's lifetime budget into the ledger file: the call goes through."""
    from privet.ledger import Ledger

    return Ledger.open(args.ledger, dataset=dataset, budget=budget)


def _plan_report(est: Any, led: Any) -> dict[str, Any]:
    from privet.ledger import Guarantee, Ledger
    from privet.ledger.budget import MAX_EPSILON

    plan = est.privacy_plan() if hasattr(est, "privacy_plan") else None
    if plan is None:
        return {"description": "no privacy: the learner releases exact values", "proven": "inf"}
    if led is not None:
        probe = led
    else:  # the call's own ledger: read the plan at the delta it was calibrated for
        delta = getattr(plan, "delta", None) or est.get_params().get("delta") or 0.0
        probe = Ledger(budget=Guarantee(MAX_EPSILON, float(delta)), dataset="plan")
    cost = probe.plan_cost(plan)
    out = {
        "description": plan.description,
        "proven": str(cost),
        "proven_epsilon": cost.epsilon,
        "proven_delta": cost.delta,
        "claim": None
        if plan.claim is None
        else {
            "epsilon": plan.claim.epsilon,
            "delta": plan.claim.delta,
            "source": plan.claim.source,
        },
    }
    if led is not None:
        out["fits"] = cost.is_finite and led.root.can_charge(cost)
        if not cost.is_finite:
            out["hint"] = (
                "this configuration releases values with no proven guarantee: use its "
                "sound variant (`privet learners`; e.g. --option split=exponential for the "
                "oblivious trees)"
            )
        out["ledger"] = {
            "budget": str(led.budget),
            "spent": str(led.spent()),
            "remaining": str(led.remaining()),
        }
    return out


def _require_delta(args: argparse.Namespace, est: Any, led: Any, new: bool, dataset: str) -> None:
    """Refuse, before anything is printed, a learner whose guarantee needs a delta > 0 on a
    budget with delta 0, saying how to give one."""
    from privet.errors import BudgetExceededError
    from privet.ledger import Guarantee, Ledger

    if led is None or led.budget.delta > 0 or not hasattr(est, "privacy_plan"):
        return
    plan = est.privacy_plan()
    if led.plan_cost(plan).is_finite:
        return
    delta = float(est.get_params().get("delta") or 1e-5)
    with_delta = Ledger(budget=Guarantee(1e9, delta), dataset="plan").plan_cost(plan)
    if not with_delta.is_finite:
        return  # no delta helps: the plan report says why
    name = type(est).__name__
    if new:
        raise UsageError(
            f"{name}'s guarantee needs a delta > 0 ({with_delta} for this call), and the "
            f"lifetime budget of dataset {dataset!r} would have delta 0: give it one the "
            f"first time, e.g. --budget {args.budget:g} --budget-delta {delta:g} (well below "
            "1/rows), or pick a pure-DP learner (`privet learners`). Nothing was written."
        )
    raise BudgetExceededError(
        f"{name}'s guarantee needs a delta > 0 ({with_delta} for this call), but dataset "
        f"{dataset!r} in {args.ledger} has the lifetime budget {led.budget}, with delta 0 "
        "for life: it cannot be charged there. Pick a pure-DP learner (`privet learners`). "
        "Nothing was charged."
    )


#: ``--FLAG`` of each learner parameter the command line sets by its own option.
_FLAGS = {
    "epsilon": "--epsilon",
    "max_depth": "--max-depth",
    "parties": "--parties",
    "n_parties": "--parties",
    "backend": "--backend",
    "secure_sum": "--backend",
    "random_state": "--seed",
}
_PARAMETER = re.compile(
    r"The '(?P<name>\w+)' parameter of (?P<cls>\w+) must be (?P<must>.+?)\. "
    r"Got (?P<got>.+?) instead\.(?: Fix the parameter and call fit again\.)?"
)


def _flag_error(exc: Exception) -> Exception:
    """A learner's parameter error in the command line's words: the flag, not the parameter."""
    match = _PARAMETER.match(str(exc))
    if match is None:
        return exc
    name = match["name"]
    flag = _FLAGS.get(name, f"--option {name}=...")
    return UsageError(
        f"{flag} must be {match['must']} for {match['cls']}; got {match['got']}. "
        "Nothing was charged."
    )


def _say(args: argparse.Namespace, text: str) -> None:
    """Human-readable lines: standard output, or standard error under --json."""
    if args.json:
        print(text, file=sys.stderr)
    elif interactive():
        console().print(text, soft_wrap=True, markup=False)
    else:
        print(text)


def _confirm(args: argparse.Namespace, dataset: str) -> None:
    if args.ledger is None or args.yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(
            f"Charging {args.ledger} needs confirmation; pass --yes in scripts (nothing was "
            "charged)."
        )
    try:
        answer = input(f"Charge this call to dataset {dataset!r} in {args.ledger}? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise UsageError("Not confirmed; nothing was charged.")


def cmd_train(args: argparse.Namespace) -> int:
    from privet.errors import BudgetExceededError, InvalidParameterError

    if args.test_size is not None and not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be between 0 and 1 (a fraction); got {args.test_size}.")
    check_out_dir(args.out)
    schema = read_schema(args.schema)
    if args.target != schema.target.name:
        raise DataInvalid(
            f"--target {args.target!r} is not the schema's class column "
            f"{schema.target.name!r}; fix --target or the schema."
        )
    dataset = args.dataset or Path(args.data).stem
    # 1. the data is checked (locally; nothing is released or charged)
    raw = read_csv(args.data)
    require_valid(
        raw, schema, data=args.data, schema_ref=args.schema, extra=args.extra, missing=args.missing
    )
    dropped = 0
    if args.missing == "drop":
        raw, dropped = drop_missing(raw, schema)
        if raw.empty:
            raise DataInvalid(f"Every row of {args.data} misses a value; nothing to train on.")
    frame = typed(raw, schema)[list(schema.columns)]
    X_all, y_all = frame[list(schema.feature_names)], frame[schema.target.name]
    # 2. the plan, from parameters and the public schema only; nothing is written yet
    led, new_budget = _open_ledger(args, dataset)
    try:
        if args.ledger is not None:
            _refuse_rows_of_another_dataset(args.ledger, dataset, X_all, y_all)
        est, choice = _build(args, schema, led)
        try:
            _require_delta(args, est, led, new_budget is not None, dataset)
            report = _plan_report(est, led)
        except InvalidParameterError as exc:
            raise _flag_error(exc) from None
        _say(
            args,
            f"Learner: {choice.class_name} ({choice.short_name}); data {args.data}, "
            f"{len(frame)} rows"
            + (f" ({dropped} with a missing value left out)" if dropped else "")
            + f"; dataset {dataset!r}",
        )
        _say(args, f"Privacy plan (no private value read yet): {report['description']}")
        claim = report.get("claim")
        _say(
            args,
            f"  the ledger proves: {report['proven']}"
            + ("" if claim is None else f"; the paper claims: ε={claim['epsilon']:g}"),
        )
        if led is not None:
            state = report["ledger"]
            _say(
                args,
                f"  ledger {args.ledger}: budget {state['budget']}, spent "
                f"{state['spent']}, remaining {state['remaining']}"
                + (" (a new dataset: written when this call goes through)" if new_budget else ""),
            )
            if not report["fits"]:
                fix = report.get(
                    "hint",
                    "lower --epsilon; the budget is the dataset's for life, and its rows "
                    "cannot be charged to another dataset",
                )
                raise BudgetExceededError(
                    f"This call needs {report['proven']} but dataset {dataset!r} in "
                    f"{args.ledger} has {state['remaining']} left; {fix}. Nothing was charged."
                )
        _confirm(args, dataset)
        if new_budget is not None:  # the call goes through: the dataset's budget is written
            led = _create(args, dataset, new_budget)
            est.set_params(ledger=led)
        # 3. training: the learner reserves its plan, then reads the values
        held_out = held_out_rows(len(frame), args.test_size)
        if held_out.all():
            raise UsageError("--test-size left no training rows; lower it.")
        train, test = frame[~held_out], frame[held_out]
        X, y = train[list(schema.feature_names)], train[schema.target.name]
        with working(f"Training {choice.class_name}...", quiet=args.json):
            try:
                est.fit(X, y)  # an MPC learner's openings and steps show in the spinner
            except InvalidParameterError as exc:
                raise _flag_error(exc) from None
        if led is not None:  # the whole table is this dataset's (the fit recorded its rows)
            led.check_table(X_all, y_all)
        score = None
        if args.test_size is not None and len(test):
            pred = est.predict(test[list(schema.feature_names)])
            score = Score.of(pred, test[schema.target.name].to_numpy())
        spent = getattr(est, "privacy_spent_", None)
        # the model's guarantee as a mechanism: its plan's cost, which a run whose later
        # steps depended on noisy outputs (and stopped early) can charge less than
        guarantee = proven_guarantee(est)
        meta = {
            "dataset": dataset,
            "ledger": args.ledger,
            "data": str(Path(args.data).resolve()),
            "target": schema.target.name,
            "privacy_spent": None if spent is None else str(spent),
            "privacy_guarantee": None if guarantee is None else str(guarantee),
            "plan": report,
        }
        files = save_model(est, args.out, meta)  # model.json: no figure of the held-out rows
        ledger = est.ledger_ if getattr(est, "ledger_", None) is not None else led
        if args.json:
            print_json(
                {
                    "learner": choice.class_name,
                    "short_name": choice.short_name,
                    **meta,
                    "test_accuracy": None if score is None else score.accuracy,
                    "test_accuracy_note": None if score is None else EXACT_ACCURACY,
                    **({} if score is None else score.majority_fields("test_")),
                    "model": args.out,
                    "files": files,
                    "ledger_spent": None if ledger is None else str(ledger.spent()),
                    "ledger_remaining": None if ledger is None else str(ledger.remaining()),
                }
            )
            return 0
        _say(args, f"Trained; this call spent {spent}.")
        if guarantee is not None and spent is not None and guarantee != spent:
            _say(
                args,
                f"The model is {guarantee} as a mechanism (its plan): this run charged less "
                "because a later step depended on noisy outputs (it stopped early). Report "
                f"{guarantee} as the model's privacy; {spent} is what the budget was charged.",
            )
        if score is not None:
            for line in score.lines(f"Held-out accuracy ({len(test)} rows)", EXACT_ACCURACY):
                _say(args, line)
        shared = (
            " (secret-shared: one share file per party)"
            if any("party-" in f for f in files)
            else ""
        )
        _say(args, f"Model saved to {args.out}{shared}: " + ", ".join(Path(f).name for f in files))
        if getattr(est, "holds_private_data_", False):
            _say(
                args,
                f"Note: this model keeps exact counts of the training rows ({est.mode} mode); "
                f"each prediction releases them with noise, charged to the ledger. Keep "
                f"{args.out} private: it is not a release.",
            )
        if args.ledger is not None and ledger is not None:
            _say(
                args,
                f"Ledger {args.ledger}, dataset {dataset!r}: spent {ledger.spent()} of "
                f"{ledger.budget}, {ledger.remaining()} left; every charge: `privet ledger "
                f"show {args.ledger} --dataset {dataset}`.",
            )
        elif ledger is not None:
            _say(
                args,
                f"Without --ledger the call had a ledger of its own (budget {ledger.budget}, "
                "not saved); give --ledger FILE to keep a dataset's lifetime budget.",
            )
        return 0
    finally:
        if led is not None:
            led.close()


def _refuse_rows_of_another_dataset(where: str, dataset: str, X: Any, y: Any) -> None:
    """Exit 4 before anything else if the ledger recorded these rows for another dataset."""
    from privet.ledger import table_owner
    from privet.ledger.fingerprint import clash_message

    owner = table_owner(where, X, y)
    if owner is not None and owner != dataset:
        raise DataInvalid(clash_message(owner, dataset, repr(where), len(X)))


#: What the held-out accuracy is, wherever it is shown.
EXACT_ACCURACY = (
    "exact, on private rows: not covered by the ledger, not saved in model.json; do not publish"
)


def held_out_rows(n: int, fraction: float | None) -> np.ndarray:
    """Which of ``n`` rows ``--test-size`` holds out: each with probability ``fraction``,
    from OS entropy, never from ``--seed``.

    The training rows are then a Poisson subsample, so two neighbouring datasets give
    neighbouring (or equal) training sets and the learner's guarantee covers the model.
    A split from a public seed does not: removing one row moves every later row to the
    draw of the row before it, and hundreds of rows change sides.
    """
    if fraction is None:
        return np.zeros(n, dtype=bool)
    coins = np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))
    return coins.random(n) < fraction


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="train a learner on a CSV under a budget-checked ledger and save the model",
        description="Train a learner on DATA.csv with its public schema. The privacy plan and "
        "what the ledger proves are printed before any private value is read; a ledger file "
        "asks for confirmation (--yes in scripts); an over-budget call is refused (exit 3) "
        "and charges nothing. Example: privet train --learner dpid3 --data car.csv "
        "--schema car --target class --epsilon 0.5 --ledger budget.sqlite --budget 2 --yes",
    )
    p.add_argument("--learner", required=True, help="class name or short name (privet learners)")
    p.add_argument("--data", required=True, help="the training CSV (a header row)")
    p.add_argument("--schema", required=True, help="schema file, or a shipped schema's name")
    p.add_argument("--target", required=True, help="the class column")
    p.add_argument("--epsilon", type=float, help="privacy budget of this call")
    p.add_argument(
        "--ledger", help="ledger to charge (a SQLite file or postgresql:// URL); default: none"
    )
    p.add_argument("--dataset", help="dataset name in the ledger (default: the CSV's file name)")
    p.add_argument("--budget", type=float, help="lifetime epsilon of the dataset (first charge)")
    p.add_argument("--budget-delta", type=float, default=0.0, help="lifetime delta (default 0)")
    p.add_argument(
        "--test-size",
        type=float,
        help="hold out each row with this probability (secret coins) and print the exact "
        "accuracy on them (not saved, not DP)",
    )
    p.add_argument("--parties", type=int, help="parties of an MPC learner or data owners")
    p.add_argument("--backend", help="reference, local or mpc (learners with a protocol path)")
    p.add_argument("--max-depth", type=int, help="tree depth (default: the learner's)")
    p.add_argument(
        "--option",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="any other parameter of the learner, e.g. --option split=exponential (repeatable)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the learner's random_state (public randomness only: the held-out rows, "
        "subsamples and noise always come from OS entropy)",
    )
    p.add_argument("--out", default="privet-model", help="model directory (default privet-model)")
    p.add_argument("--yes", action="store_true", help="do not ask before charging a ledger file")
    add_data_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON summary on standard output")
    p.set_defaults(func=cmd_train)
