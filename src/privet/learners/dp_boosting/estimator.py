"""``DPGradientBoostingClassifier``: privet's own DP boosted trees (issue 18)."""

from __future__ import annotations

import secrets
from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._base import BaseTreeClassifier, _validate_params, require_fitted
from privet.learners._params import Interval
from privet.learners.dp_boosting.binning import default_n_trees, feature_schedule, n_leaves
from privet.learners.dp_boosting.booster import (
    Loss,
    Tree,
    base_score,
    base_sigma_ratio,
    boost,
    calibrate_sigma,
    count_mechanism,
    noise_enabled,
    noisy_class_counts,
    plan_base,
    plan_trees,
    replace_one_sensitivity,
    sensitivity,
)
from privet.ledger import Guarantee, Ledger, NeighbouringRelation, PrivacyPlan, Scope
from privet.mechanisms import GaussianMechanism

MAX_LEAVES = 1 << 16
"""Largest tree (in leaves) a fit accepts."""


def _secret_rng() -> np.random.Generator:
    """Randomness for the Poisson row samples: OS entropy, never ``random_state``.

    Amplification by subsampling needs the sample to be secret; a sample
    drawn from a seed the adversary may know would void it.
    """
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))


class DPGradientBoostingClassifier(BaseTreeClassifier):
    """Gradient-boosted shallow trees under (epsilon, delta)-DP, accounted by the ledger.

    Each tree splits on ``max_depth`` features chosen without looking at the
    data (shuffled passes over the public schema's features) and on every
    public bin of each, so a tree's leaves are the cells of those features'
    domains. Per leaf, the sum of clipped gradients and the sum of hessians
    are released with Gaussian noise (OpenDP's sampler), and the leaf value is
    a regularised Newton step, shrunk by ``learning_rate``. Only the leaf sums
    cost budget; the tree shapes are public. Binary targets use the logistic
    loss, more classes the softmax loss (one tree with a vector per leaf per
    round).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit`` (with ``delta``).
    delta : float, default=1e-5
        The delta of the (epsilon, delta) guarantee; must be > 0 (Gaussian noise).
    n_estimators : int or None, default=None
        Number of trees; ``None`` is two passes over the schema's features,
        ``2 * ceil(n_features / max_depth)`` (24 on Adult).
    max_depth : int, default=1
        Features per tree. 1 gives an additive model (DP-EBM's shape), which
        spends the budget best on Adult-sized data; 2 or 3 add interactions.
    learning_rate : float, default=0.7
        Shrinkage of every leaf value.
    subsample : float, default=1.0
        Poisson row-sampling rate per tree (amplified by the ledger); see Notes.
    clip : float, default=1.0
        L2 bound on a record's gradient vector (1 is no clipping for the
        logistic loss, whose gradient lies in [-1, 1]).
    schema : privet.data.Schema or None
        Public attribute domains and bins (required unless ``public_domain="infer"``).
    ledger : Ledger, Scope or None
        Where ``fit`` charges; ``None`` makes a ledger with budget (epsilon, delta).
    public_domain : {"schema", "infer"}, default="schema"
    random_state : int, Generator or None
        Seeds the tree shapes (feature order) only. The privacy noise (OpenDP)
        and the Poisson row samples (OS entropy: amplification needs a secret
        sample) are never seeded.

    Attributes
    ----------
    trees_ : list of Tree
    sigma_ : float
        Gaussian noise standard deviation per released sum.
    n_estimators_ : int
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        What the ledger proves for this fit.
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    classes_, schema_, n_features_in_

    Notes
    -----
    Accounting: every leaf of every tree is one ``Gaussian`` charge in its
    leaf scope; a tree's leaves are a ``scope.partition``. Under replace-one
    neighbours a record replaced inside a leaf moves its gradient by up to
    ``2 clip``, so each tree's leaves are one ``Gaussian`` release in the
    tree's scope, with that L2 sensitivity. Trees are charged in
    sequence; the ledger composes the Gaussian charges (Gaussian DP, exact) and converts the
    total to (epsilon, delta). ``sigma_`` is the smallest noise whose plan the
    ledger proves within (epsilon, delta) (bisection on ``Ledger.plan_cost``).
    With ``subsample < 1`` each tree sits in ``scope.subsample(rate,
    "poisson")``: a tree's leaves are Gaussians in parallel, so the ledger
    prices it as a sampled Gaussian in Rényi DP (Mironov, Talwar & Zhang 2019)
    and less noise per leaf fits the budget (sigma 7.5 instead of 13.2 for 10
    trees on Car at rate 0.5, epsilon 1). Each tree then sees fewer rows, so
    on small data it rarely pays in accuracy; it is off by default.

    References
    ----------
    Nori, Caruana, Chen, Koch & Wang, "Accuracy, Interpretability, and
    Differential Privacy via Explainable Boosting", ICML 2021 (DP-EBM).
    Maddock, Cormode, Wang, Maple & Jha, "Federated Boosted Decision Trees with
    Differential Privacy", CCS 2022. Kaiser et al., "S-BDT: Distributed
    Differentially Private Boosted Decision Trees", 2023.
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_estimators": [Interval(Integral, 1, None, closed="left"), None],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "clip": [Interval(Real, 0, None, closed="neither")],
        "ledger": "no_validation",  # checked in _validate_params: Ledger, Scope or None
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        n_estimators: int | None = None,
        max_depth: int = 1,
        learning_rate: float = 0.7,
        subsample: float = 1.0,
        clip: float = 1.0,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.subsample = subsample
        self.clip = clip
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    # -- plan --------------------------------------------------------------------
    def _relation(self) -> NeighbouringRelation:
        led = getattr(self.ledger, "ledger", self.ledger)
        return led.relation if led is not None else NeighbouringRelation.ADD_REMOVE

    def _shapes(self, schema: Schema | None) -> list[tuple[int, ...]]:
        """Tree features from the schema and ``random_state`` (no data)."""
        n_feat = schema.n_features if schema is not None else 1
        n_trees = self.n_estimators or default_n_trees(n_feat, self.max_depth)
        return feature_schedule(n_feat, n_trees, self.max_depth, self._rng(0))

    def _rng(self, stream: int) -> np.random.Generator:
        rs = self.random_state
        if isinstance(rs, np.random.Generator):
            rs = int(rs.integers(2**32))  # note: consumes the caller's generator
        elif isinstance(rs, np.random.RandomState):
            rs = int(rs.randint(2**31))
        seq = np.random.SeedSequence(rs)
        return np.random.default_rng(seq.spawn(stream + 1)[stream])

    def _mechanism(self, sigma: float, n_outputs: int) -> GaussianMechanism:
        """One leaf's release (add/remove), or one tree's leaves together (replace-one)."""
        relation = self._relation()
        of = sensitivity if relation is NeighbouringRelation.ADD_REMOVE else replace_one_sensitivity
        sens = of(float(self.clip), Loss(n_outputs))
        return GaussianMechanism(sigma=sigma, sensitivity=sens, relation=relation)

    def _count_mechanism(self, sigma: float, n_trees: int, n_out: int) -> GaussianMechanism:
        """The noisy class counts behind the base score, at ``base_sigma_ratio * sigma``."""
        tree = self._mechanism(sigma, n_out)
        count = count_mechanism(1.0, self._relation())
        ratio = base_sigma_ratio(n_trees, tree.sensitivity, count.sensitivity)
        return count_mechanism(ratio * sigma, self._relation())

    def _plan(
        self,
        sigma: float,
        shapes: list[tuple[int, ...]],
        sizes: tuple[int, ...],
        n_out: int,
        *,
        count_sigma: float | None = None,
        subsample: float | None = None,
    ) -> PrivacyPlan:
        """The plan with noise ``sigma`` per leaf; the class counts get the noise tied to
        ``count_sigma`` (default: ``sigma``); the trees' rate is ``subsample`` (default:
        the parameter)."""
        rate = float(self.subsample) if subsample is None else subsample
        tie = sigma if count_sigma is None else count_sigma
        counts = self._count_mechanism(tie, len(shapes), n_out)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            delta=float(self.delta),  # reserved at the fit's delta, not the whole budget's
            description=(
                f"noisy class counts (sigma={counts.sigma:.4g}) for the base score, then "
                f"{len(shapes)} trees in sequence, leaves of a tree in parallel; one Gaussian "
                f"(sigma={sigma:.4g}) per leaf on (sum g, sum h); composed by the ledger"
            ),
        )
        plan_base(plan, counts, max(2, n_out))
        leaves = [n_leaves(f, sizes) for f in shapes]
        return plan_trees(plan, self._mechanism(sigma, n_out), leaves, rate)

    def _calibrated(
        self, schema: Schema | None, shapes: list[tuple[int, ...]] | None = None
    ) -> tuple[float, PrivacyPlan, float]:
        """``(sigma, plan, count_sigma)``: the noise per leaf, the plan, and the trees'
        noise the class counts' noise is tied to (``sigma`` when ``subsample == 1``).

        With ``subsample < 1`` the counts, on all rows, keep the noise they get in the
        plan without subsampling (their 30% share of it); tied to the subsampled trees'
        smaller sigma instead, they took most of the budget (Adult, eps = 1, rate 0.25:
        the counts alone cost about 0.9 of it).
        """
        _validate_params(self)
        if schema is None:
            sizes, n_out, n_feat = (2,), 1, 1
        else:
            sizes, n_feat = schema.domain_sizes, schema.n_features
            n_out = 1 if schema.n_classes == 2 else schema.n_classes
        shapes = self._shapes(schema) if shapes is None else shapes
        if n_feat == 0:  # pragma: no cover - Schema needs a feature
            raise InvalidParameterError("The schema has no features to split on.")
        widest = max(n_leaves(f, sizes) for f in shapes)
        if widest > MAX_LEAVES:
            raise InvalidParameterError(
                f"{type(self).__name__}: max_depth={self.max_depth} gives a tree with "
                f"{widest:,} leaves (the product of its features' public bins), over the "
                f"limit {MAX_LEAVES:,}; every leaf gets noise, so such leaves are pure noise. "
                "Lower max_depth (1 or 2 is usual)."
            )
        budget = Guarantee(float(self.epsilon), float(self.delta))

        tie: float | None = None
        if float(self.subsample) < 1:
            tie = calibrate_sigma(
                lambda s: self._plan(s, shapes, sizes, n_out, subsample=1.0),
                budget,
                self._relation(),
            )

        def make(sigma: float) -> PrivacyPlan:
            return self._plan(sigma, shapes, sizes, n_out, count_sigma=tie)

        sigma = calibrate_sigma(make, budget, self._relation())
        return sigma, make(sigma), (sigma if tie is None else tie)

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone."""
        schema = schema if schema is not None else self.schema
        return self._calibrated(schema)[1]

    # -- fit -----------------------------------------------------------------------
    def _scope_for_fit(self) -> Scope:
        led = self.ledger
        if led is None:
            budget = Guarantee(float(self.epsilon), float(self.delta))
            self.ledger_ = Ledger(budget=budget, dataset="training data")
            return self.ledger_.root
        if isinstance(led, Scope):
            self.ledger_ = led.ledger
            return led
        self.ledger_ = led
        return led.root

    def fit(self, X: Any, y: Any) -> DPGradientBoostingClassifier:
        """Fit under the ledger's budget; raises BudgetExceededError before reading data."""
        _validate_params(self)
        schema = self._resolve_schema(X, y)
        shapes = self._shapes(schema)  # once: a Generator random_state is consumed
        sigma, plan, count_tie = self._calibrated(schema, shapes)
        self.schema_ = schema
        scope = self._scope_for_fit()
        n_out = 1 if schema.n_classes == 2 else schema.n_classes
        loss = Loss(n_out)
        with self.ledger_.reserve(plan, scope=scope, caller=type(self).__name__) as res:
            codes, y_codes = self._prepare(X, y)
            counts = noisy_class_counts(
                scope,
                y_codes,
                schema.n_classes,
                self._count_mechanism(count_tie, len(shapes), n_out),
                caller=type(self).__name__,
            )
            self.base_score_ = base_score(counts, loss)
            self.trees_ = boost(
                scope,
                codes,
                y_codes,
                schedule=shapes,
                domain_sizes=schema.domain_sizes,
                loss=loss,
                mechanism=self._mechanism(sigma, n_out),
                clip=float(self.clip),
                learning_rate=float(self.learning_rate),
                subsample=float(self.subsample),
                rng=_secret_rng(),
                caller=type(self).__name__,
                base=self.base_score_,
            )
        self._fitted_common(schema)
        self.sigma_ = sigma
        self.n_estimators_ = len(self.trees_)
        self.noise_disabled_for_tests_ = not noise_enabled()
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        return self

    # -- predict -------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores (logits): ``(n,)`` for two classes, ``(n, n_classes)`` otherwise."""
        F = self._raw(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def _raw(self, X: Any) -> np.ndarray:
        require_fitted(self, "trees_")
        codes = self._encode_X(self.schema_, X)
        sizes = self.schema_.domain_sizes
        base = np.asarray(getattr(self, "base_score_", np.zeros(1)), float)
        F = np.tile(base, (codes.shape[0], 1))
        for tree in self.trees_:
            F += tree.predict(codes, sizes)
        return F

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from the released trees (post-processing only)."""
        F = self._raw(X)
        return Loss(F.shape[1]).proba(F)

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


__all__ = ["DPGradientBoostingClassifier", "Tree"]
