"""Agreement tests of CDP+PMPC-ID3: the reference control flow with the protocol's public testing noise."""

from __future__ import annotations

import numpy as np

from privet.data import Schema
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.testing import (
    _Hooked,
    _scratch_scope,
)
from privet.learners._trees.accounting import (
    no_claim,
)
from privet.learners._trees.ops import ReferenceOps
from privet.learners._trees.tree import Tree
from privet.learners.partial_mpc_id3.reference import grow_partial_mpc


class HookedReferenceOps(_Hooked, ReferenceOps):
    """:class:`ReferenceOps` (Alg. 7) drawing the protocol's testing noise."""

    def _init_reference(self, codes: np.ndarray, y_codes: np.ndarray, schema: Schema) -> None:
        ReferenceOps.__init__(
            self, codes, y_codes, schema.domain_sizes, schema.n_classes, caller="reference"
        )


def reference_partial_mpc_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    schema: Schema,
    *,
    depth: int,
    epsilon: float,
    leaf: str = "laplace",
    seed: int,
    numbers: SecureNumbers | None = None,
) -> tuple[Tree, float]:
    """Algorithm 7's reference path with the testing noise of ``seed``: (tree, margin)."""
    ops = HookedReferenceOps(codes, y_codes, schema, seed=seed, numbers=numbers)
    tree = grow_partial_mpc(
        ops, _scratch_scope(), schema, depth=depth, epsilon=epsilon, leaf=leaf, claim=no_claim
    )
    return tree, ops.margin
