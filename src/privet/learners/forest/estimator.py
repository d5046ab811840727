"""DP random forests of seed 000, App. D: disjoint subsets or Poisson subsamples.

Each tree is a sound DP tree (:class:`PartialMPCID3Classifier`, the sound
variant of :class:`ObliviousID3Classifier`, or a DP extra tree whose split
attributes are drawn at random without looking at the data). The forest
predicts by majority vote of the trees' labels, which is all the oblivious
prediction protocol reveals per tree.

Two ways of giving the trees data, each with its own scope structure:

``sampling="disjoint"``
    Records are split into ``k`` disjoint subsets (App. D, "bootstrap without
    replacement"): each row *position* gets an independent uniform tree index
    drawn from OS entropy, never from ``random_state``. The ledger sees a
    partition of the forest's scope into ``k`` parts (parallel composition: the
    forest costs its costliest tree). The partition is declared ``stable``: the
    part of a record depends on its coin only, never on its values, so a record
    replaced in place (replace-one neighbours) stays in its part; under
    add/remove neighbours the other records' parts have the same distribution
    with or without the record, because the coins are i.i.d. and secret. (From
    a public seed they would not: removing a record shifts every later row to
    the draw of the row before it.)

``sampling="poisson"``
    Each tree sees its own Poisson subsample: every record independently with
    probability ``g`` (``sampling_rate``), with coins from OS entropy, never
    from ``random_state`` (amplification needs a secret sample). Each tree is
    charged in ``scope.subsample(g, "poisson")``; the trees compose
    sequentially and the ledger applies the exact amplification
    ``ln(1 + g (e^eps - 1))`` per tree. The paper's Claim D.1 (``k g eps``)
    uses the linearised ``g eps``, which is *not* an upper bound; it is
    recorded as the claim, next to the proven value.

Where the trees are trained and how they vote (``DPRandomForestClassifier``):

``backend="reference"``
    Every tree is grown on plaintext by its learner's reference path; the
    trees are public and vote in the clear.
``backend="mpc"`` / ``"local"``, ``tree="partial_mpc"``
    Every tree is trained by the CDP+PMPC-ID3 protocol (App. B, Alg. 7-10) on
    its subset; the DP trees are opened and vote in the clear.
``backend="mpc"`` / ``"local"``, ``tree="oblivious"``
    Every tree is trained by the ODP+FMPC-ID3 protocol (Sec. 3, Alg. 1-3) on
    its subset and stays secret-shared (``models_``). A prediction is one MPC
    run (:mod:`privet.learners.forest.protocol`): Algorithm 4 on each
    secret tree, a secret sum of the one-hot votes and a secret argmax (ties to
    the lowest class index, as the reference vote); only the majority label is
    opened, to the querier.

The charges are the same on every backend (the same steps at the same epsilons;
the MPC samplers are charged as (epsilon, delta) entries): the forest's plan, one reservation
made before any data is read, each tree charged in its own scope (a part or a
subsample). A protocol run that fails after launch is charged its tree's whole
plan in that tree's scope (the tree learner's own rule), which for disjoint
subsets is the forest's whole cost.
"""

from privet.learners.forest.extra_trees import (
    DPExtraTreesClassifier,
    grow_extra_tree,
    plan_extra_tree,
)
from privet.learners.forest.random_forest import DPRandomForestClassifier

__all__ = [
    "DPExtraTreesClassifier",
    "DPRandomForestClassifier",
    "grow_extra_tree",
    "plan_extra_tree",
]
