"""Privacy auditing with one training run (Steinke, Nasr and Jagielski, 2023).

``m`` canaries are each included in the training data independently with
probability 1/2 (``S in {-1, +1}^m`` uniform). After one training run, the
auditor scores every canary and guesses "in" or "out" for ``r`` of them,
abstaining on the others. If training is ``(epsilon, delta)``-DP, the number of
correct guesses ``W`` cannot beat randomised response by much: by Theorem 3.1
of [1]_, for every ``v``::

    P[W >= v] <= f(v) + 2 m delta * max_{i = 1..m} (f(v - i) - f(v)) / i,
    f(v) = P[Binomial(r, e^epsilon / (e^epsilon + 1)) >= v].

The right-hand side is a p-value for the hypothesis "(epsilon, delta)-DP"
given ``v`` correct guesses; the epsilon lower bound at confidence ``1 - alpha``
is the largest ``epsilon`` whose p-value is below ``alpha``.

References
----------
.. [1] T. Steinke, M. Nasr, M. Jagielski, "Privacy auditing with one (1)
   training run", NeurIPS 2023, arXiv:2305.08846. Theorem 3.1 (main result);
   the numerical procedure follows their appendix's algorithm for the p-value
   and its inversion by search over epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from privet.audits.bounds import check_confidence, check_delta
from privet.errors import InvalidParameterError

__all__ = [
    "OneRunAuditResult",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
]


def _check_counts(n_correct: int, n_guesses: int, m: int) -> tuple[int, int, int]:
    values = []
    for name, value in (("n_correct", n_correct), ("n_guesses", n_guesses), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InvalidParameterError(
                f"The '{name}' parameter must be a non-negative int; got {value!r}."
            )
        values.append(int(value))
    v, r, mm = values
    if not v <= r <= mm:
        raise InvalidParameterError(
            "Counts must satisfy n_correct <= n_guesses <= m; got "
            f"n_correct={v}, n_guesses={r}, m={mm}."
        )
    return v, r, mm


def one_run_p_value(
    n_correct: int, n_guesses: int, m: int, *, epsilon: float, delta: float
) -> float:
    """P-value of ``n_correct`` correct guesses under ``(epsilon, delta)``-DP.

    The bound of Theorem 3.1 of Steinke, Nasr and Jagielski (2023) on
    ``P[W >= v]``, with ``W`` the number of correct guesses among ``r``
    non-abstentions, for canaries included independently with probability 1/2.

    Parameters
    ----------
    n_correct : int
        ``v``, the number of correct guesses.
    n_guesses : int
        ``r``, the number of guesses made (abstentions excluded); it must have
        been fixed before seeing which guesses are correct (e.g. "guess the top
        ``k+`` and bottom ``k-`` scores").
    m : int
        Number of canaries, each included with probability 1/2.
    epsilon : float
        Epsilon of the null hypothesis, ``>= 0``.
    delta : float
        Delta of the null hypothesis, in [0, 1).

    Returns
    -------
    float
        ``min(1, f(v) + 2 m delta max_{1 <= i <= v} (f(v - i) - f(v)) / i)`` with
        ``f(u) = P[Binomial(r, q) >= u]``, ``q = e^epsilon / (1 + e^epsilon)``.
        (For ``i > v`` the ratio is ``(1 - f(v)) / i``, decreasing in ``i``, so
        the maximum over ``1..m`` is attained for ``i <= v``.)

    References
    ----------
    .. [1] Steinke, Nasr, Jagielski, NeurIPS 2023, Theorem 3.1.
    """
    v, r, m = _check_counts(n_correct, n_guesses, m)
    delta = check_delta(delta)
    if not float(epsilon) >= 0.0:
        raise InvalidParameterError(f"'epsilon' must be a non-negative float; got {epsilon!r}.")
    return float(_p_values(v, r, m, np.array([float(epsilon)]), delta)[0])


def _p_values(
    v: int, r: int, m: int, eps: NDArray[np.float64], delta: float
) -> NDArray[np.float64]:
    """Theorem 3.1's bound for an array of epsilons (vectorised :func:`one_run_p_value`)."""
    q = 1.0 / (1.0 + np.exp(-eps))  # accuracy of epsilon-DP randomised response
    f_v = stats.binom.sf(v - 1, r, q)  # P[Binomial(r, q) >= v]
    if delta == 0.0 or v == 0:
        return np.minimum(1.0, f_v)
    # f(v - i) - f(v) = P[v - i <= Binomial < v] = pmf(v - 1) + ... + pmf(v - i), i = 1..v.
    counts = np.arange(v - 1, -1, -1)[None, :]
    steps = np.arange(1, v + 1)[None, :]
    worst = np.empty_like(q)
    block = max(1, 2_000_000 // v)  # bound the memory of the (epsilon, i) table
    for start in range(0, len(q), block):
        pmf = stats.binom.pmf(counts, r, q[start : start + block, None])
        worst[start : start + block] = (np.cumsum(pmf, axis=1) / steps).max(axis=1)
    return np.minimum(1.0, f_v + 2.0 * m * delta * worst)


def one_run_epsilon_lower_bound(
    n_correct: int,
    n_guesses: int,
    m: int,
    delta: float,
    confidence: float,
    *,
    tolerance: float = 1e-6,
) -> float:
    """Epsilon lower bound from one training run (Steinke, Nasr, Jagielski 2023).

    The largest ``epsilon`` whose p-value :func:`one_run_p_value` is below
    ``1 - confidence``: with probability at least ``confidence`` (over the random
    inclusion of the canaries and the training run), the training algorithm is
    not ``(e, delta)``-DP for any ``e`` below the returned value.

    Parameters
    ----------
    n_correct : int
        Correct guesses ``v``.
    n_guesses : int
        Guesses made ``r`` (abstentions excluded), fixed in advance.
    m : int
        Number of canaries, each included independently with probability 1/2.
    delta : float
        Delta of the guarantee under audit.
    confidence : float
        Confidence level, e.g. 0.95.
    tolerance : float, default=1e-6
        Absolute precision of the search over epsilon; the value returned is on
        the safe (lower) side.

    Returns
    -------
    float
        The bound (0 if even ``epsilon = 0`` cannot be rejected).

    Notes
    -----
    Theorem 3.1 of [1]_ bounds ``P[W >= v]`` for a fixed ``epsilon``. A
    mechanism that is ``(e, delta)``-DP is also ``(e', delta)``-DP for every
    ``e' >= e``, so every ``e`` below any rejected ``e'`` is rejected too: the
    bound is the supremum of the rejected values. The ``f`` term increases with
    ``epsilon`` but the ``delta`` term need not, so the search scans a grid
    before bisecting at the last crossing instead of assuming monotonicity.

    References
    ----------
    .. [1] T. Steinke, M. Nasr, M. Jagielski, "Privacy auditing with one (1)
       training run", NeurIPS 2023, Theorem 3.1.

    Examples
    --------
    >>> round(one_run_epsilon_lower_bound(1000, 1000, 1000, 0.0, 0.95), 3)
    5.809
    >>> one_run_epsilon_lower_bound(50, 100, 1000, 0.0, 0.95)
    0.0
    """
    v, r, m = _check_counts(n_correct, n_guesses, m)
    delta = check_delta(delta)
    alpha = 1.0 - check_confidence(confidence)
    if v == 0:
        return 0.0

    def p(eps: float) -> float:
        return float(_p_values(v, r, m, np.array([eps]), delta)[0])

    # Beyond eps_hi the binomial term alone is >= alpha, so nothing there is rejected.
    eps_hi = 1.0
    while float(stats.binom.sf(v - 1, r, 1.0 / (1.0 + math.exp(-eps_hi)))) < alpha:
        eps_hi *= 2.0
        if eps_hi > 1e4:  # pragma: no cover - only for absurd inputs
            return math.inf
    grid = np.linspace(0.0, eps_hi, 257)
    rejected = np.flatnonzero(_p_values(v, r, m, grid, delta) < alpha)
    if rejected.size == 0:
        return 0.0
    lo = float(grid[rejected[-1]])
    hi = float(min(eps_hi, lo + grid[1]))
    if p(hi) < alpha:  # pragma: no cover - grid end is never rejected
        return hi
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if p(mid) < alpha:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True, slots=True, kw_only=True)
class OneRunAuditResult:
    """Outcome of :func:`one_run_audit`.

    Attributes
    ----------
    epsilon_lower : float
        Bound at ``confidence`` (for the best guess count, Bonferroni-corrected
        over the counts tried).
    confidence : float
        Overall confidence level.
    n_trials : int
        Training runs used: 1.
    m : int
        Number of canaries.
    n_guesses : int
        Guesses made by the chosen rule (``k_positive + k_negative``).
    n_correct : int
        Correct guesses among them.
    k_positive, k_negative : int
        The chosen rule: "in" for the ``k_positive`` highest scores, "out" for
        the ``k_negative`` lowest.
    delta : float
        Delta of the guarantee under audit.
    claimed_epsilon : float or None
        The claim, if any; ``verdict`` compares the bound with it.
    included : ndarray
        The random inclusion mask that was drawn.
    """

    epsilon_lower: float
    confidence: float
    n_trials: int
    m: int
    n_guesses: int
    n_correct: int
    k_positive: int
    k_negative: int
    delta: float
    claimed_epsilon: float | None = None
    included: NDArray[np.bool_] = field(repr=False, compare=False)
    verdict: str = field(init=False)

    def __post_init__(self) -> None:
        if self.claimed_epsilon is None:
            verdict = "NO CLAIM"
        else:
            verdict = "PASS" if self.epsilon_lower <= self.claimed_epsilon else "FAIL"
        object.__setattr__(self, "verdict", verdict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly record (the mask is left out)."""
        out = asdict(self)
        out.pop("included")
        return out

    def __str__(self) -> str:
        claim = (
            "" if self.claimed_epsilon is None else f", claimed epsilon {self.claimed_epsilon:g}"
        )
        return (
            f"One-run audit {self.verdict}: epsilon >= {self.epsilon_lower:.4g} at "
            f"{self.confidence:.0%} confidence (delta {self.delta:g}{claim})\n"
            f"  {self.n_correct} of {self.n_guesses} guesses correct "
            f"({self.k_positive} in, {self.k_negative} out) among m = {self.m} canaries"
        )


def one_run_audit(
    train: Callable[[NDArray[np.bool_]], Any],
    m: int,
    *,
    delta: float,
    confidence: float,
    guesses: tuple[int, int] | Sequence[tuple[int, int]],
    claimed_epsilon: float | None = None,
    random_state: int | np.random.Generator | None = None,
) -> OneRunAuditResult:
    """Audit a training procedure with one run and ``m`` random canaries.

    Parameters
    ----------
    train : callable
        ``train(included) -> scores``: trains once with canary ``i`` in the data
        iff ``included[i]`` (a boolean array of length ``m``) and returns one
        score per canary, higher meaning "more likely included" (e.g. minus the
        canary's loss).
    m : int
        Number of canaries.
    delta : float
        Delta of the guarantee under audit.
    confidence : float
        Overall confidence level.
    guesses : (k_positive, k_negative) or sequence of them
        Guess "in" for the ``k_positive`` highest scores and "out" for the
        ``k_negative`` lowest, abstain otherwise. With several rules the bound
        is the best one, each computed at confidence ``1 - alpha / len(rules)``
        (Bonferroni), so choosing among them keeps the stated confidence.
    claimed_epsilon : float, optional
        Claim to compare with (verdict).
    random_state : int or Generator, optional
        Seed of the canary inclusion mask (the auditor's randomness).

    Returns
    -------
    OneRunAuditResult

    References
    ----------
    .. [1] Steinke, Nasr, Jagielski, NeurIPS 2023, Algorithm 1 (the auditor) and
       Theorem 3.1 (the bound).
    """
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise InvalidParameterError(f"The 'm' parameter must be an int >= 1; got {m!r}.")
    m = int(m)
    rules: list[tuple[int, int]]
    if (
        isinstance(guesses, tuple)
        and len(guesses) == 2
        and all(isinstance(g, (int, np.integer)) for g in guesses)
    ):
        rules = [(int(guesses[0]), int(guesses[1]))]
    else:
        rules = [(int(a), int(b)) for a, b in guesses]  # type: ignore[misc]
    for kp, kn in rules:
        if kp < 0 or kn < 0 or kp + kn > m or kp + kn == 0:
            raise InvalidParameterError(
                f"Each guess rule (k_positive, k_negative) needs k >= 0 and "
                f"0 < k_positive + k_negative <= m = {m}; got ({kp}, {kn})."
            )
    rng = np.random.default_rng(random_state)
    included = rng.random(m) < 0.5
    scores = np.asarray(train(included.copy()), dtype=np.float64).ravel()
    if scores.shape != (m,) or not np.all(np.isfinite(scores)):
        raise InvalidParameterError(
            f"train(included) must return {m} finite scores, one per canary; got shape "
            f"{scores.shape} with {int(np.sum(~np.isfinite(scores)))} not finite (map an "
            "impossible or certain outcome to a score below or above every finite one)."
        )
    # Ties are broken at random so that equal scores carry no hidden order.
    order = np.lexsort((rng.random(m), scores))  # ascending score
    per_rule = 1.0 - (1.0 - confidence) / len(rules)
    best: tuple[float, int, int, int, int] | None = None
    for kp, kn in rules:
        guessed_in = order[m - kp :] if kp else order[:0]
        guessed_out = order[:kn]
        correct = int(included[guessed_in].sum() + (~included[guessed_out]).sum())
        eps = one_run_epsilon_lower_bound(correct, kp + kn, m, delta, per_rule)
        if best is None or eps > best[0]:
            best = (eps, correct, kp + kn, kp, kn)
    assert best is not None
    eps, correct, r, kp, kn = best
    return OneRunAuditResult(
        epsilon_lower=eps,
        confidence=confidence,
        n_trials=1,
        m=m,
        n_guesses=r,
        n_correct=correct,
        k_positive=kp,
        k_negative=kn,
        delta=delta,
        claimed_epsilon=claimed_epsilon,
        included=included,
    )
