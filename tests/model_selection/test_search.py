"""PrivateSearchCV: one charge, proven by the ledger; bad input refused before data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.data import Categorical, Schema
from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    RelationMismatchError,
    SchemaError,
)
from privet.learners import DPGradientBoostingClassifier, DPID3Classifier
from privet.ledger import Guarantee, Ledger, NeighbouringRelation
from privet.ledger.renyi import RDP_ORDERS, rdp_to_epsilon
from privet.ledger.selection import PrivateSelection
from privet.model_selection import PrivateSearchCV

GRID = {"learning_rate": [0.5, 1.0], "max_depth": [1, 2]}


class _Untouchable:
    """Data that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"data read before the check ({name})")

    def __len__(self):
        raise AssertionError("data read before the check (len)")


def _search(car, ledger=None, **kw):
    est = DPGradientBoostingClassifier(schema=car.schema, n_estimators=6, random_state=0)
    return PrivateSearchCV(est, kw.pop("grid", GRID), ledger=ledger, **kw)


def test_a_replace_one_ledger_is_refused_before_data_and_charges_nothing(car):
    """(From review 3.) Under replace-one each run's learner calibrates its own plan, which
    cost up to 1.26x the price the search had charged (DPID3 on Car): refused."""
    led = Ledger(budget=Guarantee(2.0, 1e-5), relation="replace_one")
    with pytest.raises(RelationMismatchError, match="add/remove"):
        _search(car, ledger=led, epsilon=1.0, delta=1e-5).fit(_Untouchable(), _Untouchable())
    assert led.charges == []


@pytest.mark.parametrize("relation", ["add_remove"])
def test_one_charge_within_budget_and_each_run_within_its_price(car, relation):
    led = Ledger(budget=Guarantee(2.0, 1e-5), relation=relation)
    s = _search(car, ledger=led, epsilon=1.0, delta=1e-5).fit(car.X, car.y)
    assert len(led.charges) == 1
    entry = led.charges[0].entry
    assert isinstance(entry, PrivateSelection) and entry == s.entry_
    assert led.spent().epsilon == pytest.approx(entry.epsilon)
    assert entry.epsilon <= 1.0 * (1 + 1e-9) and led.spent().delta <= 1e-5
    assert entry.epsilon >= 0.98  # the calibration uses the budget (bisection to 1%)
    assert s.privacy_spent_.epsilon == pytest.approx(entry.epsilon)
    # the released model was trained at the per-run budget, on its own ledger, which
    # proves its run (training and score, a partition) within the priced base run
    best = s.best_estimator_
    assert best.epsilon == s.epsilon_run_ < 1.0
    run = best.ledger_.spent()
    assert run.epsilon <= rdp_to_epsilon(entry.base_rdp, 1e-5) * (1 + 1e-9)
    assert s.best_params_ in [
        {"learning_rate": a, "max_depth": b} for a in (0.5, 1.0) for b in (1, 2)
    ]
    assert set(s.predict(car.X)) <= set(car.schema.classes)
    # (review 3, finding 4) without a public size the score is released as the noisy sum
    # (a count of correct predictions), never divided by the private row count
    assert s.best_score_ == s.best_score_sum_


def test_base_run_curve_is_the_costliest_candidate_from_the_learner_sigma(car):
    """Add/remove: a DPGBT fit is Gaussian throughout, so its RDP curve is alpha mu^2 / 2,
    mu^2 the sum of its releases' (sensitivity / sigma)^2; the base run's curve is the
    largest over the candidates (the score's Gaussian stays below it)."""
    s = _search(car, epsilon=1.0)
    cands = s._check()
    eps_run, entry, _ = s._calibrate(cands)
    mu2 = []
    for cand in cands:
        m = s._candidate(cand, eps_run)
        cost = m.privacy_plan().cost(NeighbouringRelation.ADD_REMOVE, delta=1e-5)
        mu2.append(cost.mu2)
    want = [a * max(mu2) / 2 for a in RDP_ORDERS]
    assert list(entry.base_rdp) == pytest.approx(want, rel=1e-9)


def test_over_budget_is_refused_before_data_is_read(car):
    led = Ledger(budget=Guarantee(0.5, 1e-5))
    with pytest.raises(BudgetExceededError):
        _search(car, ledger=led, epsilon=1.0).fit(_Untouchable(), _Untouchable())
    assert led.charges == [] and led.spent().epsilon == 0.0


def test_grid_too_large_for_the_budget_is_refused_before_data_is_read(car):
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    grid = {"learning_rate": [0.5, 1.0]}  # about 200 runs: each under half of epsilon
    with pytest.raises(InvalidParameterError, match="too large for this budget"):
        _search(car, ledger=led, grid=grid, epsilon=0.1, n_runs=200).fit(
            _Untouchable(), _Untouchable()
        )
    assert led.charges == []


def test_candidate_without_a_plan_is_refused_before_data_is_read(car):
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    with pytest.raises(InvalidParameterError, match=r"learning_rate.*cannot be computed"):
        _search(car, ledger=led, grid={"learning_rate": [1.0, -1.0]}).fit(
            _Untouchable(), _Untouchable()
        )
    with pytest.raises(InvalidParameterError, match="sets"):
        _search(car, ledger=led, grid={"epsilon": [0.5, 1.0]}).fit(_Untouchable(), _Untouchable())
    with pytest.raises(InvalidParameterError, match="sets"):
        _search(car, ledger=led, grid={"no_such": [1]}).fit(_Untouchable(), _Untouchable())
    with pytest.raises(InvalidParameterError, match="privet learner"):
        PrivateSearchCV(object(), {}).fit(_Untouchable(), _Untouchable())
    assert led.charges == []


def test_one_class_schema_is_refused_before_any_search():
    with pytest.raises(SchemaError, match="at least two classes"):
        Schema((Categorical("a", ["x", "y"]),), Categorical("y", ["only"]))


@pytest.mark.parametrize("bad", [{"epsilon": 0}, {"delta": 0}, {"scoring": "f1"},
                                 {"validation_fraction": 1.0}, {"n_runs": 1},
                                 {"public_n_samples": 0}, {"public_n_samples": 10.5}])  # fmt: skip
def test_bad_parameters_name_the_fix(car, bad):
    with pytest.raises(InvalidParameterError):
        _search(car, **bad).privacy_plan()


def test_any_privet_learner_and_log_loss(car):
    """A pure-DP learner (DPID3: Laplace and exponential releases, RDP by randomised
    response) is tuned the same way, scored by clipped log-likelihood."""
    led = Ledger(budget=Guarantee(2.0, 1e-5))
    est = DPID3Classifier(schema=car.schema)
    s = PrivateSearchCV(est, {"max_depth": [2, 3]}, epsilon=2.0, scoring="neg_log_loss",
                        public_n_samples=len(car.y), ledger=led).fit(car.X, car.y)  # fmt: skip
    assert len(led.charges) == 1 and led.spent().epsilon <= 2.0 * (1 + 1e-9)
    # a mean over the public size the user gave (review 3, finding 4), nothing charged for it
    assert s.best_score_ == s.best_score_sum_ / (0.2 * len(car.y))
    assert s.best_score_ <= 0.0 + 1.0  # a mean log-likelihood (noisy), not a probability
    assert math.isfinite(s.best_score_)


def test_tuning_never_returns_worse_than_the_majority_class(car):
    """One candidate learns (6 trees at learning rate 1), the other cannot (learning
    rate 1e-6: it predicts its noisy base score, the majority class, 0.70 of Car).
    Whichever the selection returns, its training accuracy is at least 0.70 less
    0.02: the base score's class counts at the per-run budget (about 2) have noise
    sd near 10 against a margin of about 800 rows, so a miss has probability far
    below 1e-6 per search."""
    accs = []
    for _ in range(3):
        s = _search(car, grid={"learning_rate": [1e-6, 1.0]}, epsilon=4.0, n_runs=2)
        s.fit(car.X, car.y)
        accs.append(float(np.mean(s.predict(car.X) == car.y.to_numpy())))
    assert min(accs) >= 0.70 - 0.02, accs
