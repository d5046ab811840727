"""MPC mechanisms of seed 000 (App. C.3) on MPyC secure fixed-point arrays.

:class:`SecureLaplace` (Algorithm 12) adds Laplace(b) noise, b = sensitivity /
epsilon, to secret-shared values; :class:`SecureExponentialMechanism`
(Algorithm 13) samples a candidate with probability proportional to
exp(epsilon q / (2 sensitivity)) from secret-shared scores q, returning a
secret one-hot vector or the opened index. Nobody learns the noise, the
scores or (for the one-hot output) the choice.

Both are small frozen objects declaring ``epsilon``, ``sensitivity`` and
``scale`` for the ledger, which does all composition; they never add
epsilons themselves. Opening goes through :func:`privet.mpc.sharing.reveal`
with the mechanism as ``entry``.

Privacy truth
-------------
What runs is a fixed-point approximation of the ideal mechanism, so its pure
epsilon-DP is not proven by the textbook argument:

* Laplace noise lives on the 2**-f grid with tails cut at
  :attr:`SecureLaplace.noise_bound` (the uniform has finite resolution, as in
  Mironov 2012's attack on floating-point Laplace), so outputs near the edge
  of the support have an unbounded likelihood ratio between neighbours; the
  mass beyond the cut of the ideal Laplace is 2**-K per exponential variate
  (K = ``exponent_bits``, default f).
* The exponential mechanism's weights are rounded to 2**-f, and with
  ``clip_threshold`` (seed 000 uses -5) every candidate whose scaled score is
  more than |clip_threshold| below the best gets probability exactly 0. This
  is not epsilon-DP at all: a candidate can have probability 0 on one dataset
  and positive probability on a neighbour. :meth:`SecureExponentialMechanism.clip_tv_bound`
  bounds the total-variation distance to the ideal mechanism; a mechanism at
  TV distance tau from an epsilon-DP one is (epsilon, (1 + e**epsilon) tau)-DP.

Whoever charges these to a ledger should use that bound, not bare epsilon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.mpc import fixedpoint as fx
from privet.mpc._runtime import get_runtime
from privet.mpc.sharing import reveal, reveal_onehot_index, to_fixed_point

mpc = get_runtime()

SecureArray = Any

PAPER_CLIP_THRESHOLD = -5.0
"""Exponent threshold of seed 000, App. C.4.1: weights exp(s) with s < -5 are set to 0."""

_LAPLACE_METHODS = ("difference", "sign")


def _check_noise_fits(sectype: type, noise_bound: float, what: str, advice: str) -> None:
    """Refuse noise that could overflow ``sectype`` once added to the counts."""
    limit = 2.0 ** (sectype.bit_length - sectype.frac_length - 1)
    if noise_bound >= limit / 2:
        raise InvalidParameterError(
            f"{what} can reach {noise_bound:.6g} but {sectype.__name__} holds values below "
            f"{limit:g}, and the counts must fit too; use a larger bit_length (seed 000 uses "
            f"50 for Adult) or {advice}."
        )


def _check_positive(owner: str, name: str, value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a float in the range (0, inf). "
            f"Got {value!r} instead."
        )
    return float(value)


def _check_input(owner: str, x: Any, sectype: type) -> SecureArray:
    if isinstance(x, mpc.SecureFixedPointArray) and type(x).sectype is not sectype:
        raise InvalidParameterError(
            f"{owner} works on {sectype.__name__} (bit_length={sectype.bit_length}, "
            f"frac_length={sectype.frac_length}) but got a {type(x).sectype.__name__} array; "
            "share the data with mechanism.sectype or build the mechanism with matching "
            "bit lengths."
        )
    return to_fixed_point(x, sectype)


# ------------------------------------------------------------------------ Laplace


@dataclass(frozen=True, slots=True, kw_only=True)
class SecureLaplace:
    """Secure Laplace mechanism (seed 000, Algorithm 12) on secret-shared values.

    Adds Laplace(0, b) noise, b = ``sensitivity / epsilon``, to each entry of a
    secret fixed-point array; for a query of L1 sensitivity ``sensitivity`` the
    ideal mechanism is epsilon-DP (Dwork et al. 2006). The noise is
    b * (E1 - E2) with E_i = -ln U_i independent Exp(1) variates from secret
    uniforms U_i and a secure logarithm (``method="difference"``, the paper's
    Algorithm 12), or (1 - 2 s) b E with a secret random sign bit s
    (``method="sign"``, half the cost, same distribution).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : float, default=1.0
        L1 sensitivity of the query (1 for a histogram of counts under
        add/remove).
    bit_length : int, default=32
        Bit length l of the secure fixed-point type (seed 000: 32 for Titanic
        and Heart, 50 for Adult).
    frac_length : int or None, default=None
        Fractional bits f (MPyC default ``bit_length // 2``).
    method : {"difference", "sign"}, default="difference"
        How the two-sided noise is formed from exponential variates.
    exponent_bits : int or None, default=None
        Random bits K for the binary exponent of each uniform (default f): the
        noise is cut at (K + 1) b ln 2 and the ideal tail beyond has mass 2**-K
        per variate.

    Attributes
    ----------
    scale : float
        b = sensitivity / epsilon.
    sectype : type
        The MPyC secure fixed-point type the mechanism works on.
    noise_bound : float
        Largest possible |noise|; inputs plus this must stay below
        2**(l - f - 1) (checked for the noise alone at construction).

    Notes
    -----
    Cost per entry (difference method): 2 (K + f - 2) secret random bits,
    2 ceil(log2 K) rounds of exact products, a degree-6 (f = 16) polynomial,
    about 2 f random bits per truncation; see ``benchmarks/mpc_runtime_bench.py``.
    The fixed-point output is not exactly epsilon-DP; see the module docstring.

    Examples
    --------
    Inside a party program (``ctx`` from :func:`privet.mpc.launch`)::

        lap = SecureLaplace(epsilon=0.5)
        counts = await share_horizontal(local_counts[None, :], lap.sectype)
        noisy = await lap.release(mpc.np_sum(counts, axis=0))
    """

    epsilon: float
    sensitivity: float = 1.0
    bit_length: int = 32
    frac_length: int | None = None
    method: str = "difference"
    exponent_bits: int | None = None

    def __post_init__(self) -> None:
        _check_positive("SecureLaplace", "epsilon", self.epsilon)
        _check_positive("SecureLaplace", "sensitivity", self.sensitivity)
        if self.method not in _LAPLACE_METHODS:
            raise InvalidParameterError(
                f"The 'method' parameter of SecureLaplace must be one of {_LAPLACE_METHODS}. "
                f"Got {self.method!r} instead."
            )
        sectype = fx.secfxp_type(self.bit_length, self.frac_length)
        if self.exponent_bits is not None and (
            not isinstance(self.exponent_bits, int) or not 1 <= self.exponent_bits <= 64
        ):
            raise InvalidParameterError(
                f"The 'exponent_bits' parameter of SecureLaplace must be an int in [1, 64]. "
                f"Got {self.exponent_bits!r} instead."
            )
        _check_noise_fits(sectype, self.noise_bound, "SecureLaplace noise", "fewer exponent_bits")

    @property
    def scale(self) -> float:
        """Laplace scale b = sensitivity / epsilon."""
        return self.sensitivity / self.epsilon

    @property
    def sectype(self) -> type:
        """MPyC secure fixed-point type ``SecFxp(bit_length, frac_length)``."""
        return fx.secfxp_type(self.bit_length, self.frac_length)

    @property
    def _k(self) -> int:
        return self.sectype.frac_length if self.exponent_bits is None else self.exponent_bits

    @property
    def noise_bound(self) -> float:
        """Largest |noise| the fixed-point sampler can produce: (K + 1) b ln 2."""
        return (self._k + 1) * math.log(2.0) * self.scale * (1 + 2.0**-8)

    def noise(self, shape: tuple[int, ...]) -> SecureArray:
        """Secret Laplace(0, b) noise array of the given shape."""
        return _laplace_noise(self.sectype, tuple(shape), self.scale, self.method, self._k)

    def add_noise(self, x: SecureArray) -> SecureArray:
        """Return secret x + Laplace(0, b) noise (elementwise).

        Parameters
        ----------
        x : secure fixed-point array of :attr:`sectype`, or secure integer array
            The secret values (e.g. class counts). Secure integers are
            converted entry by entry first (costly; prefer sharing as
            fixed point).
        """
        x = _check_input("SecureLaplace", x, self.sectype)
        return x + self.noise(tuple(x.shape))

    async def release(self, x: SecureArray, *, label: str = "Laplace-noised values") -> Any:
        """Add noise and open the result to all parties (via :func:`reveal`)."""
        return await reveal(self.add_noise(x), label=label, entry=self)


@mpc.coroutine
async def _laplace_noise(
    sectype: type, shape: tuple[int, ...], scale: float, method: str, exponent_bits: int
):
    """Algorithm 12 of seed 000: Laplace(scale) noise as scale * (-ln U1 + ln U2)."""
    await mpc.returnType((sectype.array, False, shape))
    if method == "difference":
        e1 = fx.random_neg_ln_uniform(sectype, shape, exponent_bits=exponent_bits)  # -ln U1
        e2 = fx.random_neg_ln_uniform(sectype, shape, exponent_bits=exponent_bits)  # -ln U2
        return fx.mul_public(e1 - e2, scale)  # b ln U2 - b ln U1
    e = fx.random_neg_ln_uniform(sectype, shape, exponent_bits=exponent_bits)
    sign = 1 - 2 * fx.random_bits(sectype, shape)
    return sign * fx.mul_public(e, scale)  # exact: sign is +-1


# ------------------------------------------------------------ exponential mechanism


@dataclass(frozen=True, slots=True, kw_only=True)
class SecureExponentialMechanism:
    """Secure exponential mechanism (seed 000, Algorithm 13) on secret scores.

    Chooses candidate i with probability proportional to
    exp(q_i / scale), scale = 2 sensitivity / epsilon (``sensitivity /
    epsilon`` if ``monotone``), from secret scores q (McSherry & Talwar 2007).
    Computed as in the paper: exp-normalise (subtract the secret maximum),
    secure exponentiation with an optional clipping threshold, cumulative sums,
    and a secret uniform times the total compared against every cumulative sum
    (the oblivious linear scan), which yields a secret one-hot vector.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : float, default=1.0
        Sensitivity of the score function.
    bit_length : int, default=32
        Bit length l of the secure fixed-point type.
    frac_length : int or None, default=None
        Fractional bits f (default ``bit_length // 2``).
    clip_threshold : float or None, default=None
        Weights exp(s) with s = (q_i - max q) / scale below this are set to 0
        (seed 000 uses ``PAPER_CLIP_THRESHOLD = -5``). ``None`` clips only below
        the fixed-point resolution, s < -(f + 1) ln 2.
    monotone : bool, default=False
        Use scale = sensitivity / epsilon (valid for monotone score functions).

    Attributes
    ----------
    scale : float
        The temperature: weights are exp(q / scale).
    sectype : type
        The MPyC secure fixed-point type.
    max_score_gap : float
        Largest max(q) - min(q) that the fixed-point exponent can represent.

    Notes
    -----
    Per draw of d candidates: a secure maximum (d - 1 comparisons), one bit
    decomposition and a degree-4 (f = 16) polynomial per candidate, d - 1
    comparisons for the scan, plus d comparisons if ``clip_threshold`` is set.
    Not exactly epsilon-DP in fixed point, and not epsilon-DP at all with a
    clipping threshold; see the module docstring and :meth:`clip_tv_bound`.
    """

    epsilon: float
    sensitivity: float = 1.0
    bit_length: int = 32
    frac_length: int | None = None
    clip_threshold: float | None = None
    monotone: bool = False

    def __post_init__(self) -> None:
        _check_positive("SecureExponentialMechanism", "epsilon", self.epsilon)
        _check_positive("SecureExponentialMechanism", "sensitivity", self.sensitivity)
        fx.secfxp_type(self.bit_length, self.frac_length)
        if self.clip_threshold is not None and (
            isinstance(self.clip_threshold, bool)
            or not isinstance(self.clip_threshold, int | float)
            or not self.clip_threshold < 0
        ):
            raise InvalidParameterError(
                "The 'clip_threshold' parameter of SecureExponentialMechanism must be a "
                f"negative float or None. Got {self.clip_threshold!r} instead."
            )

    @property
    def scale(self) -> float:
        """Temperature: 2 sensitivity / epsilon (or sensitivity / epsilon if monotone)."""
        factor = 1.0 if self.monotone else 2.0
        return factor * self.sensitivity / self.epsilon

    @property
    def sectype(self) -> type:
        """MPyC secure fixed-point type ``SecFxp(bit_length, frac_length)``."""
        return fx.secfxp_type(self.bit_length, self.frac_length)

    @property
    def max_score_gap(self) -> float:
        """Largest max(q) - min(q) the protocol handles correctly.

        The exponent u = (max q - q) log2(e) / scale must stay below
        2**(l - f - 1) (headroom of the truncation), and a difference of two
        fixed-point values is below 2**(l - f) anyway. Larger gaps give wrong
        weights; the protocol cannot check this on secret scores.
        """
        s = self.sectype
        room = 2.0 ** (s.bit_length - s.frac_length)
        return min(room, room / 2 * self.scale / fx.LOG2E)

    def probabilities(self, scores: Any) -> np.ndarray:
        """Plaintext reference: the distribution this mechanism samples from.

        Ideal exponential-mechanism probabilities, with the clipping threshold
        applied as in the secure protocol (fixed-point rounding aside).
        """
        q = np.asarray(scores, dtype=float)
        s = (q - q.max(axis=-1, keepdims=True)) / self.scale
        w = np.exp(s)
        f = self.sectype.frac_length
        threshold = -(f + 1) * math.log(2.0) if self.clip_threshold is None else self.clip_threshold
        w = np.where(s < threshold, 0.0, w)
        return w / w.sum(axis=-1, keepdims=True)

    def clip_tv_bound(self, n_candidates: int) -> float:
        """Upper bound on the total-variation distance to the ideal mechanism due to clipping.

        The best candidate has weight 1 and each clipped one less than
        e**c (c the effective threshold), so the removed mass is at most
        (d - 1) e**c / (1 + (d - 1) e**c). Fixed-point rounding of the weights
        (about 2**-f each, relative to a total of at least 1) comes on top.
        """
        f = self.sectype.frac_length
        c = -(f + 1) * math.log(2.0) if self.clip_threshold is None else self.clip_threshold
        removed = (n_candidates - 1) * math.exp(c)
        return removed / (1.0 + removed)

    def select(self, scores: SecureArray) -> SecureArray:
        """Secret one-hot vector of the chosen candidate (over the last axis).

        Parameters
        ----------
        scores : secure fixed-point array, shape (..., d)
            Secret scores; leading axes are independent draws.

        Returns
        -------
        secure fixed-point array, shape (..., d)
            Exactly one 1 per draw.
        """
        q = _check_input("SecureExponentialMechanism", scores, self.sectype)
        if len(q.shape) == 0 or q.shape[-1] < 1:
            raise InvalidParameterError(
                f"scores must have at least one candidate on the last axis, got shape {q.shape}."
            )
        return _exponential_mechanism(q, self.scale, self.clip_threshold)

    async def select_index(
        self, scores: SecureArray, *, label: str = "exponential-mechanism choice"
    ) -> Any:
        """Run :meth:`select` and open only the chosen index (via :func:`reveal`).

        Returns
        -------
        int or numpy.ndarray of int
            The index for 1-D scores; an array of indices for batched scores.
        """
        opened = await reveal_onehot_index(self.select(scores), label=label, entry=self)
        return int(opened) if opened.ndim == 0 else opened


@mpc.coroutine
async def _exponential_mechanism(q: SecureArray, scale: float, clip_threshold: float | None):
    """Algorithm 13 of seed 000 with the exp-normalise trick and clipping."""
    sectype = type(q).sectype
    await mpc.returnType((sectype.array, True, q.shape))
    axis = len(q.shape) - 1
    d = q.shape[-1]
    if d == 1:
        return sectype.array(np.ones(q.shape, dtype=np.int64))
    # axis as a tuple: MPyC 0.11's np_amax(keepdims=True) fails for an int axis 0
    best = mpc.np_amax(q, axis=(axis,), keepdims=True)
    u = fx.mul_public(q - best, -fx.LOG2E / scale)  # u = -(q - max) log2(e) / scale >= 0
    weights = fx.exp2_neg(u)  # exp((q - max) / scale), exactly 0 below resolution
    if clip_threshold is not None:
        too_small = mpc.np_less(-clip_threshold * fx.LOG2E, u)  # s < clip_threshold
        weights = weights * (1 - too_small)
    cumulative = mpc.np_cumsum(weights, axis=axis)  # p_1, p_1 + p_2, ...
    total = cumulative[..., d - 1 : d]
    column = (*q.shape[:-1], 1)  # one entry per draw
    target = fx.random_uniform(sectype, column) * total  # u * p_d
    below = mpc.np_less(target, cumulative[..., : d - 1])  # [target < p_i], monotone in i
    ones = sectype.array(np.ones(column, dtype=np.int64))
    below = mpc.np_concatenate((below, ones), axis=axis)  # the last candidate closes the scan
    zeros = sectype.array(np.zeros(column, dtype=np.int64))
    previous = mpc.np_concatenate((zeros, below[..., : d - 1]), axis=axis)
    return below - previous  # one-hot: first i with target < p_i
