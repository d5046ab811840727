"""The bug zoo's mechanisms: broken randomisers and their correct twins.

Each is a picklable, vectorised callable (``mechanism(data, size=n)`` returns
``n`` independent runs) for joblib workers. Noise comes from privet's
OpenDP-backed mechanisms except in :class:`NaiveFloatLaplace`, whose bug *is*
the sampler: this module is the only place in privet that calls
``numpy.random.laplace``. Each call charges a throw-away ledger with an
unbounded budget, since an audit is about the output distribution. The
entries that use them are in :mod:`privet.audits.zoo`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import Guarantee, Ledger, NeighbouringRelation, Scope, amplify

__all__ = [
    "BOTTOM",
    "HALTED",
    "TOP",
    "Histogram",
    "LaplaceCount",
    "NaiveFloatLaplace",
    "NaiveFloatPiecewise",
    "PiecewiseSupport",
    "PiecewiseValue",
    "SVTAnswers",
    "SVTReleasedValue",
    "Selection",
    "SparseVector",
    "SubsampledCount",
    "SupportClass",
    "TwoCellShift",
    "inner_epsilon_for",
    "naive_piecewise",
    "naive_piecewise_reachable",
    "numpy_laplace_support",
]

TOP, BOTTOM, HALTED = 1, 0, -1  # sparse-vector answers: above, below, not asked (after the cutoff)


# ------------------------------------------------------------------------- samplers


def _scratch(relation: str = "add_remove") -> Scope:
    """A throw-away scope with an unbounded budget: audits sample, they do not account."""
    return Ledger(budget=Guarantee.unbounded(), relation=relation, dataset="zoo").root


def _laplace(scale: float, shape: tuple[int, ...], relation: str = "add_remove") -> NDArray:
    """Laplace(scale) noise of ``shape`` from privet's (OpenDP) float Laplace."""
    from privet.mechanisms import make_laplace

    return make_laplace(scale=scale, relation=relation)(np.zeros(shape), scope=_scratch(relation))


def _discrete_laplace(scale: float, counts: NDArray, relation: str = "add_remove") -> NDArray:
    """Integer ``counts`` plus discrete Laplace(scale) noise (OpenDP)."""
    from privet.mechanisms import make_discrete_laplace

    mech = make_discrete_laplace(scale=scale, relation=relation)
    return mech(np.asarray(counts, dtype=np.int64), scope=_scratch(relation))


# ----------------------------------------------------------------------- mechanisms


@dataclass(frozen=True, slots=True)
class LaplaceCount:
    """``count(D) + Laplace(scale)``: ``count`` sums the records (0/1 values)."""

    scale: float

    def __call__(self, data: Any, size: int) -> NDArray[np.float64]:
        count = float(np.sum(data))
        return count + _laplace(self.scale, (size,))


@dataclass(frozen=True, slots=True)
class Histogram:
    """Noisy histogram of records (bin indices in ``0..bins-1``).

    ``scale=None`` uses privet's :func:`~privet.mechanisms.make_noisy_histogram`
    at ``epsilon`` under replace-one neighbours (L1 sensitivity 2); a number
    adds discrete Laplace noise of that scale to every cell.
    """

    bins: int
    epsilon: float
    scale: float | None = None

    def __call__(self, data: Any, size: int) -> NDArray[np.int64]:
        counts = np.bincount(np.asarray(data, dtype=np.int64), minlength=self.bins)
        batch = np.tile(counts, (size, 1))
        if self.scale is not None:
            return _discrete_laplace(self.scale, batch, "replace_one")
        from privet.mechanisms import make_noisy_histogram

        mech = make_noisy_histogram(self.epsilon, relation="replace_one")
        return mech(batch, scope=_scratch("replace_one"))


@dataclass(frozen=True, slots=True)
class TwoCellShift:
    """Statistic ``min(x[b] - c_b, c_a - x[a])`` for a record moved from cell a to b.

    ``(c_a, c_b)`` are the true counts of the first input ``D``. On ``D`` it is
    ``min(L_b, -L_a)``, on ``D'`` the same plus 1, and ``P[min >= t] = P[L >= t]^2``:
    its tail ratio is the privacy loss of *both* cells, ``2 Δ / scale``, where a
    single cell shows only half of it.
    """

    a: int
    b: int
    count_a: int
    count_b: int

    def __call__(self, outputs: Any) -> NDArray[np.float64]:
        x = np.asarray(outputs, dtype=np.float64)
        return np.minimum(x[:, self.b] - self.count_b, self.count_a - x[:, self.a])


@dataclass(frozen=True, slots=True)
class Selection:
    """Select one index from a utility vector (the input): exponential mechanism or RNM.

    ``kind``:

    * ``"exponential"`` — privet's :func:`~privet.mechanisms.make_exponential`
      at ``epsilon`` (``monotone=True`` drops the factor 2);
    * ``"report_noisy_max"`` — privet's :func:`~privet.mechanisms.make_report_noisy_max`
      (exponential noise of scale ``2 Δ / ε``, permute-and-flip);
    * ``"laplace_max"`` — argmax of ``u + Laplace(laplace_scale)``.
    """

    kind: Literal["exponential", "report_noisy_max", "laplace_max"]
    epsilon: float
    monotone: bool = False
    laplace_scale: float | None = None

    def __call__(self, data: Any, size: int) -> NDArray[np.int64]:
        u = np.asarray(data, dtype=np.float64)
        batch = np.tile(u, (size, 1))
        if self.kind == "laplace_max":
            assert self.laplace_scale is not None
            return np.argmax(batch + _laplace(self.laplace_scale, batch.shape), axis=1)
        from privet.mechanisms import make_exponential, make_report_noisy_max

        if self.kind == "exponential":
            mech: Any = make_exponential(self.epsilon, monotone=self.monotone)
        else:
            mech = make_report_noisy_max(self.epsilon, monotone=self.monotone)
        # Each row is one independent run on the same utilities; the scratch
        # ledger's single charge (disjoint_rows) is irrelevant to the audit.
        return np.asarray(mech(batch, scope=_scratch(), disjoint_rows=True), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class SparseVector:
    """The sparse vector variants of Lyu, Su and Li (2017) over query answers ``q``.

    The input is the vector of answers ``q_i(D)`` (sensitivity ``Δ = 1``), asked
    in order against ``threshold``. Variants (``ε1`` for the threshold noise
    ``ρ``, ``ε2`` for the query noise ``ν_i``):

    ``"alg1"``  Lyu et al.'s Alg. 1 (correct): ``ε1 = ε/2``, ``ρ ~ Lap(Δ/ε1)``,
                ``ν_i ~ Lap(2cΔ/ε2)``, stop after ``c`` positive answers.
    ``"alg3"``  Roth's notes (2011): ``ν_i ~ Lap(cΔ/ε2)`` and a positive answer
                releases ``q_i + ν_i`` itself. Not ε'-DP for any finite ε'.
    ``"alg4"``  Lee & Clifton (2014): ``ε1 = ε/4``, ``ν_i ~ Lap(Δ/ε2)`` not
                scaled with ``c``: ``((1 + 6c)/4) ε``-DP.
    ``"alg5"``  Stoddard et al. (2014): no query noise, no cutoff. Not DP.
    ``"alg6"``  Chen et al. (2015): ``ν_i ~ Lap(Δ/ε2)``, no cutoff. Not DP.

    Output per run: ``2m`` numbers, the answers (1 above, 0 below, -1 not asked
    after the cutoff) then the released values (``q_i + ν_i`` for ``"alg3"``'s
    positive answers, 0 otherwise).
    """

    variant: Literal["alg1", "alg3", "alg4", "alg5", "alg6"]
    epsilon: float
    threshold: float
    cutoff: int = 1

    def noise(self) -> tuple[float, float, int | None]:
        """(scale of ρ, scale of ν (0: none), cutoff or None)."""
        eps, c = self.epsilon, self.cutoff
        if self.variant == "alg1":
            return 2.0 / eps, 2.0 * c / (eps / 2.0), c
        if self.variant == "alg3":
            return 2.0 / eps, c / (eps / 2.0), c
        if self.variant == "alg4":
            return 4.0 / eps, 1.0 / (0.75 * eps), c
        if self.variant == "alg5":
            return 2.0 / eps, 0.0, None
        return 2.0 / eps, 2.0 / eps, None  # alg6

    def __call__(self, data: Any, size: int) -> NDArray[np.float64]:
        q = np.asarray(data, dtype=np.float64)
        m = q.size
        rho_scale, nu_scale, cutoff = self.noise()
        rho = _laplace(rho_scale, (size, 1))
        noisy = q + (_laplace(nu_scale, (size, m)) if nu_scale > 0 else 0.0)
        top = noisy >= self.threshold + rho
        answers = np.where(top, TOP, BOTTOM).astype(np.float64)
        values = np.where(top, noisy, 0.0) if self.variant == "alg3" else np.zeros((size, m))
        if cutoff is not None:
            asked_after = (np.cumsum(top, axis=1) - top) >= cutoff  # cutoff reached before i
            answers[asked_after] = HALTED
            values[asked_after] = 0.0
        return np.concatenate([answers, values], axis=1)


@dataclass(frozen=True, slots=True)
class SVTAnswers:
    """Statistic: the answer pattern of a sparse-vector run (drops released values)."""

    m: int

    def __call__(self, outputs: Any) -> NDArray[np.int8]:
        return np.asarray(outputs)[:, : self.m].astype(np.int8)


@dataclass(frozen=True, slots=True)
class SVTReleasedValue:
    """Statistic: the value released at the last query when the pattern is ``0..0 1``.

    Other patterns map to ``sentinel`` (far above every value), so that
    ``{s <= t}`` means "all below, then above with a released value at most t".
    """

    m: int
    sentinel: float = 1e6

    def __call__(self, outputs: Any) -> NDArray[np.float64]:
        out = np.asarray(outputs, dtype=np.float64)
        want = np.zeros(self.m)
        want[-1] = TOP
        hit = np.all(out[:, : self.m] == want, axis=1)
        return np.where(hit, out[:, 2 * self.m - 1], self.sentinel)


# -- Mironov's attack on the naive float Laplace ---------------------------------------

_TWO53 = 9007199254740992.0  # numpy's doubles in [0, 1) are k / 2^53


def _numpy_laplace_output(k: int, loc: float, scale: float) -> float:
    """``loc + Generator.laplace(0, scale)`` when the uniform draw is ``k / 2^53``.

    numpy (``random_laplace`` in its ``distributions.c``) computes
    ``scale * log(U + U)`` for ``U < 1/2`` and ``-scale * log(2 - U - U)``
    otherwise, in doubles, with the C library's ``log`` (which :func:`math.log`
    also calls); the mechanism then adds ``loc``. Rounded the same way here.
    """
    u = k / _TWO53
    y = -(scale * math.log((2.0 - u) - u)) if u >= 0.5 else scale * math.log(u + u)
    return loc + y


def numpy_laplace_support(z: float, loc: float, scale: float, *, window: int = 3) -> bool:
    """Can ``loc + numpy.random.laplace(0, scale)`` output exactly the double ``z``?

    Inverts the sampler near ``z`` (the uniform ``k / 2^53`` it would need, on
    both branches) and checks ``2 window + 1`` neighbouring ``k`` exactly. The
    sampler is monotone in ``k``, so a ``z`` that no nearby ``k`` produces is
    outside the support: most doubles near ``loc + y`` are (Mironov 2012).
    """
    if not math.isfinite(z):
        return False
    t = (z - loc) / scale
    guesses = (
        round(math.exp(min(t, 0.0)) * _TWO53 / 2.0),  # U < 1/2: y = scale * log(2U) <= 0
        round(_TWO53 - math.exp(-max(t, 0.0)) * _TWO53 / 2.0),  # U >= 1/2: y >= 0
    )
    for k0 in guesses:
        for k in range(k0 - window, k0 + window + 1):
            if 1 <= k < _TWO53 and _numpy_laplace_output(k, loc, scale) == z:
                return True
    return False


@dataclass(frozen=True, slots=True)
class NaiveFloatLaplace:
    """``count(D) + numpy.random.Generator.laplace(0, scale)``: the textbook mistake.

    The only call of ``numpy``'s Laplace sampler in privet (DESIGN.md,
    "Mechanisms"): its doubles are ``scale * log(k / 2^52)`` rounded, a sparse
    and shift-dependent set, so the output reveals the count (Mironov 2012).
    """

    scale: float

    def __call__(self, data: Any, size: int) -> NDArray[np.float64]:
        count = float(np.sum(data))
        rng = np.random.default_rng()  # fresh OS entropy in every worker and call
        return count + rng.laplace(0.0, self.scale, size)


@dataclass(frozen=True, slots=True)
class SupportClass:
    """Statistic: which supports of the naive sampler contain the output's exact bits.

    0: both ``loc0 + Y`` and ``loc1 + Y`` can produce it; 1: only ``loc0``;
    2: only ``loc1``; 3: neither (``Y`` = numpy's Laplace doubles). A set event
    on these labels is Mironov's attack; on any other sampler it is just a
    post-processing of the output, so a DP mechanism still passes.
    """

    loc0: float
    loc1: float
    scale: float

    def __call__(self, outputs: Any) -> NDArray[np.int8]:
        out = np.empty(len(outputs), dtype=np.int8)
        for i, z in enumerate(np.asarray(outputs, dtype=np.float64).ravel().tolist()):
            in0 = numpy_laplace_support(z, self.loc0, self.scale)
            in1 = numpy_laplace_support(z, self.loc1, self.scale)
            out[i] = (0 if in1 else 1) if in0 else (2 if in1 else 3)
        return out


def naive_piecewise(x: float, size: int, epsilon: float = 1.0) -> NDArray[np.float64]:
    """The Piecewise mechanism (seed 004, Alg. 3) sampled in doubles, as privet did before
    issue 11: the outputs it can reach depend on ``x`` (do not use)."""
    rng = np.random.default_rng()
    c = 1.0 + 2.0 / math.expm1(epsilon / 2)
    p_in = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
    xs = np.full(size, float(x))
    left = (c + 1) / 2 * xs - (c - 1) / 2
    right = left + c - 1
    inside = rng.random(size) < p_in
    w = rng.random(size)
    t = w * (c + 1)
    y_out = np.where(t < left + c, t - c, right + (t - (left + c)))
    return np.where(inside, left + w * (c - 1), y_out)


def naive_piecewise_reachable(y: NDArray[np.float64], x: float, epsilon: float = 1.0) -> NDArray:
    """Whether :func:`naive_piecewise` on input ``x`` can output each ``y`` exactly.

    numpy's uniforms are ``w = i 2^-53``; each branch of Alg. 3 is inverted for ``w``
    and the neighbouring candidates are replayed.
    """
    c = 1.0 + 2.0 / math.expm1(epsilon / 2)
    left = (c + 1) / 2 * x - (c - 1) / 2
    right = left + c - 1
    ulp = 2.0**-53
    found = np.zeros(y.shape, dtype=bool)
    for guess in ((y - left) / (c - 1), (y + c) / (c + 1), (y - right + left + c) / (c + 1)):
        base = np.round(guess / ulp)
        for off in range(-3, 4):
            w = np.clip(base + off, 0, 2**53 - 1) * ulp
            t = w * (c + 1)
            y_out = np.where(t < left + c, t - c, right + (t - (left + c)))
            found |= (left + w * (c - 1) == y) | (y_out == y)
    return found


@dataclass(frozen=True, slots=True)
class NaiveFloatPiecewise:
    """Piecewise on the mean of the records, sampled naively in doubles."""

    epsilon: float

    def __call__(self, data: Any, size: int) -> NDArray[np.float64]:
        return naive_piecewise(float(np.mean(data)) if len(data) else 0.0, size, self.epsilon)


@dataclass(frozen=True, slots=True)
class PiecewiseValue:
    """privet's discretised Piecewise mechanism on the mean of the records."""

    epsilon: float

    def __call__(self, data: Any, size: int) -> NDArray[np.float64]:
        from privet.mechanisms import PiecewiseMechanism

        x = float(np.mean(data)) if len(data) else 0.0
        mech = PiecewiseMechanism(epsilon=self.epsilon)
        return np.asarray(mech(np.full(size, x), scope=_scratch("replace_one")), dtype=float)


@dataclass(frozen=True, slots=True)
class PiecewiseSupport:
    """Statistic: 1 if the naive sampler on ``x1`` cannot produce the output's exact bits."""

    x1: float
    epsilon: float

    def __call__(self, outputs: Any) -> NDArray[np.int8]:
        y = np.asarray(outputs, dtype=np.float64).ravel()
        return (~naive_piecewise_reachable(y, self.x1, self.epsilon)).astype(np.int8)


@dataclass(frozen=True, slots=True)
class SubsampledCount:
    """Poisson-subsample the records at ``rate``, count them, add discrete Laplace(1/eps_inner)."""

    rate: float
    inner_epsilon: float

    def __call__(self, data: Any, size: int) -> NDArray[np.int64]:
        ones = int(np.count_nonzero(np.asarray(data)))
        # Sampling coins: fresh OS entropy (a seeded sample would be no secret).
        counts = np.random.default_rng().binomial(ones, self.rate, size)
        return _discrete_laplace(1.0 / self.inner_epsilon, counts)


def inner_epsilon_for(target: float, rate: float) -> float:
    """The epsilon whose exact Poisson amplification at ``rate`` is ``target``.

    Inverts ``ln(1 + rate (e^eps - 1))`` (:func:`privet.ledger.amplify`) and
    checks the result with the ledger's own function.
    """
    eps = math.log1p(math.expm1(target) / rate)
    got = amplify(Guarantee(eps), rate, "poisson", NeighbouringRelation.ADD_REMOVE).epsilon
    if got > target * (1 + 1e-9):  # pragma: no cover - the inversion is exact
        raise InvalidParameterError(f"amplification inverted badly: {got} > {target}")
    return eps
