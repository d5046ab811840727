"""Charge a run of the ODP+FMPC-ID3 protocol to the ledger without putting its secret splits there."""

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
from privet.learners.oblivious_id3.reference import leaves_in_tree_scope, split_charge
from privet.ledger import NeighbouringRelation, Scope


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
    """Charge an ODP+FMPC-ID3 run as :func:`~privet.learners.oblivious_id3.plan_oblivious` plans it.

    Per level the split selections (NonPrivate or a DP selection), then the DP
    leaf updates: one charge each in ``scope`` under add/remove neighbours,
    every node in its own scope under replace-one.

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
    split_entry, split_name, split_claim = split_charge(accounting, split, split_epsilon, claim)
    leaf_entry, leaf_name = accounting.leaf(leaf, leaf_epsilon)
    ledger = scope.ledger
    # The shape of grow_oblivious's charges: under add/remove a level (and the
    # leaves) is one charge in the tree's scope, since one record changes one
    # node's scores and one leaf's counts; the MPC samplers' delta is a
    # node's (its noise on the other nodes has the same law on both
    # neighbours). Under replace-one each node has its own scope, a level is
    # one batch; Laplace leaves stay one histogram (leaves_in_tree_scope).
    frontier = [scope]
    disjoint = relation is NeighbouringRelation.ADD_REMOVE
    labels = [f"branch {v}" for v in range(width)]
    for level in range(depth):
        ledger.charge_many(
            [(sc, split_entry) for sc in frontier],
            mechanism=split_name,
            caller=caller,
            step=f"split, depth {level}",
            claim=split_claim,
        )
        if not disjoint:
            frontier = [part for sc in frontier for part in sc.partition(labels)]
    if leaves_in_tree_scope(leaf, relation):
        frontier = [scope]
    ledger.charge_many(
        [(sc, leaf_entry) for sc in frontier],
        mechanism=leaf_name,
        caller=caller,
        step="leaf",
        claim=claim("leaf", leaf_epsilon),
    )
