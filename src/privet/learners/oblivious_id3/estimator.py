"""``ObliviousID3Classifier``: ODP+FMPC-ID3 (seed 000, Sec. 3, Algorithms 1-4).

A complete w-ary tree grown inside MPC with noise only at the leaves; the model
stays secret-shared and predicts obliviously (Alg. 4). See
:mod:`privet.learners.oblivious_id3.reference` for the paper-faithful and the
sound split selection.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema, one_hot
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    charged_in_full_on_failure,
    interrupts_deferred,
    plan_depth,
    refuse_non_private,
)
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.accounting import (
    EM_FORMS,
    NOISES,
    ClaimRule,
    NoiseAccounting,
    estimator_accounting,
    no_claim,
    refuse_unproven_noise,
    relation_of,
    resolve_noise,
)
from privet.learners._trees.tree import Tree, oblivious_predict
from privet.learners.oblivious_id3.reference import (
    CLAIM_SOURCE,
    LEAF_CLAIM_SOURCE,
    SPLIT_CLAIM_SOURCE,
    OneHotOps,
    grow_oblivious,
    plan_oblivious,
)
from privet.ledger import (
    Claim,
    PlanNode,
    PrivacyPlan,
    Scope,
)


class ObliviousID3Classifier(BaseTreeClassifier):
    """ODP+FMPC-ID3: a fully oblivious ID3 with DP leaves (seed 000, Alg. 1-4).

    The plaintext reference path of the paper's proposal. Attributes are
    one-hot encoded and padded with zero dummy columns to the common width
    ``w = max_i |dom(A_i)|`` (App. C.1); the tree is a complete ``w``-ary tree
    of depth ``h = min(max_depth, n_features)``. Each split is chosen from the
    max-operator scores (Eq. 1, Alg. 2); each leaf keeps only the argmax of its
    DP class counts (Alg. 1 steps 5-11). The model is meant to stay
    secret-shared: :meth:`predict_oblivious` is the reference of the oblivious
    prediction protocol (Alg. 4), which reveals only the label.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of one ``fit``.
    max_depth : int, default=3
        Depth ``h`` of the complete tree (capped at the number of attributes).
    split : {"exponential", "exact"}, default="exponential"
        ``"exponential"`` (the default) is the sound variant: the hidden split
        is drawn by the exponential mechanism (sensitivity 1) at
        ``split_fraction * epsilon / h`` per level, and the leaves get
        ``(1 - split_fraction) * epsilon``. ``"exact"`` is the paper: exact
        argmax, no noise; the leaves get the full ``epsilon``. It releases a
        non-private aggregate (see Notes), so it needs a ledger with
        ``budget=Guarantee.unbounded()`` and is never the default.
    leaf : {"laplace", "exponential"}, default="laplace"
        Leaf label: argmax of Laplace noisy counts (Alg. 1) or the exponential
        mechanism on the counts (the paper's Fig. 4 variant).
    em_form : {"auto", "paper"}, default="auto"
        Form of the DP selections (the sound variant's hidden splits and the
        exponential leaves), as for :class:`~privet.learners.DPID3Classifier`.
        ``"auto"``: the monotone form under add/remove neighbours, where the
        hidden node's max-operator scores (Alg. 2's MAX) and the leaves' class
        counts are monotone (adding a record raises each by 0 or 1):
        ``exp(eps u / Delta)``, or discrete Laplace noise of scale
        ``ceil(Delta) / eps`` for report-noisy-max (``noise="discrete"`` and
        the MPC samplers); the paper's form under replace-one. ``"paper"``:
        ``exp(eps u / (2 Delta))`` and ``ceil(2 Delta) / eps`` on every
        relation. Same charges either way (argument in
        :func:`~privet.learners._trees.accounting.monotone_selection`); no
        effect on the fixed-point samplers in MPC or on ``split="exact"``.
    split_fraction : float in (0, 1), default=0.25
        Share of ``epsilon`` spent on the splits in the sound variant (ignored
        when ``split="exact"`` or the depth is 0). A prediction releases its
        leaf label directly, and a leaf holds few records, so the leaves keep
        most of the budget: on Titanic, Heart and Adult at the paper's depths,
        0.25 beat 0.5 and the even split ``h / (h + 1)`` of Algorithm 6 (the
        latter would make this learner the hidden twin of CDP+PMPC-ID3).
    data_path : {"auto", "sorted", "partition"}, default="auto"
        How the protocol computes the tables of the w**l nodes of each level from
        the outsourced rows. ``"sorted"``: rows kept secretly sorted by node in the
        vector engine (after Hamada et al. 2023), every secure step there, a cost
        linear in the rows whatever the number of nodes; the same secret tree,
        nothing opened but data-independent values. ``"partition"``: one secret
        partition vector per node in MPyC (Alg. 1 steps 17-21). ``"auto"``:
        ``"sorted"`` where it applies (discrete noise, depth >= 1, no secret
        subsample), else ``"partition"``. Oblivious prediction always follows
        each query's path (not every leaf).
    schema : privet.data.Schema or None
        Public attribute domains (they fix ``w``).
    ledger : Ledger, Scope or None
        Where ``fit`` charges; ``None`` makes a ledger with budget ``epsilon``
        (which refuses ``split="exact"``).
    public_domain : {"schema", "infer"}, default="schema"
    random_state : None
        Unused: all randomness is privacy noise.

    Attributes
    ----------
    tree_ : Tree
        The (secret) complete ``w``-ary tree: every internal node has ``w``
        children, real values first, then dummy branches (zero leaves). Leaf
        values are one-hot labels.
    width_ : int
        The common width ``w``.
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        What the ledger proves for this fit: infinite for ``split="exact"``.
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    privacy_claim_ : Claim
        What the paper claims: epsilon-DP.
    classes_, schema_, n_features_in_

    See Also
    --------
    PartialMPCID3Classifier : the paper's baseline, splits revealed under DP.

    Notes
    -----
    **Claimed** (seed 000, Sec. 3.1.4 and App. C.2.1): epsilon-DP for every
    prediction. The proof treats the split selection ``f`` as 0-DP because its
    outputs are secret shares, and the leaves as epsilon-DP Laplace releases,
    in parallel.

    **Proven**, ``split="exact"``: nothing finite. Secret sharing hides
    intermediate values from the servers, but a released prediction is a
    function of the exact argmax splits, which are deterministic functions of
    the data; a record can change which attribute wins (the scores have
    sensitivity 1) and so change the leaf a query reaches and the label it
    gets, whatever the leaf noise. Post-processing only covers functions of the
    noisy leaves, and the leaves are not the only input of a prediction. The
    ledger records each exact split as :class:`~privet.ledger.NonPrivate`
    (epsilon = infinity) with the paper's claim (0) next to it; such a charge is
    refused on any finite budget, so this mode runs only on a ledger with
    ``budget=Guarantee.unbounded()``, and ``privacy_spent_`` is infinite.

    **Proven**, ``split="exponential"``: epsilon-DP under add/remove neighbours,
    with ``h`` levels of exponential-mechanism splits at
    ``split_fraction * epsilon / h`` and leaves at
    ``(1 - split_fraction) * epsilon``, nodes of a level in parallel (one
    record changes one node per level, so each level's selections, and the
    leaves, are one charge in the fit's scope; under replace-one every node
    is charged in its own scope, a level in one batch). Hiding
    the tree costs nothing more and buys nothing in this accounting: the proven
    guarantee of the released predictions is that of the released tree. Under
    replace-one neighbours a replaced record can move between branches, so
    every split level below the root costs twice its budget and the ledger
    proves ``(1 - split_fraction) epsilon + split_fraction epsilon (2 - 1/h)``,
    at most ``(1 + split_fraction) epsilon``: the Laplace leaves stay one
    histogram over leaves x classes of L1 sensitivity 2, at the leaf budget
    (1.125 at epsilon = 1, h = 2, split_fraction = 0.25).

    References
    ----------
    Seed 000, Sec. 3 (Algorithms 1-4), App. C.1 (dummy columns), App. C.2
    (privacy analysis), App. C.3 (Algorithms 12-13).
    """

    _protocol_discloses_row_counts = True  # the parties learn each owner's row count

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "split": [StrOptions({"exact", "exponential"})],
        "leaf": [StrOptions({"laplace", "exponential"})],
        "em_form": [StrOptions(set(EM_FORMS))],
        "split_fraction": [Interval(Real, 0, 1, closed="neither")],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "noise": [StrOptions(set(NOISES)), None],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 1, None, closed="left")],
        "data_path": [StrOptions({"auto", "sorted", "partition"})],
        "ledger": "no_validation",  # checked in _validate_params / _scope
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 3,
        split: str = "exponential",
        leaf: str = "laplace",
        em_form: str = "auto",
        split_fraction: float = 0.25,
        backend: str = "reference",
        noise: str | None = None,
        parties: int = 3,
        timeout: float = 60.0,
        data_path: str = "auto",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.split = split
        self.leaf = leaf
        self.em_form = em_form
        self.split_fraction = split_fraction
        self.backend = backend
        self.noise = noise
        self.parties = parties
        self.timeout = timeout
        self.data_path = data_path
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    # -- budget ----------------------------------------------------------------
    def _depth(self, schema: Schema | None) -> int:
        return plan_depth(self.max_depth, schema)

    def _budgets(self, schema: Schema | None) -> tuple[float, float]:
        """(epsilon per split level, epsilon per leaf)."""
        eps, h = float(self.epsilon), self._depth(schema)
        if self.split == "exact" or h == 0:
            return 0.0, eps
        frac = float(self.split_fraction)
        return frac * eps / h, (1.0 - frac) * eps

    def _tree_settings(self, schema: Schema | None) -> dict[str, Any]:
        """The tree's depth, split and leaf rules and their budgets, as keyword arguments.

        The planner, the plaintext grower and the MPC run all take these five.
        """
        eps_split, eps_leaf = self._budgets(schema)
        return {
            "depth": self._depth(schema),
            "split": self.split,
            "split_epsilon": eps_split,
            "leaf_epsilon": eps_leaf,
            "leaf": self.leaf,
        }

    def _claim_rule(self) -> ClaimRule:
        if self.split != "exact":
            return no_claim  # the paper does not analyse this variant

        def rule(kind: str, epsilon: float) -> Claim:
            if kind == "split":
                return Claim(0.0, source=SPLIT_CLAIM_SOURCE, note="secret shares are 0-DP")
            return Claim(epsilon, source=LEAF_CLAIM_SOURCE)

        return rule

    def _plan_into(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        plan_oblivious(
            node,
            width=schema.max_domain_size if schema is not None else 2,
            relation=relation_of(self.ledger),
            claim=claim,
            accounting=self._accounting(schema),
            **self._tree_settings(schema),
        )

    def _accounting(self, schema: Schema | None) -> NoiseAccounting:
        return estimator_accounting(self, schema)

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone.

        For ``split="exact"`` the plan's cost is infinite (non-private splits).
        """
        _validate_params(self)
        schema = schema if schema is not None else self.schema
        eps_split, eps_leaf = self._budgets(schema)
        h = self._depth(schema)
        if self.split == "exact":
            how = f"exact hidden splits (non-private) over {h} levels; leaves at epsilon"
            note = (
                "the ledger proves no finite bound: exact splits are released through predictions"
            )
        else:
            how = (
                f"hidden EM splits at {eps_split:.4g} per level over {h} levels, "
                f"leaves at {eps_leaf:.4g}"
            )
            note = "claimed for exact splits; this sound variant pays for its splits"
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=how + "; nodes of a level in parallel",
            claim=Claim(float(self.epsilon), source=CLAIM_SOURCE, note=note),
        )
        self._plan_into(plan, schema, self._claim_rule())
        return plan

    def _check_split_budget(self) -> None:
        """Refuse the non-private modes on a finite budget, before anything happens."""
        if self.split == "exact":
            refuse_non_private(
                self,
                what=(
                    "split='exact' is the paper-faithful ODP+FMPC-ID3: it picks every split by "
                    "an exact argmax of the max-operator scores (seed 000, Alg. 1 step 15). The "
                    "choice stays secret-shared, but every released prediction depends on it "
                    "and it is not randomised, although the paper claims epsilon-DP "
                    "(App. C.2.1)."
                ),
                fix=(
                    "Use split='exponential', the sound variant (hidden DP splits, proven), or "
                    "pass ledger=Ledger(budget=Guarantee.unbounded()) to run the paper's "
                    "protocol knowingly."
                ),
            )
        refuse_unproven_noise(self)

    # -- fit / predict ---------------------------------------------------------
    def fit(self, X: Any, y: Any) -> ObliviousID3Classifier:
        """Fit under the ledger's budget; raises before reading data if it cannot."""
        _validate_params(self)
        self._check_split_budget()
        self._fit_reserved(X, y)
        self.width_ = self.schema_.max_domain_size
        return self

    def _train(self, scope: Scope, codes: np.ndarray, y_codes: np.ndarray) -> None:
        if self.backend == "reference":
            self.tree_ = self._grow(scope, codes, y_codes, self._claim_rule())
        else:
            self.model_ = self._train_protocol(scope, codes, y_codes, self._claim_rule())
            self.tree_ = None  # the model stays secret-shared among the parties

    def _grow(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        claim: ClaimRule,
        rows: np.ndarray | None = None,
    ) -> Tree:
        schema = self.schema_
        ops = OneHotOps(
            codes,
            y_codes,
            schema,
            caller=type(self).__name__,
            noise=resolve_noise(self.noise, self.backend),
            em_form=self.em_form,
        )
        return grow_oblivious(
            ops, scope, schema, claim=claim, rows=rows, **self._tree_settings(schema)
        )

    def _train_protocol(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        claim: ClaimRule,
        sample_rate: float | None = None,
    ) -> Any:
        """Alg. 1-3 in MPyC; the model stays secret-shared (``model_``).

        Charged after the run from its public shape (split per node: NonPrivate
        for exact splits, the exponential mechanism for the sound variant; a DP
        update per leaf), inside the reservation made before launch. A run that
        fails after launch is charged its whole plan: the parties may already
        have seen opened values. ``sample_rate``: train on a secret Poisson
        subsample drawn inside MPC (a forest's tree; the caller's scope is the
        subsample's).
        """
        from privet.learners._protocols.programs import (  # loads MPyC
            sized_numbers,
            sorted_table_fits,
            use_sorted_table,
        )
        from privet.learners.oblivious_id3.host import run_oblivious_id3
        from privet.learners.oblivious_id3.replay import charge_oblivious_run

        schema = self.schema_
        eps_split, eps_leaf = self._budgets(schema)
        accounting = self._accounting(schema)
        # sized from public counts before launch: a run that cannot fit charges nothing
        numbers = sized_numbers(
            accounting,
            scope.ledger.relation,
            codes.shape[0],
            split_epsilon=eps_split if self.split == "exponential" else None,
            leaf_epsilon=eps_leaf,
            leaf=self.leaf,
            oblivious=True,
            n_attributes=len(schema.domain_sizes),
        )
        sorted_path = use_sorted_table(
            self.data_path,
            mpc_noise=numbers.mpc_noise,
            depth=self._depth(schema),
            sample_rate=sample_rate,
            fits=sorted_table_fits(
                codes.shape[0],
                numbers,
                schema.n_features,
                n_classes=schema.n_classes,
                parties=self.parties,
                split_epsilon=eps_split if self.split == "exponential" else None,
                leaf_epsilon=eps_leaf,
                leaf=self.leaf,
            ),
        )
        with charged_in_full_on_failure(self, scope, schema):
            model = run_oblivious_id3(
                codes,
                y_codes,
                schema.domain_sizes,
                schema.n_classes,
                numbers=numbers,
                sample_rate=sample_rate,
                sorted_table=sorted_path,
                backend=self.backend,
                parties=self.parties,
                timeout=self.timeout,
                **self._tree_settings(schema),
            )
        with interrupts_deferred():  # the run is over: its charges must all land
            charge_oblivious_run(
                scope,
                model,
                split_epsilon=eps_split,
                leaf_epsilon=eps_leaf,
                claim=claim,
                caller=type(self).__name__,
                accounting=accounting,
            )
        return model

    def predict(self, X: Any) -> np.ndarray:
        if getattr(self, "tree_", 0) is None:
            return self.classes_[self._protocol_labels(X)]
        return super().predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities; with an MPC backend only a label is revealed (one-hot)."""
        if getattr(self, "tree_", 0) is None:
            labels = self._protocol_labels(X)
            return np.eye(len(self.classes_))[labels]
        return super().predict_proba(X)

    def _protocol_labels(self, X: Any) -> np.ndarray:
        """Oblivious prediction (Alg. 4) with the parties: only the querier learns labels."""
        from privet.learners.oblivious_id3.host import run_oblivious_predict

        codes = self._encode_X(self.schema_, X)
        run = run_oblivious_predict(
            self.model_,
            codes,
            self.schema_.domain_sizes,
            backend=self.backend,
            timeout=self.timeout,
        )
        return np.asarray(run.labels, dtype=np.int64)

    def predict_oblivious(self, X: Any) -> np.ndarray:
        """Labels by the oblivious prediction protocol (Alg. 4) run on plaintext.

        Gives the same labels as :meth:`predict` (a tree traversal), by the
        protocol's arithmetic: flags from the padded one-hot record and the
        nodes' indicator vectors, summed over every branch, dummies included.
        """
        codes = self._codes_for_predict(X)
        H = one_hot(codes, self.schema_, width=self.width_)
        return self.classes_[np.argmax(oblivious_predict(self.tree_, H), axis=1)]
