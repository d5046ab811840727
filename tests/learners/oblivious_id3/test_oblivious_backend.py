"""ObliviousID3Classifier with the MPC protocol backend (Alg. 1-4 in MPyC)."""

from __future__ import annotations

import math

import pytest

from privet.errors import BudgetExceededError, MPCError
from privet.learners import ObliviousID3Classifier
from privet.ledger import Guarantee, Ledger


def oblivious(tennis, ledger, **params):
    """ObliviousID3Classifier on tennis at epsilon 1 charging ``ledger``: the sound variant
    (``split="exponential"``), depth 2, local backend, unless ``params`` say otherwise."""
    params = {"epsilon": 1.0, "max_depth": 2, "split": "exponential", "backend": "local", **params}
    return ObliviousID3Classifier(schema=tennis.schema, ledger=ledger, **params)


def test_sound_variant_in_protocol_is_charged_its_plan_and_predicts_obliviously(tennis):
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    m = oblivious(tennis, led).fit(tennis.X, tennis.y)
    assert m.tree_ is None  # the model stays secret-shared
    assert led.spent().epsilon == pytest.approx(1.0)
    labels = m.predict(tennis.X)
    assert set(labels) <= set(tennis.schema.classes)
    proba = m.predict_proba(tennis.X)
    assert proba.shape == (len(tennis.X), 2) and set(proba.ravel()) <= {0.0, 1.0}


def test_faithful_protocol_is_refused_on_a_finite_budget_and_infinite_otherwise(tennis):
    with pytest.raises(BudgetExceededError, match="exponential"):
        oblivious(tennis, Ledger(budget=Guarantee(5.0)), split="exact").fit(tennis.X, tennis.y)
    led = Ledger(budget=Guarantee.unbounded())
    oblivious(tennis, led, split="exact").fit(tennis.X, tennis.y)
    assert math.isinf(led.spent().epsilon)
    assert any(c.claim is not None for c in led.charges)


@pytest.mark.mpc
def test_three_parties_train_and_predict(tennis):
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    m = oblivious(tennis, led, max_depth=1, backend="mpc", parties=3).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert len(m.predict(tennis.X.iloc[:4])) == 4


def test_failed_run_is_charged_in_full(tennis, monkeypatch):
    import privet.learners.oblivious_id3.host as protocols

    def dies(*args, **kwargs):
        raise MPCError("party 1 died")

    monkeypatch.setattr(protocols, "run_oblivious_id3", dies, raising=False)
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    with pytest.raises(MPCError):
        oblivious(tennis, led).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
