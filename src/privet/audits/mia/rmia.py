"""RMIA, the relative membership inference attack of Zarifzadeh et al. (2024).

The likelihood of ``x`` under a target, relative to reference (shadow) models,
compared with the same ratio for population samples ``z``; offline, the
IN-model probability is approximated from the OUT models with the coefficient
``a`` (:func:`tune_rmia_a`). The registry entry that runs it on signals is in
:mod:`privet.audits.mia.attacks`.

References
----------
.. [Zarifzadeh24] S. Zarifzadeh, P. Liu, R. Shokri, "Low-cost high-power
   membership inference attacks", ICML 2024 (arXiv:2312.03262).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import roc_auc_score

from privet.audits.mia.signals import DEFAULT_CLIP, as_2d, check_clip, check_shadows
from privet.errors import InvalidParameterError

__all__ = ["check_a", "check_gamma", "rmia", "tune_rmia_a"]


def check_a(a: float) -> float:
    try:
        v = float(a)
    except (TypeError, ValueError):
        v = math.nan
    if not 0.0 <= v <= 1.0:
        raise InvalidParameterError(
            f"The RMIA parameter 'a' must be a float in [0, 1] or 'auto'; got {a!r}."
        )
    return v


def check_gamma(gamma: float) -> float:
    try:
        v = float(gamma)
    except (TypeError, ValueError):
        v = math.nan
    if not (v > 0.0 and math.isfinite(v)):
        raise InvalidParameterError(
            f"The RMIA threshold 'gamma' must be a finite float > 0 (the paper uses values "
            f">= 1); got {gamma!r}."
        )
    return v


def _offline_pr(p_out_mean: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    # Zarifzadeh et al. (2024), offline RMIA: Pr(x) = ((1 + a) Pr(x)_OUT + (1 - a)) / 2,
    # i.e. Pr(x)_IN approximated by the line a Pr(x)_OUT + (1 - a).
    return 0.5 * ((1.0 + a) * p_out_mean + (1.0 - a))


def _out_mean(p: NDArray[np.float64], mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    out = ~mask
    count = out.sum(axis=0)
    total = np.where(out, p, 0.0).sum(axis=0)
    fallback = float(p[out].mean()) if out.any() else float(p.mean())
    return np.where(count > 0, total / np.maximum(count, 1), fallback)


def _relative_score(
    log_ratio_x: NDArray[np.float64],
    log_ratio_z: NDArray[np.float64],
    log_gamma: float,
    tie_break: bool,
) -> NDArray[np.float64]:
    zs = np.sort(log_ratio_z)
    m = zs.shape[0]
    v = log_ratio_x - log_gamma
    # LR(x, z) >= gamma  <=>  log ratio_z <= log ratio_x - log gamma
    k = np.searchsorted(zs, v, side="right")
    if not tie_break:
        return k / m
    frac = np.empty_like(v)
    low = k == 0
    high = k == m
    mid = ~(low | high)
    frac[low] = np.exp(v[low] - zs[0])  # in (0, 1)
    frac[high] = -np.expm1(-(v[high] - zs[-1]))  # in [0, 1)
    km = k[mid]
    frac[mid] = (v[mid] - zs[km - 1]) / (zs[km] - zs[km - 1])
    return (k + np.clip(frac, 0.0, 1.0 - 1e-12)) / m


def rmia(
    target_p: ArrayLike,
    shadow_p: ArrayLike,
    shadow_in: ArrayLike,
    population_target_p: ArrayLike,
    population_shadow_p: ArrayLike,
    *,
    a: float = 0.3,
    gamma: float = 1.0,
    online: bool = False,
    clip: float = DEFAULT_CLIP,
    tie_break: bool = True,
) -> NDArray[np.float64]:
    """RMIA [Zarifzadeh24]: relative likelihood of ``x`` against population samples ``z``.

    Zarifzadeh et al. (2024) compare the target ``theta`` on ``x``
    with its behaviour on population records ``z``: the pairwise likelihood
    ratio

        LR_theta(x, z) = (Pr(x | theta) / Pr(x)) / (Pr(z | theta) / Pr(z)),

    where ``Pr(x | theta)`` is the probability of the true label (``p_y``,
    clipped below at ``clip``) and ``Pr(x)`` its average over reference
    models, and the score

        Score_MIA(x; theta) = Pr_z( LR_theta(x, z) >= gamma ),

    the fraction of population samples that ``x`` dominates by a factor
    ``gamma``; "member" when the score exceeds a threshold ``beta``.

    ``Pr(x)``:

    * offline (``online=False``, no reference model trained on ``x``): the
      paper's approximation from the OUT models only,
      ``Pr(x) = ((1 + a) Pr(x)_OUT + (1 - a)) / 2``, i.e. ``Pr(x)_IN ~ a
      Pr(x)_OUT + (1 - a)``; ``a`` is tuned on reference models
      (:func:`tune_rmia_a`);
    * online: the mean over all reference models, IN and OUT (half each in the
      balanced design).

    The population samples ``z`` trained no model at all; their ``Pr(z)`` uses
    the offline formula in both modes (in the online mode this stands in for
    references trained with ``z`` half of the time, as the paper's are).

    ``tie_break=True`` refines the count ``k = #{z : LR >= gamma}`` to
    ``(k + f) / m`` with ``f in [0, 1)`` the position of ``x``'s ratio between
    the neighbouring ``z`` ratios (in log space): the paper's score is
    ``floor(m * score) / m``, every threshold of the paper's score is a threshold
    of this one, and ties (many ``x`` above every ``z``) no longer blur the
    low-FPR end. For one target, the ranking is that of ``Pr(x|theta)/Pr(x)``.

    Parameters
    ----------
    target_p : array_like, shape (T, n) or (n,)
    shadow_p : array_like, shape (S, n)
    shadow_in : array_like of bool, shape (S, n)
    population_target_p : array_like, shape (T, m) or (m,)
    population_shadow_p : array_like, shape (S, m)

    Returns
    -------
    ndarray, shape (T, n)
    """
    c = check_clip(clip)
    a = check_a(a)
    log_gamma = math.log(check_gamma(gamma))
    tp = np.clip(as_2d(target_p, "target_p"), c, 1.0)
    sp, mask = check_shadows(shadow_p, shadow_in, tp.shape[1], attack="RMIA", minimum=1)
    sp = np.clip(sp, c, 1.0)
    zt = np.clip(as_2d(population_target_p, "population_target_p"), c, 1.0)
    zs = np.clip(np.asarray(population_shadow_p, dtype=np.float64), c, 1.0)
    if zt.shape[1] == 0:
        raise InvalidParameterError(
            "RMIA needs population samples z (records that trained no model); got none. "
            "Set population_fraction > 0."
        )
    if zt.shape[0] != tp.shape[0] or zs.shape != (sp.shape[0], zt.shape[1]):
        raise InvalidParameterError(
            f"RMIA: population signals have shapes {zt.shape} (targets) and {zs.shape} "
            f"(references); expected ({tp.shape[0]}, m) and ({sp.shape[0]}, m)."
        )
    if online:
        pr_x = sp.mean(axis=0)
    else:
        pr_x = _offline_pr(_out_mean(sp, mask), a)
    pr_z = _offline_pr(zs.mean(axis=0), a)
    log_rx = np.log(tp) - np.log(pr_x)[None, :]
    log_rz = np.log(zt) - np.log(pr_z)[None, :]
    return np.stack(
        [_relative_score(log_rx[i], log_rz[i], log_gamma, tie_break) for i in range(tp.shape[0])]
    )


def tune_rmia_a(
    shadow_p: ArrayLike,
    shadow_in: ArrayLike,
    population_shadow_p: ArrayLike,
    *,
    gamma: float = 1.0,
    grid: Sequence[float] = tuple(np.round(np.linspace(0.0, 1.0, 11), 2)),
    n_pseudo_targets: int = 4,
    clip: float = DEFAULT_CLIP,
) -> tuple[float, dict[float, float]]:
    """Choose RMIA's offline ``a`` by attacking reference models with the others.

    As Zarifzadeh et al. (2024) do for the offline setting: each of the first
    ``n_pseudo_targets`` shadow models in turn plays the target (its training
    set is known), the remaining shadows are the references, and the ``a`` of
    ``grid`` with the best mean ROC AUC is returned together with the AUC of
    every ``a``. Needs at least 2 shadow models; uses only the attacker's models,
    never the target.
    """
    sp = np.asarray(shadow_p, dtype=np.float64)
    mask = np.asarray(shadow_in, dtype=bool)
    zs = np.asarray(population_shadow_p, dtype=np.float64)
    if sp.ndim != 2 or sp.shape[0] < 2:
        raise InvalidParameterError(
            "tune_rmia_a needs at least 2 shadow models (one plays the target); got "
            f"{sp.shape[0] if sp.ndim == 2 else sp.shape}."
        )
    if not list(grid):
        raise InvalidParameterError("tune_rmia_a: 'grid' must hold at least one value of a.")
    grid = [check_a(a) for a in grid]
    k_max = min(int(n_pseudo_targets), sp.shape[0])
    aucs = {a: 0.0 for a in grid}
    used = 0
    for k in range(k_max):
        y = mask[k]
        if y.all() or not y.any():
            continue
        rest = np.arange(sp.shape[0]) != k
        used += 1
        for a in grid:
            s = rmia(sp[k], sp[rest], mask[rest], zs[k], zs[rest], a=a, gamma=gamma, clip=clip)[0]
            aucs[a] += float(roc_auc_score(y, s))
    if used == 0:
        return float(grid[0]), {a: math.nan for a in grid}
    aucs = {a: v / used for a, v in aucs.items()}
    best = max(grid, key=lambda a: (round(aucs[a], 12), -abs(a - 0.5)))
    return float(best), aucs
