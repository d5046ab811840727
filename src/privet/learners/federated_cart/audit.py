"""What the audits need to know about the federated CART: its worst-case pair.

``AUDIT_CONFIGURATIONS`` names the configurations :mod:`privet.audits` can audit
(collected by :mod:`privet.audits.learners.registry` from every learner package);
``worst_case_pair`` is found by
:func:`privet.audits.learners.worst_case.worst_case_pair`. The learner deals rows
to owners from OS entropy when ``owners`` is not given, and Alg. 6's impurity bounds are
sums of per-owner minima, so a replay on the neighbouring dataset must deal the
rows alike: the pair gives every row its owner (round robin, the canary to
owner 0), on both sides.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privet.learners.federated_cart.estimator import FederatedDPTreeClassifier

__all__ = ["AUDIT_CONFIGURATIONS", "worst_case_pair"]

AUDIT_CONFIGURATIONS = (
    {
        "name": "federated_cart",
        "class": FederatedDPTreeClassifier,
        "short_name": "federatedcart",
        "title": "FederatedDPTreeClassifier (seed 003, reference path)",
        "note": "Laplace histograms per node, budget-saving splits: proven epsilon per path",
        "order": 100,
    },
)


def worst_case_pair(
    schema: Any, *, n_parties: int = 5, rows: int = 200, **_: Any
) -> dict[str, Any]:
    """``rows`` copies of one record of class 0 over ``n_parties`` owners; the canary in class 1.

    The canary adds 1 to one class count of every histogram it falls in (each
    feature's per-class bins at every node on its path, its leaf's counts) and
    moves each owner-0 impurity bound summand of its node by at most 5/4.
    Returned as codes for :func:`privet.audits.learners.worst_case.pair_from_codes`.
    """
    k = int(n_parties)
    n = max(int(rows), 2 * k)
    owners = np.arange(n) % k
    return {
        "kind": "count",
        "description": (
            f"{n} identical records of class {schema.classes[0]!r} dealt round robin to {k} "
            f"owners; the canary, the same record of class {schema.classes[1]!r}, held by "
            "owner 0: +1 to one class count of every histogram on its path"
        ),
        "rows": np.zeros((n, schema.n_features), dtype=np.int64),
        "labels": [0] * n,
        "canary": np.zeros(schema.n_features, dtype=np.int64),
        "canary_label": 1,
        "fit_params0": {"owners": owners},
        "fit_params1": {"owners": np.append(owners, 0)},
    }
