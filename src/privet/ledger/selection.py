"""Private selection among repeated runs: the ledger entry of Papernot & Steinke (2022).

A *base run* ``Q`` is one randomised algorithm that reads the data and outputs a
candidate together with a score (in :class:`privet.model_selection.PrivateSearchCV`:
draw a setting uniformly at random from a grid, train a learner with it on the
training part, release a noisy validation score). The selection ``A`` runs ``Q``
``K`` times, ``K`` drawn from a truncated negative binomial distribution
``D_{eta, gamma}`` independently of the data and kept secret, and outputs only the
run with the highest score. Papernot & Steinke (2022, "Hyperparameter tuning with
Rényi differential privacy", ICLR, Thm. 2) prove: if ``Q`` is
``(lambda, eps(lambda))``-RDP at every order, then for any ``lambda > 1`` and
``lambda_hat >= 1``, ``A`` is ``(lambda, eps_A(lambda))``-RDP with

    eps_A(lambda) = eps(lambda)
                    + (1 + eta) (1 - 1/lambda_hat) eps(lambda_hat)
                    + (1 + eta) log(1/gamma) / lambda_hat
                    + log(E[K]) / (lambda - 1),

where ``D_{eta, gamma}`` has ``P[K = k] = (1 - gamma)^k / (k log(1/gamma))`` for
``eta = 0`` (the logarithmic distribution) and
``P[K = k] = binom(k + eta - 1, k) gamma^eta (1 - gamma)^k / (1 - gamma^eta)`` for
``eta != 0`` (``k >= 1``), with mean ``E[K] = (1/gamma - 1) / log(1/gamma)`` (eta = 0)
or ``eta (1 - gamma) / (gamma (1 - gamma^eta))``. ``eta = 1`` is the geometric
distribution of Liu & Talwar (2019, "Private selection from private candidates",
STOC). The bound holds at every ``lambda_hat``; :meth:`PrivateSelection.rdp_curve`
takes the smallest over the ledger's orders and ``lambda_hat = 1`` (where the
second term vanishes).

RDP of order ``lambda`` gives ``(eps, delta)``-DP with
``eps = eps_A(lambda) + log(1 - 1/lambda) - (log delta + log lambda) / (lambda - 1)``
(Canonne, Kamath & Steinke 2020, Prop. 12); the entry states the smallest such
``eps`` over the orders at its ``delta``. That ``(epsilon, delta)`` statement is how
the ledger composes the selection with everything else (basic composition); the
curve is kept in the entry for an accountant that composes RDP curves.

``Q``'s curve comes from the ledger too (:func:`base_run_curve`): the plans of the
candidates, each composed by the ledger's own rules, the largest at every order
(a run draws its candidate at random, and Rényi divergence is quasi-convex in the
pair of distributions, van Erven & Harremoës 2014, Thm. 13, so a mixture with
public weights costs at most its costliest component), and the score release,
grouped with the training as the two parts of a partition of the records
(training part, validation part; each record's part is drawn by a secret coin).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privet.errors import InvalidParameterError
from privet.ledger.composition import Pair, group_pair
from privet.ledger.entries import Entry, register_entry
from privet.ledger.guarantee import check_delta
from privet.ledger.plan import PlanNode
from privet.ledger.relation import NeighbouringRelation
from privet.ledger.renyi import RDP_ORDERS

__all__ = [
    "PrivateSelection",
    "base_run_curve",
    "expected_runs",
    "gamma_for_mean",
    "sample_runs",
]


def expected_runs(eta: float, gamma: float) -> float:
    """``E[K]`` of the truncated negative binomial ``D_{eta, gamma}`` (module docstring)."""
    if eta == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * (1.0 - gamma**eta))


def gamma_for_mean(eta: float, mean: float) -> float:
    """The ``gamma`` whose ``D_{eta, gamma}`` has mean ``mean`` (> 1): bisection on log gamma."""
    if not mean > 1.0:
        raise InvalidParameterError(f"The expected number of runs must exceed 1, got {mean!r}.")
    lo, hi = 1e-12, 1.0 - 1e-12  # E[K] decreases in gamma
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if expected_runs(eta, mid) > mean:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return hi


def sample_runs(eta: float, gamma: float, rng: np.random.Generator) -> int:
    """One draw of ``K ~ D_{eta, gamma}`` (``K >= 1``).

    ``eta = 0``: the logarithmic distribution, by inversion of its CDF. ``eta > 0``:
    a negative binomial (``eta`` successes of probability ``gamma``; numpy's Gamma-
    Poisson mixture handles a real ``eta``) conditioned on ``K >= 1`` by rejection.
    """
    if eta == 0.0:
        u, k, p = rng.random(), 1, (1.0 - gamma) / math.log(1.0 / gamma)
        cdf = p
        while cdf < u and k < 10**7:
            k += 1
            p *= (1.0 - gamma) * (k - 1) / k
            cdf += p
        return k
    while True:
        k = int(rng.negative_binomial(eta, gamma))
        if k >= 1:
            return k


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class PrivateSelection(Entry):
    """The best of ``K ~ D_{eta, gamma}`` runs of a base run with RDP curve ``base_rdp``.

    Fields: ``base_rdp``, the base run's RDP at ``orders``; ``eta`` and ``gamma``,
    the distribution of the number of runs; ``delta``, at which the entry states its
    epsilon. ``rdp_curve()`` is Papernot & Steinke (2022, Thm. 2)'s bound at each
    order, minimised over ``lambda_hat`` in ``{1} + orders``; ``epsilon`` its
    conversion (Canonne, Kamath & Steinke 2020, Prop. 12) at ``delta``. The math is
    in this module's docstring. The ``K`` draws, the runs tried and their scores
    stay hidden; only the best run's output is released.
    """

    base_rdp: tuple[float, ...]
    orders: tuple[float, ...] = RDP_ORDERS
    eta: float = 0.0
    gamma: float = 0.5
    delta: float = 1e-5

    def __post_init__(self) -> None:
        base = tuple(float(x) for x in self.base_rdp)
        orders = tuple(float(a) for a in self.orders)
        if len(base) != len(orders) or not orders:
            raise InvalidParameterError(
                f"PrivateSelection: base_rdp has {len(base)} values for {len(orders)} orders."
            )
        if any(not a > 1.0 for a in orders) or any(not x >= 0.0 for x in base):
            raise InvalidParameterError(
                "PrivateSelection: orders must exceed 1 and base_rdp values be >= 0 "
                f"(got orders {orders[:3]}..., base_rdp {base[:3]}...)."
            )
        if not (self.eta > -1.0 and math.isfinite(self.eta)):
            raise InvalidParameterError(f"PrivateSelection: eta must be > -1, got {self.eta!r}.")
        if not 0.0 < self.gamma < 1.0:
            raise InvalidParameterError(
                f"PrivateSelection: gamma must lie in (0, 1), got {self.gamma!r}."
            )
        object.__setattr__(self, "base_rdp", base)
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "eta", float(self.eta))
        object.__setattr__(self, "gamma", float(self.gamma))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def expected_runs(self) -> float:
        return expected_runs(self.eta, self.gamma)

    def rdp_curve(self) -> tuple[float, ...]:
        """``eps_A`` at :attr:`orders` (Papernot & Steinke 2022, Thm. 2)."""
        a = np.array(self.orders)
        tau = np.array(self.base_rdp)
        scale = 1.0 + self.eta
        log_inv_gamma = math.log(1.0 / self.gamma)
        # lambda_hat = 1 (the second term is 0) and every tracked order
        hat = np.concatenate(
            [[scale * log_inv_gamma], scale * ((1 - 1 / a) * tau + log_inv_gamma / a)]
        )
        extra = float(np.min(hat))
        return tuple((tau + extra + math.log(self.expected_runs) / (a - 1)).tolist())

    @property
    def epsilon(self) -> float:
        if self.delta <= 0.0:
            return math.inf
        a = np.array(self.orders)
        tau = np.array(self.rdp_curve())
        eps = tau + np.log1p(-1.0 / a) - (math.log(self.delta) + np.log(a)) / (a - 1)
        return max(0.0, float(np.min(eps)))


def base_run_curve(
    trainings: Sequence[PlanNode],
    score: PlanNode,
    relation: NeighbouringRelation,
    delta: float,
) -> tuple[float, ...]:
    """RDP curve of one base run, at :data:`~privet.ledger.renyi.RDP_ORDERS`.

    ``trainings``: the plan of each candidate's training (one is drawn at random per
    run, so the curve is their largest at each order); ``score``: the plan of the
    validation score's release. Training and score see the two parts of a partition
    of the records, so they are composed as a partition group by the ledger's rule
    (under add/remove the larger of the two; under replace-one a replaced record may
    change part, so also their sum). Every release must have a Rényi view: a plan
    with releases priced only in (epsilon, delta) is refused, before any data is read.
    """
    pairs: list[Pair] = []
    for plan in trainings:
        pairs.append(plan.cost_pair(relation, delta=delta))
    for single, double in pairs:
        if single.eps_nr > 0 or single.delta_nr > 0 or double.eps_nr > 0 or double.delta_nr > 0:
            raise InvalidParameterError(
                "A candidate's privacy plan has releases with no Rényi-DP view (priced in "
                "(epsilon, delta) only), so the private selection theorem (Papernot & Steinke "
                "2022) gives no bound for it. Use learners whose releases are Gaussian, "
                "Laplace or exponential-mechanism ones."
            )
    single = pairs[0][0]
    double = pairs[0][1]
    for s, d in pairs[1:]:
        single, double = single.maximum(s), double.maximum(d)
    train_pair = (single, double)
    score_pair = score.cost_pair(relation, delta=delta)
    _, run = group_pair([train_pair, score_pair], relation)
    return tuple(run.rdp)
