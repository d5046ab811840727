"""Charging real OpenDP measurements through ``Scope.run``."""

from __future__ import annotations

import math

import pytest

from privet.errors import BudgetExceededError, InvalidParameterError, RelationMismatchError
from privet.ledger import ZCDP, Guarantee, Ledger, PureDP, zcdp_to_epsilon

dp = pytest.importorskip("opendp.prelude")
dp.enable_features("contrib")


def laplace(scale: float = 2.0):
    return dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale
    )


def gaussian(scale: float = 2.0):
    return dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale
    )


def count_laplace(metric, scale: float = 1.0):
    """A dataset-level measurement: count, then Laplace noise."""
    if metric == "change_one":
        pre = (
            dp.t.make_metric_unbounded(
                dp.vector_domain(dp.atom_domain(T=int), size=5), dp.change_one_distance()
            )
            >> dp.t.then_count()
        )
    else:
        pre = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    return pre >> dp.m.then_laplace(scale=scale)


def test_laplace_measurement_is_charged_then_invoked():
    led = Ledger(budget=Guarantee(1.0))
    out = led.root.run(laplace(2.0), 3.0, 1.0, caller="test", step="mean")
    assert isinstance(out, float)
    (rec,) = led.charges
    assert rec.entry == PureDP(epsilon=0.5)
    assert rec.mechanism == "opendp[MaxDivergence]"
    assert (rec.caller, rec.step) == ("test", "mean")
    assert led.spent() == Guarantee(0.5)


def test_zcdp_gaussian_is_charged_as_rho():
    led = Ledger(budget=Guarantee(3.0, 1e-6))
    led.root.run(gaussian(2.0), 0.0, 1.0)
    (rec,) = led.charges
    assert isinstance(rec.entry, ZCDP) and rec.entry.rho == pytest.approx(0.125)
    bound = led.spent_bound()
    assert bound.method == "zcdp"
    assert bound.guarantee.epsilon == pytest.approx(zcdp_to_epsilon(0.125, 1e-6))


def test_zcdp_gaussian_on_a_pure_budget_is_refused_before_invoking():
    led = Ledger(budget=Guarantee(100.0))
    with pytest.raises(BudgetExceededError):
        led.root.run(gaussian(2.0), 0.0, 1.0)
    assert led.charges == []
    assert led.spent() == Guarantee(0.0)


def test_run_refuses_when_the_map_does_not_fit_and_never_invokes():
    led = Ledger(budget=Guarantee(0.4))

    class Spy:
        """Wraps a measurement and records invocations."""

        def __init__(self, m):
            self.m, self.invoked = m, False
            self.output_measure, self.input_metric = m.output_measure, m.input_metric

        def map(self, d_in):
            return self.m.map(d_in)

        def __call__(self, data):
            self.invoked = True
            return self.m(data)

    spy = Spy(laplace(2.0))
    with pytest.raises(BudgetExceededError, match="over its budget"):
        led.root.run(spy, 1.0, 1.0)
    assert not spy.invoked and led.charges == []


def test_dataset_measurement_on_add_remove_ledger():
    led = Ledger(budget=Guarantee(2.0))
    released = led.root.run(count_laplace("symmetric", 1.0), [1, 2, 3], 1)
    assert isinstance(released, int)
    assert led.spent() == Guarantee(1.0)


def test_relation_mismatch_change_one_on_add_remove():
    led = Ledger(budget=Guarantee(5.0))
    with pytest.raises(RelationMismatchError, match="replace-one changes"):
        led.root.run(count_laplace("change_one"), [1, 2, 3, 4, 5], 1)
    assert led.charges == [] and led.spent() == Guarantee(0.0)


def test_change_one_measurement_on_replace_one_ledger():
    led = Ledger(budget=Guarantee(5.0), relation="replace_one")
    led.root.run(count_laplace("change_one"), [1, 2, 3, 4, 5], 1)
    assert led.spent() == Guarantee(2.0)


def test_symmetric_measurement_on_replace_one_needs_distance_two():
    led = Ledger(budget=Guarantee(5.0), relation="replace_one")
    with pytest.raises(RelationMismatchError, match="pass d_in=2"):
        led.root.run(count_laplace("symmetric"), [1, 2, 3], 1)
    assert led.charges == []
    led.root.run(count_laplace("symmetric"), [1, 2, 3], 2)
    assert led.spent() == Guarantee(2.0)


def test_a_dataset_distance_below_one_is_refused():
    """d_in = 0 would make the map return 0: a free look at the data."""
    led = Ledger(budget=Guarantee(1.0))
    with pytest.raises(InvalidParameterError, match="d_in"):
        led.root.run(count_laplace("symmetric"), [1, 2, 3], 0)
    assert led.charges == [] and led.spent() == Guarantee(0.0)


@pytest.mark.parametrize("d_in", [-1, math.nan, "1", None, True, 1.5, 2**40])
def test_a_d_in_that_is_not_a_count_of_records_is_refused_before_the_map(d_in):
    """Issue 37: d_in=-1, nan or "1" gave OpenDP's or Python's raw errors."""
    led = Ledger(budget=Guarantee(10.0))
    with pytest.raises(InvalidParameterError, match="d_in"):
        led.root.run(count_laplace("symmetric"), [1, 2, 3], d_in)
    assert led.charges == [] and led.spent() == Guarantee(0.0)


@pytest.mark.parametrize("d_in", [-1.0, math.inf, math.nan, "1.0"])
def test_a_real_d_in_must_be_finite_and_non_negative(d_in):
    led = Ledger(budget=Guarantee(10.0))
    with pytest.raises(InvalidParameterError, match="d_in"):
        led.root.run(laplace(2.0), 3.0, d_in)
    assert led.charges == []


def test_an_integral_float_d_in_is_a_count_of_records():
    led = Ledger(budget=Guarantee(10.0))
    led.root.run(count_laplace("symmetric"), [1, 2, 3], 2.0)
    assert led.spent() == Guarantee(2.0)


def test_a_transformation_or_a_function_is_not_a_measurement():
    """Issue 37: a Transformation gave a raw AttributeError (no output_measure)."""
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    led = Ledger(budget=Guarantee(10.0))
    for thing in (count, lambda x: x, "laplace", None):
        with pytest.raises(InvalidParameterError, match="Measurement"):
            led.root.run(thing, [1, 2, 3], 1)
    assert led.charges == []


def test_run_inside_a_reservation_commits_against_it():
    led = Ledger(budget=Guarantee(1.0))
    with led.reserve(Guarantee(0.5)) as res:
        led.root.run(laplace(4.0), 1.0, 1.0)
        assert res.used() == Guarantee(0.25)
        with pytest.raises(BudgetExceededError, match="reservation"):
            led.root.run(laplace(2.0), 1.0, 1.0)
    assert led.spent() == Guarantee(0.25)
    assert math.isclose(led.remaining().epsilon, 0.75)


def test_a_change_one_measurement_in_a_part_a_replaced_record_can_leave_is_refused():
    """Under replace-one a non-stable partition is composed as if each part's charges
    also covered a record entering or leaving it; a change-one measurement does not."""
    led = Ledger(budget=Guarantee(5.0), relation="replace_one")
    moving, _ = led.root.partition(2)
    with pytest.raises(RelationMismatchError, match="SymmetricDistance"):
        moving.run(count_laplace("change_one"), [1, 2, 3, 4, 5], 1)
    assert led.charges == []
    held, _ = led.root.partition(2, stable=True)  # a record stays in its part
    held.run(count_laplace("change_one"), [1, 2, 3, 4, 5], 1)
    moving.run(count_laplace("symmetric"), [1, 2, 3], 2)  # covers entering and leaving
    assert len(led.charges) == 2
