"""ODP+FMPC-ID3 (seed 000, Sec. 3, Algorithms 1-4): the plaintext reference path.

The paper's proposal builds a *complete* ``w``-ary tree to depth ``h`` on
one-hot data padded to the common width ``w`` (App. C.1), choosing each split
by an exact argmax of the max-operator scores inside MPC, and adds Laplace
noise only at the leaves, with the full budget per leaf. The model stays
secret-shared; oblivious prediction (Alg. 4) reveals only the label.

The exact split selection is not randomised, and every released prediction
depends on it, so it is a release with no DP guarantee (see
:class:`ObliviousID3Classifier`, Notes). The paper-faithful mode is kept, and
runs only on a ledger that accepts non-private releases; the sound variant
chooses the (still hidden) split with the exponential mechanism.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema, one_hot, one_hot_target
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    charged_in_full_on_failure,
    plan_depth,
    refuse_non_private,
)
from privet.learners._params import Interval, StrOptions
from privet.learners._scores import max_scores_one_hot
from privet.learners._tree import Tree, TreeBuilder, oblivious_predict
from privet.learners.partial_mpc_id3 import (
    NOISES,
    ClaimRule,
    NoiseAccounting,
    ReferenceOps,
    estimator_accounting,
    laplace_sensitivity,
    no_claim,
    reference_accounting,
    refuse_unproven_noise,
    relation_of,
    resolve_noise,
    scope_labels,
)
from privet.ledger import (
    Claim,
    NeighbouringRelation,
    NonPrivate,
    PlanNode,
    PrivacyPlan,
    Scope,
)

CLAIM_SOURCE = "seed 000, Sec. 3.1 and App. C.2 (ODP+FMPC-ID3, Alg. 1)"
SPLIT_CLAIM_SOURCE = "seed 000, App. C.2.1 (f, the hidden split selection, is 0-DP)"
LEAF_CLAIM_SOURCE = "seed 000, App. C.2.1 (g, the Laplace leaf, is epsilon-DP)"
EXACT_SPLIT_REASON = (
    "exact argmax split on max-operator scores (seed 000, Alg. 1 step 15): hidden by MPC, "
    "but not randomised, and every released prediction depends on it"
)


class OneHotOps(ReferenceOps):
    """The data operations of Algorithm 1 on plaintext one-hot data.

    ``onehot`` is ``(n, m, w)`` with the dummy columns of App. C.1 (all zero);
    ``classes`` the ``(n, u)`` class-partition vectors ``C`` (Alg. 1 step 6).
    """

    def __init__(
        self,
        codes: np.ndarray,
        y_codes: np.ndarray,
        schema: Schema,
        *,
        caller: str,
        noise: str = "paper",
    ) -> None:
        super().__init__(
            codes, y_codes, schema.domain_sizes, schema.n_classes, caller=caller, noise=noise
        )
        self.width = schema.max_domain_size
        self.onehot = one_hot(self.codes, schema, dtype=np.int64)
        self.classes = one_hot_target(self.y, schema.n_classes, dtype=np.int64)

    def count(self, rows: np.ndarray) -> np.ndarray:
        """Alg. 1 steps 5-7: ``z_i = sum_j (D_0,i × T)_j``."""
        return self.classes[rows].sum(axis=0)

    def scores(self, rows: np.ndarray, attrs: Any = None) -> np.ndarray:
        """Alg. 1 steps 12-13: the MAX protocol (Alg. 2) for every attribute."""
        return max_scores_one_hot(self.onehot[rows], self.classes[rows])

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        """Alg. 1 steps 17-21: ``T_i = T × X_i`` for all ``w`` columns, dummies included.

        A dummy column is zero in every record, so its part is always empty.
        """
        block = self.onehot[rows, attr, :]
        return [rows[block[:, i] == 1] for i in range(self.width)]


def plan_oblivious(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    split: str,
    split_epsilon: float,
    leaf_epsilon: float,
    leaf: str,
    relation: NeighbouringRelation,
    claim: ClaimRule,
    accounting: NoiseAccounting | None = None,
) -> None:
    """Write Algorithm 1's charges into ``node``: per level a split, then a leaf.

    ``accounting`` says what each DP step is charged (default: the paper's
    mechanisms on the reference path).
    """
    acc = accounting if accounting is not None else reference_accounting(relation)
    for level in range(depth):
        step = f"split, depth {level}"
        if split == "exact":
            node.charge(
                NonPrivate(reason=EXACT_SPLIT_REASON),
                mechanism="exact argmax (hidden)",
                step=step,
                claim=claim("split", 0.0),
            )
        else:
            entry, name = acc.selection(split_epsilon)
            node.charge(
                entry, mechanism=name + " (hidden)", step=step, claim=claim("split", split_epsilon)
            )
        node = node.partition(max(width, 2), label=f"depth {level + 1}")
    entry, name = acc.leaf(leaf, leaf_epsilon)
    node.charge(entry, mechanism=name, step="leaf", claim=claim("leaf", leaf_epsilon))


def grow_oblivious(
    ops: OneHotOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    split: str,
    split_epsilon: float,
    leaf_epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rows: np.ndarray | None = None,
) -> Tree:
    """Algorithm 1 (ODP+FMPC-ID3): grow the complete ``w``-ary secret tree.

    Every internal node has ``w`` children: one per real value of its attribute,
    then the dummy values. A dummy branch holds no record of any dataset, so its
    subtree is data independent: it is kept as a single zero leaf (its flags in
    Alg. 4 are always 0) and gets no ledger scope. The real subtrees are grown
    to depth exactly ``depth``, whatever their size: the stopping rule only
    checks the depth (Sec. 3.1).
    """
    w = ops.width
    builder = TreeBuilder(ops.n_classes)
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def grow(node: int, sc: Scope, rows: np.ndarray, available: np.ndarray, h: int) -> None:
        if h == 0:  # steps 5-11: a leaf, released below
            leaves.append((node, sc, rows))
            return
        step = f"split, depth {depth - h}"
        scores = ops.scores(rows) * available  # steps 12-14: y × R
        idx = np.flatnonzero(available)
        if split == "exact":
            sc.charge(
                NonPrivate(reason=EXACT_SPLIT_REASON),
                mechanism="exact argmax (hidden)",
                caller=ops.caller,
                step=step,
                claim=claim("split", 0.0),
            )
            # step 15: argmax, ties (e.g. an empty node) to the lowest available index
            best = int(idx[np.argmax(scores[idx])])
        else:
            # The sound variant: MPC-EM (Alg. 13) with the index kept secret.
            pick = ops.select(
                sc,
                scores[idx],
                epsilon=split_epsilon,
                step=step,
                claim=claim("split", split_epsilon),
            )
            best = int(idx[pick])
        kids = builder.split(node, best, w)  # step 16-19: indicator, w encodings
        subsets = ops.partition(rows, best)
        real = ops.sizes[best]
        parts = sc.partition(scope_labels(schema, best))
        rest = available.copy()
        rest[best] = False  # step 22: R - k
        for v in range(real):
            grow(kids[v], parts[v], subsets[v], rest, h - 1)
        # kids[real:] are the dummy branches: zero leaves, never selected by Alg. 4.
        assert all(s.size == 0 for s in subsets[real:])

    root = builder.add_node(0)
    start = ops.all_rows() if rows is None else rows
    grow(root, scope, start, np.ones(ops.n_attributes, dtype=bool), depth)
    # steps 5-11: DP class sizes (MPC-LM), the leaf keeps only its label
    values = ops.release_leaves(
        [(sc, r) for _, sc, r in leaves],
        leaf=leaf,
        epsilon=leaf_epsilon,
        claim=claim("leaf", leaf_epsilon),
    )
    for (node, _, _), value in zip(leaves, values, strict=True):
        builder.set_leaf(node, ops.label(value))  # the leaf keeps only its label
    return builder.build()


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
    split : {"exact", "exponential"}, default="exact"
        ``"exact"`` is the paper: exact argmax, no noise; the leaves get the
        full ``epsilon``. It releases a non-private aggregate (see Notes) and
        needs a ledger with ``budget=Guarantee.unbounded()``. ``"exponential"``
        is the sound variant: the hidden split is drawn by the exponential
        mechanism (sensitivity 1) at ``split_fraction * epsilon / h`` per level,
        and the leaves get ``(1 - split_fraction) * epsilon``.
    leaf : {"laplace", "exponential"}, default="laplace"
        Leaf label: argmax of Laplace noisy counts (Alg. 1) or the exponential
        mechanism on the counts (the paper's Fig. 4 variant).
    split_fraction : float in (0, 1), default=0.25
        Share of ``epsilon`` spent on the splits in the sound variant (ignored
        when ``split="exact"`` or the depth is 0). A prediction releases its
        leaf label directly, and a leaf holds few records, so the leaves keep
        most of the budget: on Titanic, Heart and Adult at the paper's depths,
        0.25 beat 0.5 and the even split ``h / (h + 1)`` of Algorithm 6 (the
        latter would make this learner the hidden twin of CDP+PMPC-ID3).
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
    ``(1 - split_fraction) * epsilon``, nodes of a level in parallel. Hiding
    the tree costs nothing more and buys nothing in this accounting: the proven
    guarantee of the released predictions is that of the released tree. Under
    replace-one neighbours the ledger proves up to about twice that (Laplace
    sensitivity 2, a replaced record can move between branches).

    References
    ----------
    Seed 000, Sec. 3 (Algorithms 1-4), App. C.1 (dummy columns), App. C.2
    (privacy analysis), App. C.3 (Algorithms 12-13).
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "split": [StrOptions({"exact", "exponential"})],
        "leaf": [StrOptions({"laplace", "exponential"})],
        "split_fraction": [Interval(Real, 0, 1, closed="neither")],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "noise": [StrOptions(set(NOISES)), None],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 0, None, closed="neither")],
        "ledger": "no_validation",  # checked in _validate_params / _scope
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 3,
        split: str = "exact",
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
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.split = split
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

    def _claim_rule(self) -> ClaimRule:
        if self.split != "exact":
            return no_claim  # the paper does not analyse this variant

        def rule(kind: str, epsilon: float) -> Claim:
            if kind == "split":
                return Claim(0.0, source=SPLIT_CLAIM_SOURCE, note="secret shares are 0-DP")
            return Claim(epsilon, source=LEAF_CLAIM_SOURCE)

        return rule

    def _plan_into(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        eps_split, eps_leaf = self._budgets(schema)
        plan_oblivious(
            node,
            depth=self._depth(schema),
            width=schema.max_domain_size if schema is not None else 2,
            split=self.split,
            split_epsilon=eps_split,
            leaf_epsilon=eps_leaf,
            leaf=self.leaf,
            relation=relation_of(self.ledger),
            claim=claim,
            accounting=self._accounting(schema),
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
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        scope = self._scope(float(self.epsilon))
        with self.ledger_.reserve(plan, scope=scope, caller=type(self).__name__) as res:
            codes, y_codes = self._prepare(X, y)
            if self.backend == "reference":
                self.tree_ = self._grow(scope, codes, y_codes, self._claim_rule())
            else:
                self.model_ = self._train_protocol(scope, codes, y_codes, self._claim_rule())
                self.tree_ = None  # the model stays secret-shared among the parties
        self._fitted_common(self.schema_)
        self.width_ = self.schema_.max_domain_size
        self.privacy_spent_ = res.used()
        self.privacy_claim_ = plan.claim
        return self

    def _grow(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        claim: ClaimRule,
        rows: np.ndarray | None = None,
    ) -> Tree:
        schema = self.schema_
        eps_split, eps_leaf = self._budgets(schema)
        ops = OneHotOps(
            codes,
            y_codes,
            schema,
            caller=type(self).__name__,
            noise=resolve_noise(self.noise, self.backend),
        )
        return grow_oblivious(
            ops,
            scope,
            schema,
            depth=self._depth(schema),
            split=self.split,
            split_epsilon=eps_split,
            leaf_epsilon=eps_leaf,
            leaf=self.leaf,
            claim=claim,
            rows=rows,
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
        from privet.mpc.protocols import charge_oblivious_run, run_oblivious_id3

        schema = self.schema_
        eps_split, eps_leaf = self._budgets(schema)
        accounting = self._accounting(schema)
        with charged_in_full_on_failure(self, scope, schema):
            model = run_oblivious_id3(
                codes,
                y_codes,
                schema.domain_sizes,
                schema.n_classes,
                depth=self._depth(schema),
                split=self.split,
                split_epsilon=eps_split,
                leaf_epsilon=eps_leaf,
                leaf=self.leaf,
                laplace_sensitivity=laplace_sensitivity(scope.ledger.relation),
                mpc_noise=accounting.mpc_noise,
                security_bits=accounting.security_bits,
                sample_rate=sample_rate,
                backend=self.backend,
                parties=self.parties,
                timeout=self.timeout,
            )
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
        from privet.mpc.protocols import run_oblivious_predict

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


__all__ = ["ObliviousID3Classifier", "OneHotOps", "grow_oblivious", "plan_oblivious"]
