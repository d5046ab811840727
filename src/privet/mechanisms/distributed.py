"""Distributed Laplace noise from Gamma shares (gamma DLPA; seed 003, Gubler).

K parties each add G_k - G'_k, with G_k, G'_k i.i.d. Gamma(shape 1/K, scale b),
to their share of a sum; a Gamma(1/K, b) sum over K parties is Gamma(1, b) =
Exponential(b), and the difference of two independent Exponential(b) variables
is Laplace(b) (the infinite divisibility of the Laplace law; seed 003, eq. (1),
after Goryczka & Xiong 2017). The sum is therefore released with Laplace(b)
noise, (Delta/b)-DP for a query of L1 sensitivity Delta, **for anyone who knows
none of the shares**.

Collusion. A coalition of t parties that subtracts its own shares from the sum
is left with

    R_t = sum_{k honest} (G_k - G'_k) = X - Y,  X, Y ~ Gamma(a, b), a = (K - t)/K,

which is not Laplace for t >= 1. Its density (b = 1; the variance-gamma or
symmetric Bessel law) is

    p_a(z) = (|z|/2)^{a-1/2} K_{a-1/2}(|z|) / (sqrt(pi) Gamma(a)),

with K_nu the modified Bessel function of the second kind. What it gives:

* Pure DP. On (0, inf), p_a(z) = int f(x) f(x + z) dx is a positive mixture
  of the log-convex functions z -> f(x + z) (f is the Gamma(a) density, log-convex
  for a <= 1), so log p_a is convex there, and p_a is even and decreasing in |z|.
  Hence g = -log p_a is concave and increasing on (0, inf), the privacy loss
  L(z) = log p_a(z) - log p_a(z - s) decreases on (-inf, 0) and on (0, s) and is
  negative beyond s, and

      sup_z L(z) = log p_a(0) - log p_a(s),   increasing in the shift s <= Delta/b,

  with p_a(0) = Gamma(2a - 1) / (Gamma(a)^2 2^{2a-1}) for a > 1/2 and p_a(0) =
  infinity for a <= 1/2. So t colluders leave a finite pure epsilon iff t < K/2,
  and none at all (epsilon = infinity) iff t >= K/2.

* (epsilon, delta)-DP. delta(epsilon) = sup_{0 < s <= Delta/b} int (p_a(z) -
  e^epsilon p_a(z - s))_+ dz, the hockey-stick divergence (tight for a
  real-valued query). By the monotonicity above the set where the integrand is
  positive is one interval (-y*, z*) with z* in (0, s) and y* in (0, inf]; both
  ends are found by root finding, and the two probabilities by quadrature of
  the density (substituting u = z^{2a} near the singularity at 0). The
  supremum over shifts is taken over a grid of shifts in (0, Delta/b] (the maximum
  has always been at s = Delta/b; for integer-valued queries s = Delta exactly);
  the result adds 1e-10 for the root-finding tolerance.

Sampling. Each party's Gamma shares are drawn with numpy (see
:mod:`privet.mechanisms._random`); OpenDP has no Gamma sampler. The shares are
floats, so the floating-point weaknesses of naive Laplace sampling (Mironov
2012) are not excluded for the released sum (privet's DP test, on the output
and on its low mantissa bits, finds nothing at 2e5 trials, which is no proof);
the ledger records the mathematical guarantee of the ideal continuous noise.
For integer-valued queries ``discrete=True`` uses integer Polya shares instead
(:mod:`privet.mechanisms.polya`): every output is an integer and the
guarantees, outsider and colluders', are proven for the noise drawn.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, optimize, special

from privet.errors import InvalidParameterError
from privet.ledger import ADD_REMOVE, Entry, Guarantee, NeighbouringRelation
from privet.mechanisms import _validate as v
from privet.mechanisms._random import local_rng
from privet.mechanisms.base import Mechanism
from privet.mechanisms.entries import DistributedLaplace
from privet.mechanisms.laws import AdditiveLaw, Law
from privet.mechanisms.polya import discrete_residual_epsilon, polya_shares

__all__ = [
    "CollusionGuarantee",
    "GammaDLPA",
    "collusion_guarantee",
    "make_gamma_dlpa",
    "residual_delta",
    "residual_epsilon",
    "residual_log_density",
    "residual_pure_epsilon",
]

_ROOT_TOL = 1e-10
MIN_SHIFT, MAX_SHIFT = 1e-9, 1e6  # sensitivity / scale accepted by collusion_guarantee
MAX_PARTIES = 10_000
"""Most parties a gamma DLPA accepts (each draws its own share array)."""
MAX_MAGNITUDE = 1e300
"""Largest |sum of party values| accepted: beyond it the noisy float sum may overflow."""
_SHIFT_GRID = 8


# ------------------------------------------------------------ residual density
def residual_log_density(z: Any, shape: float) -> NDArray[np.float64]:
    """log density of X - Y, X, Y i.i.d. Gamma(shape, scale 1) (module docstring)."""
    a = float(shape)
    z = np.abs(np.asarray(z, dtype=float))
    nu = a - 0.5
    safe = np.where(z == 0, 1.0, z)
    with np.errstate(divide="ignore"):
        out = (
            nu * np.log(safe / 2)
            + np.log(special.kve(abs(nu), safe))
            - safe
            - 0.5 * math.log(math.pi)
            - special.gammaln(a)
        )
    return np.where(z == 0, _log_density_at_zero(a), out)


def _log_density_at_zero(a: float) -> float:
    if a <= 0.5:
        return math.inf
    return float(special.gammaln(2 * a - 1) - 2 * special.gammaln(a) - (2 * a - 1) * math.log(2))


def _loss(z: float, a: float, s: float) -> float:
    return float(residual_log_density(z, a) - residual_log_density(z - s, a))


def residual_pure_epsilon(shape: float, shift: float) -> float:
    """sup over outputs and shifts <= ``shift`` of the privacy loss: log p(0)/p(shift)."""
    a, s = float(shape), float(shift)
    if a <= 0.5:
        return math.inf
    return _log_density_at_zero(a) - float(residual_log_density(s, a))


def _region(a: float, s: float, eps: float) -> tuple[float, float] | None:
    """The interval (-y*, z*) where the loss exceeds eps + tol, or None (module docstring)."""
    thr = eps + _ROOT_TOL
    if residual_pure_epsilon(a, s) <= thr:
        return None

    def f(z: float) -> float:
        return _loss(z, a, s) - thr

    # right end in (0, s): the loss decreases from its supremum (at 0+) to -inf (at s-)
    inside = s / 2
    while f(inside) <= 0:
        inside /= 2
        if inside < 1e-300:
            return None  # pragma: no cover - the excess is confined to a null set
    outside = s / 2
    while f(outside) > 0:
        outside = s - (s - outside) / 2
    z_star = optimize.brentq(f, inside, outside, xtol=1e-15, rtol=1e-13)
    # left end: on (-inf, 0) the loss decreases from its supremum towards s (units of b)
    if thr <= s:
        return -math.inf, z_star
    near, far = s / 2, s
    while f(-near) <= 0:
        near /= 2
        if near < 1e-300:
            return 0.0, z_star  # pragma: no cover
    while f(-far) > 0:
        far *= 2
        if far > 1e6:  # pragma: no cover - the loss tends to s < thr
            return -math.inf, z_star
    y_star = optimize.brentq(lambda t: f(-t), near, far, xtol=1e-15, rtol=1e-13)
    return -y_star, z_star


def _density(z: float, a: float) -> float:
    return float(np.exp(residual_log_density(z, a)))


def _mass(lo: float, hi: float, a: float) -> float:
    """P(lo < X - Y < hi) for 0 <= lo < hi <= inf, by quadrature of the density.

    Near 0 the density behaves like z^{2a-1}; for a < 1/2 the substitution
    u = z^{2a} removes that singularity.
    """
    if hi <= lo:
        return 0.0
    quad = functools.partial(integrate.quad, limit=200, epsabs=0.0, epsrel=1e-12)
    if lo == 0.0 and a < 0.5:
        cut = min(hi, 1.0)
        power = 1.0 / (2 * a)

        def g(u: float) -> float:
            return _density(u**power, a) * power * u ** (power - 1) if u > 0 else 0.0

        head = quad(g, 0.0, cut ** (2 * a))[0]
        return head + (_mass(cut, hi, a) if hi > cut else 0.0)
    if math.isinf(hi):
        return float(quad(_density, lo, math.inf, args=(a,))[0])
    return float(quad(_density, lo, hi, args=(a,))[0])


@functools.lru_cache(maxsize=4096)
def _delta_at_shift(a: float, s: float, eps: float) -> float:
    """int (p(z) - e^eps p(z - s))_+ dz over the region (-y*, z*), by symmetry of p."""
    region = _region(a, s, eps)
    if region is None:
        return 0.0
    y_star, z_star = -region[0], region[1]
    first = _mass(0.0, y_star, a) + _mass(0.0, z_star, a)
    second = _mass(s - z_star, s + y_star, a)
    if second <= 0.0:
        val = first
    else:  # e^eps * second in logs: past e^700 it dwarfs first (<= 1), and exp would overflow
        log_term = eps + math.log(second)
        val = first - math.exp(log_term) if log_term < 700.0 else -math.inf
    return min(1.0, max(0.0, val) + _ROOT_TOL)


def _shifts(shift: float) -> list[float]:
    return [shift * j / _SHIFT_GRID for j in range(1, _SHIFT_GRID + 1)]


def residual_delta(epsilon: float, shape: float, shift: float) -> float:
    """delta(epsilon) of the residual noise against shifts up to ``shift`` (units of b)."""
    eps = float(epsilon)
    return max(_delta_at_shift(float(shape), s, eps) for s in _shifts(float(shift)))


@functools.lru_cache(maxsize=512)
def residual_epsilon(delta: float, shape: float, shift: float) -> float:
    """Smallest epsilon with residual_delta(epsilon) <= delta (bisection)."""
    a, s, d = float(shape), float(shift), float(delta)
    top = residual_pure_epsilon(a, s)
    if d <= 0.0:
        return top
    lo, hi = 0.0, min(top, max(1.0, 2 * s))
    if math.isinf(hi) or residual_delta(hi, a, s) > d:
        hi = max(1.0, 2 * s)
        while residual_delta(hi, a, s) > d:
            lo, hi = hi, 2 * hi
            if hi > 1e4:  # pragma: no cover - only for absurd deltas
                return math.inf
    for _ in range(60):
        if hi - lo <= 1e-7 * hi:
            break
        mid = 0.5 * (lo + hi)
        # bisect on the largest shift first (where the supremum lies), check the grid at the end
        if _delta_at_shift(a, s, mid) > d:
            lo = mid
        else:
            hi = mid
    while residual_delta(hi, a, s) > d:  # pragma: no cover - grid maximum away from s
        hi *= 1.001
    return hi


def _parties(parties: Any, owner: str) -> int:
    k = v.integer(parties, "parties", owner)
    if k > MAX_PARTIES:
        raise InvalidParameterError(
            f"The 'parties' parameter of {owner} must be at most {MAX_PARTIES}; got {k}."
        )
    return k


@dataclass(frozen=True, slots=True)
class CollusionGuarantee:
    """What the released sum still guarantees against ``colluders`` of ``parties`` parties.

    ``pure_epsilon`` is infinite when ``colluders >= parties / 2``;
    ``epsilon``/``delta`` is the guarantee recorded in the ledger entry: pure
    when finite, else epsilon at the requested delta.
    """

    parties: int
    colluders: int
    shape: float
    shift: float
    pure_epsilon: float
    epsilon: float
    delta: float

    def delta_at(self, epsilon: float) -> float:
        """delta(epsilon) of the residual noise."""
        if self.colluders == 0:
            return 0.0 if epsilon >= self.shift else _laplace_delta(epsilon, self.shift)
        return residual_delta(epsilon, self.shape, self.shift)

    def epsilon_at(self, delta: float) -> float:
        """Smallest epsilon for which the residual noise is (epsilon, delta)-DP."""
        if self.colluders == 0:
            return self.shift if delta <= 0 else _laplace_epsilon(delta, self.shift)
        return residual_epsilon(delta, self.shape, self.shift)


def _laplace_delta(eps: float, s: float) -> float:
    """Hockey-stick of Laplace(1) vs shifted by s: 1 - e^{(eps - s)/2} for eps < s."""
    return max(0.0, -math.expm1((eps - s) / 2))


def _laplace_epsilon(delta: float, s: float) -> float:
    return max(0.0, s + 2 * math.log1p(-delta))


def collusion_guarantee(
    parties: int,
    colluders: int,
    *,
    sensitivity: float = 1.0,
    scale: float,
    delta: float = 1e-6,
) -> CollusionGuarantee:
    """The guarantee the gamma DLPA sum keeps against ``colluders`` colluding parties.

    >>> g = collusion_guarantee(5, 1, scale=1.0)
    >>> round(g.pure_epsilon, 4)
    1.4428
    >>> collusion_guarantee(5, 3, scale=1.0).pure_epsilon
    inf
    """
    owner = "collusion_guarantee"
    k = _parties(parties, owner)
    t = v.integer(colluders, "colluders", owner, minimum=0)
    if t >= k:
        raise InvalidParameterError(
            f"The 'colluders' parameter of {owner} must be < parties={k}; got {t}. With all "
            "parties colluding nothing is left to protect."
        )
    s = v.positive(sensitivity, "sensitivity", owner) / v.positive(scale, "scale", owner)
    if not MIN_SHIFT <= s <= MAX_SHIFT:
        raise InvalidParameterError(
            f"{owner}: sensitivity / scale = {s!r} is outside [{MIN_SHIFT:g}, {MAX_SHIFT:g}], "
            "where the residual-noise analysis is computed reliably; choose an epsilon "
            "(sensitivity / scale) in that range."
        )
    d = v.probability(delta, "delta", owner)
    a = (k - t) / k
    if t == 0:
        return CollusionGuarantee(k, 0, 1.0, s, s, s, 0.0)
    pure = residual_pure_epsilon(a, s)
    if math.isfinite(pure):
        return CollusionGuarantee(k, t, a, s, pure, pure, 0.0)
    return CollusionGuarantee(k, t, a, s, pure, residual_epsilon(d, a, s), d)


# ----------------------------------------------------------------- mechanism
class GammaDLPA(Mechanism):
    """Gamma distributed Laplace perturbation over ``parties`` parties (seed 003).

    Parameters
    ----------
    parties : int
        K, the number of parties adding a share of the noise.
    scale : float
        b: the summed noise is Laplace(b).
    sensitivity : float, default=1.0
        L1 sensitivity of the summed query under ``relation``.
    colluders : int, default=1
        t, the coalition size whose guarantee the ledger entry records. Each
        party knows its own share, so t = 1 is what every participant gets.
    collusion_delta : float, default=1e-6
        delta at which to state the colluders' guarantee when it has no pure
        epsilon (t >= K/2).
    charge_colluders : bool, default=False
        Charge the ledger with the colluders' guarantee instead of the
        outsider's Laplace guarantee.
    discrete : bool, default=False
        Integer-valued queries only: integer Polya shares whose sum is the
        discrete Laplace(b) (:mod:`privet.mechanisms.polya`). Every output is
        an integer, so the floating-point weakness of the Gamma shares is
        excluded, and the colluders' guarantee is pure for every t < K. The
        sound choice for counts.
    """

    mechanism = "gamma_dlpa"

    def __init__(
        self,
        *,
        parties: int,
        scale: float,
        sensitivity: float = 1.0,
        relation: NeighbouringRelation | str = ADD_REMOVE,
        colluders: int = 1,
        collusion_delta: float = 1e-6,
        charge_colluders: bool = False,
        discrete: bool = False,
    ) -> None:
        owner = type(self).__name__
        self.discrete = bool(discrete)
        self.parties = _parties(parties, owner)
        self.scale = v.positive(scale, "scale", owner)
        if self.scale > MAX_MAGNITUDE / 1e3:
            raise InvalidParameterError(
                f"The 'scale' parameter of {owner} must be at most {MAX_MAGNITUDE / 1e3:g} (the "
                f"noisy sum would overflow); got {scale!r}. Rescale the query."
            )
        self.sensitivity = v.positive(sensitivity, "sensitivity", owner)
        v.bounded_loss(self.sensitivity, self.scale, owner)
        if self.discrete and self.scale > v.MAX_DISCRETE_SCALE:
            raise InvalidParameterError(
                f"The 'scale' parameter of {owner}(discrete=True) must be at most "
                f"{v.MAX_DISCRETE_SCALE:g} (the integer shares must fit in 64-bit integers); "
                f"got {scale!r}. Raise epsilon, or rescale the query."
            )
        self.relation = v.relation(relation, owner)
        self.colluders = v.integer(colluders, "colluders", owner, minimum=0)
        if self.colluders >= self.parties:
            raise InvalidParameterError(
                f"The 'colluders' parameter of {owner} must be < parties={self.parties}; "
                f"got {self.colluders}."
            )
        self.collusion_delta = v.probability(collusion_delta, "collusion_delta", owner)
        self.charge_colluders = bool(charge_colluders)
        self._collusion = self.collusion_guarantee()

    @property
    def epsilon(self) -> float:
        return self.entry().epsilon

    @property
    def share_shape(self) -> float:
        return 1.0 / self.parties

    def collusion_guarantee(
        self, colluders: int | None = None, delta: float | None = None
    ) -> CollusionGuarantee:
        """The guarantee against ``colluders`` (default: the mechanism's t)."""
        if self.discrete:
            return self._discrete_collusion(
                self.colluders if colluders is None else colluders, self.sensitivity
            )
        return collusion_guarantee(
            self.parties,
            self.colluders if colluders is None else colluders,
            sensitivity=self.sensitivity,
            scale=self.scale,
            delta=self.collusion_delta if delta is None else delta,
        )

    def _discrete_collusion(self, colluders: int, sensitivity: float) -> CollusionGuarantee:
        t = v.integer(colluders, "colluders", type(self).__name__, minimum=0)
        if t >= self.parties:
            raise InvalidParameterError(
                f"colluders must be < parties={self.parties}; got {t}. With all parties "
                "colluding nothing is left to protect."
            )
        eps = discrete_residual_epsilon(self.parties, t, sensitivity, self.scale)
        a = (self.parties - t) / self.parties
        return CollusionGuarantee(self.parties, t, a, sensitivity / self.scale, eps, eps, 0.0)

    def law(self) -> Law:
        """An outsider's view: the sum of the party values plus one (discrete) Laplace."""
        return AdditiveLaw("laplace", self.scale, discrete=self.discrete, parties=self.parties)

    def entry(self) -> Entry:
        c = self._collusion
        return DistributedLaplace(
            scale=self.scale,
            sensitivity=self.sensitivity,
            parties=self.parties,
            colluders=self.colluders,
            colluder_epsilon=c.epsilon,
            colluder_delta=c.delta,
            charge_colluders=self.charge_colluders,
            discrete=self.discrete,
        )

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        """The outsider's guarantee d_in / scale (or the colluders', if charged)."""
        d = self._d_in(d_in)
        if not self.charge_colluders:
            return Guarantee(d / self.scale)
        if self.discrete:
            return Guarantee(self._discrete_collusion(self.colluders, d).epsilon)
        c = collusion_guarantee(
            self.parties,
            self.colluders,
            sensitivity=max(d, 1e-300),
            scale=self.scale,
            delta=self.collusion_delta,
        )
        return Guarantee(c.epsilon, c.delta)

    def _repr_extra(self) -> dict[str, Any]:
        c = self._collusion
        return {
            "parties": self.parties,
            "scale": self.scale,
            f"against_{self.colluders}_colluders": str(Guarantee(c.epsilon, c.delta)),
        }

    def shares(self, shape: int | tuple[int, ...] = ()) -> NDArray[np.float64]:
        """One noise share per party, shape (parties, *shape): G_k - G'_k.

        Drawing shares releases nothing; each party adds its own share to its
        value before the secure sum (seed 003, Alg. 3).
        """
        rng = local_rng()
        full = (self.parties, *np.atleast_1d(np.asarray(shape, dtype=int)).tolist())
        if shape == ():
            full = (self.parties,)
        if self.discrete:
            return polya_shares(rng, self.parties, self.scale, full[1:])
        g = rng.gamma(self.share_shape, self.scale, size=(2, *full))
        return g[0] - g[1]

    def _validate_input(self, party_values: Any) -> NDArray[np.float64]:
        """``party_values`` has shape (parties, ...): party k's share of the query."""
        owner = type(self).__name__
        arr = (
            v.integer_array(party_values, "party_values", owner)
            if self.discrete
            else v.finite_array(party_values, "party_values", owner)
        )
        if arr.ndim == 0 or arr.shape[0] != self.parties:
            raise InvalidParameterError(
                f"The 'party_values' argument of {owner} must have first axis of length "
                f"parties={self.parties}; got shape {arr.shape}."
            )
        with np.errstate(over="ignore"):  # a sum that overflows is inf: refused just below
            magnitude = float(np.abs(arr.astype(float)).sum(axis=0).max()) if arr.size else 0.0
        if self.discrete and magnitude >= v.MAX_INTEGER:  # the int64 sum and noise must fit
            raise InvalidParameterError(
                f"The 'party_values' argument of {owner} sums to 2^62 or more in magnitude, "
                "where the integer sum and its noise would wrap around int64; rescale or clip "
                "the counts to a public bound first."
            )
        if magnitude > MAX_MAGNITUDE:
            raise InvalidParameterError(
                f"The 'party_values' argument of {owner} sums to more than {MAX_MAGNITUDE:g} in "
                "magnitude, where the noisy sum would overflow; rescale the values first."
            )
        return arr

    def _sample(self, arr: NDArray[np.float64]) -> NDArray[np.float64]:
        """sum_k (x_k + G_k - G'_k) over the first axis (called after the charge)."""
        return (arr + self.shares(arr.shape[1:])).sum(axis=0)


def make_gamma_dlpa(
    epsilon: float | None = None,
    *,
    parties: int,
    sensitivity: float = 1.0,
    scale: float | None = None,
    relation: NeighbouringRelation | str = ADD_REMOVE,
    colluders: int = 1,
    collusion_delta: float = 1e-6,
    charge_colluders: bool = False,
    discrete: bool = False,
) -> GammaDLPA:
    """A gamma DLPA at ``epsilon`` (scale = sensitivity / epsilon) or at ``scale``."""
    which = v.one_of({"epsilon": epsilon, "scale": scale}, "make_gamma_dlpa")
    if which == "epsilon":
        scale = v.positive(sensitivity, "sensitivity", "make_gamma_dlpa") / v.positive(
            epsilon, "epsilon", "make_gamma_dlpa"
        )
    return GammaDLPA(
        parties=parties,
        scale=scale,  # type: ignore[arg-type]
        sensitivity=sensitivity,
        relation=relation,
        colluders=colluders,
        collusion_delta=collusion_delta,
        charge_colluders=charge_colluders,
        discrete=discrete,
    )
