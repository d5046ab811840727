"""Floating-point safety of the local randomisers (issue 11, item 4).

A randomiser computed in floats from its input can release outputs that one
input produces and another cannot (Mironov 2012). The support test draws
200,000 outputs on input 0 (the middle of [-1, 1]) and checks, white-box,
whether each could have been produced on input 1: the naive float piecewise
mechanism (Alg. 3 of seed 004 as written, the bug zoo's fixture in
privet.audits.zoo.samplers) fails it for about a third of its outputs,
privet's randomisers for none.
privet's own DP test (:func:`privet.testing.assert_dp`) then audits every
local randomiser on two statistics: the output itself and its eight
lowest-order mantissa bits, and flags the naive mechanism through its
support event.

Statistical assertions hold at confidence 1 - ALPHA (mech_stats).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from mech_stats import ALPHA, assert_mean, assert_variance

from privet.audits.zoo.samplers import naive_piecewise
from privet.audits.zoo.samplers import naive_piecewise_reachable as naive_reachable
from privet.ledger import Ledger
from privet.mechanisms import (
    DuchiMechanism,
    DuchiMultiMechanism,
    LocalLaplace,
    PiecewiseMechanism,
    PiecewiseMultiMechanism,
    RandomisedResponse,
)
from privet.mechanisms import make_gamma_dlpa as pm_gamma
from privet.mechanisms._exact import DENOMINATOR
from privet.mechanisms._random import local_rng
from privet.testing import assert_dp

SUPPORT_SAMPLES = 200_000
DP_TRIALS = 200_000


def grid_reachable(mech: Any, y: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """Whether each y is factor times one of privet's piecewise cells (every input reaches all)."""
    g = mech._grid
    z = np.round((y / factor + 1.0) * (g.slope * g.m / 2.0) + g.intercept)
    ok = (z >= 0) & (z < g.cells)
    return ok & (factor * g.to_unit(np.clip(z, 0, g.cells - 1).astype(np.int64)) == y)


# ------------------------------------------------------------------ support test
def test_naive_float_piecewise_fails_the_support_test() -> None:
    y0 = naive_piecewise(0.0, SUPPORT_SAMPLES)
    assert naive_reachable(naive_piecewise(1.0, 2000), 1.0).all()  # the inversion is right
    unreachable = 1.0 - naive_reachable(y0, 1.0).mean()
    assert unreachable > 0.2, unreachable  # about 30%


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_piecewise_outputs_are_reachable_from_every_input(
    replace_ledger: Ledger, epsilon: float
) -> None:
    mech = PiecewiseMechanism(epsilon=epsilon)
    g = mech._grid
    assert 1.0 <= g.cell_ratio <= math.exp(epsilon)
    for x in (0.0, 1.0, -1.0, 0.3):
        y = mech(np.full(SUPPORT_SAMPLES, x), scope=replace_ledger)
        assert grid_reachable(mech, y).all()


def test_piecewise_multi_outputs_are_reachable(replace_ledger: Ledger) -> None:
    mech = PiecewiseMultiMechanism(epsilon=6.0, dimension=3)
    y = mech(np.zeros((SUPPORT_SAMPLES // 3, 3)), scope=replace_ledger)
    assert grid_reachable(mech, y[y != 0], factor=mech.dimension / mech.k).all()


@pytest.mark.parametrize(
    "mech",
    [
        DuchiMechanism(epsilon=1.0),
        DuchiMultiMechanism(epsilon=1.0, dimension=3),
        RandomisedResponse(epsilon=1.0, categories=5),
        LocalLaplace(epsilon=1.0),
    ],
    ids=type,
)
def test_other_randomisers_have_the_same_support_on_both_inputs(
    replace_ledger: Ledger, mech: Any
) -> None:
    n = SUPPORT_SAMPLES
    if isinstance(mech, RandomisedResponse):
        y0 = mech(np.zeros(n, dtype=int), scope=replace_ledger)
        assert set(np.unique(y0)) == set(range(5))  # every category, from every input
    elif isinstance(mech, LocalLaplace):
        # OpenDP's sampler: outputs on the grid 2^k, whatever the input
        y0 = mech(np.zeros(n), scope=replace_ledger)
        y1 = mech(np.ones(n), scope=replace_ledger)
        k = math.floor(math.log2(2.0**-30 * mech.sensitivity / n))
        for y in (y0, y1):
            assert np.all(y / 2.0**k == np.round(y / 2.0**k))
    else:
        shape = (n // 3, 3) if isinstance(mech, DuchiMultiMechanism) else (n,)
        y0 = mech(np.zeros(shape), scope=replace_ledger)
        y1 = mech(np.ones(shape), scope=replace_ledger)
        b = mech.output_bound
        assert set(np.unique(y0)) == set(np.unique(y1)) == {-b, b}


def test_realised_probabilities_keep_ratios_within_e_eps() -> None:
    for eps in (1e-6, 0.1, 1.0, 10.0, 50.0):
        rr = RandomisedResponse(epsilon=eps, categories=7)
        assert 1.0 <= rr.p / rr.q <= math.exp(eps)
        keep = DuchiMechanism(epsilon=eps)._keep  # exact coin: keep/(D - keep) are the odds
        assert 1 <= Fraction(keep, DENOMINATOR - keep) <= Fraction(math.exp(eps))
        pm = PiecewiseMechanism(epsilon=eps)
        assert 1.0 <= pm._grid.cell_ratio <= math.exp(eps) * (1 + 1e-12)


# ------------------------------------------------------------ unbiasedness, variance
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 8.0])
@pytest.mark.parametrize("value", [-1.0, 0.123456789, 1.0])
def test_discretised_piecewise_is_unbiased_with_exact_variance(
    replace_ledger: Ledger, epsilon: float, value: float
) -> None:
    mech = PiecewiseMechanism(epsilon=epsilon)
    y = mech(np.full(SUPPORT_SAMPLES, value), scope=replace_ledger)
    var = float(mech.variance(value))
    assert_mean(y, value, var)
    assert_variance(y, var, mean=value)
    # the grid costs almost nothing against Lemma 1's continuous variance
    em1 = math.expm1(epsilon / 2)
    lemma1 = value**2 / em1 + (em1 + 4) / (3 * em1**2)
    assert var == pytest.approx(lemma1, rel=1e-4)


# --------------------------------------------------------------- privet's DP test
def _low_bits(out: Any) -> np.ndarray:
    """The eight lowest-order mantissa bits of each output (Mironov's kind of event)."""
    return (np.ascontiguousarray(out, dtype=np.float64).view(np.uint64) & 0xFF).astype(np.int64)


def _first(out: Any) -> np.ndarray:
    arr = np.asarray(out, dtype=float)
    return arr[:, 0] if arr.ndim == 2 else arr


def _randomisers() -> list[tuple[str, Any, Any, Any]]:
    d3 = lambda v: np.array([v, 0.0, 0.0])  # noqa: E731
    return [
        ("piecewise", PiecewiseMechanism(epsilon=1.0), -1.0, 1.0),
        ("piecewise_md", PiecewiseMultiMechanism(epsilon=3.0, dimension=3), d3(-1.0), d3(1.0)),
        ("duchi", DuchiMechanism(epsilon=1.0), -1.0, 1.0),
        ("duchi_md", DuchiMultiMechanism(epsilon=1.0, dimension=3), d3(-1.0), d3(1.0)),
        ("laplace", LocalLaplace(epsilon=1.0), -1.0, 1.0),
        ("randomised_response", RandomisedResponse(epsilon=1.0, categories=3), 0, 1),
    ]


def _vectorised(mech: Any, ledger: Ledger) -> Callable[..., np.ndarray]:
    def run(x: Any, size: int) -> np.ndarray:
        x = np.asarray(x)
        batch = np.broadcast_to(x, (size, *x.shape)).copy()
        return _first(mech(batch, scope=ledger))

    return run


@pytest.mark.slow
@pytest.mark.parametrize("statistic", [None, _low_bits], ids=["output", "low_bits"])
@pytest.mark.parametrize("discrete", [False, True], ids=["gamma", "polya"])
def test_gamma_dlpa_sum_passes_privets_dp_test(
    ledger: Ledger, statistic: Any, discrete: bool
) -> None:
    """The distributed Laplace's sum, audited the same way (float shares: not proven)."""
    mech = pm_gamma(epsilon=1.0, parties=4, discrete=discrete)

    def run(first: int, size: int) -> np.ndarray:
        values = np.zeros((4, size), dtype=np.int64 if discrete else float)
        values[0] = first
        return np.asarray(mech(values, scope=ledger))

    assert_dp(
        run,
        mech.epsilon,
        neighbours=(0, 1),
        trials=DP_TRIALS,
        confidence=1 - ALPHA,
        statistic=statistic,
    )
    if discrete:
        assert np.asarray(run(0, 1000)).dtype.kind == "i"  # integers: the same support


@pytest.mark.slow
@pytest.mark.parametrize("statistic", [None, _low_bits], ids=["output", "low_bits"])
@pytest.mark.parametrize(("name", "mech", "x0", "x1"), _randomisers(), ids=lambda p: str(p))
def test_every_local_randomiser_passes_privets_dp_test(
    replace_ledger: Ledger, name: str, mech: Any, x0: Any, x1: Any, statistic: Any
) -> None:
    assert_dp(
        _vectorised(mech, replace_ledger),
        mech.epsilon,
        neighbours=(x0, x1),
        trials=DP_TRIALS,
        confidence=1 - ALPHA,
        statistic=statistic,
    )


def test_privets_dp_test_flags_the_naive_piecewise_and_passes_the_fixed_one(
    replace_ledger: Ledger,
) -> None:
    """The support event 'not reachable from input 1' separates the naive mechanism."""

    def naive(x: float, size: int) -> np.ndarray:
        return naive_piecewise(x, size)

    def naive_event(out: Any) -> np.ndarray:
        return (~naive_reachable(np.asarray(out, dtype=float), 1.0)).astype(np.int64)

    with pytest.raises(AssertionError, match=r"is not \(1, 0\)-DP"):
        assert_dp(
            naive,
            1.0,
            neighbours=(0.0, 1.0),
            trials=DP_TRIALS // 4,
            confidence=1 - ALPHA,
            statistic=naive_event,
        )
    fixed = PiecewiseMechanism(epsilon=1.0)

    def fixed_event(out: Any) -> np.ndarray:
        return (~grid_reachable(fixed, np.asarray(out, dtype=float))).astype(np.int64)

    assert_dp(
        _vectorised(fixed, replace_ledger),
        1.0,
        neighbours=(0.0, 1.0),
        trials=DP_TRIALS // 4,
        confidence=1 - ALPHA,
        statistic=fixed_event,
    )


def test_each_call_draws_from_a_freshly_seeded_generator() -> None:
    """Threat model (mechanisms docstring): a state recovered from one call predicts no other."""
    a, b = local_rng(), local_rng()
    assert a is not b
    assert not np.array_equal(a.integers(0, 2**62, 4), b.integers(0, 2**62, 4))
