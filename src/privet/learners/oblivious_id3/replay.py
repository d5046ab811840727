"""Charge a run of the ODP+FMPC-ID3 protocol to the ledger without putting its secret splits there.
"""

from __future__ import annotations

import numpy as np

from privet.errors import InvalidParameterError
from privet.learners._protocols.host import check_noise
from privet.learners._trees.accounting import (
    ClaimRule,
    NoiseAccounting,
    laplace_sensitivity,
)
from privet.learners.oblivious_id3.host import SharedModel
from privet.learners.oblivious_id3.reference import EXACT_SPLIT_REASON
from privet.ledger import NonPrivate, Scope


def charge_oblivious_run(
    scope: Scope,
    model: SharedModel,
    *,
    split_epsilon: float,
    leaf_epsilon: float,
    claim: ClaimRule,
    caller: str,
    accounting: NoiseAccounting,
) -> None:
    """Charge an ODP+FMPC-ID3 run: per node a split (NonPrivate or a selection), per leaf a DP update.

    Parameters
    ----------
    scope : Scope
        The fit's scope (reserved for the learner's plan).
    model : SharedModel
        From :func:`privet.learners.oblivious_id3.host.run_oblivious_id3`; its ``params`` say
        which split and leaf mechanisms ran, at which budgets and sensitivity.
    split_epsilon, leaf_epsilon : float
        The learner's budgets; they must be those the protocol ran with.
    claim : callable
        The learner's claim rule (``kind, epsilon -> Claim | None``).
    caller : str
    accounting : NoiseAccounting
        What each step is charged; must match the run's ``mpc_noise``.
    """
    if model.testing_noise:
        raise InvalidParameterError(
            "this protocol run used public testing noise (no privacy); it cannot be "
            "charged as a DP release. Run it without _testing_noise."
        )
    params = model.params
    split, leaf, depth = params["split"], params["leaf"], int(params["depth"])
    width = int(model.shares[0]["width"])
    if not np.isclose(float(params["leaf_epsilon"]), leaf_epsilon) or (
        split == "exponential" and not np.isclose(float(params["split_epsilon"]), split_epsilon)
    ):
        raise InvalidParameterError(
            f"the protocol ran with split_epsilon={params.get('split_epsilon')}, leaf_epsilon="
            f"{params['leaf_epsilon']}, but {split_epsilon}, {leaf_epsilon} are charged."
        )
    check_noise(params, accounting)
    relation = scope.ledger.relation
    sens = laplace_sensitivity(relation)
    if leaf == "laplace" and not np.isclose(sens, float(params["laplace_sensitivity"])):
        raise InvalidParameterError(
            f"the leaves were noised for sensitivity {params['laplace_sensitivity']}, but the "
            f"ledger's {relation} relation needs {sens}; run the protocol with "
            f"laplace_sensitivity={sens}."
        )
    entry, leaf_name = accounting.leaf(leaf, leaf_epsilon)
    labels = [f"branch {v}" for v in range(width)]

    def walk(sc: Scope, level: int) -> None:
        if level == depth:
            sc.charge(
                entry,
                mechanism=leaf_name,
                caller=caller,
                step="leaf",
                claim=claim("leaf", leaf_epsilon),
            )
            return
        step = f"split, depth {level}"
        if split == "exact":
            sc.charge(
                NonPrivate(reason=EXACT_SPLIT_REASON),
                mechanism="exact argmax (hidden)",
                caller=caller,
                step=step,
                claim=claim("split", 0.0),
            )
        else:
            split_entry, split_name = accounting.selection(split_epsilon)
            sc.charge(
                split_entry,
                mechanism=split_name + " (hidden)",
                caller=caller,
                step=step,
                claim=claim("split", split_epsilon),
            )
        for part in sc.partition(labels):
            walk(part, level + 1)

    walk(scope, 0)
