"""Assertions for your own test suites: is a randomised function differentially private?

:func:`assert_dp` runs :func:`privet.audits.dp_test` on one or more pairs of
neighbouring inputs and raises :class:`AssertionError` (so pytest reports it as
a failed test, not an error) when the empirical lower bound on epsilon exceeds
the claim, with the distinguishing event and the counts in the message.

A passing assertion is not a proof: it says that the trials found no evidence
against the claim on these inputs. A failing one is evidence at the stated
confidence: if the function really is ``(epsilon, delta)``-DP, the assertion
fails with probability at most ``1 - confidence``.

>>> import numpy as np
>>> from privet.testing import assert_dp
>>> def randomised_response(bit, size):
...     rng = np.random.default_rng()
...     keep = rng.random(size) < np.e / (1 + np.e)  # epsilon = 1
...     return np.where(keep, bit, 1 - bit)
>>> result = assert_dp(randomised_response, 1.0, neighbours=(0, 1), trials=20_000,
...                    confidence=0.99, random_state=0)
>>> result.verdict
'PASS'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from privet.audits.bounds import check_confidence, check_real
from privet.audits.dptest import DPTestResult, EventsSpec, dp_test
from privet.errors import InvalidParameterError

__all__ = ["assert_dp"]


def _pairs(neighbours: Any) -> list[tuple[Any, Any]]:
    if isinstance(neighbours, tuple) and len(neighbours) == 2:
        return [neighbours]
    if isinstance(neighbours, list) and neighbours:
        bad = [p for p in neighbours if not (isinstance(p, tuple) and len(p) == 2)]
        if not bad:
            return list(neighbours)
    raise InvalidParameterError(
        "'neighbours' must be a tuple (D, D') of neighbouring inputs, or a non-empty list of "
        f"such tuples; got {type(neighbours).__name__}. Build them with "
        "privet.audits.canary_pair(D, record) or privet.testing.neighbouring_pairs(schema)."
    )


def assert_dp(
    fn: Callable[..., Any],
    epsilon: float,
    delta: float = 0.0,
    *,
    neighbours: tuple[Any, Any] | Sequence[tuple[Any, Any]],
    trials: int,
    confidence: float,
    statistic: Callable[[Any], Any] | None = None,
    events: EventsSpec = "auto",
    n_jobs: int | None = None,
    random_state: int | None = None,
    **kwargs: Any,
) -> DPTestResult:
    """Assert that ``fn`` looks ``(epsilon, delta)``-DP on the given neighbouring inputs.

    Parameters
    ----------
    fn : callable
        The randomised function under test: ``fn(data)`` returns one output,
        or ``fn(data, size=n)`` returns ``n`` independent outputs along the
        first axis (much faster; detected from the signature). Picklable for
        ``n_jobs != 1``.
    epsilon, delta : float
        The claimed guarantee.
    neighbours : (D, D') or list of (D, D')
        Neighbouring inputs, passed to ``fn`` as they are. With ``k`` pairs each
        is tested at confidence ``1 - (1 - confidence) / k`` (Bonferroni), so a
        DP function fails the whole assertion with probability at most
        ``1 - confidence``.
    trials : int
        Runs of ``fn`` per input of each pair (event selection included).
    confidence : float
        E.g. 0.99: a correct function fails at most 1% of the time.
    statistic : callable, optional
        Maps a batch of outputs to one scalar or vector per output (e.g. a
        model's predictions); default the outputs themselves.
    events : {"auto", "threshold", "classifier", "set"}, default="auto"
        Event families (see :func:`privet.audits.dp_test`).
    n_jobs : int, optional
        joblib workers.
    random_state : int, optional
        Seed of the event selection (``fn``'s own randomness is not touched).
    **kwargs
        Passed to :func:`privet.audits.dp_test` (``selection_fraction``,
        ``classifier``, ``batch_size``...).

    Returns
    -------
    DPTestResult
        The test with the largest lower bound, when every pair passes.

    Raises
    ------
    AssertionError
        If the lower bound of some pair exceeds ``epsilon``; the message names
        the pair, the event, the counts on both inputs and the bound.

    Examples
    --------
    A Laplace mechanism with half the scale it needs is caught::

        import opendp.prelude as dp
        dp.enable_features("contrib")
        lap = dp.m.make_laplace(  # scale 0.5 where epsilon = 1 needs scale 1
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.l1_distance(T=float), scale=0.5)

        def noisy_count(data, size):
            return np.asarray(lap([float(len(data))] * size))

        assert_dp(noisy_count, 1.0, neighbours=([1] * 10, [1] * 11),
                  trials=20_000, confidence=0.99)
        # AssertionError: not (1, 0)-DP: epsilon >= 1.7 at 99% confidence ...
    """
    pairs = _pairs(neighbours)
    if not callable(fn):
        raise InvalidParameterError(
            f"assert_dp tests a randomised function fn(data) (or fn(data, size=n)); got "
            f"{type(fn).__name__}."
        )
    epsilon = check_real(epsilon, "epsilon", lower=0.0, closed="both", example=", e.g. 1.0")
    if math.isinf(epsilon):
        raise InvalidParameterError(
            "assert_dp(epsilon=inf) claims nothing, so it could never fail; pass the finite "
            "epsilon the function claims."
        )
    confidence = check_confidence(confidence)
    per_pair = 1.0 - (1.0 - confidence) / len(pairs)
    results = []
    for i, (d0, d1) in enumerate(pairs):
        r = dp_test(
            fn,
            d0,
            d1,
            epsilon=epsilon,
            delta=delta,
            trials=trials,
            confidence=per_pair,
            statistic=statistic,
            events=events,
            n_jobs=n_jobs,
            random_state=random_state,
            **kwargs,
        )
        if r.verdict == "FAIL":
            where = f" on pair #{i} of {len(pairs)}" if len(pairs) > 1 else ""
            raise AssertionError(
                f"{getattr(fn, '__name__', type(fn).__name__)} is not ({epsilon:g}, {delta:g})-DP"
                f"{where}: epsilon >= {r.epsilon_lower:.4g} at {r.confidence:.10g} confidence.\n"
                f"  event: {r.event} (more likely on {r.more_likely_on})\n"
                f"  D : {r.k_d0:,} of {r.n_d0:,} runs in the event\n"
                f"  D': {r.k_d1:,} of {r.n_d1:,} runs in the event\n"
                f"  Clopper-Pearson: p_hi >= {r.p_hi_lower:.4g}, p_lo <= {r.p_lo_upper:.4g}; "
                f"{r.n_trials:,} trials per input ({r.n_selection:,} chose the event)."
            )
        results.append(r)
    return max(results, key=lambda r: r.epsilon_lower)
