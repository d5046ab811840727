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
   rate. ``lambda = sigma + 1`` grows with the noise, so a leaf whose noisy
   hessian is small relative to the noise moves little.

Trees are sequential charges in the fit's scope; with ``subsample < 1`` each
tree is grown on a Poisson sample drawn at ``scope.subsample(rate)``. The
ledger composes everything (Gaussian DP for the Gaussian charges; Rényi DP of
the sampled Gaussian for trees on Poisson samples) and converts to
(epsilon, delta); sigma is the smallest value whose *plan* the ledger proves
within the budget (:func:`calibrate_sigma`, bisection on the ledger's own
plan cost), never a formula of this module.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from privet.errors import InvalidParameterError, PrivetError
from privet.learners._progress import advance
from privet.learners.dp_boosting.binning import leaf_index, n_leaves
from privet.ledger import Guarantee, Ledger, NeighbouringRelation, PrivacyPlan, Scope
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


def calibrate_sigma(
    make_plan: Callable[[float], PrivacyPlan],
    budget: Guarantee,
    relation: NeighbouringRelation,
) -> float:
    """Smallest sigma whose plan the ledger proves within ``budget`` (bisection on log sigma).

    The cost comes from :meth:`Ledger.plan_cost`, i.e. from the ledger's own
    composition and conversion; the result is checked once more at the end.
    """
    ledger = Ledger(budget=budget, relation=relation)

    def fits(sigma: float) -> bool:
        return ledger.plan_cost(make_plan(sigma)).fits_in(budget)

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
        if hi / lo < 1 + 1e-9:
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
) -> list[Tree]:
    """Grow the trees of ``schedule`` on private ``codes``/``y``, charging ``scope``."""
    n, K = codes.shape[0], loss.n_outputs
    sigma = mechanism.sigma
    lam = sigma + 1.0
    F = np.zeros((n, K))
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
            noisy = np.empty_like(sums)
            for j, part in enumerate(tree_scope.partition(L)):
                noisy[j] = mechanism(sums[j], scope=part, caller=caller, step=step)
        noisy = noisy if noise_enabled() else sums
        Gn, Hn = noisy[:, :K], noisy[:, K:]
        values = -Gn / (np.maximum(Hn, 0.0) + lam)
        values = learning_rate * np.clip(values, -MAX_LEAF, MAX_LEAF)
        tree = Tree(tuple(int(f) for f in feats), values)
        trees.append(tree)
        F += tree.predict(codes, domain_sizes)
        advance(len(trees), len(schedule), "trees")  # a progress bar's step
    return trees
