"""Audits of privet's learners: trainings as trials, predictions as outputs.

* :mod:`~privet.audits.learners.registry` — which learners can be audited and
  the names they answer to (:func:`resolve_learner`: class name, short name or
  configuration);
* :mod:`~privet.audits.learners.pairs` — neighbouring training sets that change
  a tree's structure (:func:`near_tie_pair`, :func:`lone_leaf_pair`);
* :mod:`~privet.audits.learners.trials` — the many-trainings DP test
  (:func:`learner_dp_test`) and the one-run audit (:func:`learner_one_run`);
* :mod:`~privet.audits.learners.audit` — claimed vs proven vs measured epsilon
  (:func:`audit_learner`).
"""

from privet.audits.learners.audit import (
    Guarantees,
    LearnerAudit,
    audit_learner,
    audit_learner_leaf,
    claimed_and_proven,
    learner_mia,
)
from privet.audits.learners.pairs import (
    LearnerPair,
    frame_from_codes,
    lone_leaf_pair,
    near_tie_pair,
)
from privet.audits.learners.registry import (
    CLASS_CONFIGURATIONS,
    LEARNERS,
    SHORT_NAMES,
    LearnerBuilder,
    LearnerName,
    LearnerSpec,
    available_learners,
    get_learner,
    learner_class,
    learner_names,
    resolve_learner,
)
from privet.audits.learners.trials import (
    LearnerDPTest,
    Output,
    Progress,
    learner_dp_test,
    learner_one_run,
)
from privet.learners.oblivious_id3.audit import ProtocolObliviousID3

__all__ = [
    "CLASS_CONFIGURATIONS",
    "LEARNERS",
    "SHORT_NAMES",
    "Guarantees",
    "LearnerAudit",
    "LearnerBuilder",
    "LearnerDPTest",
    "LearnerName",
    "LearnerPair",
    "LearnerSpec",
    "Output",
    "Progress",
    "ProtocolObliviousID3",
    "audit_learner",
    "audit_learner_leaf",
    "available_learners",
    "claimed_and_proven",
    "frame_from_codes",
    "get_learner",
    "learner_class",
    "learner_dp_test",
    "learner_mia",
    "learner_names",
    "learner_one_run",
    "lone_leaf_pair",
    "near_tie_pair",
    "resolve_learner",
]
