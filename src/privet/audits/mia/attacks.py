"""The membership-inference attacks: scores, higher for "more likely a member".

Each attack is a plain function of arrays (so a caller with its own signals —
say a secret-shared target queried through its oblivious protocol — can use it
without the experiment driver) plus an entry in :data:`ATTACKS` that applies it
to :class:`~privet.audits.mia.signals.MembershipSignals`.

Notation: ``T`` targets, ``S`` shadow/reference models, ``n`` candidates,
``m`` population samples, ``phi`` the logit-scaled confidence of
:func:`~privet.audits.mia.signals.logit_confidence`, ``p`` the (clipped)
probability of the true class.

References
----------
.. [Yeom18] S. Yeom, I. Giacomelli, M. Fredrikson, S. Jha, "Privacy risk in
   machine learning: Analyzing the connection to overfitting", CSF 2018.
.. [Shokri17] R. Shokri, M. Stronati, C. Song, V. Shmatikov, "Membership
   inference attacks against machine learning models", IEEE S&P 2017.
.. [Carlini22] N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
   "Membership inference attacks from first principles", IEEE S&P 2022
   (arXiv:2112.03570).
.. [Zarifzadeh24] S. Zarifzadeh, P. Liu, R. Shokri, "Low-cost high-power
   membership inference attacks", ICML 2024 (arXiv:2312.03262).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from privet.audits.mia.signals import (
    DEFAULT_CLIP,
    MembershipSignals,
    check_clip,
    logit_confidence,
)
from privet.errors import InvalidParameterError

__all__ = [
    "ATTACKS",
    "DEFAULT_ATTACKS",
    "GaussianFit",
    "Variance",
    "fit_gaussians",
    "lira_offline",
    "lira_online",
    "loss_attack",
    "rmia",
    "shokri_attack",
    "tune_rmia_a",
]

Variance = Literal["auto", "global", "per_example"]
_MIN_VAR = 1e-12
GLOBAL_VARIANCE_BELOW = 32
"""``variance="auto"`` pools the variance when an example has fewer IN (or OUT)
shadow models than this, i.e. below 64 shadow models in the balanced design,
following Carlini et al. (2022), who find a global variance better than
per-example estimates with few shadow models."""


def _as_2d(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise InvalidParameterError(f"'{name}' must be 1-D or 2-D; got shape {a.shape}.")
    return a


def _check_shadows(
    shadow: ArrayLike, shadow_in: ArrayLike, n: int, *, attack: str, minimum: int = 2
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    s = np.asarray(shadow, dtype=np.float64)
    mask = np.asarray(shadow_in)
    if s.ndim != 2 or mask.shape != s.shape or s.shape[1] != n:
        raise InvalidParameterError(
            f"{attack}: shadow signals and shadow_in must both have shape (n_shadows, {n}); "
            f"got {s.shape} and {mask.shape}."
        )
    if s.shape[0] < minimum:
        raise InvalidParameterError(
            f"{attack} needs at least {minimum} shadow models (it fits IN and OUT statistics per "
            f"example); got n_shadows={s.shape[0]}. Train more shadow models."
        )
    return s, mask.astype(bool)


# -- Yeom et al.: loss threshold ---------------------------------------------------------


def loss_attack(p_true: ArrayLike, *, clip: float = DEFAULT_CLIP) -> NDArray[np.float64]:
    """Loss-threshold attack [Yeom18]: score ``= -loss = log p_y``.

    Yeom et al. (their membership experiment and its bounded-loss /
    threshold adversary) predict "member" when the loss is below a threshold
    (the expected training loss); sweeping the threshold gives the ROC curve, so
    the score is the negative cross-entropy loss, ``p_y`` clipped below at
    ``clip``. Needs no shadow model.
    """
    c = check_clip(clip)
    return np.log(np.clip(np.asarray(p_true, dtype=np.float64), c, 1.0))


# -- Shokri et al.: shadow models + attack classifier -----------------------------------------


def default_attack_model(random_state: int | None = None) -> HistGradientBoostingClassifier:
    """Attack classifier of :func:`shokri_attack`: small gradient-boosted trees."""
    return HistGradientBoostingClassifier(
        max_iter=100, max_leaf_nodes=15, early_stopping=False, random_state=random_state
    )


def shokri_attack(
    target_proba: ArrayLike,
    labels: ArrayLike,
    shadow_proba: ArrayLike,
    shadow_in: ArrayLike,
    *,
    attack_model: Any = None,
    clip: float = DEFAULT_CLIP,
    random_state: int | None = None,
) -> NDArray[np.float64]:
    """Shadow-model attack [Shokri17]: one attack classifier per class.

    Shokri et al. (Sec. IV, shadow models and attack model) train shadow
    models that imitate the target, label each shadow's output vector on its
    own training records "in" and on other records "out", and fit one binary attack model per class on these
    (output vector, in/out) pairs; the attack model's probability of "in" on the
    target's output is the score. Here the shadows are those of the LiRA design
    (every candidate IN for half of them), the features are the log of the
    clipped output vector, and the attack model is ``attack_model`` (any
    scikit-learn classifier, cloned per class; default
    :func:`default_attack_model`) in place of the paper's neural network.

    Parameters
    ----------
    target_proba : array_like, shape (T, n, C) or (n, C)
    labels : array_like of int, shape (n,)
    shadow_proba : array_like, shape (S, n, C)
    shadow_in : array_like of bool, shape (S, n)

    Returns
    -------
    ndarray, shape (T, n)
    """
    c = check_clip(clip)
    tp = np.asarray(target_proba, dtype=np.float64)
    if tp.ndim == 2:
        tp = tp[None]
    sp = np.asarray(shadow_proba, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.intp)
    n = lab.shape[0]
    if sp.ndim != 3 or sp.shape[1] != n or tp.shape[1:] != sp.shape[1:]:
        raise InvalidParameterError(
            f"shokri_attack: expected target_proba (T, {n}, C) and shadow_proba (S, {n}, C) "
            f"with the same C; got {tp.shape} and {sp.shape}."
        )
    _, mask = _check_shadows(sp[..., 0], shadow_in, n, attack="The shadow-model attack")
    template = attack_model if attack_model is not None else default_attack_model(random_state)
    scores = np.full(tp.shape[:2], 0.5)
    # The attack models are small: one OpenMP thread each avoids the heavy
    # oversubscription slow-down of histogram boosting on small inputs.
    with threadpool_limits(limits=1, user_api="openmp"):
        for k in np.unique(lab):
            _fit_class_attack(k, lab, sp, tp, mask, c, template, scores)
    return scores


def _fit_class_attack(
    k: int,
    lab: NDArray[np.intp],
    sp: NDArray[np.float64],
    tp: NDArray[np.float64],
    mask: NDArray[np.bool_],
    c: float,
    template: Any,
    scores: NDArray[np.float64],
) -> None:
    """Fit the attack model of class ``k`` on shadow outputs; score the targets."""
    cols = np.flatnonzero(lab == k)
    X_train = np.log(np.clip(sp[:, cols, :], c, 1.0)).reshape(-1, sp.shape[2])
    y_train = mask[:, cols].reshape(-1)
    if y_train.all() or not y_train.any():
        return  # no contrast for this class: leave the uninformative 0.5
    model = clone(template).fit(X_train, y_train)
    X_test = np.log(np.clip(tp[:, cols, :], c, 1.0)).reshape(-1, tp.shape[2])
    pos = list(model.classes_).index(True)
    scores[:, cols] = model.predict_proba(X_test)[:, pos].reshape(tp.shape[0], -1)


# -- LiRA ------------------------------------------------------------------------------------


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
    t = _as_2d(target_phi, "target_phi")
    s, mask = _check_shadows(shadow_phi, shadow_in, t.shape[1], attack="LiRA (online)")
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
    t = _as_2d(target_phi, "target_phi")
    s, mask = _check_shadows(shadow_phi, shadow_in, t.shape[1], attack="LiRA (offline)")
    g = fit if fit is not None else fit_gaussians(s, mask, variance=variance)
    return _residual(t, g.mean_out) / g.std_out


# -- RMIA ------------------------------------------------------------------------------------


def _check_a(a: float) -> float:
    try:
        v = float(a)
    except (TypeError, ValueError):
        v = math.nan
    if not 0.0 <= v <= 1.0:
        raise InvalidParameterError(
            f"The RMIA parameter 'a' must be a float in [0, 1] or 'auto'; got {a!r}."
        )
    return v


def _check_gamma(gamma: float) -> float:
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
    a = _check_a(a)
    log_gamma = math.log(_check_gamma(gamma))
    tp = np.clip(_as_2d(target_p, "target_p"), c, 1.0)
    sp, mask = _check_shadows(shadow_p, shadow_in, tp.shape[1], attack="RMIA", minimum=1)
    sp = np.clip(sp, c, 1.0)
    zt = np.clip(_as_2d(population_target_p, "population_target_p"), c, 1.0)
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
    grid = [_check_a(a) for a in grid]
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


# -- registry --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AttackSpec:
    """An attack of the registry: its function on signals and what it needs."""

    name: str
    title: str
    needs_shadows: bool
    needs_population: bool
    run: Callable[[MembershipSignals, Mapping[str, Any]], tuple[NDArray[np.float64], dict]]


def _run_loss(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[NDArray, dict]:
    return loss_attack(sig.target_p(), clip=opt["clip"]), {}


def _run_shokri(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[NDArray, dict]:
    scores = shokri_attack(
        sig.target_proba,
        sig.labels,
        sig.shadow_proba,
        sig.shadow_in,
        attack_model=opt.get("attack_model"),
        clip=opt["clip"],
        random_state=opt.get("seed"),
    )
    return scores, {}


def _lira_fit(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[NDArray, GaussianFit]:
    cache = opt["_cache"]
    if "lira" not in cache:
        phi_s = logit_confidence(sig.shadow_p(), clip=opt["clip"])
        cache["lira"] = fit_gaussians(phi_s, sig.shadow_in, variance=opt["variance"])
    return logit_confidence(sig.target_p(), clip=opt["clip"]), cache["lira"]


def _lira_info(g: GaussianFit) -> dict:
    return {
        "variance": g.variance,
        "variance_fallbacks": g.n_fallback,
        "global_std_in": g.global_std_in,
        "global_std_out": g.global_std_out,
    }


def _run_lira_online(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[NDArray, dict]:
    phi_t, g = _lira_fit(sig, opt)
    phi_s = logit_confidence(sig.shadow_p(), clip=opt["clip"])
    return lira_online(phi_t, phi_s, sig.shadow_in, fit=g), _lira_info(g)


def _run_lira_offline(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[NDArray, dict]:
    phi_t, g = _lira_fit(sig, opt)
    phi_s = logit_confidence(sig.shadow_p(), clip=opt["clip"])
    return lira_offline(phi_t, phi_s, sig.shadow_in, fit=g), _lira_info(g)


def _rmia_a(sig: MembershipSignals, opt: Mapping[str, Any]) -> tuple[float, dict]:
    cache = opt["_cache"]
    if "rmia_a" not in cache:
        a = opt["rmia_a"]
        if isinstance(a, str):
            a, aucs = tune_rmia_a(
                sig.shadow_p(),
                sig.shadow_in,
                sig.population_shadow_p(),
                gamma=opt["rmia_gamma"],
                clip=opt["clip"],
            )
            cache["rmia_a"] = (a, {"a": a, "a_tuned": True, "a_auc": aucs})
        else:
            cache["rmia_a"] = (float(a), {"a": float(a), "a_tuned": False})
    return cache["rmia_a"]


def _run_rmia(sig: MembershipSignals, opt: Mapping[str, Any], online: bool) -> tuple[NDArray, dict]:
    a, info = _rmia_a(sig, opt)
    scores = rmia(
        sig.target_p(),
        sig.shadow_p(),
        sig.shadow_in,
        sig.population_target_p(),
        sig.population_shadow_p(),
        a=a,
        gamma=opt["rmia_gamma"],
        online=online,
        clip=opt["clip"],
    )
    return scores, {**info, "gamma": opt["rmia_gamma"], "online": online}


ATTACKS: dict[str, AttackSpec] = {
    "loss": AttackSpec("loss", "Loss threshold (Yeom et al. 2018)", False, False, _run_loss),
    "shokri": AttackSpec("shokri", "Shadow models (Shokri et al. 2017)", True, False, _run_shokri),
    "lira_offline": AttackSpec(
        "lira_offline", "LiRA offline (Carlini et al. 2022)", True, False, _run_lira_offline
    ),
    "lira_online": AttackSpec(
        "lira_online", "LiRA online (Carlini et al. 2022)", True, False, _run_lira_online
    ),
    "rmia": AttackSpec(
        "rmia",
        "RMIA offline (Zarifzadeh et al. 2024)",
        True,
        True,
        lambda s, o: _run_rmia(s, o, online=False),
    ),
    "rmia_online": AttackSpec(
        "rmia_online",
        "RMIA online (Zarifzadeh et al. 2024)",
        True,
        True,
        lambda s, o: _run_rmia(s, o, online=True),
    ),
}
"""Attacks by name, for :func:`~privet.audits.mia.membership_inference`."""

DEFAULT_ATTACKS = ("loss", "shokri", "lira_offline", "lira_online", "rmia")
