"""A bad parameter is refused with privet's InvalidParameterError, before anything is charged.

One table for the learners fitted on Car: the refusals they all share, then
each learner's own.
"""

from __future__ import annotations

import pytest

from privet.errors import InvalidParameterError
from privet.learners import (
    DPExtraTreesClassifier,
    DPGradientBoostingClassifier,
    DPID3Classifier,
    DPRandomForestClassifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
)
from privet.ledger import Guarantee, Ledger

#: Refused by every learner of ``OWN``.
COMMON = [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": float("nan")}, "epsilon"),
    ({"ledger": "budget.sqlite"}, "must be a privet Ledger"),
]

#: Each learner's own refusals.
OWN = {
    DPGradientBoostingClassifier: [
        ({"delta": 0.0}, "delta"),
        ({"max_depth": 0}, "max_depth"),
        ({"n_estimators": 0}, "n_estimators"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"subsample": 0.0}, "subsample"),
        ({"subsample": 1.5}, "subsample"),
        ({"clip": 0.0}, "clip"),
    ],
    DPID3Classifier: [
        ({"em_form": "monotone"}, "em_form"),
        ({"max_depth": -1}, "max_depth"),
        ({"leaf": "median"}, "leaf"),
    ],
    PartialMPCID3Classifier: [
        ({"em_form": "monotone"}, "em_form"),
        ({"epsilon": float("inf")}, "epsilon"),
        ({"max_depth": -1}, "max_depth"),
        ({"max_depth": 1.5}, "max_depth"),
        ({"leaf": "median"}, "leaf"),
        ({"backend": "mpyc"}, "backend"),
    ],
    ObliviousID3Classifier: [
        ({"em_form": "monotone"}, "em_form"),
        ({"max_depth": -2}, "max_depth"),
        ({"split": "gini"}, "split"),
        ({"leaf": "median"}, "leaf"),
        ({"split_fraction": 0.0}, "split_fraction"),
        ({"split_fraction": 1.0}, "split_fraction"),
        ({"split_fraction": float("nan")}, "split_fraction"),
        ({"ledger": 3.0}, "must be a privet Ledger"),
    ],
    DPRandomForestClassifier: [
        ({"em_form": "monotone"}, "em_form"),
        ({"n_estimators": 0}, "n_estimators"),
        ({"tree": "cart"}, "tree"),
        ({"sampling": "bootstrap"}, "sampling"),
        ({"sampling": "poisson", "sampling_rate": 0.0}, "sampling_rate"),
        ({"sampling": "poisson", "sampling_rate": 1.5}, "sampling_rate"),
        ({"sampling_rate": 0.1}, "sampling='poisson' only"),
        ({"split_fraction": 1.0}, "split_fraction"),
    ],
    DPExtraTreesClassifier: [
        ({"em_form": "monotone"}, "em_form"),
        ({"leaf": "median"}, "leaf"),
        ({"max_depth": -1}, "max_depth"),
        ({"ledger": object()}, "must be a privet Ledger"),
    ],
}

CASES = [
    pytest.param(cls, params, match, id=f"{cls.__name__}-{','.join(params)}")
    for cls, own in OWN.items()
    for params, match in [*COMMON, *own]
]


@pytest.mark.parametrize("cls, params, match", CASES)
def test_bad_parameters_give_privet_errors_and_charge_nothing(car, cls, params, match):
    led = Ledger(budget=Guarantee(1.0, 1e-5))  # a delta for the Gaussian booster
    with pytest.raises(InvalidParameterError, match=match):
        cls(**{"schema": car.schema, "ledger": led, **params}).fit(car.X, car.y)
    assert led.charges == []
    assert led.remaining().epsilon == 1.0


@pytest.mark.parametrize("cls", [DPRandomForestClassifier, DPExtraTreesClassifier])
@pytest.mark.parametrize("n", [10**5, 2**70])
def test_a_forest_above_max_estimators_is_refused_at_once(car, cls, n):
    """Issue 37: n_estimators=10**5 trained for half an hour (about 15 ms a tree); 2**70
    was a raw ValueError. At most MAX_ESTIMATORS = 10,000 trees, refused before anything."""
    import time

    from privet.learners.forest.base import MAX_ESTIMATORS

    led = Ledger(budget=Guarantee(10.0))
    started = time.monotonic()
    with pytest.raises(InvalidParameterError, match=f"n_estimators.*{MAX_ESTIMATORS}"):
        cls(n_estimators=n, schema=car.schema, ledger=led).fit(car.X, car.y)
    assert time.monotonic() - started < 5 and led.charges == []
