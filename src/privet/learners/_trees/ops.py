"""The data operations of the seed-000 tree growers on plaintext data.

:class:`ReferenceOps` is the *ops object* of Algorithms 1 and 7: MPC-Count,
MPC-Score, MPC-Partition and the DP releases (which charge their scope before
they draw). The growers (``grow_partial_mpc``, ``grow_oblivious``) only call
these methods, so a protocol backend or a test hook substitutes its own ops
object and the control flow, and with it the ledger's charges, stays the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._trees.accounting import (
    exponential_mechanism,
    histogram_mechanism,
    monotone_selection,
    noisy_max_mechanism,
    secure_rng,
)
from privet.learners._trees.scores import contingency, max_operator
from privet.ledger import (
    Claim,
    NeighbouringRelation,
    Scope,
)


class ReferenceOps:
    """The data operations of Algorithms 1 and 7 on plaintext data.

    A node's data is the array of its row indices (the protocol's secret
    indicator vector ``T``). The DP releases (:meth:`select`,
    :meth:`release_leaves`) charge their scope *before* drawing, through
    :mod:`privet.mechanisms`, so a refused charge reveals nothing. A protocol
    backend supplies the same methods: ``all_rows``, ``count``, ``scores``,
    ``partition``, ``select``, ``release_leaves`` and ``label``.

    Parameters
    ----------
    codes : ndarray of shape (n, m)
        Integer attribute codes.
    y_codes : ndarray of shape (n,)
        Class codes.
    sizes : sequence of int
        Public domain size of each attribute.
    n_classes : int
    caller : str
        Learner name written on every charge.
    noise : {"paper", "discrete"}, default="paper"
        Selections by the exponential mechanism (paper) or by report-noisy-max
        with discrete Laplace noise (the distribution of the sound MPC path).
    em_form : {"auto", "paper"}, default="paper"
        ``"auto"``: the selections' monotone form where the scope's relation is
        add/remove (:func:`~privet.learners._trees.accounting.monotone_selection`):
        ``exp(eps u / Delta)``, or discrete Laplace at ``ceil(Delta) / eps``.
    """

    def __init__(
        self,
        codes: np.ndarray,
        y_codes: np.ndarray,
        sizes: Sequence[int],
        n_classes: int,
        *,
        caller: str,
        noise: str = "paper",
        em_form: str = "paper",
    ) -> None:
        self.codes = np.asarray(codes, dtype=np.int64)
        self.y = np.asarray(y_codes, dtype=np.int64)
        self.sizes = tuple(int(s) for s in sizes)
        self.n_classes = int(n_classes)
        self.caller = caller
        self.noise = noise
        self.em_form = em_form
        self._rng: np.random.Generator | None = None

    def _selection(self, epsilon: float, relation: NeighbouringRelation) -> Any:
        """The selection mechanism of a split or an EM leaf (sensitivity 1) on ``relation``."""
        monotone = monotone_selection(self.em_form, relation)
        if self.noise == "discrete":
            return noisy_max_mechanism(float(epsilon), relation, monotone)
        return exponential_mechanism(float(epsilon), 1.0, relation, monotone)

    @property
    def n_attributes(self) -> int:
        return len(self.sizes)

    def all_rows(self) -> np.ndarray:
        return np.arange(self.codes.shape[0])

    # -- computations that stay secret in the protocol -------------------------
    def count(self, rows: np.ndarray) -> np.ndarray:
        """MPC-Count: class frequencies of a node (Alg. 1 steps 5-7)."""
        return np.bincount(self.y[rows], minlength=self.n_classes)

    def counts(self, nodes: Sequence[np.ndarray]) -> np.ndarray:
        """MPC-Count of many nodes at once: ``(N, n_classes)``, row ``i`` is ``count(nodes[i])``."""
        u = self.n_classes
        if not nodes:
            return np.zeros((0, u), dtype=np.int64)
        node = np.repeat(np.arange(len(nodes)), [r.size for r in nodes])
        cell = node * u + self.y[np.concatenate(nodes)]
        return np.bincount(cell, minlength=len(nodes) * u).reshape(len(nodes), u)

    def scores(self, rows: np.ndarray, attrs: Sequence[int]) -> np.ndarray:
        """MPC-Score: max-operator score (Eq. 1, sensitivity 1) of each attribute."""
        ys = self.y[rows]
        return np.array(
            [
                max_operator(contingency(self.codes[rows, a], ys, self.sizes[a], self.n_classes))
                for a in attrs
            ],
            dtype=float,
        )

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        """MPC-Partition: the rows of each value of ``attr``, in code order."""
        col = self.codes[rows, attr]
        order = np.argsort(col, kind="stable")
        bounds = np.searchsorted(col[order], np.arange(self.sizes[attr] + 1))
        return [rows[order[bounds[v] : bounds[v + 1]]] for v in range(self.sizes[attr])]

    # -- DP releases: charge, then draw ----------------------------------------
    def select(
        self,
        scope: Scope,
        utilities: np.ndarray,
        *,
        epsilon: float,
        step: str,
        claim: Claim | None,
        sensitivity: float = 1.0,
    ) -> int:
        """MPC-EM (Alg. 13): index i with probability ∝ exp(ε u_i / (2Δ)).

        Used for the split attribute (Alg. 8) and the exponential-mechanism leaf
        (Alg. 10). Gumbel report-noisy-max is the same distribution. With
        ``noise="discrete"``: report-noisy-max with discrete Laplace noise of
        scale 2Δ/ε, first maximum (the sound MPC path's selection). With
        ``em_form="auto"`` under add/remove, their monotone forms (Δ for 2Δ).
        """
        mech: Any
        relation = scope.ledger.relation
        if float(sensitivity) != 1.0:
            if self.noise == "discrete":
                raise InvalidParameterError(
                    "the discrete noisy-max selection is built for sensitivity 1 (max-operator "
                    f"scores, counts); got {sensitivity}."
                )
            monotone = monotone_selection(self.em_form, relation)
            mech = exponential_mechanism(float(epsilon), float(sensitivity), relation, monotone)
        else:
            mech = self._selection(epsilon, relation)
        pick = mech(
            np.asarray(utilities, dtype=float),
            scope=scope,
            caller=self.caller,
            step=step,
            claim=claim,
        )
        return int(pick)

    def select_level(
        self,
        nodes: Sequence[tuple[Scope, np.ndarray, np.ndarray]],
        *,
        tree_scope: Scope | None,
        epsilon: float,
        step: str,
        claim: Claim | None,
    ) -> list[int]:
        """The selections of one tree level: ``(scope, rows, utilities)`` per node.

        The nodes of a level hold disjoint records. With ``tree_scope`` (add/remove
        neighbours: one record changes one node's utilities) the level is one
        charge there (:meth:`~privet.mechanisms.ExponentialMechanism.release_disjoint`);
        without it every node is charged in its own scope, the level as one batch
        (:meth:`~privet.mechanisms.Mechanism.release_many`). Same distribution as
        :meth:`select` node by node (sensitivity 1).
        """
        if not nodes:
            return []
        relation = nodes[0][0].ledger.relation
        mech = self._selection(epsilon, relation)
        utilities = [np.asarray(u, dtype=float) for _, _, u in nodes]
        if tree_scope is not None:
            picks = mech.release_disjoint(
                utilities, scope=tree_scope, caller=self.caller, step=step, claim=claim
            )
        else:
            picks = mech.release_many(
                utilities, [sc for sc, _, _ in nodes], caller=self.caller, step=step, claim=claim
            )
        return [int(p) for p in picks]

    def release_leaves(
        self,
        leaves: Sequence[tuple[Scope, np.ndarray]],
        *,
        leaf: str,
        epsilon: float,
        claim: Claim | None,
        step: str = "leaf",
        tree_scope: Scope | None = None,
    ) -> list[np.ndarray]:
        """DP leaf updates of a tree's leaves, given each leaf's scope and rows.

        ``"laplace"``: MPC-LM (Alg. 12) on every class count, the noisy counts
        revealed (Alg. 9); ``"exponential"``: an EM label per leaf (Alg. 10),
        returned one-hot. The tree's shape never depends on its leaves, so the
        growers release the leaves together once the splits are done, as a
        protocol gathers its MPC-LM calls. Without ``tree_scope`` each leaf is
        charged in its own scope, all in one batch, before any value is drawn.
        With ``tree_scope`` the leaves are one charge there: one noisy histogram
        over leaves x classes (L1 sensitivity 1 under add/remove, 2 under
        replace-one, as for one leaf), or, under add/remove only (one record
        changes one leaf), one disjoint selection per leaf.
        """
        if not leaves:
            return []
        scopes = [sc for sc, _ in leaves]
        counts = list(self.counts([rows for _, rows in leaves]))
        relation = scopes[0].ledger.relation
        if (
            tree_scope is not None
            and leaf == "exponential"
            and relation is not NeighbouringRelation.ADD_REMOVE
        ):
            raise InvalidParameterError(
                "exponential-mechanism leaves are one charge only under add/remove neighbours; "
                "under replace-one a record can leave one leaf and enter another. Pass no "
                "tree_scope."
            )
        if leaf == "exponential":
            mech = self._selection(epsilon, relation)
            utilities = [c.astype(float) for c in counts]
            if tree_scope is not None:
                picks = mech.release_disjoint(
                    utilities, scope=tree_scope, caller=self.caller, step=step, claim=claim
                )
            else:
                picks = mech.release_many(
                    utilities, scopes, caller=self.caller, step=step, claim=claim
                )
            eye = np.eye(self.n_classes)
            return [eye[int(p)] for p in picks]
        hist = histogram_mechanism(float(epsilon), relation)
        if tree_scope is not None:
            noisy = hist(
                np.stack(counts), scope=tree_scope, caller=self.caller, step=step, claim=claim
            )
            return [np.asarray(v, dtype=float) for v in np.asarray(noisy)]
        noisy = hist.release_many(counts, scopes, caller=self.caller, step=step, claim=claim)
        return [np.asarray(v, dtype=float) for v in noisy]

    def labels(self, values: np.ndarray) -> np.ndarray:
        """:meth:`label` of every row of ``values`` (leaves x classes): one-hot rows.

        Ties among a row's maxima break uniformly at random, as in :meth:`label`.
        """
        values = np.asarray(values, dtype=float).reshape(-1, self.n_classes)
        top = values == values.max(axis=1, keepdims=True)
        keys = np.where(top, 1.0, 0.0)
        tied = top.sum(axis=1) > 1
        if tied.any():
            if self._rng is None:
                self._rng = secure_rng()
            keys[tied] += self._rng.random((int(tied.sum()), self.n_classes)) * top[tied]
        return np.eye(self.n_classes)[np.argmax(keys, axis=1)]

    def label(self, value: np.ndarray) -> np.ndarray:
        """The one-hot argmax of a leaf's noisy counts (Alg. 1 step 10).

        Post-processing. Ties break uniformly at random: with discrete Laplace
        noise they are frequent at large epsilon, and the paper's continuous
        Laplace has none.
        """
        top = np.flatnonzero(value == value.max())
        label = int(top[0])
        if top.size > 1:
            if self._rng is None:
                self._rng = secure_rng()
            label = int(top[self._rng.integers(top.size)])
        return np.eye(self.n_classes)[label]


def scope_labels(schema: Schema, attr: int) -> list[str]:
    """Labels of the ledger scopes of a split on ``attr``."""
    name = schema.feature_names[attr]
    return [f"{name}={lab}" for lab in schema.attributes[attr].labels]
