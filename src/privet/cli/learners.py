"""``privet learners``: every learner, its names, what it protects and what privet proves.

The names are the audits' vocabulary (:data:`privet.audits.SHORT_NAMES`,
:func:`privet.audits.resolve_learner`): every command accepts a class name
(``DPID3Classifier``), its short name (``dpid3``) or an audit configuration
(``dp_id3``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from privet.cli._output import UsageError, print_json, print_table

__all__ = ["PROTECTS", "LearnerChoice", "add_parser", "choose_learner", "cmd_learners"]

PROTECTS: dict[str, str] = {
    "ID3Classifier": "nothing: the non-private baseline",
    "DPID3Classifier": "each training row (central DP, trusted curator)",
    "PartialMPCID3Classifier": "each row, from a curator split among MPC servers; splits opened",
    "ObliviousID3Classifier": "each row; the tree stays secret-shared among the servers",
    "DPRandomForestClassifier": "each row, over a forest of DP trees",
    "DPExtraTreesClassifier": "each row, over a forest of random-split trees",
    "MPCID3Classifier": "the parties' rows during training only; the tree is opened exactly",
    "DPGradientBoostingClassifier": "each row, over boosted trees ((epsilon, delta)-DP)",
    "SecureSumID3Classifier": "each party's rows: only noisy sums leave the parties",
    "MatrixRandomForestClassifier": "each row, over a forest of random trees",
    "LDPBoostingClassifier": "each owner's record, perturbed before it leaves the owner (LDP)",
    "FederatedDPTreeClassifier": "each row of every data owner (federated, DP histograms)",
}
"""One line per learner class: whose data the learner protects, and from whom."""


@dataclass(frozen=True, slots=True)
class LearnerChoice:
    """A learner picked by name: its class and the options its name fixes."""

    class_name: str
    short_name: str
    configuration: str
    options: dict[str, Any]

    def klass(self) -> type:
        from privet.audits.learners import learner_class

        return learner_class(self.class_name)


def choose_learner(name: str) -> LearnerChoice:
    """The learner ``name`` stands for (class name, short name or audit configuration).

    A class name or short name gives the class with its own defaults; a
    configuration name (``oblivious_id3``) also fixes the options the audits use
    for it (``split="exponential"``).
    """
    from privet.audits import SHORT_NAMES, resolve_learner
    from privet.audits.learners import CLASS_CONFIGURATIONS

    try:
        spec = resolve_learner(name)
    except Exception as exc:  # InvalidParameterError: one vocabulary, one message
        raise UsageError(f"{exc} List them with `privet learners`.") from None
    lowered = name.lower()
    for cls, short in SHORT_NAMES.items():
        if lowered in (cls.lower(), short):
            return LearnerChoice(cls, short, CLASS_CONFIGURATIONS[cls], {})
    options = dict(getattr(spec.build, "options", ()))
    cls = getattr(spec.build, "cls", "")
    if cls == "ProtocolObliviousID3":  # the audits' wrapper: the class itself, through MPC
        cls = "ObliviousID3Classifier"
        options.setdefault("backend", "mpc")
    return LearnerChoice(cls, SHORT_NAMES.get(cls, cls.lower()), spec.name, options)


def rows() -> list[dict[str, str]]:
    """Every learner class that privet can train, with its names and one line each."""
    from privet.audits import LEARNERS, SHORT_NAMES
    from privet.audits.learners import CLASS_CONFIGURATIONS, learner_class

    out = []
    for cls, short in SHORT_NAMES.items():
        try:
            learner_class(cls)
        except Exception:  # a learner whose optional dependency is missing
            continue
        spec = LEARNERS.get(CLASS_CONFIGURATIONS[cls])
        out.append(
            {
                "class": cls,
                "short_name": short,
                "protects": PROTECTS.get(cls, ""),
                "proves": spec.note if spec is not None else "",
            }
        )
    return out


def cmd_learners(args: argparse.Namespace) -> int:
    found = rows()
    if args.json:
        print_json(found)
        return 0
    print_table(
        ["class", "short name", "protects", "privet proves"],
        [[r["class"], r["short_name"], r["protects"], r["proves"]] for r in found],
        title="Learners (any command takes the class name or the short name)",
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "learners",
        help="list every learner: class name, short name, what it protects, what privet proves",
        description="List every learner privet can train and audit. Every command accepts the "
        "class name or the short name. Example: privet learners --json",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_learners)
