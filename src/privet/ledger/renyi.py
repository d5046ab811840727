"""Rényi differential privacy at a fixed grid of orders: the ledger's "rdp" accountant.

A mechanism is (alpha, tau)-RDP when the Rényi divergence of order alpha between
its outputs on neighbouring datasets is at most tau (Mironov 2017). RDP adds up
under composition, order by order, and every order gives an (eps, delta)
guarantee, so a sequence summarised by its RDP at :data:`RDP_ORDERS` is proven
(eps, delta)-DP for the best order (:func:`rdp_to_epsilon`).

The accountant exists for the one release the others cannot price well: a
Gaussian mechanism run on a **Poisson subsample** (a DP-SGD step, a boosted
tree's gradient sums on a sampled batch). Amplifying its (eps, delta) costs a
delta at every step; its RDP is bounded without one (:func:`sampled_gaussian_rdp`,
Mironov, Talwar & Zhang 2019). The other views it uses:

* a Gaussian (or any rho-zCDP release): tau(alpha) = alpha rho (Bun & Steinke
  2016, Def. 1.1, zCDP is RDP at every order);
* an eps-DP release: the Rényi divergence of randomised response at eps
  (:func:`pure_rdp`). An eps-DP pair of output distributions is a
  post-processing of randomised response's pair (Kairouz, Oh & Viswanath 2015,
  Thm. 2.1), and Rényi divergence cannot grow under post-processing (van Erven &
  Harremoës 2014, Thm. 1); this is below both eps and alpha eps^2 / 2.

Orders between integers take the sampled Gaussian's value at the next integer:
Rényi divergence is non-decreasing in its order (van Erven & Harremoës 2014,
Thm. 3), so that value bounds it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = ["RDP_ORDERS", "pure_rdp", "rdp_to_epsilon", "sampled_gaussian_rdp"]

#: The Rényi orders the ledger tracks: dense where small budgets are spent (large
#: orders) and where large ones are (orders near 1).
RDP_ORDERS: tuple[float, ...] = (
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 14.0,
    16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 128.0, 160.0,
    192.0, 256.0, 384.0, 512.0, 1024.0,
)  # fmt: skip
_ALPHA = np.array(RDP_ORDERS)


@lru_cache(maxsize=4096)
def pure_rdp(epsilon: float) -> tuple[float, ...]:
    """RDP of an ``epsilon``-DP release at :data:`RDP_ORDERS`: randomised response's.

    With ``p = e^eps / (1 + e^eps)``, ``D_alpha = log(p^a (1-p)^(1-a) +
    (1-p)^a p^(1-a)) / (a - 1)``; never above ``min(eps, alpha eps^2 / 2)``.
    """
    if epsilon == 0.0:
        return (0.0,) * len(RDP_ORDERS)
    if not math.isfinite(epsilon):
        return (math.inf,) * len(RDP_ORDERS)
    log_p = -math.log1p(math.exp(-epsilon))  # log of e^eps / (1 + e^eps)
    log_q = log_p - epsilon  # log of 1 / (1 + e^eps)
    a = _ALPHA
    # Past epsilon ~ 1e150 the products overflow to +inf (never NaN: log_p is 0 there and
    # log_q = -epsilon), and the clip to the cap, epsilon itself, gives the exact value.
    with np.errstate(over="ignore"):
        tau = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p) / (a - 1)
        cap = np.minimum(epsilon, a * epsilon * epsilon / 2)
    # For small (a - 1) eps the log above is of 1 + (something below the float step): it
    # cancelled to 0 at eps = 1e-8 and lost 2% at 1e-7, under-stating the divergence. The
    # sum less 1 in closed form, with y = (a - 1) eps: -expm1(-y) expm1(eps + y) / (1 + e^eps)
    # (no cancellation, no overflow while eps + y < 700), and D = log1p(that) / (a - 1).
    with np.errstate(over="ignore"):  # y = inf past eps ~ 1e305: not closed, tau as above
        y = (a - 1) * epsilon
        closed = epsilon + y < 700.0
        yc, ec = np.where(closed, y, 0.0), np.where(closed, epsilon + y, 0.0)
    excess = -np.expm1(-yc) * np.expm1(ec) / (1.0 + math.exp(min(epsilon, 700.0)))
    tau = np.where(closed, np.log1p(excess) / (a - 1), tau)
    return tuple(np.clip(tau, 0.0, cap).tolist())


def _sampled_gaussian_integer(q: float, sigma: float, alpha: int) -> float:
    """Mironov, Talwar & Zhang 2019, Sec. 3.3: for an integer order ``alpha``,
    ``A = sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2))`` and the
    RDP is ``log(A) / (alpha - 1)``; it bounds both directions of the divergence."""
    k = np.arange(alpha + 1, dtype=float)
    log_binom = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(alpha - k + 1)
    with np.errstate(divide="ignore"):
        log_1mq = np.log1p(-q) if q < 1.0 else -np.inf
        terms = log_binom + k * math.log(q) + (k * k - k) / (2 * sigma * sigma)
        terms = terms + np.where(k < alpha, (alpha - k) * log_1mq, 0.0)
    return max(0.0, float(logsumexp(terms)) / (alpha - 1))


@lru_cache(maxsize=1024)
def sampled_gaussian_rdp(rate: float, mu: float) -> tuple[float, ...]:
    """RDP at :data:`RDP_ORDERS` of a Gaussian release of ``mu = sensitivity / sigma``
    (or any composition of Gaussians, ``mu^2 = sum mu_i^2``) on a Poisson
    subsample at ``rate``, under add/remove neighbours.

    A composition of Gaussian releases is one Gaussian of ``mu = sqrt(sum mu_i^2)``
    (the privacy loss only depends on the shift along one direction), so the
    subsample's whole chain is priced at once.
    """
    if mu == 0.0:
        return (0.0,) * len(RDP_ORDERS)
    if not math.isfinite(mu):
        return (math.inf,) * len(RDP_ORDERS)
    sigma = 1.0 / mu
    if rate == 1.0:
        return tuple((_ALPHA * mu * mu / 2).tolist())
    by_integer = {int(n): _sampled_gaussian_integer(rate, sigma, int(n)) for n in np.ceil(_ALPHA)}
    return tuple(min(by_integer[math.ceil(a)], a * mu * mu / 2) for a in RDP_ORDERS)


def rdp_to_epsilon(rdp: tuple[float, ...] | np.ndarray, delta: float) -> float:
    """Smallest eps over :data:`RDP_ORDERS` such that the RDP curve ``rdp`` implies
    (eps, delta)-DP: ``eps = tau + log(1 - 1/a) - (log delta + log a) / (a - 1)``
    (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21)."""
    tau = np.asarray(rdp, dtype=float)
    if not tau.any():
        return 0.0
    if delta <= 0.0 or not np.isfinite(tau).any():
        return math.inf
    a = _ALPHA
    eps = tau + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    return max(0.0, float(np.min(eps)))
