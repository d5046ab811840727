"""The federated DP tree: Alg. 5 (plain) and Alg. 6 (budget-saving node splitting), seed 003.

One control flow serves three callers, which differ only in their sum
operations (``ops.noisy_sum(key, local, scale)``) and in whether they charge:

* the reference path (:class:`~.reference.ReferenceOps`, all K parties' data
  in one process, charges the ledger);
* each party process of the protocol (:class:`~.party.PartyOps`, its own rows
  only, sums through Alg. 1 over MPyC's channels, charges nothing: the
  parties have no ledger);
* the host's replay of a protocol run (:class:`~.reference.ReplayOps`, no
  data, the released values by key; charges the ledger exactly as the
  reference path does).

Accounting (what the ledger sees; nothing is added up here). Each node has a
scope. Its per-class histograms are charged in a partition of the node scope
by class (the class sets are disjoint: parallel composition, Sec. 3.3.1);
Alg. 6's bound vector is charged in the node scope itself; a split makes the
two children a partition of the node scope (Thm. 6's "two different branches
operate on disjoint subsets"); a leaf's class counts are a partition by class
of the leaf scope. The budget saved by Alg. 6 is what the node scope did not
spend of its allotment; the children draw on it inside the fit's reservation,
and the ledger's own path composition (a partition costs its costliest part)
proves that every root-to-leaf path stays within epsilon.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from privet.learners.federated_cart.reference import (
    local_bounds,
    local_histograms,
    local_leaf_counts,
    split_impurities,
)
from privet.ledger import Claim, NonPrivate
from privet.mechanisms import GammaDLPA

#: Lemma 3.2: sensitivity of one party's summand n_k G(Q_k, theta*_kj).
BOUND_SENSITIVITY = 5.0 / 4.0
#: With integer noise each party rounds its bound summands to multiples of 1/BOUND_GRID: a
#: summand then moves by at most 5/4 BOUND_GRID + 1 grid steps (5 % more noise than 5/4).
BOUND_GRID = 16
CLAIM_SOURCE = "seed 003 (Gubler), Thm. 6 and Sec. 3.5 (Alg. 6)"
#: Why the paper's float Gamma shares get no finite guarantee (``noise="paper"``).
FLOAT_NOISE_REASON = (
    "gamma DLPA with float Gamma shares (seed 003, Sec. 2.4.1), rounded to 32 fractional "
    "bits: the ideal continuous Laplace is not what is sampled, and no DP guarantee is "
    "proven for floating-point noise (Mironov 2012)"
)
NOISES = ("discrete", "paper")


Steps = Generator[tuple[str, np.ndarray, float], np.ndarray, None]


class SumOps(Protocol):
    def noisy_sum(self, key: str, local: np.ndarray, scale: float) -> np.ndarray: ...


@dataclass(frozen=True)
class CartParams:
    """The public parameters of one tree (Alg. 5 / Alg. 6 inputs)."""

    parties: int
    n_classes: int
    n_bins: tuple[int, ...]
    epsilon: float
    max_depth: int
    min_samples_leaf: int
    leaf_prop: float
    budget_saving: bool
    bounds_prop: float
    bounds_accounting: str = "sound"
    noise: str = "discrete"

    @property
    def n_features(self) -> int:
        return len(self.n_bins)

    @property
    def eps_leaf(self) -> float:
        return self.leaf_prop * self.epsilon

    @property
    def eps_node(self) -> float:
        if self.max_depth == 0:
            return 0.0
        return (1.0 - self.leaf_prop) * self.epsilon / self.max_depth

    def to_dict(self) -> dict[str, Any]:
        return {
            "parties": self.parties,
            "n_classes": self.n_classes,
            "n_bins": list(self.n_bins),
            "epsilon": self.epsilon,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "leaf_prop": self.leaf_prop,
            "budget_saving": self.budget_saving,
            "bounds_prop": self.bounds_prop,
            "bounds_accounting": self.bounds_accounting,
            "noise": self.noise,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CartParams:
        return cls(**{**d, "n_bins": tuple(int(b) for b in d["n_bins"])})


def largest_sums(params: CartParams) -> list[tuple[str, float, float]]:
    """(step, scale, sensitivity) of the noisiest sum of each kind :func:`grow` releases.

    Unspent budget only ever moves down a path (Alg. 6), so a node's budget is at
    least ``eps_node``: these scales bound every scale the fit can use, and the fit
    is refused before anything is charged if one of them cannot be drawn.
    """
    p = params.n_features
    out = [("leaf counts", 1.0 / params.eps_leaf, 1.0)] if params.eps_leaf > 0 else []
    if params.max_depth == 0 or params.eps_node <= 0:
        return out
    if not params.budget_saving:
        return [*out, ("histograms", p / params.eps_node, float(p))]
    grid = BOUND_GRID if params.noise == "discrete" else 1
    sens_1 = BOUND_SENSITIVITY * grid + (1.0 if grid > 1 else 0.0)
    if params.bounds_prop > 0:
        eps_bounds = params.bounds_prop * params.eps_node
        b_scale = sens_1 * (p if params.bounds_accounting == "sound" else 1) / eps_bounds
        out.append(("impurity bounds", b_scale, sens_1 * p))
    if params.bounds_prop < 1:
        out.append(("histogram", p / ((1.0 - params.bounds_prop) * params.eps_node), 1.0))
    return out


@dataclass
class FederatedTree:
    """A fitted binary tree over binned tree features.

    Node 0 is the root. Internal node i sends a record left when
    ``Z[feature[i]] < border[i]``; leaves have ``feature == -1`` and hold the
    released noisy class counts in ``value``.
    """

    n_classes: int
    feature: list[int] = field(default_factory=list)
    border: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    value: list[np.ndarray] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)

    def add(self, depth: int) -> int:
        self.feature.append(-1)
        self.border.append(0)
        self.left.append(-1)
        self.right.append(-1)
        self.value.append(np.zeros(self.n_classes))
        self.depth.append(depth)
        return len(self.feature) - 1

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def n_leaves(self) -> int:
        return sum(1 for f in self.feature if f < 0)

    def apply(self, Z: np.ndarray) -> np.ndarray:
        """Leaf index of every row of the binned matrix ``Z`` (vectorised per level)."""
        feat = np.asarray(self.feature)
        border = np.asarray(self.border)
        left = np.asarray(self.left)
        right = np.asarray(self.right)
        node = np.zeros(Z.shape[0], dtype=np.int64)
        rows = np.arange(Z.shape[0])
        while True:
            f = feat[node]
            inner = f >= 0
            if not inner.any():
                return node
            go_left = Z[rows, np.where(inner, f, 0)] < border[node]
            node = np.where(inner, np.where(go_left, left[node], right[node]), node)

    def leaf_values(self, Z: np.ndarray) -> np.ndarray:
        return np.vstack(self.value)[self.apply(Z)]

    def signature(self) -> list[tuple[int, int, int]]:
        """(feature, border, depth) of every node in order: equal trees, equal signatures."""
        return list(zip(self.feature, self.border, self.depth, strict=True))


@dataclass
class Accounting:
    """How the grower charges: which coalition's guarantee the entries carry."""

    colluders: int = 0
    charge_colluders: bool = False
    caller: str = "FederatedDPTreeClassifier"
    delta: float = 1e-6
    _cache: dict[tuple[float, float], Any] = field(default_factory=dict)

    def entry(self, parties: int, scale: float, sensitivity: float, noise: str) -> Any:
        """The entry of one noisy sum: the discrete gamma DLPA's proven guarantee, or
        ``NonPrivate`` for the paper's float shares (whose ideal epsilon is a claim)."""
        if noise == "paper":
            return NonPrivate(reason=FLOAT_NOISE_REASON)
        key = (float(scale), float(sensitivity))
        e = self._cache.get(key)
        if e is None:
            e = GammaDLPA(
                parties=parties,
                scale=scale,
                sensitivity=sensitivity,
                colluders=self.colluders,
                collusion_delta=self.delta,
                charge_colluders=self.charge_colluders,
                discrete=True,
            ).entry()
            self._cache[key] = e
        return e


@dataclass
class PartyRows:
    """The binned rows and labels of the parties present in this process."""

    Z: list[np.ndarray]
    y: list[np.ndarray]


def grow(
    params: CartParams,
    data: PartyRows,
    ops: SumOps,
    scope: Any = None,
    **kwargs: Any,
) -> FederatedTree:
    """Grow the tree of Alg. 5 (``budget_saving=False``) or Alg. 5 with Alg. 6.

    ``scope`` None: charge nothing (a party process). Otherwise every release
    is charged in its scope before ``ops.noisy_sum`` releases it. Keyword
    arguments: see :func:`grow_steps`.
    """
    steps = grow_steps(params, data, scope, **kwargs)
    request = next(steps)
    while True:
        try:
            request = steps.send(ops.noisy_sum(*request))
        except StopIteration as done:
            return done.value


async def grow_async(
    params: CartParams, data: PartyRows, ops: Any, scope: Any = None, **kwargs: Any
) -> FederatedTree:
    """:func:`grow` with an ``ops.noisy_sum`` that is a coroutine (a party process)."""
    steps = grow_steps(params, data, scope, **kwargs)
    request = next(steps)
    while True:
        try:
            request = steps.send(await ops.noisy_sum(*request))
        except StopIteration as done:
            return done.value


def grow_steps(
    params: CartParams,
    data: PartyRows,
    scope: Any = None,
    *,
    accounting: Accounting | None = None,
    class_labels: Sequence[str] | None = None,
    feature_names: Sequence[str] | None = None,
    prefetch: bool = False,
) -> Generator[tuple[str, np.ndarray, float], np.ndarray, FederatedTree]:
    """The control flow as a generator: yields ``(key, local, scale)`` sum requests
    and receives each released sum, so one body serves sync and async callers.

    ``prefetch=True`` (simulations only: refused with a scope, since nothing would
    be charged per feature): Alg. 6 asks for the noisy histograms of all p
    features of a node in one request instead of one per feature, and uses them
    in the order of the bounds exactly as the sequential flow does. The
    histograms of pruned features are drawn but never used, so every value the
    tree depends on has the distribution it has in the sequential flow
    (independent noise per feature); the same tree under the same testing noise.
    """
    if prefetch and scope is not None:
        raise ValueError("prefetch=True is for uncharged simulations: pass scope=None.")
    acc = accounting or Accounting()
    K, C, p = params.parties, params.n_classes, params.n_features
    n_bins = np.asarray(params.n_bins, dtype=np.int64)
    B = int(n_bins.max())
    classes = [str(c) for c in (class_labels or range(C))]
    names = list(feature_names or [f"x{j}" for j in range(p)])
    tree = FederatedTree(C)

    def charge(sc: Any, scale: float, sens: float, step: str, claim: Claim | None = None) -> None:
        if sc is not None:
            if claim is None and params.noise == "paper":  # the ideal continuous Laplace
                claim = Claim(sens / scale, source=CLAIM_SOURCE + ": Laplace by gamma DLPA")
            sc.charge(
                acc.entry(K, scale, sens, params.noise),
                mechanism="gamma_dlpa",
                sensitivity=sens,
                caller=acc.caller,
                step=step,
                claim=claim,
            )

    def charge_by_class(sc: Any, scale: float, sens: float, step: str) -> None:
        if sc is not None:
            for part in sc.partition([f"class={c}" for c in classes]):
                charge(part, scale, sens, step)

    def stack(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], rows: list[np.ndarray]):  # type: ignore[no-untyped-def]
        out = [fn(Zk[r], yk[r]) for Zk, yk, r in zip(data.Z, data.y, rows, strict=True)]
        return np.stack(out) if out else np.zeros((0,))

    def leaf(node: int, path: str, rows: list[np.ndarray], eps: float, sc: Any) -> Steps:
        scale = 1.0 / eps
        charge_by_class(sc, scale, 1.0, f"leaf counts {path}")
        local = stack(lambda Z, y: local_leaf_counts(y, C), rows)
        tree.value[node] = yield (f"{path}/leaf", local.reshape(-1, C), scale)

    def hist(rows: list[np.ndarray], feats: np.ndarray) -> np.ndarray:
        local = stack(lambda Z, y: local_histograms(Z, y, feats, C, B), rows)
        return local.reshape(-1, C, len(feats), B)

    def node_split(
        path: str, rows: list[np.ndarray], saved: float, sc: Any
    ) -> Generator[Any, np.ndarray, tuple[tuple[int, int] | None, float]]:
        """One node: releases, then ``((feature, border) or None, saved budget)``."""
        if not params.budget_saving:
            eps_node = params.eps_node
            scale = p / eps_node  # p histograms at eps_node / p each, one vector
            charge_by_class(sc, scale, float(p), f"histograms {path}")
            H = yield (f"{path}/hist", hist(rows, np.arange(p)), scale)
            per_feature_n = H.sum(axis=(0, 2))
            if np.all(per_feature_n <= params.min_samples_leaf):
                return None, 0.0
            positive = (H.sum(axis=2) > 0).any(axis=1)  # class c counted positive somewhere
            if positive.sum() <= 1:
                return None, 0.0
            G = split_impurities(H, n_bins)
            if not np.isfinite(G).any():
                return None, 0.0
            j, l_idx = np.unravel_index(int(np.argmin(G)), G.shape)
            return (int(j), int(l_idx) + 1), 0.0

        # Alg. 6
        budget = params.eps_node + saved
        eps_bounds = params.bounds_prop * budget
        eps_hists = (1.0 - params.bounds_prop) * budget
        per = eps_hists / p
        # integer noise: the summands in grid steps of 1/BOUND_GRID, rounded by each party
        grid = BOUND_GRID if params.noise == "discrete" else 1
        sens_1 = BOUND_SENSITIVITY * grid + (1.0 if grid > 1 else 0.0)  # one feature, steps
        if params.bounds_accounting == "sound":
            b_scale = sens_1 * p / eps_bounds  # p summands, L1 sensitivity p sens_1
            claim = None
        else:  # the paper's code: Laplace(5/4 / eps_bounds) on each of the p bounds
            b_scale = sens_1 / eps_bounds
            claim = Claim(
                eps_bounds,
                source=CLAIM_SOURCE + ": each feature bound 'with budget eps_bounds'",
            )
        charge(sc, b_scale, sens_1 * p, f"impurity bounds {path}", claim)
        local = stack(lambda Z, y: local_bounds(Z, y, C, n_bins), rows).reshape(-1, p)
        if grid > 1:
            local = np.rint(local * grid)
        bounds = (yield (f"{path}/bounds", local, b_scale)) / grid
        order = np.argsort(bounds, kind="stable")
        removed = np.zeros(p, dtype=bool)
        saved_out = 0.0
        best_g, best = np.inf, None
        best_scaled = np.inf
        big = False
        positive = np.zeros(C, dtype=bool)
        class_parts = sc.partition([f"class={c}" for c in classes]) if sc is not None else None
        local_all = hist(rows, np.arange(p))  # local counts of every feature, once
        if prefetch:  # every feature's noisy histogram in one sum; only the used ones count
            H_all = yield (f"{path}/hist/*", local_all, 1.0 / per)
            G_all = split_impurities(H_all, n_bins)
            n_all = H_all.sum(axis=(0, 2)).tolist()
            pos_all = (H_all.sum(axis=2) > 0).T  # (p, C)
            finite = np.isfinite(G_all).any(axis=1).tolist()
            arg = np.argmin(G_all, axis=1)
            g_min = G_all[np.arange(p), arg].tolist()
            arg_l = arg.tolist()
        for j in order:
            j = int(j)
            if removed[j]:
                saved_out += per
                continue
            if prefetch:
                n_j = n_all[j]
                big |= n_j > params.min_samples_leaf
                positive |= pos_all[j]
                if finite[j] and g_min[j] < best_g:
                    best_g, best = g_min[j], (j, arg_l[j] + 1)
                    best_scaled = n_j * best_g
                    removed |= bounds > best_scaled
                continue
            if class_parts is not None:
                for part in class_parts:
                    charge(part, 1.0 / per, 1.0, f"histogram {names[j]} {path}")
            H = yield (f"{path}/hist/{j}", local_all[:, :, [j], :], 1.0 / per)
            n_j = float(H.sum())
            big |= n_j > params.min_samples_leaf
            positive |= H.sum(axis=(1, 2)) > 0
            G = split_impurities(H, n_bins[[j]])[0]
            if np.isfinite(G).any():
                l_idx = int(np.argmin(G))
                if G[l_idx] < best_g:
                    best_g, best = float(G[l_idx]), (j, l_idx + 1)
                    best_scaled = n_j * best_g
                    removed |= bounds > best_scaled
        if not big or positive.sum() <= 1 or best is None:
            return None, saved_out
        return best, saved_out

    def recurse(
        node: int, path: str, rows: list[np.ndarray], depth: int, saved: float, sc: Any
    ) -> Steps:
        if depth >= params.max_depth:
            yield from leaf(node, path, rows, params.eps_leaf + saved, sc)
            return
        split, saved_out = yield from node_split(path, rows, saved, sc)
        if split is None:
            yield from leaf(node, path, rows, params.eps_leaf + saved_out, sc)
            return
        j, border = split
        tree.feature[node], tree.border[node] = j, border
        go = [Zk[r, j] < border for Zk, r in zip(data.Z, rows, strict=True)]
        left_rows = [r[g] for r, g in zip(rows, go, strict=True)]
        right_rows = [r[~g] for r, g in zip(rows, go, strict=True)]
        lsc = rsc = None
        if sc is not None:
            lsc, rsc = sc.partition([f"{names[j]}<{border}", f"{names[j]}>={border}"])
        tree.left[node] = tree.add(depth + 1)
        tree.right[node] = tree.add(depth + 1)
        yield from recurse(tree.left[node], f"{path}0", left_rows, depth + 1, saved_out, lsc)
        yield from recurse(tree.right[node], f"{path}1", right_rows, depth + 1, saved_out, rsc)

    root = tree.add(0)
    yield from recurse(root, "r", [np.arange(Zk.shape[0]) for Zk in data.Z], 0, 0.0, scope)
    return tree


__all__ = [
    "BOUND_GRID",
    "BOUND_SENSITIVITY",
    "FLOAT_NOISE_REASON",
    "NOISES",
    "Accounting",
    "CartParams",
    "FederatedTree",
    "PartyRows",
    "SumOps",
    "grow",
    "grow_async",
    "grow_steps",
]
