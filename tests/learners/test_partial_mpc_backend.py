"""PartialMPCID3Classifier with the MPC protocol backend (Alg. 7-10 in MPyC)."""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import load_dataset
from privet.errors import MPCError
from privet.learners import PartialMPCID3Classifier
from privet.ledger import Guarantee, Ledger


@pytest.fixture(scope="module")
def tennis():
    return load_dataset("tennis")


def test_local_protocol_charges_the_plan(tennis):
    led = Ledger(budget=Guarantee(2.0))
    m = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    assert set(m.predict(tennis.X)) <= set(tennis.schema.classes)
    assert all(c.caller == "PartialMPCID3Classifier" for c in led.charges)


@pytest.mark.mpc
def test_three_party_protocol_charges_the_plan(tennis):
    led = Ledger(budget=Guarantee(2.0))
    m = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="mpc", parties=3
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert len(m.mpc_stats_.parties) == 3
    assert np.asarray(m.predict(tennis.X)).shape == (len(tennis.X),)


def test_failed_run_is_charged_in_full_and_raises(tennis, monkeypatch):
    """Parties may have seen opened values before a failure: charge the whole plan."""
    import privet.mpc.protocols as protocols

    def dies(*args, **kwargs):
        raise MPCError("party 2 died")

    monkeypatch.setattr(protocols, "run_partial_mpc_id3", dies, raising=False)
    led = Ledger(budget=Guarantee(2.0))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    )
    with pytest.raises(MPCError, match="died"):
        model.fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert led.charges[-1].mechanism.startswith("aborted MPC run")


def test_forest_of_protocol_trees(tennis):
    from privet.learners import DPRandomForestClassifier

    led = Ledger(budget=Guarantee(2.0))
    forest = DPRandomForestClassifier(
        n_estimators=2,
        tree="partial_mpc",
        backend="local",
        epsilon=1.0,
        max_depth=1,
        schema=tennis.schema,
        ledger=led,
        random_state=0,
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)  # disjoint subsets: parallel
    assert len(forest.trees_) == 2
    assert set(forest.predict(tennis.X)) <= set(tennis.schema.classes)


def test_oblivious_forest_in_mpc_is_refused_before_charging(tennis):
    from privet.errors import InvalidParameterError
    from privet.learners import DPRandomForestClassifier

    led = Ledger(budget=Guarantee(2.0))
    with pytest.raises(InvalidParameterError, match="reference path only"):
        DPRandomForestClassifier(
            n_estimators=2, tree="oblivious", backend="mpc", schema=tennis.schema, ledger=led
        ).fit(tennis.X, tennis.y)
    assert led.charges == [] and led.remaining() == Guarantee(2.0)


def test_protocol_backend_warns_that_fixed_point_noise_is_charged_as_ideal(tennis):
    from privet.learners import PrivacyWarning

    with pytest.warns(PrivacyWarning, match="fixed point"):
        PartialMPCID3Classifier(
            epsilon=1.0, max_depth=1, schema=tennis.schema, backend="local"
        ).fit(tennis.X, tennis.y)
