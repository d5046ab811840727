"""Secure fixed-point elementary functions on MPyC secure arrays.

MPyC 0.11 has no secure logarithm or exponential, which the MPC mechanisms of
seed 000 (App. C.3, after Thissen's MPyC implementation) need. This module
provides them for arrays of MPyC secure fixed-point numbers (``secfxp``, with
``bit_length`` l and ``frac_length`` f; MPyC's default f = l // 2).

The functions work elementwise on ``mpc.SecFxp(l, f).array`` values and are
built from MPyC's own building blocks: bit decomposition (``np_to_bits``),
random bits, and products. The two transcendental steps use range reduction to
a fixed interval plus a polynomial:

* ``log2``: normalise x = v * 2**e with v in [1/2, 1) (leading-one detection
  on the bits of x, exact integer arithmetic), then log2(v) by a polynomial;
* ``exp``: write -x*log2(e) = n + phi with integer n >= 0 and phi in [0, 1)
  (bits of the fixed-point value), then 2**-phi by a polynomial and 2**-n as a
  product of one factor per bit of n. Values below the fixed-point resolution
  come out exactly 0 (the factors of large bits are exact 0/1 values).

Polynomials are Chebyshev interpolants converted to the power basis, with the
smallest degree whose approximation error is below 2**-(f+2); they are
evaluated as one scaled-integer dot product (powers of t times integer
coefficients with ``GUARD_BITS`` extra bits) and a single truncation, so
coefficient rounding is negligible.

Accuracy
--------
The approximation error of the polynomials is at most 2**-(f+2). The rest is
fixed-point rounding: MPyC truncates products with *probabilistic* rounding
(error below one unit in the last place, ulp = 2**-f, per truncation); the
logarithms' integer part k ln 2 is added before the single final truncation.
Measured maximum absolute errors against numpy on the type's grid (4001
points, three runs; the rounding is random, so the maximum varies a little;
``benchmarks/mpc_runtime_bench.py`` writes them, the tests assert <= 2 ulp):

==========  ======================  ===================  ===================
function    domain                  l=32, f=16           l=50, f=25
==========  ======================  ===================  ===================
log2        [2**(1-f), 2**(l-f-2)]  1.33-1.46 ulp        1.36-1.42 ulp
ln          same                    1.13-1.37 ulp        1.26-1.39 ulp
exp         [-(f+2) ln 2, 0]        1.19-1.44 ulp        1.11-1.42 ulp
==========  ======================  ===================  ===================

(ulp = 2**-16 = 1.5e-5 for f = 16, 2**-25 = 3.0e-8 for f = 25.)

Inputs themselves are rounded to the grid when shared: log2 of a value x
shared as a fixed-point number is off by up to 2**-(f+1) / (x ln 2) from the
exact log2(x), which dominates for small x (0.01 at x = 2**-10, f = 16).

Notes
-----
Negative products of large magnitude are truncated here with
``l = bit_length + frac_length`` (as MPyC does for scalar secfxp). MPyC 0.11's
``np_trunc`` uses ``l = bit_length`` for secure *arrays*, which lets a
negative product of magnitude |v| wrap around modulo the prime with probability
about |v| * 2**(2f - k - l) (k = MPyC's security parameter, 30): 2**-15 for
|v| = 30000 at l = 32. Every multiplication by a public constant in this module
goes through :func:`mul_public`, which avoids it; secret-by-secret products are
kept to values of magnitude at most 2, where the probability is below 2**-29.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.mpc._runtime import get_runtime

mpc = get_runtime()

SecureArray = Any  # an ``mpc.SecFxp(l, f).array`` instance (MPyC has no static type for it)

GUARD_BITS = 8
"""Extra fractional bits of the integer polynomial coefficients."""

LN2 = math.log(2.0)
LOG2E = 1.0 / LN2


def secfxp_type(bit_length: int = 32, frac_length: int | None = None) -> type:
    """MPyC secure fixed-point type with the given bit lengths.

    Parameters
    ----------
    bit_length : int, default=32
        Total bit length l (seed 000 uses 32 for Titanic/Heart, 50 for Adult).
    frac_length : int or None, default=None
        Fractional bits f; ``None`` gives MPyC's default ``l // 2``.

    Returns
    -------
    type
        ``mpc.SecFxp(bit_length, frac_length)`` (cached by MPyC, so equal
        arguments give the same type).
    """
    if not isinstance(bit_length, int) or isinstance(bit_length, bool) or bit_length < 8:
        raise InvalidParameterError(
            f"bit_length must be an int >= 8, got {bit_length!r}; the paper uses 32 "
            "(Titanic, Heart) or 50 (Adult)."
        )
    if frac_length is None:
        frac_length = bit_length // 2
    if (
        not isinstance(frac_length, int)
        or isinstance(frac_length, bool)
        or not 4 <= frac_length <= bit_length - 4
    ):
        raise InvalidParameterError(
            f"frac_length must be an int in [4, bit_length - 4] = [4, {bit_length - 4}], "
            f"got {frac_length!r}; leave it None for MPyC's default bit_length // 2."
        )
    return mpc.SecFxp(bit_length, frac_length)


def _check_fxp_array(x: Any, name: str) -> type:
    if not isinstance(x, mpc.SecureFixedPointArray):
        raise InvalidParameterError(
            f"{name} must be an MPyC secure fixed-point array (secfxp.array), got "
            f"{type(x).__name__}; share the data with privet.mpc.share_array(..., sectype) "
            "using a type from privet.mpc.secfxp_type()."
        )
    return type(x).sectype


# --------------------------------------------------------------------------- helpers


def trunc(x: SecureArray, bits: int) -> SecureArray:
    """Divide the secret values by ``2**bits`` with MPyC's probabilistic rounding.

    Uses MPyC's ``np_trunc`` with the headroom l = bit_length + frac_length, so
    values whose fixed-point representation is below 2**(l + f - 1) in absolute
    value are truncated correctly (with probability 1 - 2**-k).
    """
    sectype = type(x).sectype
    y = mpc.np_trunc(x, f=bits, l=sectype.bit_length + sectype.frac_length)
    y.integral = False
    return y


def mul_public(x: SecureArray, c: float | np.ndarray) -> SecureArray:
    """Multiply secret x by a public real ``c`` (scalar or broadcastable array).

    ``c`` is rounded to f fractional bits, the product is formed exactly on the
    integer representations and truncated once (:func:`trunc`). Integral ``c``
    gives an exact product.
    """
    f = type(x).sectype.frac_length
    c_arr = np.asarray(c, dtype=float)
    if np.all(c_arr == np.round(c_arr)):
        if c_arr.ndim == 0:
            return x * int(c_arr)
        return x * c_arr.astype(np.int64)
    if x.integral:  # MPyC multiplies integral values by rounded constants exactly
        return x * (float(c_arr) if c_arr.ndim == 0 else c_arr)
    scaled = np.round(c_arr * 2**f)
    if c_arr.ndim == 0:
        return trunc(x * int(scaled), f)
    return trunc(x * scaled.astype(np.int64), f)


def _last_axis(x: SecureArray) -> int:
    # MPyC 0.11 mis-reports shapes for some negative axes (np_stack); use positive ones.
    return len(x.shape) - 1


def _concat_last(parts: list[SecureArray]) -> SecureArray:
    return mpc.np_concatenate(tuple(parts), axis=_last_axis(parts[0]))


def prefix_all_zero(bits: SecureArray) -> SecureArray:
    """c[..., j] = prod_{i <= j} (1 - bits[..., i]) along the last axis.

    Exact (products of 0/1 values); ceil(log2 K) rounds of multiplications
    for K bits (Hillis-Steele scan).
    """
    c = 1 - bits
    k = bits.shape[-1]
    step = 1
    while step < k:
        c = _concat_last([c[..., :step], c[..., step:] * c[..., : k - step]])
        step *= 2
    return c


def powers(t: SecureArray, degree: int) -> SecureArray:
    """Array of t**1, ..., t**degree on a new last axis (ceil(log2 degree) rounds)."""
    p = t.reshape((*t.shape, 1))
    while p.shape[-1] < degree:
        k = p.shape[-1]
        top = p[..., k - 1 : k]
        p = _concat_last([p, p[..., : min(k, degree - k)] * top])
    return p


# ----------------------------------------------------------------- polynomials


@dataclass(frozen=True, slots=True)
class Approximation:
    """Polynomial approximation p(t) ~ g(t) on t in [-1, 1].

    Attributes
    ----------
    name : str
        What g is.
    coefficients : tuple of float
        Power-basis coefficients, constant term first.
    max_error : float
        max |p - g| on a 20001-point grid of [-1, 1] (polynomial error only).
    """

    name: str
    coefficients: tuple[float, ...]
    max_error: float

    @property
    def degree(self) -> int:
        return len(self.coefficients) - 1


_TARGETS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    # mantissa v = (t + 3) / 4 in [1/2, 1)
    "log2_mantissa": lambda t: np.log2((t + 3.0) / 4.0),
    "neg_ln_mantissa": lambda t: -np.log((t + 3.0) / 4.0),
    "ln_mantissa": lambda t: np.log((t + 3.0) / 4.0),
    # fraction phi = (t + 1) / 2 in [0, 1)
    "exp2_neg_fraction": lambda t: np.exp2(-(t + 1.0) / 2.0),
}


@functools.cache
def approximation(name: str, frac_length: int) -> Approximation:
    """Smallest-degree Chebyshev interpolant of a target with error <= 2**-(f+2)."""
    func = _TARGETS[name]
    grid = np.linspace(-1.0, 1.0, 20001)
    exact = func(grid)
    target = 2.0 ** -(frac_length + 2)
    for degree in range(1, 31):
        cheb = np.polynomial.chebyshev.Chebyshev.interpolate(func, degree)
        coef = cheb.convert(kind=np.polynomial.Polynomial).coef
        err = float(np.max(np.abs(np.polynomial.polynomial.polyval(grid, coef) - exact)))
        if err <= target:
            return Approximation(name, tuple(float(c) for c in coef), err)
    raise InvalidParameterError(  # pragma: no cover - f <= 60 always converges
        f"no polynomial of degree <= 30 approximates {name} to 2**-{frac_length + 2}; "
        "use a smaller frac_length."
    )


def polynomial(
    t: SecureArray,
    coefficients: tuple[float, ...],
    *,
    plus: tuple[SecureArray, float, int] | None = None,
) -> SecureArray:
    """Evaluate sum_k c_k t**k (+ c n) for secret t in [-1, 1], one truncation at the end.

    The powers are computed with ceil(log2 d) rounds of products; the sum uses
    integer coefficients round(c_k * 2**(f + g)) (g = ``GUARD_BITS``, reduced if
    the headroom of the type requires it), so only one probabilistic rounding
    enters after the powers.

    Parameters
    ----------
    t : secfxp array
        Secret argument, |t| <= 1.
    coefficients : tuple of float
        Power-basis coefficients, constant term first.
    plus : (n, c, bound) or None
        Adds c * n for a secret *integral* array n with |n| <= bound at the
        same precision (used for k ln 2 in the logarithms).
    """
    sectype = type(t).sectype
    f, bl = sectype.frac_length, sectype.bit_length
    total = sum(abs(c) for c in coefficients) + 1.0
    if plus is not None:
        total += abs(plus[1]) * plus[2]
    # representation of the scaled sum is about total * 2**(2f + g); keep it below 2**(l + f - 2)
    guard = max(0, min(GUARD_BITS, bl - f - 3 - math.ceil(math.log2(total))))
    scale = 2.0 ** (f + guard)
    ints = np.array([round(c * scale) for c in coefficients], dtype=np.int64)
    degree = len(coefficients) - 1
    acc = mpc.np_sum(powers(t, degree) * ints[1:], axis=_last_axis(t) + 1) + int(ints[0])
    if plus is not None:
        acc = acc + plus[0] * round(plus[1] * scale)  # exact: plus[0] is integral
    return trunc(acc, f + guard)


# ------------------------------------------------------------------- sampling


def random_bits(sectype: type, shape: tuple[int, ...]) -> SecureArray:
    """Uniform secret 0/1 values of the given shape (MPyC ``np_random_bits``).

    (Measured for issue 20: the XOR of two parties' own input bits, MPyC's method
    without PRSS, cost as much CPU as MPyC's PRSS bits in the discrete noise and 30 %
    more bytes, so MPyC's own bits stay.)
    """
    n = int(np.prod(shape)) if shape else 1
    return mpc.np_random_bits(sectype, n).reshape(shape)


def random_uniform(sectype: type, shape: tuple[int, ...]) -> SecureArray:
    """Secret U uniform on the grid {0, 2**-f, ..., 1 - 2**-f}, one per entry."""
    f = sectype.frac_length
    bits = random_bits(sectype, (*shape, f))
    weights = 2.0 ** (np.arange(f) - f)
    return mpc.np_sum(bits * weights, axis=len(shape))


def random_neg_ln_uniform(
    sectype: type, shape: tuple[int, ...], *, exponent_bits: int | None = None
) -> SecureArray:
    """Secret E = -ln(U) for U uniform on (0, 1): an Exp(1) variate per entry.

    U is drawn in floating-point form, U = v * 2**-k: the exponent k is the
    number of leading zeros of ``exponent_bits`` (K, default f) fresh random
    bits (geometric, P(k = j) = 2**-(j+1), capped at K), and the mantissa v is
    uniform on the midpoints of 2**(f-2) cells of [1/2, 1). This is exactly how
    the secure log2 of seed 000's Algorithm 12 normalises a uniform value,
    with the normalisation for free because U is generated already normalised;
    it also keeps f-2 significant bits for small U, where a fixed-point U would
    lose them. Then ``-ln U = k ln 2 - ln v`` with ``-ln v`` by a polynomial.

    Differences from the continuous Exp(1): E is at most (K + 1) ln 2
    (P(k = K) = 2**-K lumps the tail at k = K), v lives on a grid of 2**(f-2)
    points, and the polynomial and roundings add about 2 ulp.
    """
    f = sectype.frac_length
    k_bits = f if exponent_bits is None else exponent_bits
    shape = tuple(shape)
    axis = len(shape)
    zeros = prefix_all_zero(random_bits(sectype, (*shape, k_bits)))
    k = mpc.np_sum(zeros, axis=axis)  # leading zeros, 0..K (exact)
    mantissa_bits = random_bits(sectype, (*shape, f - 2))
    # t = 4v - 3 with v = 1/2 + 2**-f + sum_i b_i 2**(i+1-f): t in [-1 + 2**(2-f), 1 - 2**(2-f)]
    t = mpc.np_sum(mantissa_bits * 2.0 ** (np.arange(f - 2) + 3 - f), axis=axis) + (
        -1.0 + 2.0 ** (2 - f)
    )
    # -ln U = k ln 2 - ln v, with k ln 2 added at the polynomial's precision
    return polynomial(t, approximation("neg_ln_mantissa", f).coefficients, plus=(k, LN2, k_bits))


# -------------------------------------------------------------------- log, exp


def _log(x: SecureArray, per_octave: float, mantissa: str) -> SecureArray:
    sectype = _check_fxp_array(x, "x")
    bl, f = sectype.bit_length, sectype.frac_length
    axis = len(x.shape)
    bits = mpc.np_to_bits(x)  # (..., l), low to high; bit l-1 is the sign (0 for x > 0)
    high_first = mpc.np_flip(bits[..., : bl - 1], axis=axis)
    zeros = prefix_all_zero(high_first)  # 1 above the leading one
    z = mpc.np_sum(zeros, axis=axis)  # leading zeros z, leading one at position l-2-z
    w = mpc.np_sum(zeros * (2 ** np.arange(bl - 1, dtype=np.int64)), axis=axis) + 1  # 2**z
    y = x * w  # exact: w is integral; value m * 2**(l-2-f) with m in [1, 2)
    t = trunc(y, bl - 3 - f) - 3  # t = 4v - 3 for the mantissa v = m / 2 in [1/2, 1]
    octaves = (bl - 1 - f) - z  # integral: log2 x = octaves + log2 v
    if per_octave == 1.0:
        return polynomial(t, approximation(mantissa, f).coefficients) + octaves
    return polynomial(t, approximation(mantissa, f).coefficients, plus=(octaves, per_octave, bl))


def secure_log2(x: SecureArray) -> SecureArray:
    """Elementwise secure base-2 logarithm of a secret fixed-point array.

    Parameters
    ----------
    x : secfxp array
        Values in (0, 2**(l-1-f)); not checked (a check would cost a comparison
        or leak). Entries below 2**-f are 0 in fixed point and give garbage.

    Returns
    -------
    secfxp array
        log2(x), with the accuracy given in the module docstring.

    Notes
    -----
    Costs one bit decomposition, ceil(log2(l-1)) rounds of exact products for
    the leading-one detection, one truncation and a polynomial of degree
    about 0.4 f (7 for f = 16, 11 for f = 25).
    """
    return _log(x, 1.0, "log2_mantissa")


def secure_ln(x: SecureArray) -> SecureArray:
    """Elementwise secure natural logarithm; see :func:`secure_log2`."""
    return _log(x, LN2, "ln_mantissa")


def exp2_neg(u: SecureArray) -> SecureArray:
    """Secret 2**-u for secret u >= 0 (u < 2**(l-f)); exactly 0 once 2**-u < 2**-(f+1)."""
    sectype = type(u).sectype
    bl, f = sectype.bit_length, sectype.frac_length
    axis = len(u.shape)
    bits = mpc.np_to_bits(u, l=bl)  # u's integer representation is below 2**l
    t = mpc.np_sum(bits[..., :f] * 2.0 ** (np.arange(f) + 1 - f), axis=axis) - 1.0  # 2 phi - 1
    result = polynomial(t, approximation("exp2_neg_fraction", f).coefficients)
    factors = []  # 2**-(n_j 2**j) for the integer bits n_j of u
    for j in range(bl - f):
        bit = bits[..., f + j]
        factor = 2.0 ** -(2**j) if j < 63 else 0.0
        if factor < 2.0 ** -(f + 1):
            factors.append(1 - bit)  # 2**-(2**j) is 0 at f fractional bits: exact 0/1
        else:
            factors.append(1 + bit * (factor - 1.0))  # exact: bit is integral
    return product([result, *factors])


def product(values: list[SecureArray]) -> SecureArray:
    """Elementwise product of secure arrays as a balanced tree (ceil(log2 n) rounds)."""
    values = list(values)
    while len(values) > 1:
        paired = [a * b for a, b in zip(values[0::2], values[1::2], strict=False)]
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    return values[0]


def secure_exp(x: SecureArray, *, clip_threshold: float | None = None) -> SecureArray:
    """Elementwise secure e**x for secret x <= 0.

    Parameters
    ----------
    x : secfxp array
        Values in [-2**(l-1-f), 0]; positive values are not supported (not
        checked). This is the exp-normalise setting of seed 000 (scores minus
        their maximum).
    clip_threshold : float or None, default=None
        If given (seed 000 uses -5), entries with x < clip_threshold are set to
        exactly 0 (one secure comparison each). ``None`` clips only where
        e**x < 2**-(f+1), i.e. below the fixed-point resolution.

    Returns
    -------
    secfxp array
        e**x with the accuracy given in the module docstring.
    """
    _check_fxp_array(x, "x")
    result = exp2_neg(mul_public(x, -LOG2E))
    if clip_threshold is not None:
        result = result * (1 - mpc.np_less(x, float(clip_threshold)))
    return result


# ------------------------------------------------------------ error report


def approximation_report(bit_length: int = 32, frac_length: int | None = None) -> dict[str, Any]:
    """Degrees and polynomial errors used for a type (no MPC involved).

    Returns
    -------
    dict
        ``{"bit_length", "frac_length", "ulp", name: {"degree", "max_error"}}``.
    """
    sectype = secfxp_type(bit_length, frac_length)
    f = sectype.frac_length
    report: dict[str, Any] = {"bit_length": bit_length, "frac_length": f, "ulp": 2.0**-f}
    for name in _TARGETS:
        a = approximation(name, f)
        report[name] = {"degree": a.degree, "max_error": a.max_error}
    return report
