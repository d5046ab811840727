"""Refusals: invalid parameters and inputs raise a clear error and charge nothing;
a charge that does not fit raises BudgetExceededError before any noise is drawn."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from privet.errors import BudgetExceededError, InvalidParameterError, RelationMismatchError
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    DuchiMechanism,
    DuchiMultiMechanism,
    GammaDLPA,
    LaplaceMechanism,
    LocalLaplace,
    MatrixMechanism,
    PiecewiseMechanism,
    PiecewiseMultiMechanism,
    RandomisedResponse,
    _opendp,
    distributed,
    local,
    make_discrete_laplace,
    make_exponential,
    make_gamma_dlpa,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    make_report_noisy_max,
    recorder,
)

BAD_EPSILONS = [0, 0.0, -1.0, math.nan, math.inf, "1", True, None]

CONSTRUCTORS: dict[str, Callable[[Any], Any]] = {
    "make_laplace": lambda e: make_laplace(e),
    "make_discrete_laplace": lambda e: make_discrete_laplace(e),
    "make_gaussian": lambda e: make_gaussian(epsilon=e, delta=1e-6),
    "make_exponential": lambda e: make_exponential(e),
    "make_report_noisy_max": lambda e: make_report_noisy_max(e),
    "make_noisy_histogram": lambda e: make_noisy_histogram(e),
    "make_gamma_dlpa": lambda e: make_gamma_dlpa(e, parties=3),
    "PiecewiseMechanism": lambda e: PiecewiseMechanism(epsilon=e),
    "PiecewiseMultiMechanism": lambda e: PiecewiseMultiMechanism(epsilon=e, dimension=3),
    "DuchiMechanism": lambda e: DuchiMechanism(epsilon=e),
    "DuchiMultiMechanism": lambda e: DuchiMultiMechanism(epsilon=e, dimension=3),
    "LocalLaplace": lambda e: LocalLaplace(epsilon=e),
    "RandomisedResponse": lambda e: RandomisedResponse(epsilon=e, categories=3),
    "MatrixMechanism": lambda e: MatrixMechanism(workload=np.eye(3), epsilon=e),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_invalid_epsilon_is_refused(name: str, epsilon: Any) -> None:
    led = Ledger(Guarantee(1.0))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        CONSTRUCTORS[name](epsilon)
    assert led.spent() == Guarantee(0.0)


@pytest.mark.parametrize("sensitivity", [0, -2.0, math.nan, math.inf, "x"], ids=repr)
@pytest.mark.parametrize(
    "build",
    [
        lambda s: make_laplace(1.0, sensitivity=s),
        lambda s: make_discrete_laplace(1.0, sensitivity=s),
        lambda s: make_gaussian(rho=0.1, sensitivity=s),
        lambda s: make_exponential(1.0, sensitivity=s),
        lambda s: make_gamma_dlpa(1.0, parties=2, sensitivity=s),
        lambda s: LaplaceMechanism(scale=1.0, sensitivity=s),
    ],
)
def test_invalid_sensitivity_is_refused(build: Callable[[Any], Any], sensitivity: Any) -> None:
    with pytest.raises(InvalidParameterError, match="sensitivity"):
        build(sensitivity)


def test_other_parameter_errors() -> None:
    with pytest.raises(InvalidParameterError, match="exactly one of 'epsilon' or 'scale'"):
        make_laplace(1.0, scale=2.0)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        make_laplace()
    with pytest.raises(InvalidParameterError, match="delta"):
        make_gaussian(epsilon=1.0, delta=1.5)
    with pytest.raises(InvalidParameterError, match="rho, or both epsilon and delta"):
        make_gaussian(epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="noise"):
        make_report_noisy_max(1.0, noise="laplace")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="lower < upper"):
        PiecewiseMechanism(epsilon=1.0, lower=1.0, upper=1.0)
    with pytest.raises(InvalidParameterError, match="categories"):
        RandomisedResponse(epsilon=1.0, categories=["a", "a"])
    with pytest.raises(InvalidParameterError, match="colluders"):
        GammaDLPA(parties=3, scale=1.0, colluders=3)
    with pytest.raises(InvalidParameterError, match="relation"):
        make_laplace(1.0, relation="bounded-ish")
    with pytest.raises(InvalidParameterError, match="contributions"):
        make_noisy_histogram(1.0, contributions=0)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every call into the samplers, to prove that a refused call drew nothing."""
    calls: list[str] = []
    for name in ("laplace_float", "laplace_int", "gaussian_float", "gaussian_int", "noisy_max"):
        original = getattr(_opendp, name)

        def wrapper(*args: Any, _name: str = name, _orig: Any = original, **kw: Any) -> Any:
            calls.append(_name)
            return _orig(*args, **kw)

        monkeypatch.setattr(_opendp, name, wrapper)
    original_rng = distributed.local_rng

    def rng_spy() -> Any:
        calls.append("local_rng")
        return original_rng()

    for module in (distributed, local):
        monkeypatch.setattr(module, "local_rng", rng_spy)
    original_coins = recorder.privacy_rng

    def coins_spy() -> Any:  # the noisy argmax's tie-breaking coins
        calls.append("privacy_rng")
        return original_coins()

    monkeypatch.setattr(recorder, "privacy_rng", coins_spy)
    return calls


BAD_INPUTS = [
    ("laplace", lambda: make_laplace(1.0), [1.0, math.nan], "finite"),
    ("laplace-inf", lambda: make_laplace(1.0), [math.inf], "finite"),
    ("laplace-str", lambda: make_laplace(1.0), ["a", "b"], "real numbers"),
    ("discrete", lambda: make_discrete_laplace(1.0), [1.5, 2.0], "integer counts"),
    ("gaussian", lambda: make_gaussian(rho=1.0), [math.nan], "finite"),
    ("exponential", lambda: make_exponential(1.0), [0.0, math.nan], "finite"),
    ("exponential-empty", lambda: make_exponential(1.0), [], "at least one candidate"),
    ("histogram", lambda: make_noisy_histogram(1.0), [[1, 2], [3, 4.5]], "integer counts"),
    ("dlpa", lambda: make_gamma_dlpa(1.0, parties=3), np.zeros((2, 4)), "first axis"),
]


@pytest.mark.parametrize(
    ("label", "build", "values", "match"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS]
)
def test_invalid_input_charges_nothing_and_draws_nothing(
    spy: list[str], label: str, build: Callable[[], Any], values: Any, match: str
) -> None:
    mech = build()
    led = Ledger(Guarantee(10.0))
    with pytest.raises(InvalidParameterError, match=match):
        mech(values, scope=led.root)
    assert led.spent() == Guarantee(0.0)
    assert not led._charges
    assert spy == []


LOCAL_OUT_OF_RANGE = [
    (PiecewiseMechanism(epsilon=1.0), [0.5, 1.2]),
    (PiecewiseMechanism(epsilon=1.0, lower=0, upper=10), [-0.1]),
    (DuchiMechanism(epsilon=1.0), [-3.0]),
    (LocalLaplace(epsilon=1.0), [2.0]),
    (PiecewiseMultiMechanism(epsilon=1.0, dimension=2), [[0.0, 1.5]]),
    (DuchiMultiMechanism(epsilon=1.0, dimension=2), [[-1.01, 0.0]]),
    (RandomisedResponse(epsilon=1.0, categories=["x", "y"]), ["x", "z"]),
    (RandomisedResponse(epsilon=1.0, categories=3), [0, 3]),
]


@pytest.mark.parametrize(("mech", "values"), LOCAL_OUT_OF_RANGE, ids=repr)
def test_local_values_outside_the_declared_range_are_refused(mech: Any, values: Any) -> None:
    led = Ledger(Guarantee(10.0), relation="replace_one")
    with pytest.raises(InvalidParameterError, match="declared"):
        mech(values, scope=led)
    assert led.spent() == Guarantee(0.0)


def test_local_dimension_mismatch() -> None:
    led = Ledger(Guarantee(10.0), relation="replace_one")
    with pytest.raises(InvalidParameterError, match="dimension=3"):
        PiecewiseMultiMechanism(epsilon=1.0, dimension=3)(np.zeros((4, 2)), scope=led)
    assert led.spent() == Guarantee(0.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda e, r: DuchiMechanism(epsilon=e, lower=-r, upper=r),
        lambda e, r: DuchiMultiMechanism(epsilon=e, dimension=3, lower=-r, upper=r),
        lambda e, r: PiecewiseMechanism(epsilon=e, lower=-r, upper=r),
        lambda e, r: PiecewiseMultiMechanism(epsilon=e, dimension=3, lower=-r, upper=r),
    ],
    ids=["duchi", "duchi_md", "piecewise", "piecewise_md"],
)
def test_local_outputs_beyond_the_largest_double_are_refused(build: Any) -> None:
    """A tiny epsilon scales the unit output by ~2/epsilon: over a range of 1e296 the
    released values would overflow to inf (found by the mechanisms fuzz test)."""
    with pytest.raises(InvalidParameterError, match="larger epsilon or a narrower range"):
        build(1e-12, 1.8e296)
    mech = build(1e-12, 1e3)  # the same epsilon over a range that fits is fine
    assert np.isfinite(mech.lower) and mech.epsilon == 1e-12


CHARGED = [
    ("laplace", lambda: make_laplace(0.6), np.zeros(5), "add_remove"),
    ("discrete", lambda: make_discrete_laplace(0.6), np.zeros(5, dtype=int), "add_remove"),
    # calibrated at the budget's delta: its exact (GDP) cost 0.555 exceeds 0.5
    ("gaussian", lambda: make_gaussian(epsilon=0.6, delta=1e-6), np.zeros(5), "add_remove"),
    ("exponential", lambda: make_exponential(0.6), [0.0, 1.0], "add_remove"),
    ("rnm", lambda: make_report_noisy_max(0.6), [0.0, 1.0], "add_remove"),
    ("histogram", lambda: make_noisy_histogram(0.6), np.ones((2, 3), dtype=int), "add_remove"),
    ("dlpa", lambda: make_gamma_dlpa(0.6, parties=2, colluders=0), np.zeros((2, 3)), "add_remove"),
    ("matrix", lambda: MatrixMechanism(workload=np.eye(3), epsilon=0.6), np.ones(3), "add_remove"),
    ("piecewise", lambda: PiecewiseMechanism(epsilon=0.6), np.zeros(4), "replace_one"),
    ("rr", lambda: RandomisedResponse(epsilon=0.6, categories=2), [0, 1], "replace_one"),
]


@pytest.mark.parametrize(
    ("label", "build", "values", "relation"), CHARGED, ids=[c[0] for c in CHARGED]
)
def test_charge_happens_before_noise(
    spy: list[str], label: str, build: Callable[[], Any], values: Any, relation: str
) -> None:
    """With too little budget the call raises BudgetExceededError and draws no noise."""
    led = Ledger(Guarantee(0.5, 1e-6), relation=relation)
    mech = build()
    with pytest.raises(BudgetExceededError):
        mech(values, scope=led.root)
    assert led.spent() == Guarantee(0.0)
    assert spy == []
    # with enough budget the same call charges first and then samples
    big = Ledger(Guarantee(1.0, 1e-6), relation=relation)
    mech(values, scope=big.root, caller="t", step=label)
    assert 0 < big.spent().epsilon <= 0.6 * (1 + 1e-9)
    assert spy  # and now the sampler ran


def test_relation_mismatch_is_refused_without_charge() -> None:
    led = Ledger(Guarantee(5.0), relation="replace_one")
    with pytest.raises(RelationMismatchError, match="add/remove"):
        make_noisy_histogram(1.0)(np.ones(3, dtype=int), scope=led)
    with pytest.raises(RelationMismatchError):
        make_laplace(1.0)(np.ones(3), scope=led)
    assert led.spent() == Guarantee(0.0)
    make_noisy_histogram(1.0, relation="replace_one")(np.ones(3, dtype=int), scope=led)
    assert led.spent().epsilon == pytest.approx(1.0)


def test_scope_is_required() -> None:
    with pytest.raises(InvalidParameterError, match=r"scope=ledger\.root"):
        make_laplace(1.0)([1.0], scope=None)


def test_rows_over_disjoint_parts_refused_under_replace_one() -> None:
    led = Ledger(Guarantee(5.0), relation="replace_one")
    mech = make_exponential(1.0, relation="replace_one")
    with pytest.raises(InvalidParameterError, match="replace-one"):
        mech(np.zeros((3, 2)), scope=led, disjoint_rows=True)
    assert led.spent() == Guarantee(0.0)
