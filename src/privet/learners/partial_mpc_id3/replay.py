"""Charge a ledger for a protocol run, as the reference paths charge theirs.

CDP+PMPC-ID3 (the tree is opened)

:class:`ReplayOps` is a :class:`~privet.learners.partial_mpc_id3.ReferenceOps`
whose data operations are a finished protocol run: fed to the unchanged
:func:`~privet.learners.partial_mpc_id3.grow_partial_mpc`, the reference's
control flow opens the same scopes and makes the same charges as the
reference path (one exponential mechanism per internal node, one DP leaf
update per leaf, each in its node's scope), and takes the split choices and
the leaf values from what the protocol opened. The tree it returns equals
:meth:`TreeRun.tree` of the run.

Timing: the servers open each DP value during the run, under the reservation
that the learner makes (from its plan) before the parties start; the charges
are committed by the replay, before ``fit`` hands the tree to its caller.

ODP+FMPC-ID3 (the tree stays secret)
    :func:`charge_oblivious_run` makes the charges of
    :func:`~privet.learners.oblivious_id3.plan_oblivious` on real scopes, for
    every node of the complete w-ary tree. The split attributes are secret, so
    the partitions are labelled by branch index (``"branch 0"``, ...), never by
    attribute: the ledger is a public record and must not carry the model.
    The cost is the same as with the reference's attribute-named scopes (each
    level is a partition of its parent; its cost is its costliest part).

A run with public testing noise (``testing_noise``) has no privacy and is
refused by both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._protocols.host import (
    TreeRun,
    check_noise,
)
from privet.learners._trees.accounting import (
    NoiseAccounting,
    laplace_sensitivity,
)
from privet.learners._trees.ops import ReferenceOps
from privet.ledger import Scope


class ReplayOps(ReferenceOps):
    """Reference ops that replay a CDP+PMPC-ID3 protocol run (see module docstring).

    Parameters
    ----------
    run : TreeRun
        From :func:`privet.learners.partial_mpc_id3.host.run_partial_mpc_id3`.
    schema : Schema
        The public schema the run was made with.
    caller : str
        Learner name written on every charge.
    accounting : NoiseAccounting
        What each step is charged (the learner's; it must match the run's
        ``mpc_noise``).

    Notes
    -----
    A node's "rows" are its path (tuple of branch indices), which is all
    ``grow_partial_mpc`` passes around.
    """

    def __init__(
        self, run: TreeRun, schema: Schema, *, caller: str, accounting: NoiseAccounting
    ) -> None:
        if run.testing_noise:
            raise InvalidParameterError(
                "this protocol run used public testing noise (no privacy); it cannot be "
                "charged as a DP release. Run it without _testing_noise."
            )
        m = schema.n_features
        super().__init__(
            np.zeros((0, m), dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            schema.domain_sizes,
            schema.n_classes,
            caller=caller,
        )
        self.run = run
        self.accounting = accounting
        check_noise(run.params, accounting)
        self._path: tuple[int, ...] = ()

    def _check(self, name: str, used: float) -> None:
        made = self.run.params.get(name)
        if made is not None and not np.isclose(float(made), float(used)):
            raise InvalidParameterError(
                f"the protocol ran with {name}={made} but the replay charges {used}; run the "
                f"protocol with the learner's {name}."
            )

    def _node(self, path: tuple[int, ...]) -> dict[str, Any]:
        try:
            return self.run.nodes[path]
        except KeyError:
            raise InvalidParameterError(
                f"the protocol run has no node at path {path}: it was made with other "
                "parameters (depth, schema) than this replay."
            ) from None

    def all_rows(self) -> Any:
        return ()

    def count(self, rows: Any) -> np.ndarray:
        return np.zeros(self.n_classes)

    def scores(self, rows: Any, attrs: Sequence[int]) -> np.ndarray:
        self._path = tuple(rows)  # select() follows for this node
        return np.zeros(len(attrs))

    def partition(self, rows: Any, attr: int) -> list[Any]:
        node = self._node(tuple(rows))
        if node.get("split") != attr:
            raise InvalidParameterError(
                f"replay diverged at {tuple(rows)}: the protocol split on {node.get('split')}, "
                f"the replay on {attr}."
            )
        return [(*rows, v) for v in range(self.sizes[attr])]

    def select(
        self,
        scope: Scope,
        utilities: np.ndarray,
        *,
        epsilon: float,
        step: str,
        claim: Any,
        sensitivity: float = 1.0,
    ) -> int:
        """Charge the split's selection, then return the protocol's choice."""
        self._check("epsilon", epsilon)
        entry, name = self.accounting.selection(epsilon)
        scope.charge(
            entry,
            mechanism=name,
            sensitivity=sensitivity,
            caller=self.caller,
            step=step,
            claim=claim,
        )
        return int(self._node(self._path)["position"])

    def release_leaves(
        self,
        leaves: Sequence[tuple[Scope, Any]],
        *,
        leaf: str,
        epsilon: float,
        claim: Any,
        step: str = "leaf",
    ) -> list[np.ndarray]:
        """Charge every leaf's DP update, then return the values the protocol opened."""
        eye = np.eye(self.n_classes)
        out = []
        self._check("epsilon", epsilon)
        for sc, path in leaves:
            node = self._node(tuple(path))
            if leaf == "laplace":
                self._check("laplace_sensitivity", laplace_sensitivity(sc.ledger.relation))
            entry, name = self.accounting.leaf(leaf, epsilon)
            sc.charge(entry, mechanism=name, caller=self.caller, step=step, claim=claim)
            if leaf == "exponential":
                out.append(eye[int(node["label"])])
            else:
                out.append(np.asarray(node["value"], dtype=float))
        return out
