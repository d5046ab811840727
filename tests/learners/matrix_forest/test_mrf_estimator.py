"""MatrixRandomForestClassifier: the ledger in every mode, per-batch charges, refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from privet.data import Categorical, Schema, load_dataset
from privet.errors import BudgetExceededError, InvalidParameterError, SchemaError
from privet.learners import MatrixRandomForestClassifier
from privet.ledger import Guarantee, Ledger

SCHEMA = Schema(
    [
        Categorical("a", ["x", "y", "z"]),
        Categorical("b", ["p", "q"]),
        Categorical("c", ["0", "1", "2", "3"]),
    ],
    Categorical("label", ["no", "yes"]),
)


def toy(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n),
            "b": rng.choice(["p", "q"], n),
            "c": rng.choice(["0", "1", "2", "3"], n),
        }
    )
    y = np.where((X["a"] == "x") | (X["c"] == "3"), "yes", "no")
    return X, y


def model(**kw) -> MatrixRandomForestClassifier:
    base = dict(epsilon=1.0, n_trees=8, max_depth=2, schema=SCHEMA, random_state=0)
    return MatrixRandomForestClassifier(**{**base, **kw})


MODES = [
    ("batch_training", "optimized", 1),
    ("batch_training", "identity", 2),
    ("batch_training", "workload", 1),
    ("batch_training", "laplace", 2),
    ("disjoint_training", "laplace", 1),
    ("batch_prediction", "optimized", 1),
    ("batch_prediction", "optimized", 2),
    ("batch_prediction", "laplace", 1),
    ("subsample_aggregate", "optimized", 1),
    ("subsample_aggregate", "optimized", 2),
    ("subsample_aggregate", "laplace", 1),
]


@pytest.mark.parametrize(("mode", "strategy", "q"), MODES)
def test_ledger_total_equals_epsilon_in_every_mode(mode, strategy, q) -> None:
    X, y = toy()
    led = Ledger(budget=Guarantee(10.0))
    m = model(
        mode=mode,
        strategy=strategy,
        n_ensembles=q,
        max_features=2 if q > 1 else None,
        epsilon=0.7,
        ledger=led,
    )
    m.fit(X, y)
    m.predict(X.iloc[:20])  # one batch in the prediction modes; free in the training modes
    assert math.isclose(led.spent().epsilon, 0.7, rel_tol=1e-9)
    assert led.spent().delta == 0.0
    # the data-independent tree construction is on the ledger, at zero cost
    tree_steps = [c for c in led.charges if "data-independent" in c.step]
    assert len(tree_steps) == 1 and tree_steps[0].guarantee.epsilon == 0.0
    if mode in ("disjoint_training", "subsample_aggregate"):  # disjoint data: a partition
        assert any("tree 7" in s.path for s in led.iter_scopes())


def test_batch_prediction_charges_every_batch_and_refuses_before_releasing() -> None:
    X, y = toy()
    led = Ledger(budget=Guarantee(1.0))
    m = model(mode="batch_prediction", epsilon=0.5, ledger=led).fit(X, y)
    assert led.spent().epsilon == 0.0  # fit releases nothing
    m.predict(X.iloc[:10])
    assert math.isclose(led.spent().epsilon, 0.5)
    m.predict(X.iloc[:10])  # the same batch again is a second release
    assert math.isclose(led.spent().epsilon, 1.0)
    n_charges = len(led.charges)
    with pytest.raises(BudgetExceededError):
        m.predict(X.iloc[:10])
    assert len(led.charges) == n_charges and math.isclose(led.spent().epsilon, 1.0)


@pytest.mark.parametrize("mode", ["batch_training", "batch_prediction", "subsample_aggregate"])
def test_a_model_that_keeps_exact_counts_says_so_and_its_saved_description_too(
    mode, tmp_path
) -> None:
    """The prediction modes keep the exact leaf counts their predictions release with
    noise: the model is a curator, and the description ``privet train`` saves says so."""
    from privet.cli._model import read_meta, save_model

    X, y = toy()
    m = model(mode=mode, ledger=Ledger(budget=Guarantee(5.0))).fit(X, y)
    keeps = mode != "batch_training"
    assert m.holds_private_data_ is keeps
    save_model(m, str(tmp_path / "m"), {})
    assert read_meta(str(tmp_path / "m"))["holds_private_data"] is keeps


def test_fit_over_budget_raises_before_reading_data() -> None:
    led = Ledger(budget=Guarantee(0.5))
    bad_X = pd.DataFrame({"a": ["not in the domain"], "b": ["p"], "c": ["0"]})
    with pytest.raises(BudgetExceededError):
        model(epsilon=1.0, ledger=led).fit(bad_X, ["no"])  # data never read: no SchemaError
    assert led.charges == [] and led.spent().epsilon == 0.0


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        (dict(epsilon=0.0), InvalidParameterError, "epsilon"),
        (dict(epsilon=-1.0), InvalidParameterError, "epsilon"),
        (dict(n_trees=0), InvalidParameterError, "n_trees"),
        (dict(max_features=4), InvalidParameterError, "max_features"),
        (dict(n_ensembles=9), InvalidParameterError, "n_ensembles"),
        (dict(schema=None), SchemaError, "schema"),
        (dict(mode="disjoint_training"), InvalidParameterError, "laplace"),
    ],
)
def test_bad_parameters_raise_and_charge_nothing(kw, error, match) -> None:
    X, y = toy()
    led = Ledger(budget=Guarantee(5.0))
    with pytest.raises(error, match=match):
        model(ledger=led, **kw).fit(X, y)
    assert led.charges == []


def test_queries_outside_the_domain_are_refused_before_any_charge() -> None:
    X, y = toy()
    led = Ledger(budget=Guarantee(5.0))
    m = model(mode="batch_prediction", ledger=led).fit(X, y)
    before = len(led.charges)
    bad = pd.DataFrame({"a": ["w"], "b": ["p"], "c": ["0"]})
    with pytest.raises(SchemaError):
        m.predict(bad)
    assert len(led.charges) == before and led.spent().epsilon == 0.0


def test_privacy_plan_without_data_and_sklearn_api() -> None:
    m = model(mode="batch_training", n_ensembles=2, max_features=2, epsilon=2.0)
    cost = Ledger(budget=Guarantee.unbounded()).plan_cost(m.privacy_plan())
    assert math.isclose(cost.epsilon, 2.0)
    pred_plan = model(mode="batch_prediction", epsilon=0.3).prediction_plan()
    assert math.isclose(Ledger(budget=Guarantee.unbounded()).plan_cost(pred_plan).epsilon, 0.3)
    c = clone(m)
    assert c.get_params() == m.get_params()
    with pytest.raises(Exception, match="not fitted"):
        c.predict(toy()[0])


def test_car_headline_accuracy_is_far_above_the_majority_rate() -> None:
    """Car, eps=2, 128 trees of depth 4 (paper: 85%). One split; loose bound (noise is random)."""
    ds = load_dataset("car")
    frame = ds.frame.sample(frac=1.0, random_state=0)
    X, y = frame.drop(columns=[ds.target]), frame[ds.target].to_numpy()
    m = MatrixRandomForestClassifier(
        epsilon=2.0, n_trees=128, max_depth=4, schema=ds.schema, random_state=0
    ).fit(X.iloc[345:], y[345:])
    acc = float(np.mean(m.predict(X.iloc[:345]) == y[:345]))
    assert acc > 0.75  # majority class 'unacc' is 0.70
    assert m.strategies_[0]["chosen"] in {"optimised", "identity", "workload"}
    assert m.timings_["training"] >= 0.0


@pytest.mark.parametrize("mode", ["batch_training", "batch_prediction"])
def test_replace_one_ledger_doubles_the_sensitivity_not_the_cost(mode) -> None:
    X, y = toy()
    led = Ledger(budget=Guarantee(1.0), relation="replace_one")
    m = model(mode=mode, epsilon=1.0, ledger=led).fit(X, y)
    m.predict(X.iloc[:5])
    assert math.isclose(led.spent().epsilon, 1.0, rel_tol=1e-9)
    sens = [c.sensitivity for c in led.charges if c.mechanism == "matrix"]
    assert sens and all(s >= 2.0 for s in sens)  # ||A||_1 >= 1, doubled


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
@pytest.mark.parametrize(("mode", "strategy", "q"), MODES)
def test_plan_is_at_most_epsilon_and_fits_a_budget_of_epsilon(mode, strategy, q, relation) -> None:
    """Issue 31: the ledger proves the fit's plan within epsilon on both relations, and a
    fit on a ledger whose budget is that epsilon is not refused (the disjoint modes' tree
    partition is stable: a record's tree is a coin, not a function of its values)."""
    X, y = toy()
    eps = 0.7
    led = Ledger(budget=Guarantee(eps), relation=relation)
    m = model(mode=mode, strategy=strategy, n_ensembles=q, epsilon=eps, ledger=led)
    assert led.plan_cost(m.privacy_plan()).epsilon <= eps * (1 + 1e-9)
    m.fit(X, y)
    assert led.spent().epsilon <= eps * (1 + 1e-9)
    assert m.calibrated_epsilon_ == pytest.approx(eps)  # no step had to be scaled down
    assert m.epsilon == eps
    if mode == "disjoint_training":
        assert led.spent().epsilon == pytest.approx(eps)
