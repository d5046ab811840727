"""The boosting loop: clipped gradient/hessian sums per leaf, Gaussian noise, Newton steps.

For each tree ``t`` (features from :mod:`.binning`, chosen without data):

1. every record's gradient ``g`` (the logistic or softmax loss's derivative in
   the current scores) is clipped to L2 norm ``clip``; its hessian diagonal
   ``h`` is bounded by ``h_bound`` (1/4 for the logistic loss, 1/2 for softmax:
   sum_k (p_k (1 - p_k))^2 <= 1/4 sum_k p_k (1 - p_k) <= 1/4);
2. per leaf the vector ``(sum g, sum h)`` is released with N(0, sigma^2)
   noise per coordinate. A record lies in one leaf, so under add/remove
   neighbours the leaves are a partition of the tree's scope and each leaf's
   release has L2 sensitivity ``sqrt(clip^2 + h_bound^2)``. Under replace-one
   a record replaced *inside* a leaf moves its gradient sum by up to
   ``2 clip``, more than two leaves' add/remove changes, so the tree's
   leaves are one release in the tree's scope, with the L2 sensitivity
   :func:`replace_one_sensitivity` of the whole (leaves x 2K) array;
3. the leaf value is the regularised Newton step
   ``-G / (max(H, 0) + lambda)`` (Maddock et al. 2022, Eq. 2; Chen & Guestrin
   2016, Eq. 5), clipped to ``[-max_leaf, max_leaf]``, shrunk by the learning
   rate. ``lambda = sigma T^p + 1`` (:func:`leaf_lambda`; p = 1/8 for two
   classes, 1/4 for more) grows with the
   noise and the number of trees, so a leaf whose noisy hessian is small
   relative to the noise moves little.

Trees are sequential charges in the fit's scope; with ``subsample < 1`` each
tree is grown on a Poisson sample drawn at ``scope.subsample(rate)``. The
ledger composes everything (Gaussian DP for the Gaussian charges; Rényi DP of
the sampled Gaussian for trees on Poisson samples) and converts to
(epsilon, delta); sigma is the smallest value whose *plan* the ledger proves
within the budget (:func:`calibrate_sigma`, bisection on the ledger's own
plan cost), never a formula of this module.

Two rules keep the model no worse than the majority class when the noise
dominates (issue 34):

* **A base score from noisy class counts.** Before the trees, the class
  histogram is released with Gaussian noise (:func:`plan_base`; a record is
  counted in one class, so under add/remove the classes are a partition and
  each count has sensitivity 1; under replace-one the histogram is one
  release of L2 sensitivity sqrt(2)). The scores start at the log of the
  smoothed noisy class frequencies (:func:`base_score`). Without it the
  scores start at 0 (probability 1/2, or 1/K), the first trees spend their
  budget learning the intercept, and when their leaves are mostly noise the
  threshold falls on the wrong side of an imbalanced prior.
* **Leaves shrunk for the known noise.** A tree's noisy gradient sums
  ``G_j + N(0, sigma^2)`` are multiplied, per output, by a positive-part
  James-Stein factor ``max(0, 1 - c L sigma^2 / sum_j Gn_j^2)`` over its
  ``L`` leaves (Efron & Morris 1973; ``c`` = :data:`SHRINK` or
  :data:`SHRINK_SOFTMAX`), about the
  fraction of the leaves' spread that the noise does not explain, and the
  Newton regulariser grows as ``sigma T^p`` (:func:`leaf_lambda`).
  Pure-noise trees (no signal, or a signal far below sigma) then add little
  to the scores, instead of a random walk of about
  ``learning_rate * sqrt(T)`` logits that flips predictions away from the
  base score. Both rules read only released values and sigma (public), so
  they are post-processing. The constants were chosen on datasets that
  ``docs/dp_boosting.md``'s results do not report (see there).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from privet.errors import InvalidParameterError, PrivetError
from privet.learners._progress import advance
from privet.learners.dp_boosting.binning import leaf_index, n_leaves
from privet.ledger import (
    Guarantee,
    Ledger,
    NeighbouringRelation,
    PrivacyPlan,
    Scope,
    best_guarantee,
)
from privet.ledger.composition import gdp_delta
from privet.mechanisms import GaussianMechanism

MAX_LEAF = 4.0
"""Bound on one leaf value (in logits) before shrinkage."""

_state = {"noise": True}


@contextlib.contextmanager
def noise_disabled_for_tests() -> Iterator[None]:
    """Testing hook: boost without noise (charges unchanged). Only under pytest.

    A model fitted inside this block is NOT private; the hook refuses to run
    outside a pytest test (``PYTEST_CURRENT_TEST`` unset) so that no user code
    can switch the noise off by accident.
    """
    if "PYTEST_CURRENT_TEST" not in os.environ:
        raise PrivetError(
            "noise_disabled_for_tests() is a testing hook and runs only inside a pytest "
            "test; a model fitted without noise is not private."
        )
    _state["noise"] = False
    try:
        yield
    finally:
        _state["noise"] = True


def noise_enabled() -> bool:
    return _state["noise"]


@dataclass(frozen=True)
class Loss:
    """Logistic (``n_outputs == 1``) or softmax loss on ``n_outputs`` scores."""

    n_outputs: int

    @property
    def h_bound(self) -> float:
        return 0.25 if self.n_outputs == 1 else 0.5

    def proba(self, F: np.ndarray) -> np.ndarray:
        if self.n_outputs == 1:
            p = 1.0 / (1.0 + np.exp(-np.clip(F[:, 0], -50, 50)))
            return np.column_stack([1.0 - p, p])
        Z = F - F.max(axis=1, keepdims=True)
        E = np.exp(Z)
        return E / E.sum(axis=1, keepdims=True)

    def grad_hess(self, F: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P = self.proba(F)
        if self.n_outputs == 1:
            p = P[:, 1:2]
            return p - (y == 1)[:, None], p * (1.0 - p)
        Y = np.zeros_like(P)
        Y[np.arange(len(y)), y] = 1.0
        return P - Y, P * (1.0 - P)


def clip_rows(g: np.ndarray, bound: float) -> np.ndarray:
    """Scale each row to L2 norm at most ``bound``."""
    norms = np.sqrt((g * g).sum(axis=1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > bound, bound / np.where(norms > 0, norms, 1.0), 1.0)
    return g * scale


def sensitivity(clip: float, loss: Loss) -> float:
    """L2 sensitivity of one leaf's (sum g, sum h) under adding or removing a record."""
    return math.hypot(clip, loss.h_bound)


def replace_one_sensitivity(clip: float, loss: Loss) -> float:
    """L2 sensitivity of a whole tree's leaf sums ``(sum g, sum h)`` under replacing a record.

    Inside one leaf, ``g`` moves by at most ``2 clip`` and ``h`` (entries in
    ``[0, h_bound]``, L2 norm at most ``h_bound``) by at most ``h_bound`` for one
    output, ``sqrt(2) h_bound`` for several (non-negative vectors); across two
    leaves each changes by at most :func:`sensitivity`, ``sqrt(2)`` of it in all.
    """
    dh = loss.h_bound * (1.0 if loss.n_outputs == 1 else math.sqrt(2.0))
    return max(math.hypot(2.0 * clip, dh), math.sqrt(2.0) * sensitivity(clip, loss))


BASE_SHARE = 0.3
"""Share of the plan's Gaussian-DP mu^2 spent on the noisy class counts (the base score)."""


def base_sigma_ratio(n_trees: int, tree_sensitivity: float, count_sensitivity: float) -> float:
    """``sigma_0 / sigma``: noise of the class counts relative to a tree's leaves.

    Chosen so that, in Gaussian DP (mu = sensitivity / sigma, composed in squares),
    the counts take :data:`BASE_SHARE` of the total mu^2 and the ``n_trees`` trees
    the rest: ``mu_0^2 = BASE_SHARE / (1 - BASE_SHARE) * n_trees * mu_tree^2``. A
    data-independent rule (it reads the plan only); the ledger proves the total.
    """
    trees_mu2 = n_trees * tree_sensitivity**2  # times 1 / sigma^2
    return count_sensitivity / math.sqrt(BASE_SHARE / (1.0 - BASE_SHARE) * trees_mu2)


def count_mechanism(sigma0: float, relation: NeighbouringRelation) -> GaussianMechanism:
    """The class counts' release: one count per class (add/remove: a partition of the
    records, sensitivity 1 per count), or the whole histogram as one release
    (replace-one: two counts move by 1, L2 sensitivity sqrt(2))."""
    sens = 1.0 if relation is NeighbouringRelation.ADD_REMOVE else math.sqrt(2.0)
    return GaussianMechanism(sigma=sigma0, sensitivity=sens, relation=relation)


def plan_base(plan: PrivacyPlan, mechanism: GaussianMechanism, n_classes: int) -> PrivacyPlan:
    """Add the class-count charges (the base score) to ``plan``."""
    whole = mechanism.relation is NeighbouringRelation.REPLACE_ONE
    node = plan if whole else plan.partition(n_classes, label="classes")
    node.charge(mechanism.entry(), mechanism="gaussian", step="class counts (base score)")
    return plan


def noisy_class_counts(
    scope: Scope,
    y: np.ndarray,
    n_classes: int,
    mechanism: GaussianMechanism,
    *,
    caller: str,
) -> np.ndarray:
    """The class histogram with Gaussian noise, charged to ``scope`` (see :func:`plan_base`)."""
    counts = np.bincount(y, minlength=n_classes).astype(float)
    step = "class counts (base score)"
    if mechanism.relation is NeighbouringRelation.REPLACE_ONE:
        noisy = np.asarray(mechanism(counts, scope=scope, caller=caller, step=step), float)
    else:
        parts = scope.partition(n_classes)
        released = mechanism.release_many(list(counts), parts, caller=caller, step=step)
        noisy = np.asarray(released, float)
    return noisy if noise_enabled() else counts


def base_score(noisy_counts: np.ndarray, loss: Loss) -> np.ndarray:
    """Initial scores from noisy class counts: log of the smoothed frequencies
    (add-one, negative noisy counts read as 0); the logit of class 1 for two
    classes, the log-probabilities for more (softmax is shift-invariant)."""
    freq = np.maximum(np.asarray(noisy_counts, float), 0.0) + 1.0
    logp = np.log(freq / freq.sum())
    if loss.n_outputs == 1:
        return np.array([logp[1] - logp[0]])
    return logp


SHRINK = 1.25
"""Multiple ``c`` of the expected noise energy ``d sigma^2`` that :func:`shrink_for_noise`
removes for the logistic loss (one output). 1.5 until the gbtsmall change (issue 34's
small-data cells): with the Newton regulariser of :func:`leaf_lambda` on top, it shrank
small tables' trees twice and left their scores at the prior."""

SHRINK_SOFTMAX = 1.5
"""The same multiple for the softmax loss (several outputs); unchanged: 1.25 let
noise-only trees pull the 3-class noise-only check 0.003-0.01 below its majority."""


def shrink_for_noise(G: np.ndarray, sigma: float) -> np.ndarray:
    """Denoised gradient sums of one tree's leaves (``G``: ``(L, K)`` noisy sums).

    For softmax (``K > 1``) the true sums of a leaf add up to 0 over the classes
    (each row's ``p - y`` does, and clipping scales a row as a whole), so the
    noise along the all-ones direction is removed first (a projection, which
    keeps ``L (K - 1)`` of the ``L K`` noise dimensions). Then all entries are
    multiplied by the positive-part James-Stein factor
    ``max(0, 1 - c d sigma^2 / ||G||^2)``, ``d`` the noise dimensions left
    and ``c`` = :data:`SHRINK` (logistic) or :data:`SHRINK_SOFTMAX` (Efron &
    Morris 1973).
    """
    G = np.asarray(G, float)
    dims = G.size
    if G.shape[1] > 1:
        G = G - G.mean(axis=1, keepdims=True)
        dims = G.shape[0] * (G.shape[1] - 1)
    if sigma <= 0.0:
        return G
    energy = float((G * G).sum())
    c = SHRINK if G.shape[1] == 1 else SHRINK_SOFTMAX
    factor = 1.0 - c * dims * sigma * sigma / energy
    return G * min(1.0, max(0.0, factor))


LAMBDA_POWER = 0.125
"""Exponent of the number of trees in :func:`leaf_lambda` for the logistic loss."""

LAMBDA_POWER_SOFTMAX = 0.25
"""The same exponent for the softmax loss."""


def leaf_lambda(sigma: float, n_trees: int, n_outputs: int = 1) -> float:
    """Newton regulariser ``lambda = sigma * T ** p + 1`` of every leaf.

    ``p`` = :data:`LAMBDA_POWER` (1/8) for the logistic loss, :data:`LAMBDA_POWER_SOFTMAX`
    (1/4) for softmax. A leaf whose hessian sum is small next to the noise moves the
    score by about ``learning_rate * Z / T ** p`` (Z standard normal, before the
    James-Stein factor of :func:`shrink_for_noise`), so ``T`` such trees add noise of
    about ``learning_rate * T ** (1/2 - p)`` logits, where ``lambda = sigma + 1``
    (before issue 34) let them add ``learning_rate * sqrt(T)``. Leaves with many rows
    (hessian sum well above ``lambda``) keep their Newton step. Chosen on datasets
    that ``docs/dp_boosting.md``'s results do not report: 1/2 shrank the steps of
    small datasets' leaves too much, 0 let the noise of small budgets through (the
    noise-only checks fell 0.01-0.015 below their majority), and for two classes 1/4
    (with the James-Stein factor 1.5) left small tables' scores at the prior (wine
    class 0 against the rest, 142 rows, eps 2: accuracy 0.681 = its majority; 1/8
    with factor 1.25: 0.761). Data-independent: sigma and T come from the plan.
    """
    power = LAMBDA_POWER if n_outputs == 1 else LAMBDA_POWER_SOFTMAX
    return sigma * max(1, n_trees) ** power + 1.0


def plan_trees(
    plan: PrivacyPlan,
    mechanism: GaussianMechanism,
    leaves: Sequence[int],
    subsample: float,
) -> PrivacyPlan:
    """Add the charges of the trees: one Gaussian per leaf, leaves in parallel
    (add/remove), or one Gaussian over all of a tree's leaves (replace-one)."""
    whole = mechanism.relation is NeighbouringRelation.REPLACE_ONE
    for t, n in enumerate(leaves):
        node = (
            plan.subsample(subsample, "poisson", label=f"tree {t} sample")
            if subsample < 1
            else plan
        )
        part = node if whole else node.partition(max(int(n), 1), label=f"tree {t} leaves")
        part.charge(mechanism.entry(), mechanism="gaussian", step=f"tree {t}: leaf (G, H)")
    return plan


CALIBRATION_TOLERANCE = 1e-9
"""Relative width of the bracket :func:`calibrate_sigma` returns the top of."""


def gaussian_candidate(
    make_plan: Callable[[float], PrivacyPlan],
    budget: Guarantee,
    relation: NeighbouringRelation,
) -> float | None:
    """The sigma at which an all-Gaussian plan's Gaussian-DP view meets ``budget``, or None.

    Composition of Gaussian releases is exact in mu-GDP (Dong, Roth & Su 2022,
    Cor. 3.3; a partition's parallel parts compose as their maximum), so a plan
    whose every charge is a Gaussian with noise proportional to ``sigma`` (and no
    subsampling) is ``mu``-GDP with ``mu^2 = mu2(1) / sigma^2``, and ``mu``-GDP is
    exactly ``(eps, delta(eps))``-DP with Cor. 2.13's ``delta(eps)``. Solving
    ``delta(epsilon; mu) = delta`` for ``mu`` gives sigma in closed form (one
    root of a monotone function). Only a *candidate*: :func:`calibrate_sigma`
    accepts it only if the ledger (PLD and every other view) proves the plan at
    it within the budget and refuses it one tolerance step below. ``None`` when
    the plan holds anything else (subsampled trees, non-Gaussian charges).
    """
    relation = NeighbouringRelation(relation)  # a string prices the views as the ledger does
    eps, delta = float(budget.epsilon), float(budget.delta)
    if not (math.isfinite(eps) and eps > 0.0 and 0.0 < delta < 1.0):
        return None
    cost1 = make_plan(1.0).cost(relation, delta=delta)
    cost2 = make_plan(2.0).cost(relation, delta=delta)
    gaussian_only = (
        cost1.mu2 > 0.0
        and math.isfinite(cost1.mu2)
        and cost1.eps_ng == 0.0
        and cost1.delta_ng == 0.0
    )
    # the plan's mu must scale as 1/sigma (noise proportional to sigma everywhere)
    if not gaussian_only or not math.isclose(cost2.mu2 * 4.0, cost1.mu2, rel_tol=1e-12):
        return None

    def excess(log_mu: float) -> float:  # increasing in mu
        return math.log(max(gdp_delta(math.exp(log_mu), eps), 1e-300)) - math.log(delta)

    lo, hi = math.log(1e-6), math.log(1e3)
    if excess(lo) > 0.0 or excess(hi) < 0.0:
        return None
    log_mu = brentq(excess, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=200)
    return math.sqrt(cost1.mu2) / math.exp(log_mu) * (1.0 + CALIBRATION_TOLERANCE / 4.0)


def calibrate_sigma(
    make_plan: Callable[[float], PrivacyPlan],
    budget: Guarantee,
    relation: NeighbouringRelation,
) -> float:
    """Smallest sigma (to :data:`CALIBRATION_TOLERANCE`, relative) whose plan the ledger
    proves within ``budget``.

    What counts is :meth:`Ledger.plan_cost`, the ledger's own composition and
    conversion: the smallest of its accountants' views of the plan's composed
    cost (basic, zCDP, Gaussian DP, Rényi DP; cheap) and of its PLD accountant
    (a convolution per distinct release; about 90% of a small fit's CPU when
    every bisection step asked it, issue 34). Since the views alone are an upper
    bound on the ledger's figure, the search runs on them first (from the closed
    form of :func:`gaussian_candidate` where the plan is all-Gaussian), and the
    ledger is asked twice: the plan at the result must fit and the plan one
    tolerance step below must not. Then the result is within the tolerance of the
    smallest sigma the ledger accepts, as a bisection on the ledger itself would
    give. If the ledger accepts less noise than the views (the PLD beats them:
    subsampled trees), the bisection runs on the ledger, below the views' result.
    """
    relation = NeighbouringRelation(relation)  # a string prices the views as the ledger does
    ledger = Ledger(budget=budget, relation=relation)
    delta = float(budget.delta)

    def fits(sigma: float) -> bool:
        return ledger.plan_cost(make_plan(sigma)).fits_in(budget)

    def views_fit(sigma: float) -> bool:
        cost = make_plan(sigma).cost(relation, delta=delta)
        return best_guarantee(cost, delta).guarantee.fits_in(budget)

    tol = CALIBRATION_TOLERANCE
    candidate = gaussian_candidate(make_plan, budget, relation)
    upper = None
    if candidate is not None:
        lo, hi = candidate / (1.0 + 16.0 * tol), candidate * (1.0 + 16.0 * tol)
        if views_fit(hi) and not views_fit(lo):
            upper = _bisect(views_fit, lo, hi)
    if upper is None:
        try:
            upper = bisect_sigma(views_fit, budget)
        except InvalidParameterError:
            upper = None  # no view bounds the plan: the PLD may
    if upper is not None:
        if not fits(upper):  # pragma: no cover - the views bound the ledger's figure
            raise PrivetError("sigma calibration failed; report this as a bug in privet.")
        if not fits(upper / (1.0 + tol)):
            return upper
        lo = upper / 4.0
        while fits(lo) and lo > 1e-12:
            upper, lo = lo, lo / 4.0
        return _bisect(fits, lo, upper)
    return bisect_sigma(fits, budget)


def _bisect(fits: Callable[[float], bool], lo: float, hi: float) -> float:
    """Bisection on log sigma between ``lo`` (does not fit) and ``hi`` (fits)."""
    for _ in range(200):
        if hi / lo < 1 + CALIBRATION_TOLERANCE:
            break
        mid = math.sqrt(lo * hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def bisect_sigma(fits: Callable[[float], bool], budget: Guarantee) -> float:
    """Smallest sigma with ``fits(sigma)`` by bisection on log sigma (``fits`` increasing)."""
    hi = 1.0
    while not fits(hi):
        hi *= 4.0
        if hi > 1e12:
            raise InvalidParameterError(
                f"No noise level makes this boosting plan fit in {budget}: the ledger "
                "proves no finite epsilon for it at the budget's delta. Give a budget "
                "with a delta above 0, or fewer trees."
            )
    lo = hi / 4.0
    while fits(lo) and lo > 1e-12:
        hi, lo = lo, lo / 4.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + CALIBRATION_TOLERANCE:
            break
    if not fits(hi):  # pragma: no cover - bisection invariant
        raise PrivetError("sigma calibration failed; report this as a bug in privet.")
    return hi


@dataclass
class Tree:
    """One fitted tree: the features it splits on and a value per leaf and output."""

    features: tuple[int, ...]
    values: np.ndarray  # (n_leaves, n_outputs), already multiplied by the learning rate

    def predict(self, codes: np.ndarray, domain_sizes: Sequence[int]) -> np.ndarray:
        return self.values[leaf_index(codes, self.features, domain_sizes)]


def boost(
    scope: Scope,
    codes: np.ndarray,
    y: np.ndarray,
    *,
    schedule: Sequence[tuple[int, ...]],
    domain_sizes: Sequence[int],
    loss: Loss,
    mechanism: GaussianMechanism,
    clip: float,
    learning_rate: float,
    subsample: float,
    rng: np.random.Generator,
    caller: str,
    base: np.ndarray | None = None,
) -> list[Tree]:
    """Grow the trees of ``schedule`` on private ``codes``/``y``, charging ``scope``.

    ``base``: the initial score per output (:func:`base_score`), 0 if ``None``.
    """
    n, K = codes.shape[0], loss.n_outputs
    sigma = mechanism.sigma
    lam = leaf_lambda(sigma, len(schedule), K)
    F = np.zeros((n, K)) if base is None else np.tile(np.asarray(base, float), (n, 1))
    trees: list[Tree] = []
    for t, feats in enumerate(schedule):
        L = n_leaves(feats, domain_sizes)
        tree_scope = scope.subsample(subsample, "poisson") if subsample < 1 else scope
        rows = np.flatnonzero(rng.random(n) < subsample) if subsample < 1 else None
        g, h = loss.grad_hess(F if rows is None else F[rows], y if rows is None else y[rows])
        g = clip_rows(g, clip)
        leaf = leaf_index(codes if rows is None else codes[rows], feats, domain_sizes)
        G = np.stack([np.bincount(leaf, g[:, k], L) for k in range(K)], axis=1)
        H = np.stack([np.bincount(leaf, h[:, k], L) for k in range(K)], axis=1)
        sums = np.concatenate([G, H], axis=1)  # (L, 2K): one release per leaf
        step = f"tree {t}: leaf (G, H)"
        if mechanism.relation is NeighbouringRelation.REPLACE_ONE:  # the tree: one release
            noisy = np.asarray(mechanism(sums, scope=tree_scope, caller=caller, step=step))
        else:
            # the leaves are charged together (one check): part-way through a tree the
            # PLD accountant can price the charges about 1e-6 above the whole tree
            parts = tree_scope.partition(L)
            released = mechanism.release_many(list(sums), parts, caller=caller, step=step)
            noisy = np.asarray(released, float).reshape(sums.shape)
        noisy = noisy if noise_enabled() else sums
        Gn, Hn = noisy[:, :K], noisy[:, K:]
        if noise_enabled():
            Gn = shrink_for_noise(Gn, sigma)
        values = -Gn / (np.maximum(Hn, 0.0) + lam)
        values = learning_rate * np.clip(values, -MAX_LEAF, MAX_LEAF)
        tree = Tree(tuple(int(f) for f in feats), values)
        trees.append(tree)
        F += tree.predict(codes, domain_sizes)
        advance(len(trees), len(schedule), "trees")  # a progress bar's step
    return trees
