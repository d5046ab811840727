"""The forest family's shared part: one reservation, k tree scopes, the vote (seed 000, App. D).

:class:`_BaseDPForest` owns ``fit``: the plan of k trees (disjoint subsets in a
partition, or Poisson subsamples amplified by the ledger), one reservation, each
tree grown in its own scope, and the majority vote.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from privet.data import Schema
from privet.errors import InvalidParameterError, NotFittedError
from privet.learners._base import BaseTreeClassifier, _validate_params
from privet.learners._params import Interval, StrOptions
from privet.learners._progress import advance
from privet.learners._trees.accounting import (
    ClaimRule,
    paper_claim,
    relation_of,
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
from privet.mechanisms import recorder

#: Most trees a forest fits: every tree is a training of its own (about 15-40 ms each on
#: Car and Adult, benchmarks/results/forest_scale.md: 10,000 take about 7 minutes), so
#: n_estimators=10**5 ran for half an hour. Refused above, before anything is charged.
MAX_ESTIMATORS = 10_000

DISJOINT_SOURCE = "seed 000, App. D (disjoint subsets, parallel composition)"


POISSON_SOURCE = "seed 000, App. D.1, Claim D.1 (k * gamma * epsilon)"


POISSON_NOTE = (
    "linearised amplification gamma*eps per tree (Thm. 8 of the paper's ref. [2] as cited); "
    "the exact bound ln(1 + gamma (e^eps - 1)) is larger"
)


class _BaseDPForest(BaseTreeClassifier):
    """Sampling, accounting and voting shared by the DP forests (seed 000, App. D).

    ``fit`` reserves the forest's plan once, draws every tree's subset (App. D
    disjoint subsets, or App. D.1 Poisson subsamples), then grows each tree in
    its own ledger scope; the plaintext vote is the majority of the trees'
    labels, ties to the lowest class index (``numpy.argmax``).
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, MAX_ESTIMATORS, closed="both")],
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

    def _calibration_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """One tree's plan, on all the records: what ``epsilon`` budgets.

        ``fit`` scales the trees' steps (:func:`~privet.learners._base.calibrated_epsilon`)
        only as far as one tree needs to cost at most ``epsilon`` on the ledger's
        relation (an exponential-leaf extra tree under replace-one: 2 epsilon). A
        stable partition costs its costliest part, so a disjoint forest then costs at
        most ``epsilon``; a Poisson forest costs its k amplified trees in sequence,
        more than ``epsilon`` (App. D.1), and is not scaled down to it.
        """
        self._validate()
        schema = schema if schema is not None else self.schema
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=f"one tree at epsilon={float(self.epsilon):g}",
            claim=Claim(float(self.epsilon), source=DISJOINT_SOURCE),
        )
        self._plan_tree(plan, schema, self._claim_rule())
        return plan

    def _fit_scope(self, plan: PrivacyPlan) -> Scope:
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
            # A uniform tree per row position from secret coins, like the Poisson coins.
            # From the public random_state, removing one record would shift every later
            # row to the draw of the row before it, so most trees would change (no
            # parallel composition), and the draws it used would make the extra trees'
            # public splits depend on the row count. A replaced record keeps its coin.
            assignment = secure_rng().integers(k, size=n)
            parts = scope.partition([f"tree {t}" for t in range(k)], stable=True)
            return [(part, np.flatnonzero(assignment == t)) for t, part in enumerate(parts)]
        g = self._rate()
        if self._secret_sampling():  # every tree gets all rows; the coins are drawn in MPC
            return [(scope.subsample(g, "poisson"), np.arange(n)) for _ in range(k)]
        out = []
        for _ in range(k):
            sub = scope.subsample(g, "poisson")
            out.append((sub, np.flatnonzero(recorder.poisson_sample(n, g))))
        return out

    def _secret_sampling(self) -> bool:
        """Poisson subsamples drawn inside MPC (the MPC backends), not on the host."""
        return self.sampling == "poisson" and getattr(self, "backend", "reference") != "reference"

    def fit(self, X: Any, y: Any) -> _BaseDPForest:
        """Fit the k trees under one reservation; raises before reading data if it cannot."""
        self._validate()
        self._check_before_data()
        return self._fit_reserved(X, y)

    def _train(self, scope: Scope, codes: np.ndarray, y_codes: np.ndarray) -> None:
        """Every tree's scope and rows drawn first, then each tree grown in its scope."""
        rng = check_random_state(self.random_state)
        claim = self._claim_rule()
        subsets = self._subsets(scope, codes.shape[0], rng)
        self._check_subsets(subsets)
        fitted = []
        for sc, rows in subsets:
            fitted.append(self._grow_tree(sc, codes, y_codes, rows, claim, rng))
            advance(len(fitted), len(subsets), "trees")  # a progress bar's step
        self._store(fitted)

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
