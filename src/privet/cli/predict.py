"""``privet predict``: labels for new rows from a saved model.

A secret-shared model predicts through its protocol (the parties load their
own share files; only the labels are revealed); other models predict in the
clear. Prediction reads no training data and charges nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from privet.cli._io import read_csv, require_valid, typed
from privet.cli._model import load_model
from privet.cli._output import print_json
from privet.cli._scores import Score

__all__ = ["add_parser", "cmd_predict"]


def cmd_predict(args: argparse.Namespace) -> int:
    from privet.data import Schema

    est, meta = load_model(args.model)
    schema = Schema.from_dict(meta["schema"])
    raw = read_csv(args.data)
    require_valid(
        raw,
        schema,
        data=args.data,
        schema_ref=f"{args.model}/schema.json",
        target="optional",
        extra=args.extra,
    )
    frame = typed(raw, schema)
    labels = np.asarray(est.predict(frame[list(schema.feature_names)]))
    target = schema.target.name
    score = None
    if target in frame.columns:
        score = Score.of(labels, frame[target].to_numpy())
    column = f"predicted_{target}"
    if args.out:
        out = raw.copy()
        out[column] = labels
        out.to_csv(args.out, index=False)
    if args.json:
        print_json(
            {
                "model": args.model,
                "learner": meta["learner"],
                "rows": len(labels),
                "predictions": None if args.out else [_plain(v) for v in labels],
                "out": args.out,
                "accuracy": None if score is None else score.accuracy,
                **({} if score is None else score.majority_fields()),
            }
        )
        return 0
    if not args.out:
        for v in labels:
            print(v)
    else:
        print(
            f"{len(labels)} predictions written to {args.out} (column {column!r}).", file=sys.stderr
        )
    if score is not None:
        what = f"Accuracy against the {target!r} column ({score.rows} rows)"
        for line in score.lines(what, "exact, on these rows"):
            print(line, file=sys.stderr)
    return 0


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "predict",
        help="predict labels for a CSV with a model saved by privet train",
        description="Predict the class of every row of NEW.csv with a saved model. A "
        "secret-shared model predicts through the oblivious protocol (the parties read their "
        "share files; only labels are revealed). Prints one label per line, or writes the CSV "
        "with a predicted_<target> column. "
        "Example: privet predict --model privet-model --data new.csv --out predictions.csv",
    )
    p.add_argument("--model", required=True, help="model directory written by privet train")
    p.add_argument("--data", required=True, help="CSV with the feature columns")
    p.add_argument("--out", help="write the rows and their predictions to this CSV")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--extra",
        choices=["error", "ignore"],
        default="error",
        help="columns the model's schema does not name: refuse (default) or leave them out",
    )
    p.set_defaults(func=cmd_predict)
