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
    drawn from ``random_state``. The ledger sees a partition of the forest's
    scope into ``k`` parts (parallel composition: the forest costs its
    costliest tree). The partition is declared ``stable``: the part of a
    record depends on its position only, never on its values, so a record
    replaced in place (replace-one neighbours) stays in its part; under
    add/remove neighbours a record added or removed leaves the other rows'
    positions, hence their parts, unchanged (rows are identified by position:
    do not reorder the data between fits).

``sampling="poisson"``
    Each tree sees its own Poisson subsample: every record independently with
    probability ``g`` (``sampling_rate``), with coins from OS entropy, never
    from ``random_state`` (amplification needs a secret sample). Each tree is
    charged in ``scope.subsample(g, "poisson")``; the trees compose
    sequentially and the ledger applies the exact amplification
    ``ln(1 + g (e^eps - 1))`` per tree. The paper's Claim D.1 (``k g eps``)
    uses the linearised ``g eps``, which is *not* an upper bound; it is
    recorded as the claim, next to the proven value.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from privet.data import Schema
from privet.errors import InvalidParameterError, NotFittedError
from privet.learners._base import BaseTreeClassifier, _validate_params, plan_depth
from privet.learners._tree import Tree, TreeBuilder
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import (
    ClaimRule,
    PartialMPCID3Classifier,
    ReferenceOps,
    leaf_entry,
    leaf_mechanism,
    paper_claim,
    relation_of,
    scope_labels,
    secure_rng,
)
from privet.ledger import (
    Claim,
    Guarantee,
    Ledger,
    PlanNode,
    PrivacyPlan,
    Scope,
    best_guarantee,
)

DISJOINT_SOURCE = "seed 000, App. D (disjoint subsets, parallel composition)"
POISSON_SOURCE = "seed 000, App. D.1, Claim D.1 (k * gamma * epsilon)"
POISSON_NOTE = (
    "linearised amplification gamma*eps per tree (Thm. 8 of the paper's ref. [2] as cited); "
    "the exact bound ln(1 + gamma (e^eps - 1)) is larger"
)


def plan_extra_tree(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    epsilon: float,
    leaf: str,
    relation: Any,
    claim: ClaimRule,
) -> None:
    """An extra tree's charges: none for its random splits, one per leaf."""
    for level in range(depth):
        node = node.partition(max(width, 2), label=f"depth {level + 1}")
    node.charge(
        leaf_entry(leaf, epsilon, relation),
        mechanism=leaf_mechanism(leaf),
        step="leaf",
        claim=claim("leaf", epsilon),
    )


def grow_extra_tree(
    ops: ReferenceOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rng: np.random.Generator,
    rows: np.ndarray,
) -> Tree:
    """A DP extra tree (App. D): split attributes drawn uniformly at random.

    The splits read no data (public randomness), so only the leaves are
    charged, each with the full ``epsilon``; the leaves are disjoint.
    """
    builder = TreeBuilder(ops.n_classes)
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def grow(node: int, sc: Scope, rows: np.ndarray, attrs: list[int], h: int) -> None:
        if h == 0 or not attrs:
            leaves.append((node, sc, rows))
            return
        best = attrs[int(rng.integers(len(attrs)))]
        kids = builder.split(node, best, ops.sizes[best])
        parts = sc.partition(scope_labels(schema, best))
        rest = [a for a in attrs if a != best]
        for kid, part, sub in zip(kids, parts, ops.partition(rows, best), strict=True):
            grow(kid, part, sub, rest, h - 1)

    root = builder.add_node(0)
    grow(root, scope, rows, list(range(ops.n_attributes)), depth)
    values = ops.release_leaves(
        [(sc, r) for _, sc, r in leaves], leaf=leaf, epsilon=epsilon, claim=claim("leaf", epsilon)
    )
    for (node, _, _), value in zip(leaves, values, strict=True):
        builder.set_leaf(node, value)
    return builder.build()


class _BaseDPForest(BaseTreeClassifier):
    """Sampling, accounting and voting shared by the DP forests."""

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "sampling": [StrOptions({"disjoint", "poisson"})],
        "sampling_rate": [Interval(Real, 0, 1, closed="right"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "leaf": [StrOptions({"laplace", "exponential"})],
        "ledger": "no_validation",
    }

    # -- subclass hooks ----------------------------------------------------------
    def _plan_tree(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        raise NotImplementedError

    def _grow_tree(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        rows: np.ndarray,
        claim: ClaimRule,
        rng: np.random.RandomState,
    ) -> Tree:
        raise NotImplementedError

    # -- parameters --------------------------------------------------------------
    def _validate(self) -> None:
        _validate_params(self)
        if self.sampling == "disjoint" and self.sampling_rate is not None:
            raise InvalidParameterError(
                f"The 'sampling_rate' parameter of {type(self).__name__} applies to "
                f"sampling='poisson' only; got sampling_rate={self.sampling_rate!r} with "
                "sampling='disjoint'. Drop sampling_rate or use sampling='poisson'."
            )

    def _rate(self) -> float:
        """Poisson rate g; by default 1/k, the paper's choice for epsilon-DP (App. D.1)."""
        if self.sampling_rate is None:
            return 1.0 / int(self.n_estimators)
        return float(self.sampling_rate)

    def _claim_rule(self) -> ClaimRule:
        if self.sampling == "poisson":
            return paper_claim(POISSON_SOURCE, scale=self._rate(), note=POISSON_NOTE)
        return paper_claim(DISJOINT_SOURCE)

    def _claimed_epsilon(self) -> float:
        eps, k = float(self.epsilon), int(self.n_estimators)
        return k * self._rate() * eps if self.sampling == "poisson" else eps

    # -- plan --------------------------------------------------------------------
    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone."""
        self._validate()
        schema = schema if schema is not None else self.schema
        k, eps = int(self.n_estimators), float(self.epsilon)
        claim = self._claim_rule()
        if self.sampling == "poisson":
            g = self._rate()
            plan = PrivacyPlan(
                caller=type(self).__name__,
                description=(
                    f"{k} trees at epsilon={eps:g} each, each on a Poisson subsample at "
                    f"rate {g:g}; trees in sequence, amplified exactly"
                ),
                claim=Claim(self._claimed_epsilon(), source=POISSON_SOURCE, note=POISSON_NOTE),
            )
            for t in range(k):
                self._plan_tree(plan.subsample(g, "poisson", label=f"tree {t}"), schema, claim)
        else:
            plan = PrivacyPlan(
                caller=type(self).__name__,
                description=f"{k} trees at epsilon={eps:g} each on disjoint subsets, in parallel",
                claim=Claim(eps, source=DISJOINT_SOURCE),
            )
            self._plan_tree(plan.partition(k, stable=True, label="tree"), schema, claim)
        return plan

    def _forest_scope(self, plan: PrivacyPlan) -> Scope:
        if self.ledger is None:
            # A ledger sized to what the plan proves (the Poisson forest costs more
            # than epsilon, and more than its claim).
            relation = relation_of(None)
            proven = best_guarantee(plan.cost(relation), 0.0).guarantee
            self.ledger_ = Ledger(budget=Guarantee(proven.epsilon), dataset="training data")
            return self.ledger_.root
        return self._scope(float(self.epsilon))

    # -- fit ---------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> _BaseDPForest:
        """Fit the k trees under one reservation; raises before reading data if it cannot."""
        self._validate()
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        scope = self._forest_scope(plan)
        k = int(self.n_estimators)
        rng = check_random_state(self.random_state)
        claim = self._claim_rule()
        with self.ledger_.reserve(plan, scope=scope, caller=type(self).__name__) as res:
            codes, y_codes = self._prepare(X, y)
            n = codes.shape[0]
            trees: list[Tree] = []
            if self.sampling == "disjoint":
                assignment = rng.randint(k, size=n)  # by row position, not by value
                parts = scope.partition([f"tree {t}" for t in range(k)], stable=True)
                for t, part in enumerate(parts):
                    rows = np.flatnonzero(assignment == t)
                    trees.append(self._grow_tree(part, codes, y_codes, rows, claim, rng))
            else:
                g = self._rate()
                coins = secure_rng()
                for _ in range(k):
                    sub = scope.subsample(g, "poisson")
                    rows = np.flatnonzero(coins.random(n) < g)
                    trees.append(self._grow_tree(sub, codes, y_codes, rows, claim, rng))
        self.trees_ = trees
        self._fitted_common(self.schema_)
        self.privacy_spent_ = res.used()
        self.privacy_claim_ = plan.claim
        return self

    # -- predict -----------------------------------------------------------------
    def _codes_for_predict(self, X: Any) -> np.ndarray:
        if not hasattr(self, "trees_"):
            raise NotFittedError(
                f"This {type(self).__name__} is not fitted yet; call fit(X, y) first."
            )
        return self._encode_X(self.schema_, X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Share of the trees voting for each class (each tree reveals a label)."""
        codes = self._codes_for_predict(X)
        votes = np.zeros((codes.shape[0], len(self.classes_)))
        rows = np.arange(codes.shape[0])
        for tree in self.trees_:
            votes[rows, np.argmax(tree.leaf_values(codes), axis=1)] += 1.0
        return votes / len(self.trees_)

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)  # raises NotFittedError before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]

    def export_text(self, *, max_lines: int = 60) -> str:
        raise NotImplementedError(f"{type(self).__name__} has no single tree to print.")


class DPRandomForestClassifier(_BaseDPForest):
    """A forest of sound DP ID3 trees (seed 000, App. D).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees ``k``.
    tree : {"oblivious", "partial_mpc"}, default="oblivious"
        The trees: the sound variant of ODP+FMPC-ID3
        (``ObliviousID3Classifier(split="exponential")``) or CDP+PMPC-ID3.
    sampling : {"disjoint", "poisson"}, default="disjoint"
        How the trees get their records (module docstring).
    sampling_rate : float in (0, 1] or None, default=None
        Poisson rate ``g`` (``sampling="poisson"`` only); ``None`` means
        ``1 / n_estimators``, the paper's suggestion.
    epsilon : float, default=1.0
        Budget of *each tree* (the paper's epsilon in App. D). The forest costs
        ``epsilon`` when disjoint and ``k ln(1 + g (e^epsilon - 1))`` when
        Poisson-subsampled.
    max_depth : int, default=3
    leaf : {"laplace", "exponential"}, default="laplace"
    split_fraction : float in (0, 1), default=0.25
        Split share of each oblivious tree's budget (``tree="oblivious"``).
    backend : {"reference", "mpc", "local"}, default="reference"
        With ``tree="partial_mpc"``, ``"mpc"`` trains every tree by the CDP+PMPC
        protocol with ``parties`` MPyC processes (``"local"``: one in-process
        party); the revealed trees vote in the clear. Oblivious trees stay on the
        reference path (an MPC forest of secret-shared trees is not built yet).
    parties : int, default=3
    timeout : float, default=60
    schema, ledger, public_domain
        As for the single trees. With ``ledger=None`` a ledger is made whose
        budget is the forest's proven cost.
    random_state : int, RandomState or None
        Public randomness: the assignment of rows to disjoint subsets.

    Attributes
    ----------
    trees_ : list of Tree
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        What the ledger proves for the forest.
    privacy_claim_ : Claim
        The paper's claim: epsilon (disjoint) or ``k g epsilon`` (Claim D.1).
    classes_, schema_, n_features_in_

    Notes
    -----
    Disjoint subsets: claimed and proven epsilon (parallel composition).
    Poisson subsamples: Claim D.1 gives ``k g epsilon``, from ``g epsilon`` per
    tree; the exact amplification bound is ``ln(1 + g (e^epsilon - 1))``, which
    is at least ``g epsilon`` for every epsilon, so the claim under-states the
    loss (at epsilon = 1, g = 0.1, k = 10: claimed 1.0, proven 1.586). The
    ledger records the claim on every charge and proves the exact bound.
    """

    _parameter_constraints = {
        **_BaseDPForest._parameter_constraints,
        "tree": [StrOptions({"oblivious", "partial_mpc"})],
        "split_fraction": [Interval(Real, 0, 1, closed="neither")],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 10,
        tree: str = "oblivious",
        sampling: str = "disjoint",
        sampling_rate: float | None = None,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        split_fraction: float = 0.25,
        backend: str = "reference",
        parties: int = 3,
        timeout: float = 60.0,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.tree = tree
        self.sampling = sampling
        self.sampling_rate = sampling_rate
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.split_fraction = split_fraction
        self.backend = backend
        self.parties = parties
        self.timeout = timeout
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    def _member(self, schema: Schema | None) -> PartialMPCID3Classifier | ObliviousID3Classifier:
        common = {
            "epsilon": self.epsilon,
            "max_depth": self.max_depth,
            "leaf": self.leaf,
            "schema": schema,
            "ledger": self.ledger,
        }
        if self.tree == "partial_mpc":
            member: Any = PartialMPCID3Classifier(
                backend=self.backend, parties=self.parties, timeout=self.timeout, **common
            )
        else:
            if self.backend != "reference":
                raise InvalidParameterError(
                    f"DPRandomForestClassifier(tree='oblivious') runs on the reference path "
                    f"only; got backend={self.backend!r}. Use tree='partial_mpc' for a forest "
                    "trained in MPC, or backend='reference'."
                )
            member = ObliviousID3Classifier(
                split="exponential", split_fraction=self.split_fraction, **common
            )
        member.schema_ = schema
        return member

    def _plan_tree(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        self._member(schema)._plan_into(node, schema, claim)

    def _grow_tree(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        rows: np.ndarray,
        claim: ClaimRule,
        rng: np.random.RandomState,
    ) -> Tree:
        return self._member(self.schema_)._grow(scope, codes, y_codes, claim, rows=rows)


class DPExtraTreesClassifier(_BaseDPForest):
    """A forest of DP extra trees (seed 000, App. D): random splits, DP leaves.

    Each tree draws its split attributes uniformly at random (from
    ``random_state``, without reading data) and releases DP leaves with the
    full per-tree ``epsilon``; only the leaves are charged.

    Parameters
    ----------
    n_estimators : int, default=10
    sampling : {"disjoint", "poisson"}, default="disjoint"
    sampling_rate : float in (0, 1] or None, default=None
        Poisson rate (``None``: ``1 / n_estimators``).
    epsilon : float, default=1.0
        Budget of each tree, all of it on the leaves.
    max_depth : int, default=3
    leaf : {"laplace", "exponential"}, default="laplace"
    schema, ledger, public_domain
        As for :class:`DPRandomForestClassifier`.
    random_state : int, RandomState or None
        Public randomness: subsets and split attributes.

    Attributes
    ----------
    trees_, ledger_, privacy_spent_, privacy_claim_, classes_, schema_

    Notes
    -----
    Claimed and proven as for :class:`DPRandomForestClassifier`: epsilon for
    disjoint subsets; for Poisson subsamples the claim ``k g epsilon`` of
    Claim D.1 against the proven ``k ln(1 + g (e^epsilon - 1))``.
    """

    def __init__(
        self,
        *,
        n_estimators: int = 10,
        sampling: str = "disjoint",
        sampling_rate: float | None = None,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.sampling = sampling
        self.sampling_rate = sampling_rate
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    def _plan_tree(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        plan_extra_tree(
            node,
            depth=plan_depth(self.max_depth, schema),
            width=schema.max_domain_size if schema is not None else 2,
            epsilon=float(self.epsilon),
            leaf=self.leaf,
            relation=relation_of(self.ledger),
            claim=claim,
        )

    def _grow_tree(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        rows: np.ndarray,
        claim: ClaimRule,
        rng: np.random.RandomState,
    ) -> Tree:
        schema = self.schema_
        ops = ReferenceOps(
            codes, y_codes, schema.domain_sizes, schema.n_classes, caller=type(self).__name__
        )
        return grow_extra_tree(
            ops,
            scope,
            schema,
            depth=plan_depth(self.max_depth, schema),
            epsilon=float(self.epsilon),
            leaf=self.leaf,
            claim=claim,
            rng=np.random.default_rng(rng.randint(2**31)),
            rows=rows,
        )


__all__ = ["DPExtraTreesClassifier", "DPRandomForestClassifier"]
