"""SAMME driven by data owners (seed 004, Alg. 1 and Alg. 2).

One round m (Alg. 2 lines 6-21):

1. the data user's fresh group H_m of owners prepares its local shares with the
   current weights and perturbs them once (lines 7-9), charged to the group's
   ledger scope;
2. the data user aggregates the perturbed shares into T_m (line 10);
3. every owner evaluates T_m on its own rows; the weighted error is
   err_m = sum w I(y != T_m(x)) / sum w, added with the owners' secure sum
   (lines 11-13), and alpha_m = log((1 - err_m) / err_m) + log(K - 1) (line 14);
4. each owner updates its weights locally (line 16).

Weights. An owner's weight is exp(sum_m alpha_m I_m) over the rounds so far,
computed locally from the public model. Shares need it in a public range [0, 1].
Dividing by the worst case exp(sum_m max(alpha_m, 0)) would shrink the typical
weight geometrically with the rounds while the LDP noise stays the same, so
privet divides by ``WEIGHT_CLIP`` times the mean weight SAMME predicts from the
released values, prod_m (1 - err_m + err_m e^{alpha_m}) (exact for the
faithful variant's exact errors: the weight sum of Alg. 2 line 18 is
WS' = WS + (e^alpha - 1) WE), and clips at 1: only rows whose weight exceeds
``WEIGHT_CLIP`` times the mean are down-weighted. The global normalisation of
lines 18-20 only rescales the weights.

Error sums. Paper-faithful: lines 11-12 over all L owners with exact values
(the secure sum hides the summands, but the opened sums are exact functions of
every owner's data: NonPrivate). Strict: only the owners of H_m report, each its
(weighted error, weight) pair averaged over its rows and perturbed with the same
randomiser at ``epsilon_error``; the secure sum then adds perturbed values.
Chance rule. A round whose released err_m is >= 1 - 1/K says its base learner
is no better than chance: SAMME (Zhu et al. 2009) discards it. privet
discards it too -- it gets no vote and does not change the weights -- and
goes on with the next owner group (SAMME would stop; the remaining groups
have not spent anything yet). In the strict variant err_m is a ratio of two
perturbed sums, whose noise can put a useless learner far below 1 - 1/K
with a large alpha: the rule is applied to the upper confidence bound
err_m + z sd_m, where sd_m bounds the noise of the ratio from public values
only (the randomiser's worst-case variance over [-1, 1], the owners' row
counts, the released sums; :func:`error_sd`) and z = Phi^-1(1 - 0.05 / M),
so that over the M rounds a learner no better than chance is kept with
probability about 5% at most (normal approximation; z fixed a priori, not
tuned on any data set). The kept round's alpha is SAMME's at that bound
(pessimistic). The decision reads only released values (post-processing).
The faithful variant's errors are exact: sd = 0, the plain SAMME rule.

Class prior (privet, not in the paper). Before round 1 a separate owner group
H_0 reports its class frequencies, perturbed once with the same randomiser at
the owners' whole epsilon (:func:`class_prior`). The constant classifier
T_0(x) = argmax of the perturbed counts enters as SAMME's round 0, with
err_0 = 1 - (its perturbed frequency) and alpha_0 from Alg. 1 line 6: when
every later round is discarded the model predicts the (estimated) majority
class instead of class 0, and the weights of round 1 are SAMME's after T_0
(the minority class up-weighted), so a stump must beat the prior, not only
a coin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privet.learners.ldp_boosting._owners import OwnerGroup, make_group
from privet.learners.ldp_boosting.randomisers import make_randomiser, noise_is_off, perturb
from privet.ledger import Claim, NonPrivate, Scope

SOURCE = "seed 004 (Wang & Chang), Sec. 3.3, Alg. 2"
EXACT_SUMS_REASON = (
    "Alg. 2 lines 11-12: the exact weighted-error sum and weight sum over all owners are "
    "opened by the secure sum; they are exact functions of every owner's records (no DP)"
)
EXACT_SUMS_CLAIM = Claim(
    0.0,
    source=SOURCE,
    note="'such statistics are independent to the value of the individual sample and they "
    "are not necessarily be perturbed'",
)
ERR_FLOOR = 1e-10


@dataclass
class BoostResult:
    """Accepted base learners (with alpha and released error), and every round's record."""

    models: list[Any] = field(default_factory=list)
    alphas: list[float] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)
    stats: list[Any] = field(default_factory=list)
    round_errors: list[float] = field(default_factory=list)
    error_bounds: list[float] = field(default_factory=list)
    discarded: list[int] = field(default_factory=list)
    prior: np.ndarray | None = None
    prior_class: int = 0
    prior_alpha: float = 0.0
    prior_error: float = float("nan")


@dataclass(frozen=True)
class ConstantModel:
    """T_0: the class with the largest perturbed count, for every x."""

    label: int

    def predict(self, Xu: np.ndarray) -> np.ndarray:
        return np.full(np.shape(Xu)[0], self.label, dtype=np.int64)


def prior_dimension(n_classes: int) -> int:
    """Length of an owner's class report: f_0 - f_1 for two classes, 2 f - 1 for K."""
    return 1 if n_classes == 2 else n_classes


def class_prior(
    group: OwnerGroup,
    y: np.ndarray,
    n_classes: int,
    mechanism: str,
    epsilon: float,
    *,
    scope: Scope,
    caller: str,
    claim: Claim | None = None,
) -> np.ndarray:
    """Perturbed class counts of the owners of ``group`` (each owner's one LDP release).

    Each owner's record is the mean over its rows of the one-hot label, in
    [-1, 1]^D: for two classes the single value f_0 - f_1, else 2 f_k - 1 per
    class (:func:`prior_dimension`). It is perturbed once by ``mechanism`` at
    ``epsilon`` (charged to ``scope`` first); the data user scales the
    unbiased reports back by the public row counts and adds them up.
    """
    onehot = np.eye(n_classes)[y[group.rows]]
    frac = group.owner_mean(onehot)  # (owners, K)
    records = frac[:, :1] - frac[:, 1:2] if n_classes == 2 else 2.0 * frac - 1.0
    noisy = perturb(
        mechanism,
        epsilon,
        records,
        scope=scope,
        caller=caller,
        step="class prior: owners' class frequencies (privet's SAMME round 0)",
        claim=claim,
    )
    counts = group.counts[:, None].astype(float)
    if n_classes == 2:
        f0 = (noisy[:, 0] + 1.0) / 2.0
        return np.array([np.sum(counts[:, 0] * f0), np.sum(counts[:, 0] * (1.0 - f0))])
    return np.sum(counts * (noisy + 1.0) / 2.0, axis=0)


FAMILY_LEVEL = 0.05
"""Chance of keeping some round whose learner is no better than chance, over all M rounds."""


def chance_z(n_rounds: int) -> float:
    """z = Phi^-1(1 - FAMILY_LEVEL / M): the one-sided normal quantile of the chance rule."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(1.0 - FAMILY_LEVEL / max(int(n_rounds), 1))


def error_sd(mechanism: str, epsilon: float, counts: np.ndarray, err: float, ws: float) -> float:
    """A bound on the noise sd of err = WE / WS from the owners' perturbed (error, weight) pairs.

    Owner l reports (mean w I, mean w) in [0, 1]^2 as 2 v - 1 in [-1, 1]^2; the
    data user scales by its row count n_l: WE = sum_l n_l (r_l + 1) / 2, so
    sd(WE), sd(WS) <= sqrt(V / 4 * sum_l n_l^2) with V the randomiser's largest
    per-coordinate variance over the inputs -1, 0, 1 (public). By the delta
    method and the triangle inequality (whatever the correlation of the two
    coordinates), sd(err) <= (sd(WE) + |err| sd(WS)) / WS.
    """
    if not np.isfinite(err) or ws <= 0:
        return float("inf")
    mech = make_randomiser(mechanism, float(epsilon), 2)
    v = max(float(np.max(mech.variance(np.full((1, 2), x)))) for x in (-1.0, 0.0, 1.0))
    sd_sum = float(np.sqrt(v / 4.0 * np.sum(np.asarray(counts, dtype=float) ** 2)))
    return (sd_sum + abs(err) * sd_sum) / ws


def samme_alpha(err: float, n_classes: int) -> float:
    """Alg. 1 line 6, with alpha = 0 when err >= 1 - 1/K (worse than chance)."""
    if not np.isfinite(err) or err >= 1.0 - 1.0 / n_classes:
        return 0.0
    err = max(err, ERR_FLOOR)
    return float(np.log((1.0 - err) / err) + np.log(n_classes - 1.0))


WEIGHT_CLIP = 4.0


def scaled_weights(log_w: np.ndarray, alphas: list[float], errors: list[float]) -> np.ndarray:
    """Owner-local weights over WEIGHT_CLIP x the public mean weight, clipped to (0, 1]."""
    log_mean = 0.0
    for a, e in zip(alphas, errors, strict=True):
        if a > 0:
            e = max(float(e), ERR_FLOOR)
            log_mean += float(np.log(1.0 - e + e * np.exp(a)))
    return np.minimum(np.exp(log_w - log_mean - np.log(WEIGHT_CLIP)), 1.0)


def boost(
    *,
    learner: Any,
    Xu: np.ndarray,
    y: np.ndarray,
    owner_codes: np.ndarray,
    groups: list[np.ndarray],
    n_classes: int,
    mechanism: str,
    epsilon_share: float,
    epsilon_error: float,
    strict: bool,
    root: Scope,
    round_scopes: tuple[Scope, ...],
    secure_sum: Callable[[np.ndarray], tuple[np.ndarray, Any]],
    caller: str,
    share_claim: Claim | None = None,
    release_claim: Claim | None = None,
    prior_group: np.ndarray | None = None,
    prior_scope: Scope | None = None,
    epsilon_prior: float = 0.0,
) -> BoostResult:
    """Run Alg. 2 for ``len(groups)`` rounds; charges each release before it is made.

    With ``prior_group`` (and its scope), round 0 is the class prior of
    :func:`class_prior` at ``epsilon_prior``.
    """
    n_owners = int(owner_codes.max()) + 1
    everyone = make_group(owner_codes, np.arange(n_owners)) if not strict else None
    log_w = np.zeros(y.size)
    out = BoostResult()
    if prior_group is not None and prior_scope is not None:
        counts = class_prior(
            make_group(owner_codes, prior_group),
            y,
            n_classes,
            mechanism,
            epsilon_prior,
            scope=prior_scope,
            caller=caller,
            claim=share_claim,
        )
        counts = np.clip(counts, 0.0, None)
        total = float(counts.sum())
        prior = counts / total if total > 0 else np.full(n_classes, 1.0 / n_classes)
        label = int(np.argmax(prior))
        out.prior, out.prior_class = prior, label
        out.prior_error = float(1.0 - prior[label])
        out.prior_alpha = samme_alpha(out.prior_error, n_classes)
        if out.prior_alpha > 0:
            log_w = log_w + out.prior_alpha * (y != label)
    for m, (owners, scope) in enumerate(zip(groups, round_scopes, strict=True)):
        group = make_group(owner_codes, owners)
        w = scaled_weights(
            log_w, [out.prior_alpha, *out.alphas], [_finite(out.prior_error), *out.errors]
        )
        model = _fit_base(
            learner,
            group,
            Xu,
            y,
            w,
            mechanism,
            epsilon_share,
            strict,
            scope,
            caller,
            m,
            share_claim,
            release_claim,
        )
        miss = (model.predict(Xu) != y).astype(float)
        if strict:
            pair = group.owner_mean(np.stack([w[group.rows] * miss[group.rows], w[group.rows]], 1))
            noisy = perturb(
                mechanism,
                epsilon_error,
                pair * 2.0 - 1.0,
                scope=scope,
                caller=caller,
                step=f"round {m}: owners' (weighted error, weight), Alg. 2 l. 11-12",
            )
            values = (noisy + 1.0) / 2.0 * group.counts[:, None]
        else:
            assert everyone is not None
            root.charge(
                NonPrivate(reason=EXACT_SUMS_REASON),
                mechanism="secure sum (exact)",
                caller=caller,
                step=f"round {m}: WeightedError, WeightsSum",
                claim=EXACT_SUMS_CLAIM,
            )
            rows = everyone.rows
            values = np.add.reduceat(
                np.stack([w[rows] * miss[rows], w[rows]], 1), everyone.starts, axis=0
            )
        sums, stats = secure_sum(values)
        err = float(sums[0] / sums[1]) if sums[1] > 0 else float("nan")
        bound = err
        if strict and not noise_is_off():
            sd = error_sd(mechanism, epsilon_error, group.counts, err, float(sums[1]))
            bound = err + chance_z(len(groups)) * sd
        alpha = samme_alpha(bound, n_classes)
        out.round_errors.append(err)
        out.error_bounds.append(bound)
        out.stats.append(stats)
        if alpha <= 0:  # no better than chance by the released error: discarded
            out.discarded.append(m)
            continue
        log_w = log_w + alpha * miss
        out.models.append(model)
        out.alphas.append(alpha)
        out.errors.append(bound)
    return out


def _finite(x: float) -> float:
    return x if np.isfinite(x) else 0.5


def _fit_base(
    learner: Any,
    group: OwnerGroup,
    Xu: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    mechanism: str,
    epsilon: float,
    strict: bool,
    scope: Scope,
    caller: str,
    m: int,
    share_claim: Claim | None,
    release_claim: Claim | None,
) -> Any:
    """Lines 7-10: shares, one perturbation per owner (per row for faithful NCC), aggregate."""
    shares = learner.shares(group, Xu, y, w)
    if learner.name == "centroid" and not strict:
        scope.charge(
            NonPrivate(reason="seed 004 Sec. 3.5.1: each sample's label is submitted in the clear"),
            mechanism="labels in the clear",
            caller=caller,
            step=f"round {m}: labels",
            claim=release_claim,
        )
    perturbed = perturb(
        mechanism,
        epsilon,
        shares,
        scope=scope,
        caller=caller,
        step=f"round {m}: {learner.name} shares (Alg. 2 l. 7)",
        claim=share_claim,
    )
    if learner.name == "stump":
        exact = None
        if not strict:
            scope.charge(
                NonPrivate(
                    reason="seed 004 Sec. 3.5.3: owners report their exact majority "
                    "label per branch"
                ),
                mechanism="majority labels in the clear",
                caller=caller,
                step=f"round {m}: branch labels",
                claim=release_claim,
            )
            r = group.rows
            exact = (Xu[r], y[r], w[r])
        return learner.aggregate(perturbed, group, exact_rows=exact)
    if learner.name == "centroid":
        return learner.aggregate(perturbed, group, labels=None if strict else y[group.rows])
    return learner.aggregate(perturbed, group)


__all__ = [
    "BoostResult",
    "ConstantModel",
    "boost",
    "chance_z",
    "class_prior",
    "error_sd",
    "prior_dimension",
    "samme_alpha",
    "scaled_weights",
]
