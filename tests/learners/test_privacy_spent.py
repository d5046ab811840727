"""``privacy_spent_`` is what the ledger proves for *this* fit, not the ledger's total.

A user who trains two models on one ledger reads each model's spend from its
``privacy_spent_``. Until this test, five learners reported ``scope.spent()``,
which on a shared ledger also counted every earlier fit: the second of two
identical fits reported twice the first's spend.
"""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import Categorical, Numeric, Schema, load_dataset
from privet.errors import BudgetExceededError
from privet.learners import (
    DPExtraTreesClassifier,
    DPGradientBoostingClassifier,
    DPID3Classifier,
    DPRandomForestClassifier,
    FederatedDPTreeClassifier,
    LDPBoostingClassifier,
    MatrixRandomForestClassifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
    SecureSumID3Classifier,
)
from privet.ledger import Guarantee, Ledger

NUMERIC = Schema([Numeric(f"f{i}", 0, 1) for i in range(3)], Categorical("target", [0, 1]))


def _numeric(n: int = 300):
    rng = np.random.default_rng(0)
    X = rng.random((n, 3))
    return X, (X[:, 0] > 0.5).astype(int)


def _car(schema):
    d = load_dataset("car")
    return d.X.iloc[:600].reset_index(drop=True), np.asarray(d.y)[:600]


#: (learner, its data) for every learner that charges a finite budget.
LEARNERS = [
    pytest.param(lambda s: DPID3Classifier(schema=s, epsilon=1.0), "car", id="DPID3"),
    pytest.param(lambda s: PartialMPCID3Classifier(schema=s, epsilon=1.0), "car", id="PMPC"),
    pytest.param(
        lambda s: ObliviousID3Classifier(schema=s, epsilon=1.0, split="exponential"),
        "car",
        id="ODP",
    ),
    pytest.param(
        lambda s: DPRandomForestClassifier(schema=s, epsilon=1.0, n_estimators=3, max_depth=2),
        "car",
        id="forest",
    ),
    pytest.param(
        lambda s: DPExtraTreesClassifier(schema=s, epsilon=1.0, n_estimators=3, max_depth=2),
        "car",
        id="extra-trees",
    ),
    pytest.param(
        lambda s: DPGradientBoostingClassifier(
            schema=s, epsilon=1.0, delta=1e-6, n_estimators=3, max_depth=2, random_state=0
        ),
        "car",
        id="DP-boosting",
        marks=pytest.mark.xfail(
            strict=True,
            raises=BudgetExceededError,
            reason="known ledger limitation: a reservation is an (epsilon, delta) amount at the "
            "budget's whole delta, so after one Gaussian fit a second cannot be reserved",
        ),
    ),
    pytest.param(
        lambda s: MatrixRandomForestClassifier(
            schema=s, epsilon=1.0, n_trees=2, max_depth=2, strategy="laplace", random_state=0
        ),
        "car",
        id="matrix-forest",
    ),
    pytest.param(
        lambda s: SecureSumID3Classifier(schema=s, epsilon=1.0, max_depth=2), "car", id="secure-sum"
    ),
    pytest.param(
        lambda s: FederatedDPTreeClassifier(schema=s, epsilon=1.0, max_depth=2),
        "numeric",
        id="federated-CART",
    ),
    pytest.param(
        lambda s: LDPBoostingClassifier(schema=s, epsilon=1.0, n_rounds=2, random_state=0),
        "numeric-local",
        id="LDP-boosting",
    ),
]


@pytest.mark.parametrize(("make", "data"), LEARNERS)
def test_second_fit_on_one_ledger_reports_its_own_spend(make, data):
    if data == "car":
        schema = load_dataset("car").schema
        X, y = _car(schema)
    else:
        schema = NUMERIC
        X, y = _numeric()
    # local randomisers are accounted under replace-one neighbours
    relation = "replace_one" if data == "numeric-local" else "add_remove"
    led = Ledger(budget=Guarantee(10.0, 1e-5), relation=relation)
    first = make(schema).set_params(ledger=led).fit(X, y)
    after_first = led.spent()
    second = make(schema).set_params(ledger=led).fit(X, y)

    spent_1, spent_2 = first.privacy_spent_, second.privacy_spent_
    assert 0 < spent_1.epsilon <= 1.0 + 1e-9
    # both fits make the same charges (the plan fixes them, not the data)
    assert spent_2.epsilon == pytest.approx(spent_1.epsilon)
    assert spent_2.delta == pytest.approx(spent_1.delta)
    # the ledger's total counts both; each model's figure counts one
    assert led.spent().epsilon > after_first.epsilon
    assert led.spent().epsilon == pytest.approx(spent_1.epsilon + spent_2.epsilon)


def test_matrix_forest_prediction_mode_counts_its_batches_and_nothing_else():
    """In ``batch_prediction`` mode each batch of predictions is charged; the model's figure
    grows with its own batches, not with another model's on the same ledger."""
    schema = load_dataset("car").schema
    X, y = _car(schema)
    led = Ledger(budget=Guarantee(20.0))

    def model():
        return MatrixRandomForestClassifier(
            schema=schema,
            epsilon=1.0,
            n_trees=2,
            max_depth=2,
            mode="batch_prediction",
            strategy="laplace",
            ledger=led,
            random_state=0,
        ).fit(X, y)

    a, b = model(), model()
    assert a.privacy_spent_.epsilon == 0.0
    a.predict(X.iloc[:50])
    one_batch = a.privacy_spent_.epsilon
    assert one_batch > 0
    b.predict(X.iloc[:50])
    b.predict(X.iloc[:50])
    assert a.privacy_spent_.epsilon == pytest.approx(one_batch)  # b's batches not counted
    assert b.privacy_spent_.epsilon == pytest.approx(2 * one_batch)
    assert led.spent().epsilon == pytest.approx(3 * one_batch)
