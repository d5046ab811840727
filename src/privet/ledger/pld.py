"""Privacy loss distributions (PLDs) on a grid: the ledger's tightest accountant.

A pair of output distributions (P, Q) of a mechanism on two neighbouring datasets
is described, up to post-processing, by its *privacy loss* L = log(dP/dQ)(o) for
o ~ P (Sommer, Meiser & Mohammadi 2019; Koskela, Jälkö & Honkela 2020). Its
hockey-stick divergence at every alpha > 0,

    H(alpha) = sup_E P(E) - alpha Q(E) = E_P[(1 - alpha e^-L)_+]  (+ P(L = inf)),

is the delta(epsilon) of the pair at epsilon = log alpha, and (Blackwell; Dong,
Roth & Su 2022, Prop. 2.10) a pair whose H is at least another's at *every*
alpha > 0 dominates it: the other is a post-processing of it. Dominating pairs
compose (Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via
characteristic functions", Thm. 10): the loss of a composition is the sum of
independent losses, so its distribution is the convolution of theirs.

This module represents a dominating pair by a :class:`LossPMF`: probabilities of
the loss at the grid points ``l_i = i * STEP`` and a mass at +infinity. Every
construction is *pessimistic*: the H of the grid PMF is at least the H of the
pair it stands for at every alpha, so every epsilon read from it is an upper
bound:

* :func:`from_curve` samples an upper bound of a pair's H at the grid points and
  joins the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect
  the dots"): H is convex in alpha, so the chord between two points lies above
  it; the greatest convex minorant of the samples (isotonic regression of the
  chord slopes, Barlow et al. 1972) makes the samples of a mere upper bound a
  valid pair, still above every convex curve below the samples.
* :func:`compose` convolves (FFT) and cuts both tails: mass above the kept range
  moves to +infinity, mass below it moves up to the lowest kept point; both only
  raise H (H is increasing in every loss value and in the mass at infinity).
* :func:`maximum` is parallel composition: the H of a record in an unknown one of
  several parts is at most the maximum of the parts' H; that maximum is convex,
  so its chords on the grid are again a pair, dominating every part.
* :func:`subsample_remove` and :func:`subsample_add`: amplification by
  subsampling of a whole dominating pair, exact for the grid pair (Zhu, Dong &
  Wang 2022, Thm. 11): a remove pair (P, Q) becomes (qP + (1-q)Q, Q), with
  H'(alpha) = q H((alpha - 1 + q) / q); an add pair becomes (P, (1-q)P + qQ), with
  H'(alpha) = (1 - alpha(1-q)) H(alpha q / (1 - alpha(1-q))).

Curves of single releases (:class:`Curve` and its subclasses) give H in closed
form: randomised response (any epsilon-DP release, Kairouz, Oh & Viswanath 2015),
its (epsilon, delta) generalisation and its exact k-fold product, the Laplace
mechanism (continuous, and discrete on a lattice), the Gaussian mechanism, bounded-range mechanisms such as
the exponential mechanism (Dong, Durfee & Rogers 2020), and a zCDP release (the
Rényi-to-hockey-stick conversion of Canonne, Kamath & Steinke 2020, Prop. 12,
at every order).

Floating point. The FFT and the closed forms carry rounding errors near 1e-16
of the total mass; :func:`LossPMF.epsilon` asks for delta less
:data:`NUMERICAL_SLACK` (1e-14 and 1e-9 of delta; a review measured the FFT's error at
about 6e-17) so that no figure rests on them,
and deltas below :data:`MIN_DELTA` are not read from a PLD at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.signal import fftconvolve
from scipy.special import erfc, gammaln, log_ndtr

from privet.errors import PrivetError

#: The coarsest grid step of privacy losses (2^-11 ~ 4.9e-4, exact in binary). Connecting
#: the dots makes the error second order in the step: against 2^-13, 1,000 and 10,000
#: Poisson-subsampled Gaussians (DP-SGD) read 1.8284 for 1.8283 and 3.5359 for 3.5349
#: at delta 1e-5, in a quarter of the grid points.
STEP = 2.0**-11
#: The finest grid step (releases whose loss spans very little, a Poisson batch at a
#: small rate, get a finer grid: see :func:`fine_step`).
MIN_STEP = 2.0**-32
#: Grid points a single release's loss is spread over at least, where the grid allows.
RESOLUTION = 1 << 12
#: Grid points a composition may keep before its grid is coarsened (by a power of 2,
#: never past :data:`STEP`).
COARSEN_AT = 1 << 16
#: Mass cut from each tail at a composition (moved up or to +infinity, never dropped).
TAIL = 1e-18
#: Absolute and relative slack subtracted from a requested delta (floating point).
NUMERICAL_SLACK = (1e-14, 1e-9)
#: The smallest delta a PLD figure is given for: below it the slack dominates.
MIN_DELTA = 1e-12
#: The most grid points a PLD may hold (32 MiB of float64); larger ones are refused.
MAX_POINTS = 1 << 22
#: Losses beyond this magnitude are not represented (e^-L under- or overflows).
MAX_LOSS = 600.0


class PLDTooLargeError(PrivetError):
    """A PLD would need more grid points than :data:`MAX_POINTS`, or losses beyond
    :data:`MAX_LOSS`; the other accountants still apply."""


def fine_step(width: float) -> float:
    """The grid step for a loss spread over ``width``: the power of 2 that puts at least
    :data:`RESOLUTION` points across it, between :data:`MIN_STEP` and :data:`STEP`.

    A release whose loss lives in a sliver (randomised response at 1e-4, a Gaussian on a
    Poisson batch at rate 1e-3) would otherwise be rounded as a whole to a few grid
    points, an error that adds up over thousands of compositions."""
    if not (width > 0 and math.isfinite(width)):
        return STEP
    if width / RESOLUTION <= MIN_STEP:  # (a rate of 5e-324: the ratio underflows to 0)
        return MIN_STEP
    step = 2.0 ** math.floor(math.log2(width / RESOLUTION))
    return min(STEP, max(MIN_STEP, step))


# --------------------------------------------------------------------------- PMFs


@dataclass(frozen=True, slots=True, eq=False)
class LossPMF:
    """A privacy loss distribution on a grid: ``probs[j]`` is the mass of the loss
    ``(lo + j) * step``; ``inf`` the mass of an infinite loss (a delta for every
    epsilon). Immutable; ``probs`` is read-only. ``step`` is a power of 2."""

    lo: int
    probs: np.ndarray
    inf: float
    step: float = STEP

    @property
    def hi(self) -> int:
        return self.lo + len(self.probs) - 1

    def losses(self) -> np.ndarray:
        return (self.lo + np.arange(len(self.probs))) * self.step

    def _sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Losses, and suffix sums of p_i and p_i e^-l_i (with a 0 appended)."""
        losses = self.losses()
        a = np.zeros(len(self.probs) + 1)
        b = np.zeros(len(self.probs) + 1)
        a[:-1] = np.cumsum(self.probs[::-1])[::-1]
        b[:-1] = np.cumsum((self.probs * np.exp(-losses))[::-1])[::-1]
        return losses, a, b

    def curve(self, t: np.ndarray | float) -> np.ndarray:
        """H(e^t) of this grid pair, exactly (up to rounding), at the log-alphas ``t``."""
        t = np.asarray(t, dtype=float)
        losses, a, b = self._sums()
        j = np.searchsorted(losses, t, side="right")  # first loss > t
        with np.errstate(over="ignore", invalid="ignore"):
            h = a[j] - np.exp(t) * b[j]
        h = np.where(j >= len(losses), 0.0, h)
        return np.clip(h, 0.0, None) + self.inf

    def delta(self, epsilon: float) -> float:
        """delta(epsilon) of this pair."""
        return float(self.curve(np.array([epsilon]))[0])

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with delta(epsilon) <= delta, less the numerical
        slack; ``inf`` when no epsilon reaches it (or delta < :data:`MIN_DELTA`)."""
        target = delta - NUMERICAL_SLACK[0] - NUMERICAL_SLACK[1] * delta
        if delta < MIN_DELTA or target <= self.inf:
            return math.inf
        start = max(self.lo, 0)
        if start > self.hi:  # every loss is below 0
            return 0.0
        t = np.arange(start, self.hi + 1) * self.step
        h = self.curve(t)
        if h[0] <= target:
            if start == 0 or self.curve(np.array([0.0]))[0] <= target:
                return 0.0
            h0 = float(self.curve(np.array([0.0]))[0])
            return _chord_root(0.0, t[0], h0, float(h[0]), target)
        k = int(np.argmax(h <= target))
        if h[k] > target:  # only at +infinity: H is then constant at self.inf
            return math.inf
        return _chord_root(t[k - 1], t[k], float(h[k - 1]), float(h[k]), target)

    def nbytes(self) -> int:
        return int(self.probs.nbytes)


def _chord_root(t0: float, t1: float, h0: float, h1: float, target: float) -> float:
    """log alpha where the chord (linear in alpha) from (e^t0, h0) to (e^t1, h1) meets target."""
    a0, a1 = math.exp(t0), math.exp(t1)
    if h0 <= h1:
        return t1
    alpha = a0 + (h0 - target) / (h0 - h1) * (a1 - a0)
    return min(t1, math.log(max(alpha, a0)))


def _frozen(probs: np.ndarray) -> np.ndarray:
    probs = np.ascontiguousarray(probs, dtype=float)
    probs.setflags(write=False)
    return probs


IDENTITY = LossPMF(0, _frozen(np.ones(1)), 0.0)
"""The pair of a release that does not depend on the data: loss 0."""

NON_PRIVATE = LossPMF(0, _frozen(np.zeros(1)), 1.0)
"""A release in the clear: an infinite loss with probability 1."""


def _check_size(lo: int, hi: int, step: float = STEP) -> None:
    if hi - lo + 1 > MAX_POINTS:
        raise PLDTooLargeError(
            f"A privacy loss distribution over losses {lo * step:.3g}..{hi * step:.3g} needs "
            f"{hi - lo + 1:,} grid points, more than the cap of {MAX_POINTS:,}."
        )


def _grid(lo: int, hi: int, step: float) -> np.ndarray:
    _check_size(lo, hi, step)
    return (lo + np.arange(hi - lo + 1)) * step


def from_points(lo: int, h: np.ndarray, step: float = STEP) -> LossPMF:
    """The grid pair whose H joins the dots ``h[j]`` at alpha = e^((lo + j) step): an
    upper bound of a convex, non-increasing H, joined through (0, 1) on the left and
    constant (its mass at infinity) right of the last point.

    The running minimum of ``h`` is still an upper bound (H does not increase); its
    greatest convex minorant (isotonic regression of the chord slopes weighted by
    their widths) lies above every convex curve below the points, so the result is a
    valid pair above the true one even where ``h`` is only an upper bound or carries
    rounding noise.
    """
    h = np.minimum.accumulate(np.clip(np.asarray(h, dtype=float), 0.0, 1.0))
    n = len(h)
    _check_size(lo, lo + n - 1, step)
    alphas = np.exp((lo + np.arange(n)) * step)
    widths = np.diff(np.concatenate(([0.0], alphas)))
    slopes = np.diff(np.concatenate(([1.0], h))) / widths
    fitted = isotonic_regression(slopes, weights=widths, increasing=True).x
    inf = float(h[-1])  # the hull touches the last point: its value is the mass at infinity
    right = np.concatenate((fitted[1:], [0.0]))  # slope right of each point; flat at the end
    masses = np.clip(alphas * (right - fitted), 0.0, None)
    return LossPMF(lo, _frozen(masses), inf, step)


def _span(a: float, b: float, step: float) -> tuple[int, int]:
    """Grid indices covering losses a..b (one point more on each side)."""
    return math.floor(a / step) - 1, math.ceil(b / step) + 1


def from_curve(curve: Curve, step: float | None = None) -> LossPMF:
    """The grid pair of ``curve`` over its support (connect the dots), on a grid of
    :func:`fine_step` of its support's width unless ``step`` is given."""
    a, b = curve.support()
    if not (math.isfinite(a) and math.isfinite(b)) or max(-a, b) > MAX_LOSS:
        raise PLDTooLargeError(
            f"The privacy loss of {curve!r} reaches {max(-a, b):.3g}, beyond the "
            f"{MAX_LOSS:g} a PLD represents."
        )
    step = fine_step(b - a) if step is None else step
    lo, hi = _span(a, b, step)
    return from_points(lo, curve.hockey_stick(_grid(lo, hi, step)), step)


def coarsen(a: LossPMF, step: float) -> LossPMF:
    """``a`` on the coarser grid ``step`` (connecting the dots of its exact curve there)."""
    if step <= a.step or a is IDENTITY or a is NON_PRIVATE:
        return a
    lo, hi = _span(a.lo * a.step, a.hi * a.step, step)
    return from_points(lo, a.curve(_grid(lo, hi, step)), step)


def _coarsened(a: LossPMF) -> LossPMF:
    """``a`` on a grid coarse enough to keep at most :data:`COARSEN_AT` points (or
    :data:`STEP`)."""
    step = a.step
    while len(a.probs) * a.step / step > COARSEN_AT and step < STEP:
        step *= 2
    return coarsen(a, step)


_BLOCK = 256


def _log_mgf(p: LossPMF, lambdas: np.ndarray) -> np.ndarray:
    """An upper bound of log E[e^(lambda L); L finite] at each of ``lambdas``: the mass
    of each block of :data:`_BLOCK` grid points placed at the block's end that makes
    its term largest (its highest loss for lambda > 0, its lowest for lambda < 0)."""
    n = len(p.probs)
    starts = np.arange(0, n, _BLOCK)
    mass = np.add.reduceat(p.probs, starts)
    low = (p.lo + starts) * p.step
    high = (p.lo + np.minimum(starts + _BLOCK, n) - 1) * p.step
    with np.errstate(divide="ignore"):
        logm = np.log(mass)
    ends = np.where(lambdas[:, None] > 0, high[None, :], low[None, :])
    terms = logm[None, :] + lambdas[:, None] * ends
    top = terms.max(axis=1, keepdims=True)
    return top[:, 0] + np.log(np.exp(terms - top).sum(axis=1))


_LAMBDAS = np.concatenate((np.logspace(-3, 5, 56), [1e6]))


def _range(a: LossPMF, b: LossPMF) -> tuple[float, float]:
    """Losses (x_lo, x_hi) outside which the finite loss of a composition has mass at
    most :data:`TAIL` on each side, by Chernoff's bound: P(A + B > x) <= M_A(l) M_B(l)
    e^(-l x) and P(A + B < x) <= M_A(-l) M_B(-l) e^(l x) for every l > 0."""
    up = _log_mgf(a, _LAMBDAS) + _log_mgf(b, _LAMBDAS)
    down = _log_mgf(a, -_LAMBDAS) + _log_mgf(b, -_LAMBDAS)
    log_tail = math.log(TAIL)
    x_hi = float(np.min((up - log_tail) / _LAMBDAS))
    x_lo = float(np.max((log_tail - down) / _LAMBDAS))
    return x_lo, x_hi


def _truncate(
    lo: int, probs: np.ndarray, inf: float, x_lo: float, x_hi: float, step: float
) -> LossPMF:
    """Keep the grid points in [x_lo, x_hi]: the mass above (at most :data:`TAIL` by
    :func:`_range`) counts as infinite loss, the mass below moves up to the lowest kept
    point; both raise H (pessimistic); so do losses past :data:`MAX_LOSS`, counted as
    infinite. Rounding noise below zero is set to zero."""
    probs = np.clip(probs, 0.0, None)
    top = math.floor(MAX_LOSS / step)
    first = max(lo, math.ceil(x_lo / step))
    last = min(lo + len(probs) - 1, math.floor(x_hi / step))
    if last < first:  # a (near) point mass: keep it whole
        first, last = lo, lo + len(probs) - 1
    if first > top:  # every loss beyond what a PLD represents (e^600): infinite
        return NON_PRIVATE
    if last < lo + len(probs) - 1:
        inf = inf + TAIL
    if last > top:  # losses past MAX_LOSS (e^600) count as infinite
        inf = inf + float(probs[top - lo + 1 : last - lo + 1].sum())
        last = top
    below = float(probs[: first - lo].sum())
    kept = probs[first - lo : last - lo + 1].copy()
    kept[0] += below
    return LossPMF(first, _frozen(kept), min(1.0, inf), step)


def compose(a: LossPMF, b: LossPMF) -> LossPMF:
    """The pair of two independent (or adaptively chosen) releases, by convolution, on
    the coarser of their two grids (coarsened further past :data:`COARSEN_AT` points)."""
    if a is IDENTITY:
        return b
    if b is IDENTITY:
        return a
    if a.inf >= 1.0 or b.inf >= 1.0:  # a release in the clear: nothing finite is left
        return NON_PRIVATE
    step = max(a.step, b.step)
    a, b = coarsen(a, step), coarsen(b, step)
    x_lo, x_hi = _range(a, b)
    _check_size(
        max(a.lo + b.lo, math.floor(x_lo / step)), min(a.hi + b.hi, math.ceil(x_hi / step)), step
    )
    if len(a.probs) * len(b.probs) <= 4096:
        probs = np.convolve(a.probs, b.probs)
    else:
        probs = fftconvolve(a.probs, b.probs)
    inf = a.inf + b.inf - a.inf * b.inf
    return _coarsened(_truncate(a.lo + b.lo, probs, inf, x_lo, x_hi, step))


def self_compose(a: LossPMF, count: int) -> LossPMF:
    """``count`` compositions of ``a``, by squaring (a deterministic function of both)."""
    result, base, k = IDENTITY, a, int(count)
    while k:
        if k & 1:
            result = compose(result, base)
        k >>= 1
        if k:
            base = compose(base, base)
    return result


def maximum(pmfs: Sequence[LossPMF]) -> LossPMF:
    """A grid pair dominating every one of ``pmfs`` (parallel composition), on the
    coarsest of their grids."""
    distinct = list({id(p): p for p in pmfs}.values())
    if len(distinct) == 1:
        return distinct[0]
    if not distinct:
        return IDENTITY
    if any(p.inf >= 1.0 for p in distinct):
        return NON_PRIVATE
    step = max(p.step for p in distinct)
    lo, hi = _span(min(p.lo * p.step for p in distinct), max(p.hi * p.step for p in distinct), step)
    t = _grid(lo, hi, step)
    curves = [p.curve(t) for p in distinct]
    h = np.max(curves, axis=0)
    for p, c in zip(distinct, curves, strict=True):
        # one of them dominates the others (equal parts, an empty one): that one, as it
        # is, so that a part catching up with another changes no figure
        if p.step == step and np.all(c >= h) and p.inf >= max(q.inf for q in distinct):
            return p
    # 1e-12 over the pointwise maximum: rebuilding a PMF from its own curve rounds it
    # by about 1e-14, which must not make the maximum below one of its inputs
    return _coarsened(from_points(lo, h * (1.0 + 1e-12), step))


def _sd(a: LossPMF) -> float:
    """The standard deviation of the finite loss."""
    total = float(a.probs.sum())
    if total <= 0:
        return 0.0
    x = a.losses()
    mean = float(np.dot(a.probs, x)) / total
    return math.sqrt(max(0.0, float(np.dot(a.probs, (x - mean) ** 2)) / total))


def _refined(build, bottom: float, top: float) -> LossPMF:
    """``build(step)`` on the grid for the span bottom..top, again on a finer grid where
    the loss's bulk (its standard deviation) is narrow next to that span (a rare large
    loss widens a Poisson batch's span, its bulk stays within a few rate units)."""
    first = build(fine_step(top - bottom))
    sd = _sd(first)
    finer = fine_step(sd * RESOLUTION / 32) if sd > 0 else first.step
    if finer < first.step and (top - bottom) / finer <= COARSEN_AT * 4:
        return build(finer)
    return first


def subsample_remove(a: LossPMF, rate: float) -> LossPMF:
    """Remove pair (P, Q) -> (qP + (1-q)Q, Q): a record removed from a Poisson sample
    drawn with rate q (add/remove). A sample of m of n under replace-one needs this
    form and :func:`subsample_add`'s, q = m/n (see :mod:`privet.ledger.pld_tree`).
    The loss log(q e^L + 1 - q) lies in [log(1 - q), ...]: the result gets a grid fine
    enough for that span (:func:`fine_step`)."""
    q = float(rate)
    if q >= 1.0 or a is IDENTITY:
        return a
    bottom = math.log1p(-q)
    top = a.hi * a.step
    top = math.log1p(q * math.expm1(top)) if top > 0 else 0.0

    def build(step: float) -> LossPMF:
        lo, hi = _span(bottom, top, step)
        t = _grid(lo, hi, step)
        alpha = np.exp(t)
        inner = np.full_like(t, -np.inf)
        above = alpha > 1.0 - q
        inner[above] = np.log((alpha[above] - (1.0 - q)) / q)
        h = np.where(above, q * a.curve(np.where(above, inner, 0.0)), 1.0 - alpha)
        return from_points(lo, h, step)

    return _refined(build, bottom, top)


def subsample_add(a: LossPMF, rate: float) -> LossPMF:
    """Add pair (P, Q) -> (P, (1-q)P + qQ): a record added to a Poisson sample of rate q;
    the loss -log(1 - q + q e^-L) lies in [..., -log(1 - q)]."""
    q = float(rate)
    if q >= 1.0 or a is IDENTITY:
        return a
    bottom = a.lo * a.step
    bottom = -math.log1p(q * math.expm1(-bottom)) if bottom < 0 else 0.0
    top = -math.log1p(-q)

    def build(step: float) -> LossPMF:
        lo, hi = _span(bottom, top, step)
        t = _grid(lo, hi, step)
        alpha = np.exp(t)
        c = 1.0 - alpha * (1.0 - q)
        ok = c > 0
        inner = np.zeros_like(t)
        inner[ok] = np.log(alpha[ok] * q / c[ok])
        h = np.where(ok, np.clip(c, 0.0, None) * a.curve(inner), 0.0)
        return from_points(lo, h, step)

    return _refined(build, bottom, top)


# ------------------------------------------------------------------------ curves


class Curve:
    """The hockey-stick curve H(e^t) (or an upper bound of it) of one release's
    dominating pair, at every real t, and where its loss lives."""

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def support(self) -> tuple[float, float]:  # pragma: no cover - abstract
        """Losses outside this interval have a negligible mass (< 1e-18)."""
        raise NotImplementedError

    def infinity_mass(self) -> float:
        return 0.0

    def pmf(self) -> LossPMF:
        return from_curve(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v:g}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


def _trivial(t: np.ndarray) -> np.ndarray:
    """(1 - alpha)_+: the H of identical distributions."""
    with np.errstate(over="ignore"):  # expm1 of t > 709 is +inf: 0 after the clip, exactly
        return np.clip(-np.expm1(t), 0.0, None)


class RandomisedResponse(Curve):
    """Binary randomised response at ``epsilon`` (with ``delta``: the (epsilon, delta)
    generalisation, an infinite loss with probability delta). Every (epsilon,
    delta)-DP pair is a post-processing of it (Kairouz, Oh & Viswanath 2015,
    Thm. 2.1), so it is the curve of any release known only by (epsilon, delta)."""

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        e, d = self.epsilon, self.delta
        p = 1.0 / (1.0 + math.exp(-e))  # e^eps / (1 + e^eps)
        inside = p * -np.expm1(t - e)
        h = np.where(t < -e, _trivial(t), np.where(t < e, inside, 0.0))
        return d + (1.0 - d) * h

    def support(self) -> tuple[float, float]:
        return -self.epsilon, self.epsilon

    def infinity_mass(self) -> float:
        return self.delta


class RandomisedResponseProduct(Curve):
    """``count`` independent randomised responses at ``epsilon`` each, composed exactly:
    the pair of a vector release whose coordinates carry independent noise and of which
    ``count`` coordinates each form a randomised-response pair (the discrete Laplace
    shifted by one lattice step is one, see :class:`LaplaceCurve`), the others identical.

    The loss of a product of independent pairs is the sum of the coordinates' losses,
    here (2j - k) eps with j ~ Binomial(k, p) under P, p = e^eps / (1 + e^eps), and the
    same j has probability Q(j) = P(j) e^-(2j - k) eps under Q, so

        H(e^t) = P(L > t) - e^t Q(L > t),

    summed exactly over the k + 1 atoms from the largest loss down (small masses keep
    their relative precision). Symmetric (swapping P and Q maps j to k - j), so it
    dominates both directions. ``count = 1`` is :class:`RandomisedResponse`."""

    def __init__(self, epsilon: float, count: int) -> None:
        self.epsilon = float(epsilon)
        self.count = int(count)
        k, e = self.count, self.epsilon
        j = np.arange(k, -1, -1, dtype=float)  # largest loss first
        log_c = gammaln(k + 1.0) - gammaln(j + 1.0) - gammaln(k - j + 1.0)
        log_p = -np.logaddexp(0.0, -e)  # log(e^e / (1 + e^e))
        log_1mp = -np.logaddexp(0.0, e)
        self._losses = (2.0 * j - k) * e  # decreasing
        self._cp = np.cumsum(np.exp(log_c + j * log_p + (k - j) * log_1mp))
        self._cq = np.cumsum(np.exp(log_c + j * log_1mp + (k - j) * log_p))

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        # atoms with loss > t: the first n of the decreasing losses
        n = np.searchsorted(-self._losses, -t, side="left")
        cp = np.where(n > 0, self._cp[np.maximum(n - 1, 0)], 0.0)
        cq = np.where(n > 0, self._cq[np.maximum(n - 1, 0)], 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            h = cp - np.exp(t) * cq
        h = np.nan_to_num(h, nan=0.0, posinf=0.0, neginf=0.0)
        return np.clip(h, 0.0, 1.0)

    def support(self) -> tuple[float, float]:
        return -self.count * self.epsilon, self.count * self.epsilon

    def __repr__(self) -> str:
        return f"RandomisedResponseProduct(epsilon={self.epsilon:g}, count={self.count})"


class LaplaceCurve(Curve):
    """The Laplace mechanism on one coordinate, shift/scale = ``epsilon``: H = 1 -
    e^((t - eps)/2) for |t| < eps (continuous noise), or, with ``step`` = lattice
    step / scale > 0, the exact H of the discrete Laplace on that lattice with the
    shift a whole number m of steps (m = eps / step):

        H = [1 - e^(t - eps) + (e^-step - e^(t - eps + K step)) (1 - e^(-K step))]
            / (1 + e^-step),

    K the number of lattice points strictly between 0 and the shift whose loss
    (m - 2x) step exceeds t. At step = eps (one lattice step) it is randomised
    response; as step -> 0, the continuous curve."""

    def __init__(self, epsilon: float, step: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.step = float(step)

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        e, s = self.epsilon, self.step
        t = np.asarray(t, dtype=float)
        if s <= 0.0:
            inside = -np.expm1((t - e) / 2.0)
        else:
            m = round(e / s)
            k = np.clip(np.ceil((m - t / s) / 2.0) - 1.0, 0.0, max(m - 1, 0))
            one_minus = -np.expm1(-k * s)  # 1 - t^K
            inside = (-np.expm1(t - e) + (math.exp(-s) - np.exp(t - e + k * s)) * one_minus) / (
                1.0 + math.exp(-s)
            )
        return np.where(t <= -e, _trivial(t), np.where(t < e, np.clip(inside, 0.0, 1.0), 0.0))

    def support(self) -> tuple[float, float]:
        return -self.epsilon, self.epsilon


class GaussianCurve(Curve):
    """The Gaussian mechanism with ``mu`` = sensitivity / sigma (exactly mu-GDP; Dong,
    Roth & Su 2022, Cor. 2.13): H = Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2)."""

    def __init__(self, mu: float) -> None:
        self.mu = float(mu)

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        mu = self.mu
        t = np.asarray(t, dtype=float)
        a = log_ndtr(-t / mu + mu / 2)
        b = t + log_ndtr(-t / mu - mu / 2)
        with np.errstate(over="ignore", invalid="ignore"):
            h = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
        return np.clip(np.nan_to_num(h, nan=0.0), 0.0, 1.0)

    def support(self) -> tuple[float, float]:
        mu = self.mu
        return mu * mu / 2 - 9.5 * mu, mu * mu / 2 + 9.5 * mu


class DiscreteGaussianShift(Curve):
    """The discrete Gaussian N_Z(0, sigma^2) against N_Z(m, sigma^2), an integer shift
    m >= 1 (Canonne, Kamath & Steinke 2020): both have the same normaliser Z, the loss
    at x is (m^2 - 2 m x) / (2 sigma^2), decreasing in x, so

        H(e^t) = P(x < x_t) - e^t Q(x < x_t),   x_t = (m^2 - 2 sigma^2 t) / (2 m),

    summed exactly over x in [-T, m + T], T = ceil(9.5 sigma) + 1, from the tail of
    large losses inwards (so small masses keep their relative precision). The mass
    beyond, at most 2 (integral of e^(-x^2 / 2 sigma^2) beyond T - 1) / Z with Z >= 1,
    is added to every H (pessimistic: as if its loss were infinite). The pair is
    symmetric (x -> m - x swaps P and Q), so it dominates both directions."""

    def __init__(self, sigma: float, shift: int) -> None:
        self.sigma = float(sigma)
        self.shift = int(shift)
        m, s2 = self.shift, self.sigma * self.sigma
        top = math.ceil(9.5 * self.sigma) + 1
        x = np.arange(-top, m + top + 1, dtype=float)
        log_p = -(x * x) / (2.0 * s2)
        log_q = -((x - m) ** 2) / (2.0 * s2)
        log_z = float(np.logaddexp.reduce(log_p))
        self._x = x
        self._cp = np.cumsum(np.exp(log_p - log_z))  # P(X <= x), from the loss's top
        self._cq = np.cumsum(np.exp(log_q - log_z))
        beyond = (
            2.0
            * self.sigma
            * math.sqrt(math.pi / 2.0)
            * float(erfc((top - 1) / (self.sigma * math.sqrt(2.0))))
        )
        self._tail = min(1.0, beyond)
        self._losses = (m * m - 2.0 * m * x) / (2.0 * s2)

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        m, s2 = self.shift, self.sigma * self.sigma
        x_t = (m * m - 2.0 * s2 * t) / (2.0 * m)  # loss > t  <=>  x < x_t
        k = np.searchsorted(self._x, x_t, side="left")  # points with x < x_t
        cp = np.where(k > 0, self._cp[np.maximum(k - 1, 0)], 0.0)
        cq = np.where(k > 0, self._cq[np.maximum(k - 1, 0)], 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            h = cp - np.exp(t) * cq
        h = np.nan_to_num(h, nan=0.0, posinf=0.0, neginf=0.0)
        return np.clip(np.maximum(h, 0.0) + self._tail, 0.0, 1.0)

    def support(self) -> tuple[float, float]:
        return float(self._losses[-1]), float(self._losses[0])

    def __repr__(self) -> str:
        return f"DiscreteGaussianShift(sigma={self.sigma:g}, shift={self.shift})"


#: The largest squared L2 sensitivity whose integer shift vectors are enumerated for the
#: discrete Gaussian's exact curve; beyond it, its zCDP curve.
DG_MAX_SQUARED_SENSITIVITY = 16

#: The widest discrete Gaussian (in points of its support) given an exact curve.
DG_MAX_POINTS = 1 << 21


def _shift_vectors(budget: int, largest: int) -> list[tuple[int, ...]]:
    """Non-increasing tuples of positive integers <= ``largest`` whose squares sum to at
    most ``budget`` and to which no further 1 can be added (the maximal ones)."""
    out: list[tuple[int, ...]] = []
    for v in range(min(largest, math.isqrt(budget)), 0, -1):
        rest = budget - v * v
        tails = _shift_vectors(rest, v) if rest > 0 else []
        if not tails:
            out.append((v,))
        out.extend((v, *tail) for tail in tails)
    return out


class DiscreteGaussianCurve(Curve):
    """N_Z(0, sigma^2 I) on an integer vector of L2 ``sensitivity``: a neighbour shifts it
    by an integer vector v with |v|_2 <= sensitivity, and the pair is the product of the
    coordinates' :class:`DiscreteGaussianShift` pairs (independent noise). Its PMF is
    the :func:`maximum` over the maximal v (a shorter v is a marginal of a longer one,
    so dominated by it): the exact curve up to the grid, below the zCDP bound. At
    sigma = 1, sensitivity 1, one release: epsilon 4.430 at 1e-5, their Thm. 7's figure
    (0.7: 6.956); ten at sigma = 3: 4.652, as dp_accounting's PLD (the zCDP curve: 5.024).
    Beyond :data:`DG_MAX_SQUARED_SENSITIVITY` or :data:`DG_MAX_POINTS`, the zCDP curve."""

    def __init__(self, sigma: float, sensitivity: float) -> None:
        self.sigma = float(sigma)
        self.sensitivity = float(sensitivity)
        self._pmf: LossPMF | None = None

    def __repr__(self) -> str:
        return f"DiscreteGaussianCurve(sigma={self.sigma:g}, sensitivity={self.sensitivity:g})"

    def _vectors(self) -> list[tuple[int, ...]] | None:
        squared = math.floor(self.sensitivity * self.sensitivity * (1 + 1e-12))
        if not 1 <= squared <= DG_MAX_SQUARED_SENSITIVITY:
            return None
        if 2 * (9.5 * self.sigma + 2) + math.isqrt(squared) > DG_MAX_POINTS:
            return None
        return _shift_vectors(squared, math.isqrt(squared))

    def _fallback(self) -> ZCDPCurve:
        return ZCDPCurve(self.sensitivity**2 / (2.0 * self.sigma**2))

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        return self.pmf().curve(t)

    def support(self) -> tuple[float, float]:
        p = self.pmf()
        return p.lo * p.step, p.hi * p.step

    def infinity_mass(self) -> float:
        return self.pmf().inf

    def pmf(self) -> LossPMF:
        if self._pmf is None:
            self._pmf = self._build()
        return self._pmf

    def _build(self) -> LossPMF:
        vectors = self._vectors()
        if vectors is None:
            return self._fallback().pmf()
        one: dict[int, LossPMF] = {}
        pmfs = []
        for v in vectors:
            counts: dict[int, int] = {}
            for m in v:
                counts[m] = counts.get(m, 0) + 1
            pair = IDENTITY
            for m, c in counts.items():
                if m not in one:
                    one[m] = from_curve(DiscreteGaussianShift(self.sigma, m))
                pair = compose(pair, self_compose(one[m], c))
            pmfs.append(pair)
        return maximum(pmfs)


class BoundedRangeCurve(Curve):
    """An epsilon-bounded-range release (the exponential mechanism at epsilon, with or
    without monotone utility; report-noisy-max with Gumbel noise): its privacy loss
    lies in [c - eps, c] for some c, so the pair is dominated by the two-point loss
    on that interval (Dong, Durfee & Rogers 2020); the maximum over c of its H is

        H = (e^(eps/2) - e^(t/2))^2 / (e^eps - 1),   |t| <= eps,

    reached at c = (t + eps) / 2 (calculus; convex in alpha)."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = float(epsilon)

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        e = self.epsilon
        t = np.asarray(t, dtype=float)
        # (e^(e/2) - e^(t/2))^2 / (e^e - 1) = e^(t-e) expm1(u)^2 / -expm1(-e), u = (e-t)/2,
        # needed for |t| < e only (np.where below): computed on t clipped to [-e, e]
        tc = np.clip(t, -e, e)
        if e <= 300.0:  # every term within e^+-600: the direct product neither overflows
            inside = np.exp(-e) * np.expm1((e - tc) / 2.0) ** 2 * np.exp(tc) / -math.expm1(-e)
            inside = np.clip(inside, 0.0, 1.0)
        else:  # in logs: expm1(u)^2 overflowed past eps ~ 355 and gave NaN past ~ 710
            u = (e - tc) / 2.0
            with np.errstate(divide="ignore"):  # u = 0 (t = eps): log 0 = -inf, H = 0
                log_expm1 = np.where(
                    u > 30.0,
                    u + np.log1p(-np.exp(-np.maximum(u, 30.0))),
                    np.log(np.expm1(np.minimum(u, 30.0))),
                )
            log_h = (tc - e) + 2.0 * log_expm1 - math.log(-math.expm1(-e))
            inside = np.exp(np.minimum(log_h, 0.0))
        return np.where(t <= -e, _trivial(t), np.where(t < e, inside, 0.0))

    def support(self) -> tuple[float, float]:
        return -self.epsilon, self.epsilon


#: Rényi orders (> 1) over which a zCDP release's curve is minimised.
_ORDERS = 1.0 + np.logspace(-3, 4, 1200)


class ZCDPCurve(Curve):
    """A rho-zCDP release: (alpha, alpha rho)-RDP at every order alpha > 1 in both
    directions, so for t >= 0

        H(e^t) <= min_a exp((a-1)(a rho - t)) / a * (1 - 1/a)^(a-1)

    (Canonne, Kamath & Steinke 2020, Prop. 12), and for t < 0 H(e^t) <= 1 - e^t +
    e^t H'(e^-t) with H' the same bound for the reversed pair. Only an upper bound:
    :func:`from_points` takes its greatest convex minorant, a valid pair above the
    release's own curve."""

    def __init__(self, rho: float) -> None:
        self.rho = float(rho)

    def _positive(self, t: np.ndarray) -> np.ndarray:
        a = _ORDERS[:, None]
        log_h = (a - 1) * (a * self.rho - t[None, :]) - np.log(a) + (a - 1) * np.log1p(-1 / a)
        return np.exp(np.minimum(log_h.min(axis=0), 0.0))

    def hockey_stick(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        out = np.empty_like(t)
        pos = t >= 0
        out[pos] = self._positive(t[pos])
        neg = ~pos
        if neg.any():
            tn = t[neg]
            out[neg] = -np.expm1(tn) + np.exp(tn) * self._positive(-tn)
        return np.clip(out, 0.0, 1.0)

    def support(self) -> tuple[float, float]:
        top = self.rho + 2.0 * math.sqrt(self.rho * math.log(1e18)) + 1.0
        return -top, top
