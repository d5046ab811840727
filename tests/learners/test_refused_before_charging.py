"""A fit that cannot finish is refused before its first charge (issue 37, "charged on failure").

``DPID3Classifier(epsilon=1e-300)`` charged its two split levels, then its leaf
histogram's noise scale (3e300) was refused: budget lost for nothing. The plan
is now checked up front (``privet.mechanisms.check_plan``): every release it holds
must be drawable by its sampler, or the fit is refused with nothing charged.
"""

from __future__ import annotations

import warnings

import pytest

from privet.errors import InvalidParameterError, PrivetError
from privet.learners import (
    DPID3Classifier,
    DPRandomForestClassifier,
    FederatedDPTreeClassifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
)
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import check_plan


def _fit(cls, car, led, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls(schema=car.schema, ledger=led, **params).fit(car.X, car.y)


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        (DPID3Classifier, {"max_depth": 2}),
        (PartialMPCID3Classifier, {"max_depth": 2}),
        (ObliviousID3Classifier, {"max_depth": 2, "split": "exponential"}),
        (DPRandomForestClassifier, {"max_depth": 2, "n_estimators": 3}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_a_leaf_noise_no_sampler_draws_is_refused_before_the_splits_are_charged(car, cls, params):
    led = Ledger(budget=100.0)
    with pytest.raises(InvalidParameterError, match=r"no sampler can draw.*nothing was charged"):
        _fit(cls, car, led, epsilon=1e-300, **params)
    assert led.charges == [] and led.spent() == Guarantee(0.0)


@pytest.mark.parametrize("epsilon", [1e-300, 1e-200, 1e-20])
def test_federated_integer_noise_too_wide_for_int64_is_refused_up_front(car, epsilon):
    """epsilon=1e-20: charged its first levels, then numpy's negative binomial raised a
    raw ValueError (p too small) in the noisy sums."""
    led = Ledger(budget=Guarantee(100.0, 1e-3))
    with pytest.raises(InvalidParameterError, match=r"integer noise.*nothing was charged"):
        _fit(FederatedDPTreeClassifier, car, led, epsilon=epsilon, max_depth=2)
    assert led.charges == []


def test_an_mpc_epsilon_whose_sampler_delta_reaches_one_is_a_privet_error(car):
    """epsilon=1e6 with backend='mpc' raised a raw OverflowError computing the MPC
    samplers' delta (1 + e^epsilon); epsilon=100 a delta of 1 refused as a 'delta'."""
    for eps in (1e6, 100.0):
        led = Ledger(budget=Guarantee.unbounded())
        with pytest.raises(InvalidParameterError, match="too large for the discrete samplers"):
            _fit(PartialMPCID3Classifier, car, led, epsilon=eps, max_depth=2, backend="mpc")
        assert led.charges == []


def test_a_fit_at_the_smallest_drawable_epsilon_still_runs(car):
    """The check refuses only what cannot be drawn: epsilon=1e-200 (scale 3e200) fits."""
    led = Ledger(budget=1.0)
    _fit(DPID3Classifier, car, led, epsilon=1e-200, max_depth=2)
    assert led.spent().epsilon == pytest.approx(1e-200)


def test_check_plan_names_the_release_and_the_parameter(car):
    plan = DPID3Classifier(epsilon=1e-300, max_depth=2, schema=car.schema).privacy_plan()
    with pytest.raises(PrivetError, match=r"step 'leaf'.*'scale'.*3e\+300"):
        check_plan(plan, "DPID3Classifier")
    check_plan(DPID3Classifier(epsilon=1.0, schema=car.schema).privacy_plan(), "x")
