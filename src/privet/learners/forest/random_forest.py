"""``DPRandomForestClassifier``: forests of seed-000 trees (App. D), in the clear or in MPC."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import BudgetExceededError, InvalidParameterError
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.accounting import (
    EM_FORMS,
    ClaimRule,
)
from privet.learners.forest.base import _BaseDPForest
from privet.learners.oblivious_id3 import ObliviousID3Classifier
from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier
from privet.ledger import (
    PlanNode,
    Scope,
)


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
        Number of trees ``k``, at most 10,000 (``MAX_ESTIMATORS``: each tree is a
        training of its own, about 15-40 ms).
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
        Poisson-subsampled (at most that: the ledger may prove less). Where one
        tree's plan costs more than ``epsilon`` on the ledger's relation
        (CDP+PMPC-ID3 under replace-one), ``fit`` scales every tree's steps so
        that one tree costs ``epsilon`` (``calibrated_epsilon_``).
    max_depth : int, default=3
    leaf : {"laplace", "exponential"}, default="laplace"
    em_form : {"auto", "paper"}, default="auto"
        Form of the trees' DP selections, passed to each tree learner (see
        :class:`PartialMPCID3Classifier`): ``"auto"`` is the monotone form under
        add/remove neighbours (the max-operator scores and class counts are
        monotone there), ``"paper"`` the paper's form. Same charges either way;
        a Poisson forest amplifies each tree's eps-DP charge as before.
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
        them. The charges are those of the reference path on every backend
        (the same steps at the same epsilons; the MPC samplers' entries are
        (epsilon, delta), which the ledger may prove less tightly than the
        reference path's Laplace and exponential mechanisms).
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
        Unused by the trees (their randomness is privacy noise). The disjoint
        subsets are drawn from OS entropy: from a public seed, removing one
        record would move most later rows to another tree.

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
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    calibrated_epsilon_ : float
        Each tree's epsilon in the fit: ``epsilon``, or less where one tree's
        plan cost more on the ledger's relation.
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
    read nothing and are not charged. Disjoint parts are cut by secret coins
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

    _protocol_discloses_row_counts = True  # the parties learn each owner's row count

    _parameter_constraints = {
        **_BaseDPForest._parameter_constraints,
        "tree": [StrOptions({"oblivious", "partial_mpc"})],
        "split": [StrOptions({"exponential", "exact"})],
        "em_form": [StrOptions(set(EM_FORMS))],
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
        em_form: str = "auto",
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
        self.em_form = em_form
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
            "em_form": self.em_form,
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
