"""LiRA, the likelihood-ratio attack of Carlini et al. (2022), online and offline.

``phi`` is the logit-scaled confidence of the true class
(:func:`~privet.audits.mia.signals.logit_confidence`); Gaussians fitted over the
shadow models with and without each example give its likelihood ratio
(Algorithm 1 of [Carlini22]). The registry entry that runs it on signals is in
:mod:`privet.audits.mia.attacks`.

References
----------
.. [Carlini22] N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
   "Membership inference attacks from first principles", IEEE S&P 2022
   (arXiv:2112.03570).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privet.audits.mia.signals import as_2d, check_shadows
from privet.errors import InvalidParameterError

__all__ = [
    "GLOBAL_VARIANCE_BELOW",
    "GaussianFit",
    "Variance",
    "fit_gaussians",
    "lira_offline",
    "lira_online",
]

Variance = Literal["auto", "global", "per_example"]
_MIN_VAR = 1e-12
GLOBAL_VARIANCE_BELOW = 32
"""``variance="auto"`` pools the variance when an example has fewer IN (or OUT)
shadow models than this, i.e. below 64 shadow models in the balanced design,
following Carlini et al. (2022), who find a global variance better than
per-example estimates with few shadow models."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GaussianFit:
    """Per-example Gaussian fits of ``phi`` over IN and OUT shadow models.

    Attributes
    ----------
    mean_in, mean_out : ndarray, shape (n,)
        ``mu_in(x)``, ``mu_out(x)``; where an example has no IN (OUT) model, the
        other mean plus (minus) the average IN-OUT shift over the examples that
        have both.
    std_in, std_out : ndarray, shape (n,)
        Standard deviations used: per example, or the global one.
    global_std_in, global_std_out : float
        Pooled within-example standard deviations.
    variance : str
        Mode actually used: ``"global"`` or ``"per_example"``.
    n_fallback : int
        Examples whose per-example variance was replaced by the global one
        (fewer than 2 values, or zero variance) in ``"per_example"`` mode.
    """

    mean_in: NDArray[np.float64]
    mean_out: NDArray[np.float64]
    std_in: NDArray[np.float64]
    std_out: NDArray[np.float64]
    global_std_in: float
    global_std_out: float
    variance: str
    n_fallback: int


def _group_stats(
    phi: NDArray[np.float64], mask: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], float]:
    count = mask.sum(axis=0)
    total = np.where(mask, phi, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        resid = np.where(mask, phi - np.where(count > 0, mean, 0.0)[None, :], 0.0)
        ss = (resid**2).sum(axis=0)
        var = np.where(count > 1, ss / np.maximum(count - 1, 1), np.nan)
    dof = int(np.sum(np.maximum(count - 1, 0)))
    if dof > 0:
        pooled = float(ss[count > 1].sum() / dof)
    elif mask.any():
        # One value per example: the spread of all the group's values (between examples).
        pooled = float(np.var(phi[mask]))
    else:
        pooled = math.nan
    return mean, var, count, pooled


def fit_gaussians(
    shadow_phi: ArrayLike, shadow_in: ArrayLike, *, variance: Variance = "auto"
) -> GaussianFit:
    """Fit ``N(mu_in(x), s_in^2)`` and ``N(mu_out(x), s_out^2)`` per example.

    The LiRA step of Carlini et al. (2022, Sec. IV, Algorithm 1):
    means and variances of ``phi`` over the shadow models trained with (IN) and
    without (OUT) each example. Variances:

    ``"global"``
        the pooled within-example variance of each group,
        ``sum_x sum_{s} (phi_s(x) - mu(x))^2 / sum_x (n(x) - 1)`` — the paper's
        "global variance" for small numbers of shadow models (their code uses the
        spread of all values; centring per example removes the between-example
        part, which is not noise of the test);
    ``"per_example"``
        each example's own variance, falling back to the global one where it has
        fewer than two values or zero spread (DP trees often give every shadow
        the same output for an example);
    ``"auto"``
        ``"global"`` if some example has fewer than
        :data:`GLOBAL_VARIANCE_BELOW` IN or OUT models, else ``"per_example"``.

    A global variance of 0 (a model that ignores its data) is floored at 1e-12.
    """
    if variance not in ("auto", "global", "per_example"):
        raise InvalidParameterError(
            f"The 'variance' parameter must be 'auto', 'global' or 'per_example'; got {variance!r}."
        )
    s = np.asarray(shadow_phi, dtype=np.float64)
    mask = np.asarray(shadow_in, dtype=bool)
    mean_in, var_in, n_in, g_in = _group_stats(s, mask)
    mean_out, var_out, n_out, g_out = _group_stats(s, ~mask)
    if math.isnan(g_in) and math.isnan(g_out):
        raise InvalidParameterError("fit_gaussians needs at least one shadow model.")
    g_in = g_out if math.isnan(g_in) else g_in
    g_out = g_in if math.isnan(g_out) else g_out
    both = (n_in > 0) & (n_out > 0)
    shift = float(np.mean(mean_in[both] - mean_out[both])) if both.any() else 0.0
    mean_in = np.where(n_in > 0, mean_in, mean_out + shift)
    mean_out = np.where(n_out > 0, mean_out, mean_in - shift)
    g_in, g_out = max(g_in, _MIN_VAR), max(g_out, _MIN_VAR)
    mode = variance
    if mode == "auto":
        few = min(int(n_in.min()), int(n_out.min())) < GLOBAL_VARIANCE_BELOW
        mode = "global" if few else "per_example"
    n = s.shape[1]
    if mode == "global":
        v_in, v_out, n_fb = np.full(n, g_in), np.full(n, g_out), 0
    else:
        bad_in = ~(var_in > _MIN_VAR)  # also NaN (fewer than two values)
        bad_out = ~(var_out > _MIN_VAR)
        v_in = np.where(bad_in, g_in, var_in)
        v_out = np.where(bad_out, g_out, var_out)
        n_fb = int(np.sum(bad_in | bad_out))
    return GaussianFit(
        mean_in=mean_in,
        mean_out=mean_out,
        std_in=np.sqrt(v_in),
        std_out=np.sqrt(v_out),
        global_std_in=math.sqrt(g_in),
        global_std_out=math.sqrt(g_out),
        variance=mode,
        n_fallback=n_fb,
    )


def _residual(t: NDArray[np.float64], mean: NDArray[np.float64]) -> NDArray[np.float64]:
    # phi - mu with floating-point noise of the mean snapped to 0: when every model gives
    # the same output (zero variance, floored), rounding must not rank the examples.
    d = t - mean
    d[np.abs(d) <= 1e-9 * (1.0 + np.abs(mean))] = 0.0
    return d


def lira_online(
    target_phi: ArrayLike,
    shadow_phi: ArrayLike,
    shadow_in: ArrayLike,
    *,
    variance: Variance = "auto",
    fit: GaussianFit | None = None,
) -> NDArray[np.float64]:
    """Online LiRA [Carlini22]: the log likelihood ratio of IN vs OUT Gaussians.

    Algorithm 1 of Carlini et al. (2022): with ``phi`` the logit-scaled
    confidence of the target on ``x`` and Gaussians fitted over the shadow
    models with and without ``x`` (:func:`fit_gaussians`),

        Lambda = N(phi; mu_in, s_in^2) / N(phi; mu_out, s_out^2),

    returned as ``log Lambda`` (same ranking, no overflow).

    Parameters
    ----------
    target_phi : array_like, shape (T, n) or (n,)
    shadow_phi : array_like, shape (S, n)
    shadow_in : array_like of bool, shape (S, n)

    Returns
    -------
    ndarray, shape (T, n)
    """
    t = as_2d(target_phi, "target_phi")
    s, mask = check_shadows(shadow_phi, shadow_in, t.shape[1], attack="LiRA (online)")
    g = fit if fit is not None else fit_gaussians(s, mask, variance=variance)
    z_in = _residual(t, g.mean_in) / g.std_in
    z_out = _residual(t, g.mean_out) / g.std_out
    return -0.5 * z_in**2 - np.log(g.std_in) + 0.5 * z_out**2 + np.log(g.std_out)


def lira_offline(
    target_phi: ArrayLike,
    shadow_phi: ArrayLike,
    shadow_in: ArrayLike,
    *,
    variance: Variance = "auto",
    fit: GaussianFit | None = None,
) -> NDArray[np.float64]:
    """Offline LiRA [Carlini22]: a one-sided test against the OUT Gaussian only.

    Algorithm 1 of Carlini et al. (2022), offline variant: the target is never
    trained on, so only ``N(mu_out, s_out^2)`` is fitted and
    ``Lambda = 1 - Pr[Z > phi] = Phi((phi - mu_out) / s_out)``. The score
    returned is the argument ``(phi - mu_out) / s_out`` of the normal CDF: the
    same ranking as ``Lambda`` without its saturation at 1 in floating point.
    Uses only the OUT models; the IN models are ignored.
    """
    t = as_2d(target_phi, "target_phi")
    s, mask = check_shadows(shadow_phi, shadow_in, t.shape[1], attack="LiRA (offline)")
    g = fit if fit is not None else fit_gaussians(s, mask, variance=variance)
    return _residual(t, g.mean_out) / g.std_out
