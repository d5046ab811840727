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

The charges are the same on every backend: the forest's plan, one reservation
made before any data is read, each tree charged in its own scope (a part or a
subsample). A protocol run that fails after launch is charged its tree's whole
plan in that tree's scope (the tree learner's own rule), which for disjoint
subsets is the forest's whole cost.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from privet.data import Schema
from privet.errors import BudgetExceededError, InvalidParameterError, NotFittedError
from privet.learners._base import BaseTreeClassifier, _validate_params, plan_depth
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.accounting import (
    ClaimRule,
    leaf_entry,
    leaf_mechanism,
    paper_claim,
    relation_of,
    secure_rng,
)
from privet.learners._trees.ops import ReferenceOps, scope_labels
from privet.learners._trees.tree import Tree, TreeBuilder
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
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
    """Sampling, accounting and voting shared by the DP forests (seed 000, App. D).

    ``fit`` reserves the forest's plan once, draws every tree's subset (App. D
    disjoint subsets, or App. D.1 Poisson subsamples), then grows each tree in
    its own ledger scope; the plaintext vote is the majority of the trees'
    labels, ties to the lowest class index (``numpy.argmax``).
    """

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
    ) -> Any:
        """One tree on ``rows``, charged in ``scope``: a Tree, or a secret model."""
        raise NotImplementedError

    def _check_before_data(self) -> None:
        """Refusals that depend on the parameters and the ledger only (before the schema)."""

    def _check_subsets(self, subsets: list[tuple[Scope, np.ndarray]]) -> None:
        """Refusals that depend on the subsets, before any tree is grown (nothing charged)."""

    def _store(self, fitted: list[Any]) -> None:
        self.trees_ = fitted
        self.__dict__.pop("models_", None)

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
            # Its delta too: the MPC backends' discrete samplers add a tiny delta per step.
            proven = best_guarantee(plan.cost(relation), 0.0).guarantee
            budget = Guarantee(proven.epsilon, proven.delta)
            self.ledger_ = Ledger(budget=budget, dataset="training data")
            return self.ledger_.root
        return self._scope(float(self.epsilon))

    # -- fit ---------------------------------------------------------------------
    def _subsets(
        self, scope: Scope, n: int, rng: np.random.RandomState
    ) -> list[tuple[Scope, np.ndarray]]:
        """Each tree's scope and rows, all drawn before any tree is grown."""
        k = int(self.n_estimators)
        if self.sampling == "disjoint":
            assignment = rng.randint(k, size=n)  # by row position, not by value
            parts = scope.partition([f"tree {t}" for t in range(k)], stable=True)
            return [(part, np.flatnonzero(assignment == t)) for t, part in enumerate(parts)]
        g = self._rate()
        if self._secret_sampling():  # every tree gets all rows; the coins are drawn in MPC
            return [(scope.subsample(g, "poisson"), np.arange(n)) for _ in range(k)]
        coins = secure_rng()
        out = []
        for _ in range(k):
            sub = scope.subsample(g, "poisson")
            out.append((sub, np.flatnonzero(coins.random(n) < g)))
        return out

    def _secret_sampling(self) -> bool:
        """Poisson subsamples drawn inside MPC (the MPC backends), not on the host."""
        return self.sampling == "poisson" and getattr(self, "backend", "reference") != "reference"

    def fit(self, X: Any, y: Any) -> _BaseDPForest:
        """Fit the k trees under one reservation; raises before reading data if it cannot."""
        self._validate()
        self._check_before_data()
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        scope = self._forest_scope(plan)
        rng = check_random_state(self.random_state)
        claim = self._claim_rule()
        with self._reserve(plan, scope) as res:
            codes, y_codes = self._prepare(X, y)
            subsets = self._subsets(scope, codes.shape[0], rng)
            self._check_subsets(subsets)
            fitted = [self._grow_tree(sc, codes, y_codes, rows, claim, rng) for sc, rows in subsets]
        self._store(fitted)
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
    """A forest of DP ID3 trees (seed 000, App. D), trained and voting in the clear or in MPC.

    Each of the ``k`` trees is trained on its own subset of the records: a part
    of a disjoint split (App. D, parallel composition) or a Poisson subsample
    (App. D.1, Claim D.1). The forest predicts the majority label of its trees.
    With ``tree="oblivious"`` and an MPC backend this is the paper's ID3-based
    DP forest built "with our solution" (App. D): every tree is trained by
    ODP+FMPC-ID3 (Sec. 3, Alg. 1-3) and stays secret-shared, and the vote is
    taken in MPC over the trees' secret Algorithm 4 outputs, so the querier
    learns only the forest's label.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees ``k``.
    tree : {"oblivious", "partial_mpc"}, default="oblivious"
        The trees: ODP+FMPC-ID3 (:class:`ObliviousID3Classifier`, by default its
        sound variant ``split="exponential"``) or CDP+PMPC-ID3
        (:class:`PartialMPCID3Classifier`).
    split : {"exponential", "exact"}, default="exponential"
        Split selection of the oblivious trees (``tree="oblivious"`` only).
        ``"exponential"``: hidden exponential-mechanism splits, proven DP.
        ``"exact"``: the paper's exact argmax (Alg. 1 step 15), which releases
        a non-private aggregate through every prediction: like
        ``ObliviousID3Classifier(split="exact")`` it is refused on any finite
        budget, before anything is charged, and runs only on a ledger with
        ``budget=Guarantee.unbounded()`` (``privacy_spent_`` is then infinite).
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
        Split share of each oblivious tree's budget (``tree="oblivious"``,
        ``split="exponential"``).
    backend : {"reference", "mpc", "local"}, default="reference"
        ``"reference"``: every tree grown on plaintext, public trees voting in
        the clear. ``"mpc"``: the trees are trained by their protocol with
        ``parties`` MPyC processes over TCP (:func:`privet.mpc.launch`);
        ``"local"``: the same protocol with one in-process party. With
        ``tree="partial_mpc"`` the protocol opens the DP trees (Alg. 7-10), which
        vote in the clear (``trees_``). With ``tree="oblivious"`` the trees stay
        secret-shared (``models_``, ``trees_ = None``) and :meth:`predict` is one
        MPC run of :mod:`privet.learners.forest.protocol` over all of
        them. The charges are those of the reference path on every backend.
    noise : {"paper", "discrete"} or None, default=None
        The trees' noise samplers, passed to each tree learner (see
        :class:`ObliviousID3Classifier`); ``None`` is the learner's default for
        the backend. What a tree learner refuses with it (e.g. the paper's
        fixed-point samplers in MPC on a finite budget) the forest refuses,
        before anything is charged.
    parties : int, default=3
        Number of MPC parties for ``backend="mpc"`` (the data owners and servers).
    timeout : float, default=60
        Seconds a party may wait for another before a run fails with MPCError.
    schema, ledger, public_domain
        As for the single trees. With ``ledger=None`` a ledger is made whose
        budget is the forest's proven cost.
    random_state : int, RandomState or None
        Public randomness: the assignment of rows to disjoint subsets.

    Attributes
    ----------
    trees_ : list of Tree or None
        The public trees; None for oblivious trees trained in MPC (they stay
        secret-shared).
    models_ : list of SharedModel
        Oblivious trees trained in MPC only: every party's shares of each
        secret tree (in a deployment each server keeps its own). Absent
        otherwise.
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

    **MPC backends.** One reservation of the forest's plan is made before any
    data is read; each tree is then trained by its learner's protocol path and
    charged in its own scope (a part of the partition, or a Poisson
    subsample), exactly as on the reference path, so ``privacy_spent_`` is the
    plan's cost. If a tree's run fails after launch, that tree's whole plan is
    charged in its scope before the error is raised (the parties may have seen
    opened values; see :func:`privet.learners._base.charged_in_full_on_failure`);
    the forest adds no charge of its own. With disjoint subsets this is the
    forest's whole cost; with Poisson subsamples the trees not yet launched
    read nothing and are not charged. Disjoint parts are cut by row position
    on the host (data independent; each owner's row count per part is public
    to the parties, and the protocols refuse an empty part before any party
    starts, with nothing charged). Poisson subsamples are drawn *inside* MPC:
    every tree's run gets all rows and multiplies each record's class vector
    by a secret coin of probability at most ``sampling_rate``, so neither the
    sample nor its size is revealed, as the amplification argument needs. The
    noise samplers, and what the ledger proves for them, are the tree
    learners' (``noise``).

    **Oblivious prediction** (``tree="oblivious"``, MPC backend): one run
    evaluates every secret tree by Algorithm 4 on the querier's secret
    queries, sums the secret one-hot votes and takes a secret argmax whose
    ties go to the lowest class index, which is the reference forest's rule
    (``numpy.argmax`` of the vote counts), so both paths give the same label
    for the same trees. Only that label is opened, to the querier (party 0);
    no tree's label or vote count is. :meth:`predict_proba` returns the
    one-hot of that label, not the vote shares. Predictions are not charged:
    they are post-processing of the DP trees.

    Not in the paper: App. D does not say how the forest votes; the secret
    majority vote and its tie rule are privet's.

    References
    ----------
    Seed 000, App. D (disjoint subsets, parallel composition), App. D.1
    (Claim D.1, Poisson subsampling), Sec. 3 (Algorithms 1-4, ODP+FMPC-ID3),
    App. B (Algorithms 7-10, CDP+PMPC-ID3).
    """

    _parameter_constraints = {
        **_BaseDPForest._parameter_constraints,
        "tree": [StrOptions({"oblivious", "partial_mpc"})],
        "split": [StrOptions({"exponential", "exact"})],
        "split_fraction": [Interval(Real, 0, 1, closed="neither")],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "noise": [StrOptions({"paper", "discrete"}), None],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 10,
        tree: str = "oblivious",
        split: str = "exponential",
        sampling: str = "disjoint",
        sampling_rate: float | None = None,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        split_fraction: float = 0.25,
        backend: str = "reference",
        noise: str | None = None,
        parties: int = 3,
        timeout: float = 60.0,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.tree = tree
        self.split = split
        self.sampling = sampling
        self.sampling_rate = sampling_rate
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.split_fraction = split_fraction
        self.backend = backend
        self.noise = noise
        self.parties = parties
        self.timeout = timeout
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    # -- parameters --------------------------------------------------------------
    def _validate(self) -> None:
        super()._validate()
        if self.split != "exponential" and self.tree != "oblivious":
            raise InvalidParameterError(
                f"The 'split' parameter of {type(self).__name__} applies to tree='oblivious' "
                f"only; got split={self.split!r} with tree={self.tree!r} (CDP+PMPC-ID3 always "
                "draws its splits with the exponential mechanism). Drop split or use "
                "tree='oblivious'."
            )

    def _protocol_secret(self) -> bool:
        """Whether the trees are secret-shared models (oblivious trees in MPC)."""
        return self.tree == "oblivious" and self.backend != "reference"

    def _member(self, schema: Schema | None) -> PartialMPCID3Classifier | ObliviousID3Classifier:
        """The learner of one tree: its plan, its refusals and its training path."""
        common = {
            "epsilon": self.epsilon,
            "max_depth": self.max_depth,
            "leaf": self.leaf,
            "backend": self.backend,
            "parties": self.parties,
            "timeout": self.timeout,
            "schema": schema,
            "ledger": self.ledger,
        }
        if self.noise is not None:  # None: the tree learner's default for the backend
            common["noise"] = self.noise
        if self.tree == "partial_mpc":
            member: Any = PartialMPCID3Classifier(**common)
        else:
            member = ObliviousID3Classifier(
                split=self.split, split_fraction=self.split_fraction, **common
            )
        member.schema_ = schema
        return member

    def _check_before_data(self) -> None:
        """Refuse what the tree learner refuses before data (e.g. exact splits, finite budget)."""
        member = self._member(self.schema)
        for name in ("_check_split_budget", "_check_noise"):  # the tree learners' own checks
            check = getattr(member, name, None)
            if check is None:
                continue
            try:
                check()
            except BudgetExceededError as exc:
                raise BudgetExceededError(
                    f"{type(self).__name__}(tree={self.tree!r}) grows {type(member).__name__} "
                    f"trees with its parameters, and they are refused: {exc}"
                ) from None

    def _check_subsets(self, subsets: list[tuple[Scope, np.ndarray]]) -> None:
        if self.backend == "reference":
            return
        empty = [t for t, (_, rows) in enumerate(subsets) if rows.size == 0]
        if empty:
            raise InvalidParameterError(
                f"{type(self).__name__}(backend={self.backend!r}): the subset of tree(s) "
                f"{empty} has no record, and the MPC protocols need at least one record per "
                "tree (each owner's row count is public to the parties). No party was started "
                "and nothing was charged. Use fewer trees, a larger sampling_rate, more data, "
                "or backend='reference'."
            )

    # -- trees ---------------------------------------------------------------------
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
    ) -> Any:
        member = self._member(self.schema_)
        # Poisson subsamples in MPC are drawn by the parties (secret coins): the tree
        # gets all rows and the rate, so neither the sample nor its size is revealed.
        rate = self._rate() if self._secret_sampling() else None
        if self._protocol_secret():
            # ODP+FMPC-ID3 in MPC (Alg. 1-3) on this tree's rows, charged in its scope;
            # the tree learner charges its own plan there if the run fails after launch.
            return member._train_protocol(
                scope, codes[rows], y_codes[rows], claim, sample_rate=rate
            )
        if rate is not None:
            return member._grow(scope, codes, y_codes, claim, rows=rows, sample_rate=rate)
        return member._grow(scope, codes, y_codes, claim, rows=rows)

    def _store(self, fitted: list[Any]) -> None:
        if self._protocol_secret():
            self.models_ = fitted
            self.trees_ = None  # the trees stay secret-shared among the parties
            return
        super()._store(fitted)

    # -- predict -------------------------------------------------------------------
    def predict_proba(self, X: Any) -> np.ndarray:
        """Share of the trees voting for each class; with secret trees, one-hot of the label.

        With oblivious trees trained in MPC only the forest's label is revealed
        (to the querier), so the probabilities are its one-hot row.
        """
        if getattr(self, "trees_", 0) is None:
            return np.eye(len(self.classes_))[self._protocol_labels(X)]
        return super().predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """Majority label of the trees (ties to the lowest class index)."""
        if getattr(self, "trees_", 0) is None:
            return self.classes_[self._protocol_labels(X)]
        return super().predict(X)

    def _protocol_labels(self, X: Any) -> np.ndarray:
        """The secret majority vote in one MPC run: only the querier learns the labels."""
        from privet.learners.forest.protocol import run_oblivious_forest_predict

        codes = self._codes_for_predict(X)
        run = run_oblivious_forest_predict(
            self.models_,
            codes,
            self.schema_.domain_sizes,
            backend=self.backend,
            timeout=self.timeout,
        )
        return np.asarray(run.labels, dtype=np.int64)


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

    Reference path only (no ``backend``): the protocols of seed 000 choose
    their splits from the data (Alg. 1, Alg. 7), and privet has no protocol
    for trees with public random splits and secret DP leaves.

    References
    ----------
    Seed 000, App. D (the extra-trees DP forest, disjoint subsets) and App. D.1
    (Claim D.1, Poisson subsampling).
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
