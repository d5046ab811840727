"""LDPBoostingClassifier: SAMME boosting under local DP (seed 004, Wang & Chang)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privet.data import Numeric, Schema
from privet.errors import (
    InvalidParameterError,
    RelationMismatchError,
    SchemaError,
)
from privet.learners._base import (
    _validate_params,
    check_table,
    refuse_non_private,
    require_fitted,
)
from privet.learners._params import Interval, StrOptions
from privet.learners.ldp_boosting._owners import assign_groups
from privet.learners.ldp_boosting.centroid import CentroidLearner
from privet.learners.ldp_boosting.logistic import LogisticLearner
from privet.learners.ldp_boosting.randomisers import MECHANISMS, noise_is_off, randomiser_entry
from privet.learners.ldp_boosting.samme import (
    EXACT_SUMS_CLAIM,
    EXACT_SUMS_REASON,
    boost,
)
from privet.learners.ldp_boosting.secure_sum import mpc_sum, reference_sum
from privet.learners.ldp_boosting.stump import StumpLearner
from privet.ledger import (
    REPLACE_ONE,
    Claim,
    Guarantee,
    Ledger,
    NonPrivate,
    PrivacyPlan,
    Scope,
)

CLAIM_SOURCE = "seed 004 (Wang & Chang), Sec. 3.4.1 and Alg. 2"
CLAIM_NOTE = "each owner takes part in one round and perturbs its local share with epsilon-LDP"


class LDPBoostingClassifier(ClassifierMixin, BaseEstimator):
    """Boosting (SAMME) of base learners trained on locally perturbed owner shares.

    Data owners hold the rows (one row each by default, or the groups given by
    ``owners`` in :meth:`fit`). In every round the data user draws a fresh group
    of ``owners_per_round`` owners (Alg. 2 line 9); each of them perturbs its
    local share once with an epsilon-LDP randomiser and never takes part again,
    so every owner spends its budget once (Sec. 3.4.1). The base classifier of
    the round is aggregated from the perturbed shares (Sec. 3.5), the owners add
    their weighted errors with a secure sum (Alg. 2 lines 11-13) and update their
    weights locally. A round whose released error is at least 1 - 1/K (no better
    than chance) is discarded (SAMME's rule). Before round 1, one more fresh group
    reports its class frequencies with the same randomiser at epsilon: the
    perturbed class prior is SAMME's round 0 (the base score), so a model whose
    every round is discarded predicts the estimated majority class.

    Parameters
    ----------
    base : {"stump", "centroid", "logistic"}, default="stump"
        Decision stumps from perturbed cross-table differences (Sec. 3.5.3,
        binary classes), nearest centroids from perturbed weighted samples
        (Sec. 3.5.1), or logistic regression from perturbed local models
        (Sec. 3.5.2).
    mechanism : {"piecewise", "duchi", "laplace"}, default="piecewise"
        The local randomiser (Alg. 4; Duchi et al.; Laplace with eps/D per attribute).
    epsilon : float, default=1.0
        Each owner's total local privacy budget.
    n_rounds : int, default=10
        Number M of boosting rounds; needs ``(n_rounds + 1) * owners_per_round``
        owners (one more group reports the class prior).
    owners_per_round : int or None, default=None
        |H|; ``None`` uses all owners, split evenly over the prior group and the
        rounds.
    strict : bool, default=True
        True: the weighted-error sums are perturbed too (a fraction
        ``error_fraction`` of epsilon), stump branch labels are read from the
        perturbed sums and centroid labels are hidden in the share, so each
        owner's total is epsilon. False: the paper as written; its exact
        releases are charged as NonPrivate (needs an unbounded ledger).
    error_fraction : float, default=0.2
        Strict variant: the part of epsilon for the (weighted error, weight) report.
    coef_bound : float, default=4.0
        Public bound B on the local logistic-regression parameters (clipped to [-B, B]).
    schema : privet.data.Schema
        Public schema: every feature a :class:`~privet.data.Numeric` whose bounds
        scale it to [-1, 1] (bin edges are the stumps' candidate thresholds; no
        edges: the middle of the range), and the public classes.
    ledger : Ledger, Scope or None, default=None
        A replace-one ledger (local randomisers are accounted under replace-one).
        ``None``: a new ledger with budget epsilon (strict). The faithful variant
        (``strict=False``) releases exact sums and needs an explicit
        ``Ledger(budget=Guarantee.unbounded(), relation="replace_one")``.
    secure_sum : {"reference", "mpc"}, default="reference"
        "mpc" runs each secure sum as ``n_parties`` MPyC processes over TCP, the
        owners grouped into them; "reference" computes the same fixed-point sums
        in process.
    n_parties : int, default=3
    random_state : int, Generator or None
        Public randomness: which owners go to which round.

    Attributes
    ----------
    classes_, n_features_in_, schema_
    estimators_ : list
        The accepted base classifiers T_m (on the unit scale).
    estimator_weights_ : ndarray
        alpha_m of the accepted rounds.
    estimator_errors_ : ndarray
        The error SAMME used in each accepted round: err_m (faithful), or its
        upper confidence bound err_m + z sd_m (strict; see ``samme.error_sd``);
        ``estimator_weights_`` is SAMME's alpha of it.
    estimator_rounds_ : ndarray
        The round (0-based) of each accepted base classifier.
    round_errors_ : ndarray
        The err_m released in every round, accepted or discarded.
    discarded_rounds_ : list of int
        Rounds whose released error was >= 1 - 1/K.
    prior_ : ndarray
        The class frequencies estimated from the prior group's perturbed reports.
    prior_class_ : int
        Its largest class (code); the round-0 classifier T_0.
    prior_weight_ : float
        alpha_0 of T_0 (0 when the prior is no better than chance).
    owner_groups_ : list of ndarray
        The owners (labels as given to ``fit``) of the prior group (first) and of
        each round; disjoint.
    ledger_, privacy_spent_, privacy_claim_, mpc_stats_

    Notes
    -----
    Claimed: epsilon-LDP for each owner (Sec. 3.4.1). Proven by the ledger: the
    strict variant's total is epsilon (owner groups are a stable partition, each
    charged the share's and the error report's LocalRandomiser entries adding up
    to epsilon). The faithful variant opens exact sums of all owners' weighted
    errors in every round, and for stumps (centroids) exact branch labels
    (labels), so its proven epsilon is infinite; see docs/ldp_boosting.md.
    """

    _parameter_constraints = {
        "base": [StrOptions({"stump", "centroid", "logistic"})],
        "mechanism": [StrOptions(set(MECHANISMS))],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "owners_per_round": [Interval(Integral, 1, None, closed="left"), None],
        "strict": ["boolean"],
        "error_fraction": [Interval(Real, 0, 1, closed="neither")],
        "coef_bound": [Interval(Real, 0, None, closed="neither")],
        "schema": [Schema, None],
        "ledger": "no_validation",
        "secure_sum": [StrOptions({"reference", "mpc"})],
        "n_parties": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        base: str = "stump",
        mechanism: str = "piecewise",
        epsilon: float = 1.0,
        n_rounds: int = 10,
        owners_per_round: int | None = None,
        strict: bool = True,
        error_fraction: float = 0.2,
        coef_bound: float = 4.0,
        schema: Any = None,
        ledger: Any = None,
        secure_sum: str = "reference",
        n_parties: int = 3,
        random_state: Any = None,
    ) -> None:
        self.base = base
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.n_rounds = n_rounds
        self.owners_per_round = owners_per_round
        self.strict = strict
        self.error_fraction = error_fraction
        self.coef_bound = coef_bound
        self.schema = schema
        self.ledger = ledger
        self.secure_sum = secure_sum
        self.n_parties = n_parties
        self.random_state = random_state

    # -- public schema -------------------------------------------------------
    def _check_schema(self, schema: Schema | None) -> Schema:
        name = type(self).__name__
        if schema is None:
            raise SchemaError(
                f"{name} needs the public schema (numeric bounds of every feature, the "
                "classes): pass schema=privet.data.Schema([Numeric(name, lower, upper), ...], "
                "Categorical('target', classes)). Bounds are never read from the data."
            )
        bad = [a.name for a in schema.attributes if not isinstance(a, Numeric)]
        if bad:
            raise SchemaError(
                f"{name} takes numeric features with public bounds; {bad} are not Numeric. "
                "One-hot encode categorical attributes as Numeric(name, 0, 1) columns (Sec. 3.1)."
            )
        if self.base == "stump" and schema.n_classes != 2:
            raise SchemaError(
                f"{name}(base='stump') builds stumps from two-class cross tables (Sec. 3.5.3); "
                f"the schema has {schema.n_classes} classes. Use base='centroid' or 'logistic'."
            )
        return schema

    def _candidates(self, schema: Schema) -> list[tuple[int, float]]:
        out = []
        for f, a in enumerate(schema.attributes):
            edges = a.bins or ((a.lower + a.upper) / 2.0,)
            out += [(f, 2.0 * (e - a.lower) / (a.upper - a.lower) - 1.0) for e in edges]
        return out

    def _learner(self, schema: Schema) -> Any:
        k, d = schema.n_classes, schema.n_features
        if self.base == "stump":
            return StumpLearner(self._candidates(schema), k)
        if self.base == "centroid":
            return CentroidLearner(d, k, strict=bool(self.strict))
        return LogisticLearner(d, k, float(self.coef_bound))

    def _epsilons(self) -> tuple[float, float]:
        eps = float(self.epsilon)
        if not self.strict:
            return eps, 0.0
        err = eps * float(self.error_fraction)
        return eps - err, err

    # -- plan ------------------------------------------------------------------
    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone."""
        _validate_params(self)
        schema = self._check_schema(schema if schema is not None else self.schema)
        learner = self._learner(schema)
        eps_share, eps_err = self._epsilons()
        caller = type(self).__name__
        plan = PrivacyPlan(
            caller=caller,
            description=(
                f"{self.n_rounds} disjoint owner groups (stable partition), each owner "
                f"perturbs once: share eps={eps_share:.4g}"
                + (f" + error report eps={eps_err:.4g}" if self.strict else " + exact sums")
            ),
            claim=Claim(float(self.epsilon), source=CLAIM_SOURCE, note=CLAIM_NOTE),
        )
        if not self.strict:
            for m in range(int(self.n_rounds)):
                plan.charge(
                    NonPrivate(reason=EXACT_SUMS_REASON),
                    mechanism="secure sum (exact)",
                    step=f"round {m}",
                    claim=EXACT_SUMS_CLAIM,
                )
        # n_rounds round groups and the prior group, all disjoint. The plan's partition
        # is homogeneous: every part is planned with a round's charges; the prior group
        # is charged one LocalRandomiser(epsilon) instead, which costs the same epsilon.
        part = plan.partition(int(self.n_rounds) + 1, stable=True, label="owner group")
        if not self.strict and self.base in ("stump", "centroid"):
            part.charge(NonPrivate(reason="exact labels"), mechanism="labels in the clear")
        part.charge(
            randomiser_entry(self.mechanism, eps_share, learner.dimension),
            mechanism=f"local:{self.mechanism}",
            step=f"{self.base} share",
        )
        if self.strict:
            part.charge(
                randomiser_entry(self.mechanism, eps_err, 2),
                mechanism=f"local:{self.mechanism}",
                step="error report",
            )
        return plan

    # -- ledger ----------------------------------------------------------------
    def _scope(self) -> Scope:
        led = self.ledger
        name = type(self).__name__
        needs_unbounded = (not self.strict) or noise_is_off()
        if led is None and not self.strict:  # a non-private fit is never implicit
            refuse_non_private(
                self,
                what="The paper-faithful variant (strict=False) opens exact weighted-error sums "
                "and exact labels.",
                fix="Use strict=True, or pass ledger=Ledger(budget=Guarantee.unbounded(), "
                "relation='replace_one') to run it knowingly and see it reported as "
                "epsilon = infinity.",
            )
        if led is None:  # the noise-off testing hook was acknowledged by its keyword
            budget = Guarantee.unbounded() if needs_unbounded else Guarantee(float(self.epsilon))
            self.ledger_ = Ledger(budget=budget, relation=REPLACE_ONE, dataset="owners' data")
            return self.ledger_.root
        if not isinstance(led, Ledger | Scope):
            raise InvalidParameterError(
                f"The 'ledger' parameter of {name} must be a privet Ledger, a Scope of one, or "
                f"None; got {type(led).__name__}."
            )
        ledger = led.ledger if isinstance(led, Scope) else led
        if ledger.relation is not REPLACE_ONE:
            raise RelationMismatchError(
                f"{name} perturbs each owner's record with a local randomiser, which is "
                f"accounted under replace-one neighbours; the ledger uses "
                f"{ledger.relation.value}. Pass Ledger(budget=..., relation='replace_one'). "
                "Nothing was charged."
            )
        if needs_unbounded:
            refuse_non_private(
                self,
                what=(
                    "The paper-faithful variant (strict=False) opens exact weighted-error sums "
                    "and exact labels."
                    if not self.strict
                    else "The without_noise() testing hook releases the shares unperturbed."
                ),
                fix="Use strict=True, or pass ledger=Ledger(budget=Guarantee.unbounded(), "
                "relation='replace_one') to run it and see it reported as epsilon = infinity.",
            )
        self.ledger_ = ledger
        return led if isinstance(led, Scope) else led.root

    # -- data ------------------------------------------------------------------
    def _scale(self, schema: Schema, X: Any, *, what: str) -> np.ndarray:
        arr = check_table(X, schema, numeric=True, owner=type(self).__name__)
        lo = np.asarray([a.lower for a in schema.attributes])
        hi = np.asarray([a.upper for a in schema.attributes])
        outside = (arr < lo) | (arr > hi)
        if what == "fit" and outside.any():
            r, c = np.argwhere(outside)[0]
            raise SchemaError(
                f"{type(self).__name__}: {int(outside.sum())} values lie outside the schema's "
                f"public bounds, e.g. row {r}, feature {schema.feature_names[c]!r} = "
                f"{arr[r, c]!r} not in [{lo[c]}, {hi[c]}]. Clip the data to the public bounds or "
                "widen them (from public knowledge, not from the data). Nothing was charged."
            )
        return np.clip(2.0 * (arr - lo) / (hi - lo) - 1.0, -1.0, 1.0)

    def _owners(self, owners: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        name = type(self).__name__
        if owners is None:
            labels, codes = np.arange(n), np.arange(n)
        else:
            arr = np.asarray(owners)
            if arr.shape != (n,):
                raise SchemaError(
                    f"owners must give one owner per row, shape ({n},); got {arr.shape}."
                )
            labels, codes = np.unique(arr, return_inverse=True)
        n_owners = labels.size
        if n_owners < 2:
            raise SchemaError(
                f"{name} needs at least 2 data owners (one row each by default); got "
                f"{n_owners}. Nothing was charged."
            )
        per = self.owners_per_round
        groups = int(self.n_rounds) + 1
        per = n_owners // groups if per is None else int(per)
        if per < 1 or per * groups > n_owners:
            raise InvalidParameterError(
                f"{name}: n_rounds={self.n_rounds} rounds of owners_per_round="
                f"{self.owners_per_round} owners, and one group for the class prior, need "
                f"{max(per, 1) * groups} distinct owners (each owner takes part in one round "
                f"only), but there are {n_owners}. Lower n_rounds or owners_per_round. "
                "Nothing was charged."
            )
        return labels, codes.astype(np.int64)

    # -- fit -------------------------------------------------------------------
    def fit(self, X: Any, y: Any, owners: Any = None) -> LDPBoostingClassifier:
        """Train; ``owners`` (optional) gives each row's data owner (default: one row each)."""
        _validate_params(self)
        schema = self._check_schema(self.schema)
        self.schema_ = schema
        plan = self.privacy_plan(schema)
        scope = self._scope()
        caller = type(self).__name__
        with self.ledger_.reserve(plan, scope=scope, caller=caller) as res:
            Xu = self._scale(schema, X, what="fit")
            if y is None:
                raise SchemaError(f"{caller} requires y; pass the class labels.")
            y_codes = schema.encode_target(
                np.asarray(y, dtype=object).ravel()
                if np.asarray(y).dtype.kind == "f"
                else np.asarray(y)
            )
            if y_codes.shape[0] != Xu.shape[0]:
                raise SchemaError(f"X has {Xu.shape[0]} rows but y has {y_codes.shape[0]}.")
            labels, codes = self._owners(owners, Xu.shape[0])
            rng = np.random.default_rng(self.random_state)
            per = self.owners_per_round or labels.size // (int(self.n_rounds) + 1)
            groups = assign_groups(labels.size, int(self.n_rounds) + 1, int(per), rng)
            parts = scope.partition(
                ["owner group 0 (class prior)"]
                + [f"owner group {m} (round {m})" for m in range(1, len(groups))],
                stable=True,
            )
            eps_share, eps_err = self._epsilons()
            if self.secure_sum == "mpc":

                def summer(v: np.ndarray) -> Any:
                    return mpc_sum(v, n_parties=int(self.n_parties))
            else:

                def summer(v: np.ndarray) -> Any:
                    return reference_sum(v), None

            result = boost(
                learner=self._learner(schema),
                Xu=Xu,
                y=y_codes,
                owner_codes=codes,
                groups=groups[1:],
                n_classes=schema.n_classes,
                mechanism=self.mechanism,
                epsilon_share=eps_share,
                epsilon_error=eps_err,
                strict=bool(self.strict),
                root=scope,
                round_scopes=parts[1:],
                prior_group=groups[0],
                prior_scope=parts[0],
                epsilon_prior=float(self.epsilon),
                secure_sum=summer,
                caller=caller,
                share_claim=Claim(float(self.epsilon), source=CLAIM_SOURCE, note=CLAIM_NOTE),
                release_claim=EXACT_SUMS_CLAIM,
            )
        self.estimators_ = result.models
        self.estimator_weights_ = np.asarray(result.alphas)
        self.estimator_errors_ = np.asarray(result.errors)
        accepted = [m for m in range(int(self.n_rounds)) if m not in result.discarded]
        self.estimator_rounds_ = np.asarray(accepted, dtype=np.int64)
        self.round_errors_ = np.asarray(result.round_errors)
        self.discarded_rounds_ = list(result.discarded)
        self.prior_ = np.asarray(result.prior)
        self.prior_class_ = int(result.prior_class)
        self.prior_weight_ = float(result.prior_alpha)
        self.mpc_stats_ = result.stats
        self.owner_groups_ = [labels[g] for g in groups]
        self.classes_ = np.asarray(schema.classes)
        self.n_features_in_ = schema.n_features
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        self.privacy_claim_ = plan.claim
        return self

    # -- predict ---------------------------------------------------------------
    def _check_fitted(self) -> None:
        require_fitted(self, "estimators_")

    def _prior_votes(self, n: int) -> np.ndarray:
        votes = np.zeros((n, self.classes_.size))
        votes[:, self.prior_class_] += self.prior_weight_
        return votes

    def decision_function(self, X: Any) -> np.ndarray:
        """(alpha_0 I(T_0 = k) + sum_m alpha_m I(T_m(x) = k)) / sum of alphas, shape (n, K)."""
        self._check_fitted()
        Xu = self._scale(self.schema_, X, what="predict")
        votes = self._prior_votes(Xu.shape[0])
        for model, alpha in zip(self.estimators_, self.estimator_weights_, strict=True):
            votes[np.arange(Xu.shape[0]), model.predict(Xu)] += alpha
        total = float(np.sum(self.estimator_weights_)) + self.prior_weight_
        return votes / total if total > 0 else votes

    def staged_predict(self, X: Any) -> Any:
        """Predictions after each of the ``n_rounds`` rounds (a discarded round changes nothing)."""
        self._check_fitted()
        Xu = self._scale(self.schema_, X, what="predict")
        votes = self._prior_votes(Xu.shape[0])
        models = dict(zip(self.estimator_rounds_.tolist(), self.estimators_, strict=True))
        alphas = dict(zip(self.estimator_rounds_.tolist(), self.estimator_weights_, strict=True))
        for m in range(int(self.n_rounds)):
            if m in models:
                votes[np.arange(Xu.shape[0]), models[m].predict(Xu)] += alphas[m]
            yield self.classes_[np.argmax(votes, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Softmax of the normalised votes (SAMME, as scikit-learn's AdaBoostClassifier)."""
        dec = self.decision_function(X) * (self.classes_.size - 1)
        e = np.exp(dec - dec.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted()
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags


_ = math
__all__ = ["LDPBoostingClassifier"]
