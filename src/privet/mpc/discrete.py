"""Secure discrete noise with a proven guarantee: the sound MPC mechanisms.

The fixed-point mechanisms of seed 000 (:mod:`privet.mpc.mechanisms`,
Algorithms 12-13) approximate continuous distributions with polynomials,
truncations and a clipping threshold; no DP guarantee is proven for what they
actually sample (see that module's "Privacy truth"). The mechanisms here
sample *integer* noise whose distribution is known exactly, so the ledger can
charge a proven (epsilon, delta):

:class:`SecureDiscreteLaplace`
    Adds discrete Laplace noise, P(Z = z) ∝ exp(-|z| / t) with t = Δ / ε, to
    secret integer values (class counts): the integer analogue of Algorithm
    12, and the distribution OpenDP's ``make_laplace`` samples on integers
    (Canonne, Kamath & Steinke 2020), which the plaintext reference paths use.
:class:`SecureReportNoisyMax`
    Adds discrete Laplace noise of scale t = ⌈2Δ⌉ / ε (t = ⌈Δ⌉ / ε for
    ``monotone`` scores) to secret scores and returns the secret one-hot of
    the first maximum: the sound replacement of the secure exponential
    mechanism (Algorithm 13). A different distribution from the exponential
    mechanism, with the same ε.

How the noise is sampled
------------------------
Z = G1 - G2 for two independent geometric variates, P(G = k) ∝ q**k with
q = exp(-1/t), which is exactly discrete Laplace (Inusah & Kozubowski 2006).
A geometric variate truncated to [0, 2**J) has *independent* binary digits:
digit j is 1 with probability p_j = q**(2**j) / (1 + q**(2**j)), since
prod_j p_j**b_j (1 - p_j)**(1 - b_j) = q**k / prod_j (1 + q**(2**j)) for
k = sum_j b_j 2**j. So G costs J secret Bernoulli coins, and each coin is
one comparison ``R < c_j`` of B secret random bits R with the public integer
c_j = round(p_j 2**B): a chain of B secret products, no secret comparison,
logarithm or exponential. Nobody learns a bit, a coin or the noise.

Proof of the guarantee
----------------------
Let τ_G bound the total-variation distance between the sampled G and the
untruncated geometric: truncation costs P(G >= 2**J) = q**(2**J), rounding
the coins costs sum_j |c_j / 2**B - p_j| (TV of product measures is at most
the sum of the coordinates' TVs). Then Z is at TV τ = 2 τ_G from exact
discrete Laplace. A mechanism at TV τ from an ε-DP one is
(ε, (1 + e**ε) τ)-DP: P(M(D) ∈ S) <= P(M*(D) ∈ S) + τ <= e**ε P(M*(D') ∈ S)
+ e**ε τ + τ <= e**ε P(M(D') ∈ S) + (1 + e**ε) τ.

* Discrete Laplace on integer counts with L1 sensitivity Δ (an integer) and
  t = Δ/ε is ε-DP; only the at most Δ coordinates that differ matter (the
  others are identically distributed on both neighbours), so
  δ = (1 + e**ε) Δ τ.
* Report-noisy-max with i.i.d. integer noise Z and a fixed tie rule is ε-DP
  for scores of sensitivity Δ when t = ⌈2Δ⌉/ε: fix the other candidates'
  noise; candidate i wins iff Z_i >= r for an integer threshold r, and on a
  neighbour it wins whenever Z_i >= r + ⌈2Δ⌉; the survival function of
  discrete Laplace satisfies P(Z >= r + 1) >= q P(Z >= r) for every integer
  r, so P(i | D') >= q**⌈2Δ⌉ P(i | D) = e**-ε P(i | D). (The argument of
  Dwork & Roth, Claim 3.9, with integer thresholds.) All d noise values
  matter: δ = (1 + e**ε) d τ.
* **Monotone scores** (``monotone=True``): report-noisy-max as above with
  t = ⌈Δ⌉/ε is ε-DP when the scores move one way between neighbours: for
  D' = D + x, c_j <= c'_j <= c_j + Δ for every candidate j (counts, and the
  max-operator score of seed 000's Eq. 1, under add/remove: one record raises
  one count of each table by 1, so each sum of row maxima by 0 or 1). Fix
  the other candidates' noise r_{-i}; the values of Z_i for which i wins on D
  are the integers r_i >= r* (upward closed: raising r_i keeps i ahead). For
  r_i >= r* + ⌈Δ⌉, c'_i + r_i >= c_i + r* + ⌈Δ⌉ >= c_j + r_j + Δ >=
  c'_j + r_j, strictly where the tie rule needs it (j before i), because
  c_i + r* beats c_j + r_j on D in the same way; so i wins on D' and
  P(i | D', r_{-i}) >= P(Z >= r* + ⌈Δ⌉) >= q**⌈Δ⌉ P(Z >= r*) =
  e**-ε P(i | D, r_{-i}). The other direction swaps the roles, with
  c_i >= c'_i - Δ and c_j <= c'_j: for r_i >= r'* + ⌈Δ⌉ (r'* the least
  winning value on D'), c_i + r_i >= c'_i + r'* >= c'_j + r_j >= c_j + r_j.
  Integrating over r_{-i} gives ε-DP. The tail ratio: for an integer r >= 0,
  P(Z >= r) = q**r / (1 + q), so P(Z >= r + 1) = q P(Z >= r); for r = -m < 0,
  P(Z >= r) = 1 - q**(m+1) / (1 + q) and P(Z >= r + 1) - q P(Z >= r) =
  (1 - q)(1 - q**m) >= 0. This is Dwork & Roth (2014), Claim 3.9, whose proof
  is written for counting queries with exactly c_j <= c'_j <= c_j + 1, with
  integer thresholds. The scores are not monotone under replace-one (a
  record moving between values lowers one count and raises another), so the
  learners use it under add/remove only. δ is as above, at the scale t
  sampled.

With the default ``security_bits=40``, τ <= 2**-40 (1e-12), so δ is about
1e-13 to 1e-11 per release (it grows with Δ and with the number of
candidates d), for J + ... random bits per coin (see :attr:`coin_bits`).
``security_bits`` is at most 43: the coin probabilities are computed in double
precision, and beyond that the distance stops shrinking near 1e-14.

These δ bound the *released* values. The parties' view has one more term, from
MPyC: a secure comparison opens its input masked with k random bits more than
its length (k = 30, MPyC's default security parameter ``-K``), within
statistical distance about 2**-k of a simulation; see docs/learners.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.ledger import ApproxDP
from privet.mechanisms.bitwise_geometric import (
    DEFAULT_SECURITY_BITS,
    MAX_SECURITY_BITS,
    GeometricCoins,
    coin_threshold,
    discrete_laplace_delta,
    geometric_coins,
    noisy_max_delta,
)
from privet.mpc import fixedpoint as fx
from privet.mpc._runtime import get_runtime
from privet.mpc.mechanisms import _check_noise_fits, _check_positive
from privet.mpc.sharing import reveal, reveal_onehot_index, to_fixed_point

mpc = get_runtime()

SecureArray = Any


def _less_than(r: SecureArray, thresholds: np.ndarray) -> SecureArray:
    """Secret [R < c] for R = sum_i r[..., i] 2**i (secret bits) and public integers c.

    Scanning bits from the least significant:
    lt_i = c_i (1 - r_i) + [r_i = c_i] lt_{i-1}, with [r_i = c_i] linear in r_i
    (c public): one exact product per bit (all values are 0/1 integers).
    ``thresholds`` broadcasts against ``r[..., 0]``.
    """
    c = np.asarray(thresholds, dtype=object)
    lt = None
    for i in range(r.shape[-1]):
        ci = np.vectorize(lambda v, i=i: (int(v) >> i) & 1, otypes=[np.int64])(c)
        ri = r[..., i]
        equal = ri * (2 * ci - 1) + (1 - ci)  # [r_i == c_i]
        first = (1 - ri) * ci
        lt = first if lt is None else first + equal * lt
    lt.integral = True
    return lt


def _coins(sectype: type, shape: tuple[int, ...], coins: GeometricCoins) -> SecureArray:
    """Secret 0/1 digits of shape (*shape, J): digit j is 1 with probability c_j / 2**B."""
    J, B = coins.support_bits, coins.coin_bits
    r = fx.random_bits(sectype, (*shape, J, B))
    return _less_than(r, np.array(coins.thresholds, dtype=object))


def secure_bernoulli(
    sectype: type, shape: tuple[int, ...], probability: float, *, bits: int = 40
) -> SecureArray:
    """Secret 0/1 values, each 1 with probability floor(p 2**bits) / 2**bits <= p.

    Used for Poisson subsampling inside MPC: nobody learns which records
    were sampled, nor how many.
    """
    c = coin_threshold(probability, bits)
    if c >= 2**bits:
        return sectype.array(np.ones(shape, dtype=np.int64))
    r = fx.random_bits(sectype, (*tuple(shape), bits))
    return _less_than(r, np.array(c, dtype=object))


def _geometric(sectype: type, shape: tuple[int, ...], coins: GeometricCoins) -> SecureArray:
    digits = _coins(sectype, shape, coins)
    weights = 2 ** np.arange(coins.support_bits, dtype=np.int64)
    g = mpc.np_sum(digits * weights, axis=len(shape))
    g.integral = True
    return g


def _check_common(owner: str, epsilon: Any, sensitivity: Any, security_bits: Any) -> None:
    _check_positive(owner, "epsilon", epsilon)
    _check_positive(owner, "sensitivity", sensitivity)
    is_int = isinstance(security_bits, int) and not isinstance(security_bits, bool)
    if not is_int or not 8 <= security_bits <= MAX_SECURITY_BITS:
        raise InvalidParameterError(
            f"The 'security_bits' parameter of {owner} must be an int in "
            f"[8, {MAX_SECURITY_BITS}] (the coin probabilities are computed in double "
            f"precision, so more bits would not bring the noise closer). Got "
            f"{security_bits!r} instead."
        )


@dataclass(frozen=True, kw_only=True)
class SecureDiscreteLaplace:
    """Discrete Laplace noise on secret integers, with a proven (ε, δ) (see module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : int, default=1
        L1 sensitivity Δ of the integer query (1 for a class histogram under
        add/remove, 2 under replace-one). Must be a whole number.
    bit_length : int, default=32
        Bit length l of the secure fixed-point type the values live in (the
        noise is integral, so adding it is exact).
    frac_length : int or None, default=None
        Fractional bits f (default l // 2).
    security_bits : int, default=40
        s (8 to 43): the sampled noise is within TV 2**-s of exact discrete Laplace.

    Attributes
    ----------
    scale : float
        t = Δ / ε.
    coins : GeometricCoins
        J, B and the public coin thresholds.
    noise_bound : int
        Largest |noise|, 2**J - 1.

    Examples
    --------
    Inside a party program::

        lap = SecureDiscreteLaplace(epsilon=0.5)
        noisy = await lap.release(counts)      # counts: secret integral array
        entry = lap.entry(n_values=counts.size)
    """

    epsilon: float
    sensitivity: float = 1
    bit_length: int = 32
    frac_length: int | None = None
    security_bits: int = DEFAULT_SECURITY_BITS

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_common(owner, self.epsilon, self.sensitivity, self.security_bits)
        if float(self.sensitivity) != round(float(self.sensitivity)):
            raise InvalidParameterError(
                f"The 'sensitivity' parameter of {owner} must be a whole number (integer "
                f"counts move by whole units); got {self.sensitivity!r}."
            )
        what = f"{owner} noise at scale {self.scale:.4g}"
        _check_noise_fits(self.sectype, self.noise_bound, what, "a larger epsilon")

    @property
    def scale(self) -> float:
        """t = Δ / ε."""
        return float(self.sensitivity) / float(self.epsilon)

    @property
    def sectype(self) -> type:
        return fx.secfxp_type(self.bit_length, self.frac_length)

    @cached_property
    def coins(self) -> GeometricCoins:
        return geometric_coins(self.scale, self.security_bits)

    @property
    def noise_bound(self) -> int:
        return 2**self.coins.support_bits - 1

    @property
    def tv(self) -> float:
        """Bound on TV(one noise value, exact discrete Laplace): 2 τ_G."""
        return 2.0 * self.coins.tv

    def delta(self, n_values: int | None = None) -> float:
        """δ of one release: (1 + e**ε) min(Δ, n_values) τ (module docstring)."""
        return discrete_laplace_delta(self.epsilon, self.sensitivity, n_values, self.security_bits)

    def entry(self, n_values: int | None = None) -> ApproxDP:
        """The ledger entry of one release: (ε, δ)-DP, proven."""
        return ApproxDP(epsilon=float(self.epsilon), delta=self.delta(n_values))

    def noise(self, shape: tuple[int, ...]) -> SecureArray:
        """Secret discrete Laplace noise: G1 - G2, integral fixed-point values."""
        shape = tuple(shape)
        g = _geometric(self.sectype, (2, *shape), self.coins)
        z = g[0] - g[1]
        z.integral = True
        return z

    def add_noise(self, x: SecureArray, *, noise: SecureArray | None = None) -> SecureArray:
        """Secret x + Z elementwise (x: secret integral values of :attr:`sectype`).

        ``noise``: Z drawn elsewhere with this sampler's distribution (the vector
        engine's :func:`privet.mpc.vector.discrete_laplace`), as a secret integral array.
        """
        x = to_fixed_point(x, self.sectype)
        return x + (self.noise(tuple(x.shape)) if noise is None else noise)

    async def release(
        self, x: SecureArray, *, label: str = "discrete-Laplace-noised values"
    ) -> Any:
        """Add noise and open the result to all parties (via :func:`reveal`)."""
        return await reveal(self.add_noise(x), label=label, entry=self)


@dataclass(frozen=True, kw_only=True)
class SecureReportNoisyMax:
    """Report-noisy-max with discrete Laplace noise on secret scores (see module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : float, default=1.0
        Sensitivity Δ of each score (max-operator scores: 1).
    bit_length, frac_length, security_bits
        As for :class:`SecureDiscreteLaplace`.
    monotone : bool, default=False
        The scores move one way between neighbours (c_j <= c'_j <= c_j + Δ for
        D' = D + x): the noise scale is then ⌈Δ⌉ / ε, same ε (module
        docstring, "Monotone scores"). The caller vouches for it.

    Attributes
    ----------
    scale : float
        t = ⌈2Δ⌉ / ε, or ⌈Δ⌉ / ε when ``monotone``.
    laplace : SecureDiscreteLaplace
        The noise sampler (at sensitivity ⌈2Δ⌉, or ⌈Δ⌉ when ``monotone``).
    """

    epsilon: float
    sensitivity: float = 1.0
    bit_length: int = 32
    frac_length: int | None = None
    security_bits: int = DEFAULT_SECURITY_BITS
    monotone: bool = False

    def __post_init__(self) -> None:
        _check_common(type(self).__name__, self.epsilon, self.sensitivity, self.security_bits)
        if not isinstance(self.monotone, bool):
            raise InvalidParameterError(
                f"The 'monotone' parameter of {type(self).__name__} must be True or False; "
                f"got {self.monotone!r}."
            )
        self.laplace  # noqa: B018 - validates the noise range now

    @cached_property
    def laplace(self) -> SecureDiscreteLaplace:
        shift = float(self.sensitivity) if self.monotone else 2 * float(self.sensitivity)
        return SecureDiscreteLaplace(
            epsilon=float(self.epsilon),
            sensitivity=math.ceil(shift),
            bit_length=self.bit_length,
            frac_length=self.frac_length,
            security_bits=self.security_bits,
        )

    @property
    def scale(self) -> float:
        return self.laplace.scale

    @property
    def sectype(self) -> type:
        return self.laplace.sectype

    @property
    def noise_bound(self) -> int:
        return self.laplace.noise_bound

    def delta(self, n_candidates: int) -> float:
        """δ of one selection among d candidates: (1 + e**ε) d τ."""
        return noisy_max_delta(
            self.epsilon, self.sensitivity, n_candidates, self.security_bits, bool(self.monotone)
        )

    def entry(self, n_candidates: int) -> ApproxDP:
        return ApproxDP(epsilon=float(self.epsilon), delta=self.delta(n_candidates))

    def select(
        self,
        scores: SecureArray,
        *,
        offset: int = 0,
        mask: Any = None,
        noise: SecureArray | None = None,
    ) -> SecureArray:
        """Secret one-hot of argmax(scores + Z) over the last axis, first maximum on ties.

        Parameters
        ----------
        scores : secure integral fixed-point array, shape (..., d)
        offset : int, default=0
            Public lower bound of the scores' negative part: scores >= -offset
            (the keys that fix the tie rule need non-negative values).
        mask : secure or public 0/1 array broadcast to ``scores``, optional
            Candidates with mask 0 are excluded (never chosen). Their noise is
            drawn all the same, so the cost does not depend on the mask.
        noise : secure integral array of ``scores``' shape, optional
            The discrete Laplace noise drawn elsewhere with :attr:`laplace`'s
            distribution (the vector engine); by default drawn here.
        """
        q = to_fixed_point(scores, self.sectype)
        noisy = q + (self.laplace.noise(tuple(q.shape)) if noise is None else noise)
        return argmax_first(noisy, offset + self.noise_bound, mask)

    async def select_index(
        self, scores: SecureArray, *, label: str = "report-noisy-max choice"
    ) -> Any:
        """Run :meth:`select` and open only the chosen index."""
        opened = await reveal_onehot_index(self.select(scores), label=label, entry=self)
        return int(opened) if opened.ndim == 0 else opened


def argmax_first(values: SecureArray, offset: int, mask: Any = None) -> SecureArray:
    """Secret one-hot of the first maximum along the last axis (values >= -offset).

    Keys ``v + offset + (d - i) / 2**k`` (k = bit length of d) are distinct,
    positive, and their maximum is the first maximum of ``v`` (integral
    values), whatever order MPyC's tournament compares in: the tie rule is
    fixed, as the report-noisy-max proof needs. The rank lives in the
    fractional bits, so the keys need no more integer range than the values.
    ``mask`` (secret or public 0/1, broadcast to ``values``) zeroes the keys of
    excluded candidates, which can then never win.
    """
    sectype = type(values).sectype
    d = values.shape[-1]
    if d == 1:
        return sectype.array(np.ones(values.shape, dtype=np.int64))
    k = max(1, math.ceil(math.log2(d + 1)))
    if k > sectype.frac_length:
        raise InvalidParameterError(
            f"argmax over {d} candidates needs {k} fractional bits; {sectype.__name__} has "
            f"{sectype.frac_length}."
        )
    rank = np.arange(d, 0, -1, dtype=float) / 2.0**k  # exact dyadic fractions
    keys = values + (int(offset) + rank)
    if mask is not None:
        keys = mask * keys
    out = mpc.np_argmax(keys, axis=len(values.shape) - 1, arg_unary=True, arg_only=True)
    out.integral = True
    return out


__all__ = [
    "GeometricCoins",
    "SecureDiscreteLaplace",
    "SecureReportNoisyMax",
    "argmax_first",
    "geometric_coins",
    "secure_bernoulli",
]
