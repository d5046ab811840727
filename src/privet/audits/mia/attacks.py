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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from privet.audits.mia import lira as _lira
from privet.audits.mia.lira import *  # noqa: F403  (re-exported, see __all__)
from privet.audits.mia.lira import GaussianFit, fit_gaussians, lira_offline, lira_online
from privet.audits.mia.rmia import rmia, tune_rmia_a
from privet.audits.mia.signals import (
    DEFAULT_CLIP,
    MembershipSignals,
    check_clip,
    check_shadows,
    logit_confidence,
)
from privet.errors import InvalidParameterError

__all__ = [  # LiRA lives in lira.py, RMIA in rmia.py; their names stay importable here
    *_lira.__all__,
    "ATTACKS",
    "DEFAULT_ATTACKS",
    "loss_attack",
    "rmia",
    "shokri_attack",
    "tune_rmia_a",
]

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
    _, mask = check_shadows(sp[..., 0], shadow_in, n, attack="The shadow-model attack")
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
