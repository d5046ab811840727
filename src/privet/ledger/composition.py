"""Composition arithmetic: the only code in privet that adds up privacy loss.

A :class:`Cost` summarises a sequence of releases by additive statistics, so
that sequential composition is addition and every accountant below can read its
bound off the same summary:

* basic composition (Dwork et al. 2006): sum of epsilons and deltas;
* advanced composition, heterogeneous form (Kairouz, Oh & Viswanath 2015,
  Thm. 3.5): eps = sum eps_i tanh(eps_i / 2) + sqrt(2 ln(1/d') sum eps_i^2),
  delta = sum delta_i + d';
* zCDP (Bun & Steinke 2016): rho adds up; rho-zCDP gives (eps, d')-DP with the
  conversion of Canonne, Kamath & Steinke (2020, Cor. 13) minimised over the
  Renyi order, never worse than rho + 2 sqrt(rho ln(1/d')).
* Gaussian differential privacy (Dong, Roth & Su 2022, JRSS-B): a Gaussian
  mechanism of sensitivity s and noise sigma is exactly mu-GDP with mu = s/sigma,
  mu-GDP mechanisms compose exactly to sqrt(sum mu_i^2)-GDP, and mu-GDP is
  (eps, delta(eps))-DP with delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
  (their Cor. 2.13), the tight conversion. For compositions of Gaussians this is
  the privacy-loss-distribution answer, tighter than the zCDP conversion; the
  other releases are added by basic composition.
* Rényi DP at a grid of orders (Mironov 2017; :mod:`privet.ledger.renyi`): the
  RDP curves add up, and the best order's conversion is the bound. It prices a
  Gaussian on a Poisson subsample without a delta per step (Mironov, Talwar &
  Zhang 2019), and an eps-DP release as randomised response; releases with no
  RDP view are added by basic composition.

Parallel composition of a partition group is the componentwise maximum over its
parts under add/remove neighbours: a record lies in exactly one part, so the
releases that see it form one chain, whose statistics are each at most the
maximum, and every bound above is increasing in every statistic.

Under replace-one neighbours a replaced record can leave one part and its
replacement enter another (a decision tree splits on the record's own values),
so up to two chains see the change. Every scope therefore carries two costs:
``single``, the costliest chain (one record added or removed below it), and
``double``, the costliest way two chains can see the change (see
:func:`group_pair`); the ledger's cost is the root's ``double``, which is at
most twice its ``single`` and never exponential in the depth. This assumes each
charge's guarantee also covers adding or removing one record in its scope,
which holds for every counting mechanism in privet (the replace-one sensitivity
bounds the add/remove one). A partition declared ``stable`` (the part a record
goes to is fixed by who holds it, not by its values, e.g. horizontal
partitioning over data owners) never splits a replaced pair.

Subsampling amplification uses the exact bounds, never the linearised g*eps:
Poisson sampling with rate g under add/remove, and sampling m of n without
replacement (g = m/n) under replace-one, give
eps' = ln(1 + g (e^eps - 1)), delta' = g delta (Balle, Barthe & Gaboardi 2018,
Table 1). Other pairings are refused. A subsample whose releases are all
Gaussian, Poisson-sampled, also gets its RDP curve (:func:`amplify_cost`).
"""

from __future__ import annotations

import hashlib
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from privet.errors import InvalidParameterError, UnsupportedEntryError
from privet.ledger.entries import Entry
from privet.ledger.guarantee import Guarantee
from privet.ledger.relation import NeighbouringRelation
from privet.ledger.renyi import RDP_ORDERS, pure_rdp, rdp_to_epsilon, sampled_gaussian_rdp

SAMPLING_METHODS = ("poisson", "without_replacement")


#: The names of :class:`Cost`'s statistics, in the order of :attr:`Cost.v`.
COST_FIELDS: tuple[str, ...] = (
    "eps",
    "delta",
    "sq",
    "kl",
    "rho",
    "eps_rest",
    "delta_rest",
    "mu2",
    "eps_ng",
    "delta_ng",
    "eps_nr",
    "delta_nr",
    *(f"rdp@{a:g}" for a in RDP_ORDERS),
)
_SCALARS = 12  # the statistics before the RDP curve
_WIDTH = len(COST_FIELDS)
#: Names the statistics of a stored cost (:meth:`Cost.to_payload`): a cost stored by a
#: privet with other statistics is not read as this one's.
COST_LAYOUT = hashlib.sha256(",".join(COST_FIELDS).encode()).hexdigest()[:12]


def _statistic(index: int, doc: str) -> property:
    return property(lambda self: self.v[index], doc=doc)


@dataclass(frozen=True, slots=True)
class Cost:
    """Additive summary of a sequence of releases (see module docstring).

    The statistics are one tuple of floats, :attr:`v`, named by
    :data:`COST_FIELDS`: composing costs is adding or taking the maximum of
    tuples, which a scope tree does for every scope on a charge's path.

    eps, delta
        Basic-composition totals over all releases.
    sq, kl
        Sum of eps_i^2 and of eps_i tanh(eps_i/2), for advanced composition.
    rho
        Sum of zCDP parameters of the releases that have one.
    eps_rest, delta_rest
        Basic totals over the releases that have no zCDP view.
    mu2, eps_ng, delta_ng
        Sum of mu_i^2 of the Gaussian releases (mu = sensitivity / sigma), and the
        basic totals over the releases that are not Gaussian.
    eps_nr, delta_nr, rdp
        Basic totals over the releases with no Rényi view, and the sum of the
        others' RDP at :data:`~privet.ledger.renyi.RDP_ORDERS`.
    """

    v: tuple[float, ...] = (0.0,) * _WIDTH

    eps = _statistic(0, "Basic-composition epsilon.")
    delta = _statistic(1, "Basic-composition delta.")
    sq = _statistic(2, "Sum of eps_i^2.")
    kl = _statistic(3, "Sum of eps_i tanh(eps_i / 2).")
    rho = _statistic(4, "Sum of the zCDP parameters.")
    eps_rest = _statistic(5, "Basic epsilon of the releases with no zCDP view.")
    delta_rest = _statistic(6, "Basic delta of the releases with no zCDP view.")
    mu2 = _statistic(7, "Sum of mu_i^2 of the Gaussian releases.")
    eps_ng = _statistic(8, "Basic epsilon of the releases that are not Gaussian.")
    delta_ng = _statistic(9, "Basic delta of the releases that are not Gaussian.")
    eps_nr = _statistic(10, "Basic epsilon of the releases with no Rényi view.")
    delta_nr = _statistic(11, "Basic delta of the releases with no Rényi view.")

    @property
    def rdp(self) -> tuple[float, ...]:
        """The RDP curve at :data:`~privet.ledger.renyi.RDP_ORDERS`."""
        return self.v[_SCALARS:]

    @staticmethod
    def from_values(values: Sequence[float]) -> Cost:
        """The inverse of :meth:`values` (a row of a wide partition's arrays)."""
        return Cost(tuple(map(float, values)))

    @staticmethod
    def of(entry: Entry) -> Cost:
        eps, delta, rho = entry.epsilon, entry.delta, entry.rho
        return Cost.of_values(eps, delta, rho, getattr(entry, "gdp_mu", None))

    @staticmethod
    @lru_cache(maxsize=4096)  # charges repeat a few entries (every level of a tree, ...)
    def of_values(eps: float, delta: float, rho: float | None, mu: float | None = None) -> Cost:
        if math.isinf(eps):
            sq = kl = math.inf
        else:
            sq, kl = eps * eps, eps * math.tanh(eps / 2)
        gdp = (mu * mu, 0.0, 0.0) if mu is not None else (0.0, eps, delta)
        if rho is None:
            no_renyi = (0.0,) * len(RDP_ORDERS)
            return Cost((eps, delta, sq, kl, 0.0, eps, delta, *gdp, eps, delta, *no_renyi))
        renyi = tuple(a * rho for a in RDP_ORDERS)
        if delta == 0.0 and math.isfinite(eps):
            renyi = tuple(map(min, renyi, pure_rdp(eps)))
        return Cost((eps, delta, sq, kl, rho, 0.0, 0.0, *gdp, 0.0, 0.0, *renyi))

    @staticmethod
    def of_guarantee(g: Guarantee) -> Cost:
        """An (eps, delta) release; pure ones also get the zCDP view eps^2/2."""
        rho = g.epsilon * g.epsilon / 2 if g.delta == 0.0 and math.isfinite(g.epsilon) else None
        return Cost.of_values(g.epsilon, g.delta, rho)

    def __add__(self, other: Cost) -> Cost:
        if other is ZERO:
            return self
        if self is ZERO:
            return other
        return Cost(tuple(map(operator.add, self.v, other.v)))

    def scaled(self, k: int) -> Cost:
        """k-fold sequential repetition."""
        return Cost(tuple(k * x if x else 0.0 for x in self.v))

    def values(self) -> tuple[float, ...]:
        """The statistics in the order of :data:`COST_FIELDS` (a row of the arrays)."""
        return self.v

    def maximum(self, other: Cost) -> Cost:
        if self is other:
            return self
        return Cost(tuple(map(max, self.v, other.v)))

    def with_basic_view(self, g: Guarantee) -> Cost:
        """This cost, with no finite basic epsilon, as one release that is also ``g``-DP
        (as a Gaussian that states its (epsilon, delta)): its basic totals and
        advanced-composition sums become ``g``'s; every other view stays.

        A reservation holds its plan's cost so: a plan of Gaussians has basic epsilon
        = inf, and a subsample holding it would amplify the best bound of everything in
        it instead of its basic totals, which can be below what the committed charges
        alone are proven to cost.
        """
        if math.isfinite(self.eps) or not math.isfinite(g.epsilon):
            return self
        eps = g.epsilon
        return Cost((eps, g.delta, eps * eps, eps * math.tanh(eps / 2), *self.v[4:]))

    def less(self, other: Cost) -> Cost:
        """What is left of this cost after ``other``, statistic by statistic, never below 0
        (an infinite statistic less an infinite one leaves 0: the total stays infinite)."""
        return Cost(tuple(a - b if a > b else 0.0 for a, b in zip(self.v, other.v, strict=True)))

    def to_payload(self) -> dict[str, object]:
        """This cost as stored in a ledger event: its layout and its statistics as text."""
        return {"layout": COST_LAYOUT, "v": ["inf" if math.isinf(x) else repr(x) for x in self.v]}

    @staticmethod
    def from_payload(data: object) -> Cost | None:
        """The inverse of :meth:`to_payload`; None for a cost stored with other statistics
        (an older or newer privet), which the caller replaces by a coarser one."""
        if not isinstance(data, dict) or data.get("layout") != COST_LAYOUT:
            return None
        values = [math.inf if x == "inf" else float(x) for x in data["v"]]
        if len(values) != _WIDTH or not all(x >= 0 for x in values):
            return None
        return Cost(tuple(values))

    def with_rdp(self, rdp: Sequence[float]) -> Cost:
        """This cost with the RDP curve ``rdp`` and nothing left without a Rényi view."""
        return Cost((*self.v[:10], 0.0, 0.0, *rdp))

    @property
    def is_zero(self) -> bool:
        return not any(self.v)

    def to_dict(self) -> dict[str, float | str]:
        return {
            n: ("inf" if math.isinf(x) else x) for n, x in zip(COST_FIELDS, self.v, strict=True)
        }


ZERO = Cost()


def sequential(costs: Iterable[Cost]) -> Cost:
    total = ZERO
    for c in costs:
        total = total + c
    return total


def _top2_sum(costs: Sequence[Cost]) -> Cost:
    values = np.array([c.v for c in costs], dtype=float)
    top2 = -np.partition(-values, 1, axis=0)[:2]
    return Cost.from_values(top2.sum(axis=0).tolist())


def _maximum(costs: Sequence[Cost]) -> Cost:
    if len(costs) > 8:  # a wide partition (a forest's trees): one vectorised maximum
        values = np.array([c.v for c in costs], dtype=float)
        return Cost.from_values(values.max(axis=0).tolist())
    out = costs[0]
    for c in costs[1:]:
        out = out.maximum(c)
    return out


Pair = tuple[Cost, Cost]


def group_pair(
    pairs: Sequence[Pair], relation: NeighbouringRelation, *, stable: bool = False
) -> Pair:
    """(single, double) cost of a partition group from its parts' (single, double).

    ``single`` is the cost of the releases that can see one added or removed
    record: one chain, so the maximum over parts. ``double`` (replace-one only)
    is the cost when a replaced record leaves one part and its replacement
    enters another: the two records either stay together inside one part (that
    part's double) or sit in two different parts (the sum of two singles).
    Under add/remove, double equals single.
    """
    if not pairs:
        return ZERO, ZERO
    single = _maximum([p[0] for p in pairs])
    if relation is NeighbouringRelation.ADD_REMOVE:
        return single, single
    double = _maximum([p[1] for p in pairs])
    if not stable and len(pairs) >= 2:
        double = double.maximum(_top2_sum([p[0] for p in pairs]))
    return single, double


def group_pair_arrays(
    single: np.ndarray, double: np.ndarray, relation: NeighbouringRelation, *, stable: bool
) -> Pair:
    """:func:`group_pair` over parts given as rows of ``(parts, fields)`` arrays.

    The same values as :func:`group_pair` on the parts' costs (rows of zeros,
    parts with nothing charged, change neither the maximum nor the sum of the
    two largest).
    """
    if single.shape[0] == 0:
        return ZERO, ZERO
    one = Cost.from_values(single.max(axis=0).tolist())
    if relation is NeighbouringRelation.ADD_REMOVE:
        return one, one
    two = double.max(axis=0)
    if not stable and single.shape[0] >= 2:
        two = np.maximum(two, -np.partition(-single, 1, axis=0)[:2].sum(axis=0))
    return one, Cost.from_values(two.tolist())


def parallel(
    costs: Sequence[Cost], relation: NeighbouringRelation, *, stable: bool = False
) -> Cost:
    """Cost of a partition group whose parts are leaves costing ``costs``."""
    return group_pair([(c, c) for c in costs], relation, stable=stable)[1]


def parallel_repeated(
    pair: Pair, count: int, relation: NeighbouringRelation, *, stable: bool = False
) -> Pair:
    """(single, double) of a partition group of ``count`` parts costing at most ``pair``."""
    if count < 1:
        return ZERO, ZERO
    return group_pair([pair] * min(count, 2), relation, stable=stable)


def amplify(g: Guarantee, rate: float, method: str, relation: NeighbouringRelation) -> Guarantee:
    """Exact amplification by subsampling (module docstring)."""
    check_sampling(rate, method, relation)
    if rate == 1.0:
        return g  # no amplification: exactly the unamplified guarantee
    if math.isinf(g.epsilon):
        return Guarantee(math.inf, min(1.0 - 1e-300, rate * g.delta))
    if g.epsilon < 700.0:
        eps = math.log1p(rate * math.expm1(g.epsilon))
    else:  # the same value, written so that e^eps cannot overflow
        eps = g.epsilon + math.log(rate + (1.0 - rate) * math.exp(-g.epsilon))
    return Guarantee(min(eps, g.epsilon), rate * g.delta)


def check_sampling(rate: float, method: str, relation: NeighbouringRelation) -> None:
    if method not in SAMPLING_METHODS:
        raise InvalidParameterError(
            f"Unknown sampling method {method!r}; use one of {', '.join(SAMPLING_METHODS)}."
        )
    try:
        ok = 0.0 < float(rate) <= 1.0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidParameterError(f"Sampling rate must lie in (0, 1], got {rate!r}.")
    if method == "poisson" and relation is not NeighbouringRelation.ADD_REMOVE:
        raise UnsupportedEntryError(
            "Amplification by Poisson sampling is proven here for add/remove neighbours "
            "only; use method='without_replacement' (a fixed sample of m of n records) "
            "with a replace-one ledger, or an add/remove ledger."
        )
    if method == "without_replacement" and relation is not NeighbouringRelation.REPLACE_ONE:
        raise UnsupportedEntryError(
            "Amplification by sampling without replacement is proven for replace-one "
            "neighbours (the sample size m is fixed); use method='poisson' with an "
            "add/remove ledger, or open the ledger with relation='replace_one'."
        )


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """Smallest eps such that rho-zCDP implies (eps, delta)-DP, over a grid of
    Renyi orders (Canonne, Kamath & Steinke 2020, Cor. 13; equivalently Balle et
    al. 2020, Thm. 21), never above rho + 2 sqrt(rho ln(1/delta))."""
    if rho == 0.0:
        return 0.0
    if math.isinf(rho) or delta <= 0.0:
        return math.inf
    simple = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    alpha = 1.0 + np.logspace(-4, 4, 4000)
    eps = (
        alpha * rho
        + np.log1p(-1.0 / alpha)
        + (math.log(1.0 / delta) - np.log(alpha)) / (alpha - 1.0)
    )
    return float(min(simple, max(0.0, eps.min())))


def gdp_delta(mu: float, eps: float) -> float:
    """delta(eps) of mu-GDP (Dong, Roth & Su, Cor. 2.13), computed in logs."""
    from scipy.special import log_ndtr

    a = float(log_ndtr(-eps / mu + mu / 2))
    b = eps + float(log_ndtr(-eps / mu - mu / 2))
    return max(0.0, math.exp(a) - math.exp(b)) if b < a else 0.0


def gdp_to_epsilon(mu: float, delta: float) -> float:
    """Smallest eps (to 1e-9 relative, rounded up) with mu-GDP => (eps, delta)-DP."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu) or delta <= 0.0:
        return math.inf
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu)
    while gdp_delta(mu, hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(200):  # delta(eps) decreases in eps: keep delta(hi) <= delta
        mid = 0.5 * (lo + hi)
        if gdp_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return hi


@dataclass(frozen=True, slots=True)
class Bound:
    """A guarantee together with the accountant that gave it."""

    guarantee: Guarantee
    method: str


def view_bounds(cost: Cost, delta: float) -> list[Bound]:
    """What each accountant proves for ``cost`` within total ``delta``: basic
    composition always; advanced composition, zCDP, Gaussian DP and Rényi DP where
    ``delta`` leaves room beyond the releases' own deltas."""
    out = [Bound(Guarantee(cost.eps, min(cost.delta, 1 - 1e-16)), "basic")]
    if delta > cost.delta and cost.sq > 0 and math.isfinite(cost.sq):
        slack = delta - cost.delta
        eps = cost.kl + math.sqrt(2.0 * math.log(1.0 / slack) * cost.sq)
        out.append(Bound(Guarantee(eps, delta), "advanced"))
    if delta > cost.delta_rest and cost.rho > 0 and math.isfinite(cost.eps_rest):
        slack = delta - cost.delta_rest
        eps = zcdp_to_epsilon(cost.rho, slack) + cost.eps_rest
        out.append(Bound(Guarantee(eps, delta), "zcdp"))
    if delta > cost.delta_ng and cost.mu2 > 0 and math.isfinite(cost.eps_ng + cost.mu2):
        eps = gdp_to_epsilon(math.sqrt(cost.mu2), delta - cost.delta_ng) + cost.eps_ng
        out.append(Bound(Guarantee(eps, delta), "gdp"))
    if delta > cost.delta_nr and any(cost.rdp) and math.isfinite(cost.eps_nr):
        eps = rdp_to_epsilon(cost.rdp, delta - cost.delta_nr) + cost.eps_nr
        out.append(Bound(Guarantee(eps, delta), "rdp"))
    return out


def best_guarantee(cost: Cost, delta: float) -> Bound:
    """The smallest epsilon any accountant of :func:`view_bounds` proves for ``cost``
    within total ``delta``: basic composition unless another is strictly smaller.
    (The ledger also asks its PLD accountant, :mod:`privet.ledger.pld_tree`.)"""
    views = view_bounds(cost, delta)
    best = views[0]
    for bound in views[1:]:
        if bound.guarantee.epsilon < best.guarantee.epsilon * (1 - 1e-12):
            best = bound
    return best


@lru_cache(maxsize=8192)  # a scope tree re-amplifies every unchanged subsample per charge
def amplify_cost(
    child: Cost, rate: float, method: str, relation: NeighbouringRelation, delta: float
) -> Cost:
    """Cost of a subsample whose releases cost ``child``: the exact amplification of
    the child's basic (eps, delta) (infinite when a release in it has only a zCDP or
    Gaussian view).

    A Poisson subsample whose releases are all Gaussian also carries the sampled
    Gaussian's RDP curve (:func:`~privet.ledger.renyi.sampled_gaussian_rdp`) in
    place of its amplified guarantee's: no delta is spent for it per subsample.
    Every other subsample is priced best by the PLD accountant
    (:mod:`privet.ledger.pld_tree`), which amplifies the child's whole privacy
    curve. Each statistic of the result grows with each statistic of ``child``, so
    adding a charge below a subsample never lowers any view (``delta``, the
    budget's, is kept for the callers' cache keys). An earlier version amplified
    the best bound at ``delta`` of a child with no basic epsilon, which made a
    Gaussian joining Laplace charges lower the figure.
    """
    g = Guarantee(child.eps, min(child.delta, 1 - 1e-16))
    amplified = Cost.of_guarantee(amplify(g, rate, method, relation))
    all_gaussian = child.mu2 > 0.0 and child.eps_ng == 0.0 and child.delta_ng == 0.0
    if method != "poisson" or not all_gaussian or rate == 1.0:
        return amplified
    return amplified.with_rdp(sampled_gaussian_rdp(float(rate), math.sqrt(child.mu2)))
