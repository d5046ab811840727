"""Agreement tests of ODP+FMPC-ID3: the reference control flow with the protocol's public testing noise."""

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
from privet.learners._trees.tree import Tree
from privet.learners.oblivious_id3.reference import OneHotOps, grow_oblivious


class HookedOneHotOps(_Hooked, OneHotOps):
    """:class:`OneHotOps` (Alg. 1) drawing the protocol's testing noise."""

    def _init_reference(self, codes: np.ndarray, y_codes: np.ndarray, schema: Schema) -> None:
        OneHotOps.__init__(self, codes, y_codes, schema, caller="reference")

    def _noise_positions(self, kind: str, path: tuple[int, ...], d: int) -> np.ndarray | None:
        """Alg. 1 draws split noise for all m attributes; the reference sees the available ones."""
        if kind != "split":
            return None
        used = {self._split_at[path[:k]] for k in range(len(path))}
        return np.array([a for a in range(self.n_attributes) if a not in used], dtype=np.int64)


def reference_oblivious_id3(
    codes: np.ndarray,
    y_codes: np.ndarray,
    schema: Schema,
    *,
    depth: int,
    split: str = "exact",
    split_epsilon: float = 0.0,
    leaf_epsilon: float = 1.0,
    leaf: str = "laplace",
    seed: int,
    numbers: SecureNumbers | None = None,
) -> tuple[Tree, float]:
    """Algorithm 1's reference path with the testing noise of ``seed``: (tree, margin)."""
    ops = HookedOneHotOps(codes, y_codes, schema, seed=seed, numbers=numbers)
    tree = grow_oblivious(
        ops,
        _scratch_scope(),
        schema,
        depth=depth,
        split=split,
        split_epsilon=split_epsilon,
        leaf_epsilon=leaf_epsilon,
        leaf=leaf,
        claim=no_claim,
    )
    return tree, ops.margin
