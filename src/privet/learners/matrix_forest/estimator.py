"""The matrix random forest (seed 002, Tajima et al.): DP batch training, DP batch prediction,
optimised subsample-and-aggregate, and q ensembles (Alg. 1, 2 and 3)."""

from __future__ import annotations

import time
from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    calibrated_epsilon,
    require_fitted,
)
from privet.learners._params import Interval, StrOptions
from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.reference import (
    hard_votes,
    leaf_counts,
    leaf_index,
    weighted_votes,
)
from privet.learners.matrix_forest.trees import Ensemble, build_forest, split_trees
from privet.ledger import Claim, NeighbouringRelation, PrivacyPlan, PureDP
from privet.mechanisms import make_laplace, recorder
from privet.mechanisms.matrix import IdentityStrategy, KroneckerStrategy, MatrixMechanism

CLAIM_SOURCE = "seed 002 (Tajima et al.), Thm. 5 and 7, Alg. 3"
MODES = {"batch_training", "batch_prediction", "subsample_aggregate", "disjoint_training"}
TREE_STEP = "random trees from the schema (data-independent, no privacy cost)"


class MatrixRandomForestClassifier(BaseTreeClassifier):
    """Random decision trees whose DP noise is optimised by the matrix mechanism.

    Trees are random multi-way trees of depth ``max_depth`` built from the
    public schema alone (no privacy cost; the ledger shows a zero-cost step).
    Their root-to-leaf paths are the rows of a decision-path matrix T
    (implicit), training data the data matrix D (n x k), and

    - ``mode="batch_training"`` (Alg. 1): noisy leaf counts
      C~ = T D + T A^+ Lap(||A||_1 / eps)^{m x k} with A optimised for T;
      ``fit`` charges ``epsilon``, ``predict`` is post-processing (free).
    - ``mode="batch_prediction"`` (Alg. 2): ``fit`` keeps the exact counts
      and charges nothing but the zero-cost tree step; every call of
      ``predict`` (or ``predict_proba``, ``score``) is a DP release of the
      votes V~ = Q T^T T D + Q T^T T A^+ Lap(||A||_1 / eps) of that batch,
      with A optimised for W = Q T^T T, and charges ``epsilon`` per batch: a
      second batch on the same data is a second charge, and a call that does
      not fit the budget raises before reading anything.
    - ``mode="subsample_aggregate"`` (optimised subsample-and-aggregate):
      each record goes to one tree (disjoint data, a partition on the ledger),
      and each batch of predictions releases V~ = Q T^T C + Q T^T A^+ Lap with A
      optimised for Q T^T; charged per batch like batch prediction.
    - ``mode="disjoint_training"`` (baseline): each tree trained on its own
      disjoint part with Laplace(1 / eps) on its leaf counts (parallel
      composition).

    The disjoint modes' partition is declared ``stable`` on the ledger: a
    record's tree is an i.i.d. coin from OS entropy, never a function of its
    values, so a record replaced in place (replace-one) stays in its tree and
    the forest costs its costliest tree on both relations (as
    ``DPRandomForestClassifier(sampling="disjoint")``).
    ``fit`` runs under ``calibrated_epsilon`` (``privet.learners._base``): if the
    ledger ever proves the plan above ``epsilon``, every step is scaled down
    until it does not (``calibrated_epsilon_`` keeps the value used).

    With ``n_ensembles = q > 1`` (Alg. 3) each ensemble uses ``max_features``
    random features and ``epsilon / q``, composed sequentially.

    Parameters
    ----------
    mode : {"batch_training", "batch_prediction", "subsample_aggregate", \
"disjoint_training"}, default="batch_training"
    epsilon : float, default=1.0
        Budget of one ``fit`` (training modes) or of one ``predict`` batch
        (prediction modes).
    n_trees : int, default=128
        tau, in total over the ensembles; at most 10,000 (2**70 built its trees' matrices
        until the memory ran out).
    max_depth : int, default=4
        h.
    n_ensembles : int, default=1
        q.
    max_features : int or None, default=None
        d_bar, the features per ensemble; None for all.
    strategy : {"optimized", "identity", "workload", "laplace"}, default="optimized"
        The matrix mechanism's strategy A. "laplace" is the paper's baseline:
        plain Laplace on the leaf counts with eps / tau per tree (batch
        training), Laplace on the votes with the batch's L1 sensitivity
        (batch prediction), or Dwork-Feldman subsample-and-aggregate
        (hard votes, eps / b per query).
    voting : {"auto", "weighted", "hard"}, default="auto"
        Training modes: sum the noisy leaf counts over trees (weighted, Alg. 3
        line 16) or one vote per tree (hard, the baselines' standard voting).
        "auto": hard for strategy="laplace" and disjoint training, weighted
        otherwise. Prediction modes are fixed by their mechanism.
    schema, ledger, public_domain, random_state
        As for every privet learner; ``random_state`` seeds the tree shapes,
        the feature subsets and the optimiser's start (never the privacy noise,
        nor the record-to-tree assignment of the disjoint modes, which is part of
        the privacy argument and drawn from fresh entropy).

    Attributes
    ----------
    ensembles_ : list of Ensemble
    leaf_values_ : list of ndarray
        Training modes: the released noisy leaf counts per ensemble.
    strategies_ : list of dict
        Per ensemble: the chosen strategy and the squared errors compared.
    timings_ : dict
        Seconds of optimisation, training, and prediction (last batch).
    privacy_spent_ : Guarantee
        What the ledger proves for this model's charges: the fit's, and in
        ``prediction`` mode also every batch of predictions so far (not the
        charges of other fits on the same ledger).
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    holds_private_data_ : bool
        True in ``batch_prediction`` and ``subsample_aggregate`` modes: the model
        keeps the exact leaf counts its predictions release with noise.
    ledger_, privacy_claim_, classes_, schema_, n_features_in_

    Notes
    -----
    Claimed guarantee: epsilon-DP (Thm. 5, 7; Alg. 3 by sequential composition
    over the q ensembles). The ledger proves the same from the mechanisms run:
    the matrix mechanism is Laplace noise on A D with L1 sensitivity ||A||_1
    (add/remove; twice that under replace-one), and in subsample-and-aggregate
    the data matrix is the leaf counts of disjoint trees, one record changing
    one leaf of one tree, so the sensitivity is the same ||A||_1.

    References
    ----------
    A. Tajima, J. Wu, A. Houmansadr, "Improving Private Random Forest
    Prediction Using Matrix Representation" (AAAI 2025), Alg. 1-3; McKenna et
    al., "Optimizing error of high-dimensional statistical queries under
    differential privacy", PVLDB 2018.
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "mode": [StrOptions(MODES)],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_trees": [Interval(Integral, 1, 10_000, closed="both")],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "n_ensembles": [Interval(Integral, 1, None, closed="left")],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "strategy": [StrOptions({"optimized", "identity", "workload", "laplace"})],
        "voting": [StrOptions({"auto", "weighted", "hard"})],
        "ledger": "no_validation",
    }

    def __init__(
        self,
        *,
        mode: str = "batch_training",
        epsilon: float = 1.0,
        n_trees: int = 128,
        max_depth: int = 4,
        n_ensembles: int = 1,
        max_features: int | None = None,
        strategy: str = "optimized",
        voting: str = "auto",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.mode = mode
        self.epsilon = epsilon
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.n_ensembles = n_ensembles
        self.max_features = max_features
        self.strategy = strategy
        self.voting = voting
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    # ----------------------------------------------------------------- plans
    def _check_shape(self, schema: Schema | None) -> None:
        split_trees(int(self.n_trees), int(self.n_ensembles))
        if schema is not None and self.max_features is not None:
            if self.max_features > schema.n_features:
                raise InvalidParameterError(
                    f"max_features (d_bar) = {self.max_features} is larger than the schema's "
                    f"{schema.n_features} features; pass max_features <= {schema.n_features} "
                    "(or None for all of them)."
                )
        if self.mode == "disjoint_training" and self.strategy != "laplace":
            raise InvalidParameterError(
                "mode='disjoint_training' is the Laplace baseline; pass strategy='laplace'."
            )

    @property
    def _is_prediction_mode(self) -> bool:
        return self.mode in ("batch_prediction", "subsample_aggregate")

    @property
    def holds_private_data_(self) -> bool:
        """True in the prediction modes: the fitted model keeps exact counts of the
        training rows, and each ``predict`` releases them with noise (charged). Such a
        model is a curator, not a release: keep it (and any file it is saved to) private."""
        return self._is_prediction_mode

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` charges, from the parameters and the public schema alone."""
        _validate_params(self)
        schema = schema if schema is not None else self.schema
        self._check_shape(schema)
        q, eps = int(self.n_ensembles), float(self.epsilon)
        what = {
            "batch_training": f"epsilon/q = {eps / q:.4g} per ensemble on its noisy leaf counts",
            "disjoint_training": f"epsilon = {eps:.4g} per tree on disjoint data (parallel)",
            "batch_prediction": "nothing at fit; epsilon per predict batch (prediction_plan)",
            "subsample_aggregate": "disjoint data per tree; epsilon per predict batch",
        }[self.mode]
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=what,
            claim=None if self._is_prediction_mode else Claim(eps, source=CLAIM_SOURCE),
        )
        plan.charge(PureDP(epsilon=0.0), mechanism="none", step=TREE_STEP)
        if self.mode == "batch_training":
            for i in range(q):
                plan.charge(
                    PureDP(epsilon=eps / q), mechanism=self._mech_name(), step=f"ensemble {i}"
                )
        elif self.mode in ("disjoint_training", "subsample_aggregate"):
            # stable: a record's tree is an i.i.d. coin from OS entropy, never its values
            # (see _fit_mode), so a record replaced in place stays in its tree
            part = plan.partition(int(self.n_trees), stable=True, label="tree")
            if self.mode == "disjoint_training":
                part.charge(PureDP(epsilon=eps), mechanism="laplace", step="leaf counts")
        return plan

    def prediction_plan(self) -> PrivacyPlan:
        """What one ``predict`` batch charges (prediction modes; nothing otherwise)."""
        _validate_params(self)
        q, eps = int(self.n_ensembles), float(self.epsilon)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=(
                f"one DP release of the batch's votes: epsilon/q = {eps / q:.4g} per ensemble"
                if self._is_prediction_mode
                else "post-processing of the released leaf counts (free)"
            ),
            claim=Claim(eps, source=CLAIM_SOURCE) if self._is_prediction_mode else None,
        )
        if self._is_prediction_mode:
            for i in range(q):
                plan.charge(
                    PureDP(epsilon=eps / q), mechanism=self._mech_name(), step=f"ensemble {i}"
                )
        return plan

    def _mech_name(self) -> str:
        return "laplace" if self.strategy == "laplace" else "matrix"

    def _relation_factor(self) -> float:
        return 1.0 if self.ledger_.relation is NeighbouringRelation.ADD_REMOVE else 2.0

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any) -> MatrixRandomForestClassifier:
        """Build the trees from the schema, then fit under the ledger's budget.

        Raises before reading data if the plan does not fit the budget.
        """
        _validate_params(self)
        self.schema_ = self._resolve_schema(X, y)
        self.privacy_plan(self.schema_)  # checks the shape against the schema, charges nothing
        scope = self._scope(float(self.epsilon))
        self._scope_ = scope
        caller = type(self).__name__
        rng = np.random.default_rng(self.random_state)
        schema = self.schema_
        d_bar = schema.n_features if self.max_features is None else int(self.max_features)
        timings = {"optimisation": 0.0, "training": 0.0, "prediction": 0.0}
        with (
            calibrated_epsilon(self, scope.ledger, schema) as plan,
            self.ledger_.reserve(plan, scope=scope, caller=caller) as res,
        ):
            scope.charge(PureDP(epsilon=0.0), mechanism="none", caller=caller, step=TREE_STEP)
            self.ensembles_ = build_forest(
                schema.domain_sizes,
                n_trees=int(self.n_trees),
                max_depth=int(self.max_depth),
                n_ensembles=int(self.n_ensembles),
                max_features=d_bar,
                rng=rng,
            )
            self._seed = int(rng.integers(2**31 - 1))
            self.strategies_ = [{} for _ in self.ensembles_]
            if self.mode == "batch_training" and self.strategy != "laplace":
                start = time.perf_counter()
                self._strategies = [self._training_strategy(i) for i in range(len(self.ensembles_))]
                timings["optimisation"] = time.perf_counter() - start
            start = time.perf_counter()
            codes, y_codes = self._prepare(X, y)  # reads private values
            self._fit_mode(scope, codes, y_codes)  # private draws: the privacy RNG only
            timings["training"] = time.perf_counter() - start
        self._fitted_common(schema)
        self.timings_ = timings
        self._spending = [res]  # this model's reservations: the fit, then prediction batches
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        self.privacy_claim_ = plan.claim
        return self

    def _training_strategy(self, i: int) -> Any:
        ens = self.ensembles_[i]
        a, errors, seconds, chosen = mx.choose_strategy(
            ens.paths, self.strategy, kind="training", seed=self._seed + i
        )
        self.strategies_[i] = {"chosen": chosen, "squared_errors": errors, "seconds": seconds}
        return a

    def _fit_mode(self, scope: Any, codes: np.ndarray, y: np.ndarray) -> None:
        k = self.schema_.n_classes
        q = len(self.ensembles_)
        eps_i = float(self.epsilon) / q
        caller = type(self).__name__
        rel = self.ledger_.relation
        factor = self._relation_factor()
        self.leaf_values_ = []
        self._private: list[np.ndarray] = []
        if self.mode in ("disjoint_training", "subsample_aggregate"):
            total = sum(e.n_trees for e in self.ensembles_)
            # each record to one tree, i.i.d. uniform. Part of the privacy argument (a removed
            # record must leave the others' trees unchanged in distribution), so it is drawn
            # from fresh OS entropy, never from random_state: a seeded draw is a function of
            # record positions, and removing a record would shift every later one.
            owner = recorder.privacy_rng().integers(total, size=codes.shape[0])
            parts = scope.partition([f"tree {g}" for g in range(total)], stable=True)
            g0 = 0
            for ens in self.ensembles_:
                leaves = leaf_index(ens, codes[:, list(ens.features)])
                counts = np.zeros((ens.n_leaves, k))
                noisy = np.zeros_like(counts)
                for t in range(ens.n_trees):
                    mine = owner == g0 + t
                    np.add.at(counts, (leaves[mine, t], y[mine]), 1.0)
                    rows = ens.tree_rows(t)
                    if self.mode == "disjoint_training":
                        lap = make_laplace(float(self.epsilon), sensitivity=factor, relation=rel)
                        noisy[rows] = lap(
                            counts[rows], scope=parts[g0 + t], caller=caller, step="leaf counts"
                        )
                    else:
                        parts[g0 + t].charge(
                            PureDP(epsilon=0.0),
                            mechanism="none",
                            caller=caller,
                            step="exact leaf counts, kept secret (released only by predict)",
                        )
                g0 += ens.n_trees
                if self.mode == "disjoint_training":
                    self.leaf_values_.append(noisy)
                else:
                    self._private.append(counts)
            return
        for i, ens in enumerate(self.ensembles_):
            sub = codes[:, list(ens.features)]
            if self.mode == "batch_prediction":
                self._private.append(mx.data_matrix(ens, sub, y, k))
                continue
            step = f"ensemble {i}: noisy leaf counts (Alg. 1)"
            if self.strategy == "laplace":
                counts = leaf_counts(ens, leaf_index(ens, sub), y, k)
                lap = make_laplace(eps_i, sensitivity=ens.n_trees * factor, relation=rel)
                self.leaf_values_.append(lap(counts, scope=scope, caller=caller, step=step))
            else:
                d_mat = mx.data_matrix(ens, sub, y, k)
                mech = MatrixMechanism(
                    workload=ens.paths, strategy=self._strategies[i], epsilon=eps_i, relation=rel
                )
                self.leaf_values_.append(mech(d_mat, scope=scope, caller=caller, step=step))

    # --------------------------------------------------------------- predict
    def _codes_for_predict(self, X: Any) -> np.ndarray:
        require_fitted(self, "ensembles_")
        return self._encode_X(self.schema_, X)

    def _votes(self, X: Any) -> np.ndarray:
        codes = self._codes_for_predict(X)  # public queries, checked against the schema
        if not self._is_prediction_mode:
            hard = self.voting == "hard" or (
                self.voting == "auto"
                and (self.strategy == "laplace" or self.mode == "disjoint_training")
            )
            vote = hard_votes if hard else weighted_votes
            return sum(
                vote(vals, leaf_index(ens, codes[:, list(ens.features)]))
                for ens, vals in zip(self.ensembles_, self.leaf_values_, strict=True)
            )
        plan = self.prediction_plan()
        with self.ledger_.reserve(plan, scope=self._scope_, caller=type(self).__name__) as res:
            start = time.perf_counter()
            self.timings_["optimisation"] = 0.0
            total = sum(
                self._release(i, codes[:, list(ens.features)])
                for i, ens in enumerate(self.ensembles_)
            )
            self.timings_["prediction"] = (
                time.perf_counter() - start - self.timings_["optimisation"]
            )
        self._spending.append(res)
        self.privacy_spent_ = self.ledger_.spent_by(self._spending)
        return total

    def _release(self, i: int, q_codes: np.ndarray) -> np.ndarray:
        """One ensemble's noisy votes for a batch of queries (Alg. 2 / S&A), charged."""
        ens = self.ensembles_[i]
        eps_i = float(self.epsilon) / len(self.ensembles_)
        caller, rel, factor = type(self).__name__, self.ledger_.relation, self._relation_factor()
        scope = self._scope_
        q_leaves = leaf_index(ens, q_codes)
        b = q_codes.shape[0]
        private = self._private[i]
        if self.mode == "batch_prediction":
            step = f"ensemble {i}: noisy votes of {b} queries (Alg. 2)"
            if self.strategy == "laplace":
                exact = weighted_votes(ens.paths.matmul(private), q_leaves)
                lap = make_laplace(eps_i, sensitivity=b * ens.n_trees * factor, relation=rel)
                return lap(exact, scope=scope, caller=caller, step=step)
            start = time.perf_counter()
            a_t = None
            if self.strategy == "optimized":  # data independent: tree shapes only
                a_t, *_ = mx.choose_strategy(
                    ens.paths, "optimized", kind="training", seed=self._seed + i
                )
            if ens.n_cells > mx.EXPLICIT_CELLS:
                # too many cells for an explicit OPT_p on W^T W: keep W implicit and use
                # the Kronecker strategy optimised for T (or the identity)
                w: Any = mx.ImplicitPredictionWorkload(ens, q_leaves)
                a = (
                    a_t
                    if a_t is not None
                    else KroneckerStrategy([IdentityStrategy(n) for n in ens.domain])
                )
                chosen = "optimised for T (OPT_x), W implicit" if a_t is not None else "identity"
                self.strategies_[i] = {"chosen": chosen, "squared_errors": {}}
            else:
                w = mx.prediction_workload(ens, q_leaves)
                extra = (
                    {"optimised for T (OPT_x)": a_t} if isinstance(a_t, KroneckerStrategy) else {}
                )
                a, errors, _, chosen = mx.choose_strategy(
                    w, self.strategy, kind="prediction", seed=self._seed + i, extra_candidates=extra
                )
                self.strategies_[i] = {"chosen": chosen, "squared_errors": errors}
            self.timings_["optimisation"] += time.perf_counter() - start
            mech = MatrixMechanism(workload=w, strategy=a, epsilon=eps_i, relation=rel)
            return mech(private, scope=scope, caller=caller, step=step)
        step = f"ensemble {i}: subsample-and-aggregate votes of {b} queries"
        if self.strategy == "laplace":  # Dwork & Feldman 2018: hard votes, eps / b per query
            votes = hard_votes(private, q_leaves)
            lap = make_laplace(eps_i, sensitivity=2.0 * b * factor, relation=rel)
            return lap(votes, scope=scope, caller=caller, step=step + " (Dwork-Feldman)")
        start = time.perf_counter()
        w = mx.leaf_query_matrix(ens, q_leaves)
        a, errors, _, chosen = mx.choose_strategy(
            w, self.strategy, kind="subsample", seed=self._seed + i
        )
        self.strategies_[i] = {"chosen": chosen, "squared_errors": errors}
        self.timings_["optimisation"] += time.perf_counter() - start
        mech = MatrixMechanism(workload=w, strategy=a, epsilon=eps_i, relation=rel)
        return mech(private, scope=scope, caller=caller, step=step)

    def predict(self, X: Any) -> np.ndarray:
        """Labels of the queries. In a prediction mode this is a charged DP release."""
        votes = self._votes(X)
        return self.classes_[np.argmax(votes, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Normalised clipped votes (a charged release in a prediction mode, like predict)."""
        votes = np.clip(self._votes(X), 0.0, None)
        total = votes.sum(axis=1, keepdims=True)
        k = votes.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, votes / np.where(total > 0, total, 1.0), 1.0 / k)

    def export_text(self, *, max_lines: int = 60) -> str:  # pragma: no cover - no single tree
        raise NotImplementedError("A matrix random forest has no single tree to print.")


_ = Ensemble
