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
Either way a round with err_m >= 1 - 1/K gets alpha_m = 0 (the noisy error can
pass that bound; SAMME would stop, here the remaining owner groups still train).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privet.learners.ldp_boosting._owners import OwnerGroup, make_group
from privet.learners.ldp_boosting.randomisers import perturb
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
    models: list[Any] = field(default_factory=list)
    alphas: list[float] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)
    stats: list[Any] = field(default_factory=list)


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
) -> BoostResult:
    """Run Alg. 2 for ``len(groups)`` rounds; charges each release before it is made."""
    n_owners = int(owner_codes.max()) + 1
    everyone = make_group(owner_codes, np.arange(n_owners)) if not strict else None
    log_w = np.zeros(y.size)
    out = BoostResult()
    for m, (owners, scope) in enumerate(zip(groups, round_scopes, strict=True)):
        group = make_group(owner_codes, owners)
        w = scaled_weights(log_w, out.alphas, out.errors)
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
        alpha = samme_alpha(err, n_classes)
        log_w = log_w + alpha * miss
        out.models.append(model)
        out.alphas.append(alpha)
        out.errors.append(err)
        out.stats.append(stats)
    return out


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


__all__ = ["BoostResult", "boost", "samme_alpha", "scaled_weights"]
