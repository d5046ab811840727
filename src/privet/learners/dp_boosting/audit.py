"""What the audits need to know about DP boosting: its worst-case pair.

``AUDIT_CONFIGURATIONS`` names the configurations :mod:`privet.audits` can audit
(collected by :mod:`privet.audits.learners.registry` from every learner package);
``worst_case_pair`` is found by
:func:`privet.audits.learners.worst_case.worst_case_pair`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privet.learners.dp_boosting.estimator import DPGradientBoostingClassifier

__all__ = ["AUDIT_CONFIGURATIONS", "worst_case_pair"]

AUDIT_CONFIGURATIONS = (
    {
        "name": "dp_gbt",
        "class": DPGradientBoostingClassifier,
        "short_name": "dpgbt",
        "title": "DPGradientBoostingClassifier (privet's DP boosted trees)",
        "note": "random splits, Gaussian Newton leaves in zCDP: proven (epsilon, delta)",
        "order": 60,
    },
)


def worst_case_pair(schema: Any, *, rows: int = 1000, **_: Any) -> dict[str, Any]:
    """``rows`` copies of one record of class 0; the canary is that record in class 1.

    Every tree puts all the records in one leaf, whose Newton steps push the
    score of class 0 up round after round, so the canary's clipped gradient
    (it is the one record of its class there) stays near the clipping bound:
    its leaf sums move by about the L2 sensitivity the learner charged.
    Returned as codes for :func:`privet.audits.learners.worst_case.pair_from_codes`.
    """
    n = int(rows)
    return {
        "kind": "count",
        "description": (
            f"{n} identical records of class {schema.classes[0]!r}; the canary is the same "
            f"record of class {schema.classes[1]!r}: its clipped gradient sits near the bound"
        ),
        "rows": np.zeros((n, schema.n_features), dtype=np.int64),
        "labels": [0] * n,
        "canary": np.zeros(schema.n_features, dtype=np.int64),
        "canary_label": 1,
    }
