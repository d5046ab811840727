"""DPGradientBoostingClassifier: accounting, estimator API, errors, noise calibration."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from _sklearn_checks import DP_EXPECTED, run_check
from privet.data import load_dataset
from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    NotFittedError,
    PrivetError,
    SchemaError,
    UnsupportedEntryError,
)
from privet.learners import DPGradientBoostingClassifier, PrivacyWarning
from privet.learners.dp_boosting.binning import feature_schedule
from privet.learners.dp_boosting.booster import noise_disabled_for_tests
from privet.ledger import Gaussian, Guarantee, Ledger

warnings.filterwarnings("ignore", category=PrivacyWarning)


def _binary_car(car):
    """Car as a binary task ('unacc' against the rest), same public features."""
    from privet.data import Categorical, Schema

    y = np.where(car.y == "unacc", "unacc", "acc+")
    schema = Schema(list(car.schema.attributes), Categorical("class", ["unacc", "acc+"]))
    return schema, car.X, pd.Series(y, name="class")


# ------------------------------------------------------------------ accounting
@pytest.mark.parametrize(
    "params",
    [
        {"epsilon": 1.0, "delta": 1e-5},
        {"epsilon": 0.1, "delta": 1e-6, "max_depth": 2, "n_estimators": 5},
        {"epsilon": 3.0, "delta": 1e-5, "max_depth": 3, "n_estimators": 2},
        {"epsilon": 0.5, "delta": 1e-5, "n_estimators": 2, "subsample": 0.3},
    ],
)
@pytest.mark.parametrize("binary", [True, False])
def test_ledger_total_equals_plan_and_fits_budget(car, params, binary):
    schema, X, y = _binary_car(car) if binary else (car.schema, car.X, car.y)
    # the ledger converts zCDP to epsilon at its own delta: give it the fit's delta
    led = Ledger(budget=Guarantee(10.0, params["delta"]))
    m = DPGradientBoostingClassifier(schema=schema, ledger=led, random_state=1, **params)
    planned = led.plan_cost(m.privacy_plan())
    m.fit(X, y)
    spent = led.spent()
    assert spent.epsilon == pytest.approx(planned.epsilon, rel=1e-9)
    assert spent.epsilon <= params["epsilon"] * (1 + 1e-9)
    # the calibration is tight: the budget is used (within the bisection tolerance)
    assert spent.epsilon >= params["epsilon"] * (1 - 1e-6)
    assert m.privacy_spent_ == spent
    # one Gaussian charge per class count (the base score), one per leaf of every tree
    sizes = schema.domain_sizes
    leaves = sum(math.prod(sizes[f] for f in t.features) for t in m.trees_)
    counts = [c for c in led.charges if c.step == "class counts (base score)"]
    assert len(counts) == schema.n_classes
    assert len(led.charges) == leaves + schema.n_classes
    assert all(isinstance(c.entry, Gaussian) for c in led.charges)
    assert all(c.entry.sigma == m.sigma_ for c in led.charges if c not in counts)
    assert all(c.entry.sensitivity == pytest.approx(1.0) for c in counts)


def test_ledger_none_gets_epsilon_delta_budget(car):
    m = DPGradientBoostingClassifier(epsilon=0.7, delta=1e-6, schema=car.schema).fit(car.X, car.y)
    assert m.ledger_.budget == Guarantee(0.7, 1e-6)
    assert m.privacy_spent_.epsilon == pytest.approx(0.7, rel=1e-6)
    assert m.privacy_spent_.epsilon <= 0.7 * (1 + 1e-9)
    assert m.ledger_.spent_bound().method == "gdp"  # exact for Gaussians


def test_replace_one_ledger_charges_each_tree_once_and_plan_matches(car):
    led = Ledger(budget=Guarantee(5.0, 1e-5), relation="replace_one")
    m = DPGradientBoostingClassifier(epsilon=1.0, schema=car.schema, ledger=led, n_estimators=4)
    m.fit(car.X, car.y)
    add_remove = DPGradientBoostingClassifier(epsilon=1.0, schema=car.schema, n_estimators=4)
    add_remove.fit(car.X, car.y)
    assert led.spent().epsilon == pytest.approx(1.0, rel=1e-6)
    # the class histogram (sensitivity sqrt(2)), then one release of each tree's leaves
    assert len(led.charges) == 5
    assert led.charges[0].step == "class counts (base score)"
    assert led.charges[0].sensitivity == pytest.approx(math.sqrt(2))
    # a record replaced inside a leaf moves its softmax gradient by up to 2 clip (and its
    # hessian by sqrt(2)/2): sigma grows by that over the add/remove leaf's sqrt(1 + 1/4)
    ratio = math.hypot(2.0, math.sqrt(2) / 2) / math.hypot(1.0, 0.5)
    assert m.sigma_ == pytest.approx(ratio * add_remove.sigma_, rel=1e-6)


def test_replace_one_covers_a_record_replaced_inside_a_leaf():
    """Tree 0 splits on a, tree 1 on b. Replacing (a0, b0, 1) by (a1, b0, 0) keeps the
    record in tree 1's leaf b0 but moves its gradient from about -0.8 to +0.8: that
    leaf's (G, H) moved by 1.57 in L2, and each leaf was charged at sensitivity 1.03
    (the ledger adds a second leaf for replace-one: 1.46 in all). Now the tree is one
    release whose sensitivity covers the change."""
    from privet.data import Categorical, Schema
    from privet.learners.dp_boosting.binning import leaf_index
    from privet.learners.dp_boosting.booster import Loss, clip_rows

    schema = Schema(
        [Categorical("a", ["a0", "a1"]), Categorical("b", ["b0", "b1"])], Categorical("y", [0, 1])
    )
    rows = [(a, b, int(a == "a1")) for a in ("a0", "a1") for b in ("b0", "b1")] * 300
    data = {"D": [*rows, ("a0", "b0", 1)], "D'": [*rows, ("a1", "b0", 0)]}
    frames = {k: pd.DataFrame(v, columns=["a", "b", "y"]) for k, v in data.items()}
    led = Ledger(budget=Guarantee(1.0, 1e-5), relation="replace_one")
    m = DPGradientBoostingClassifier(
        epsilon=1.0, n_estimators=2, schema=schema, ledger=led, random_state=3
    )
    m.fit(frames["D"][["a", "b"]], frames["D"]["y"])
    assert [t.features for t in m.trees_] == [(0,), (1,)]
    sums = []
    for f in frames.values():  # tree 1's exact leaf sums after the same released tree 0
        codes = schema.encode(f[["a", "b"]])
        g, h = Loss(1).grad_hess(m.trees_[0].predict(codes, schema.domain_sizes), f["y"].values)
        leaf = leaf_index(codes, (1,), schema.domain_sizes)
        sums.append([np.bincount(leaf, v[:, 0], 2) for v in (clip_rows(g, 1.0), h)])
    change = float(np.linalg.norm(np.subtract(*sums)))
    # tree 0's leaves are about -1.3 and +1.3 logits apart: the change (about 1.57, sd
    # about 0.02 over the noise of tree 0) exceeds what two add/remove leaves cover
    assert change > math.sqrt(2) * math.hypot(1.0, 0.25)
    tree_1 = [c for c in led.charges if c.step == "tree 1: leaf (G, H)"]
    assert len(tree_1) == 1 and change <= tree_1[0].sensitivity


def test_sigma_is_the_smallest_that_fits(car):
    m = DPGradientBoostingClassifier(epsilon=1.0, schema=car.schema, random_state=0)
    sigma, _, _ = m._calibrated(car.schema)
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    target = led.budget
    shapes = m._shapes(car.schema)
    sizes, k = car.schema.domain_sizes, car.schema.n_classes
    assert led.plan_cost(m._plan(sigma, shapes, sizes, k)).fits_in(target)
    assert not led.plan_cost(m._plan(sigma * (1 - 1e-6), shapes, sizes, k)).fits_in(target)


@pytest.mark.parametrize(
    "relation, subsample, binary, epsilon, params",
    [
        ("add_remove", 1.0, True, 1.0, {}),
        ("add_remove", 1.0, False, 0.05, {}),
        ("add_remove", 1.0, True, 4.0, {"max_depth": 2, "n_estimators": 7}),
        ("replace_one", 1.0, True, 0.1, {}),
        ("replace_one", 1.0, False, 2.0, {"n_estimators": 3}),
        ("add_remove", 0.5, True, 1.0, {"n_estimators": 4}),
    ],
)
def test_fast_calibration_equals_the_bisection_on_the_ledger(
    car, monkeypatch, relation, subsample, binary, epsilon, params
):
    """calibrate_sigma searches on the ledger's cheap views (from the Gaussian-DP closed
    form) and asks the ledger (PLD included) twice; its sigma must be the bisection's on
    Ledger.plan_cost itself, to within the two searches' tolerances (1e-9 each), and the
    ledger must prove the plan at it within the budget. Without subsampling it asks the
    ledger for the plan's cost at most twice (the bisection asked about 37 times)."""
    from privet.learners.dp_boosting import booster

    schema = _binary_car(car)[0] if binary else car.schema
    budget = Guarantee(epsilon, 1e-5)
    led = Ledger(budget=budget, relation=relation)
    m = DPGradientBoostingClassifier(
        epsilon=epsilon, schema=schema, ledger=led, subsample=subsample, random_state=3, **params
    )
    shapes, sizes = m._shapes(schema), schema.domain_sizes
    n_out = 1 if binary else schema.n_classes

    def make(sigma):
        return m._plan(sigma, shapes, sizes, n_out)

    asked = []
    real = Ledger.plan_cost
    monkeypatch.setattr(Ledger, "plan_cost", lambda self, p: asked.append(1) or real(self, p))
    fast = booster.calibrate_sigma(make, budget, led.relation)
    n_asked = len(asked)
    monkeypatch.setattr(Ledger, "plan_cost", real)
    check = Ledger(budget=budget, relation=relation)
    slow = booster.bisect_sigma(lambda s: check.plan_cost(make(s)).fits_in(budget), budget)
    assert abs(fast / slow - 1) <= 2.5e-9, (fast, slow)
    assert check.plan_cost(make(fast)).fits_in(budget)
    if subsample == 1.0:
        assert n_asked <= 2
        cand = booster.gaussian_candidate(make, budget, led.relation)
        assert cand is not None and abs(cand / fast - 1) < 1e-8, (cand, fast)  # exact mu-GDP
        # a relation given by name prices the views as the enum does
        assert booster.gaussian_candidate(make, budget, relation) == pytest.approx(cand, rel=1e-12)
    else:
        assert booster.gaussian_candidate(make, budget, led.relation) is None


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize("subsample", [1.0, 0.5])
@pytest.mark.parametrize("binary", [True, False])
def test_the_plan_the_ledger_proves_is_within_epsilon_under_both_relations(
    car, relation, subsample, binary
):
    """The ledger composes the plan on its own relation (PLD accountant): the plan it
    proves is within epsilon, and the fit's charges, checked one by one against the
    reservation, fit in it. With each leaf charged on its own, the add/remove fit with
    subsample 0.5 was refused part-way through tree 1 (the PLD accountant priced the
    partial tree about 1e-6 above the whole plan); the leaves are now charged together."""
    schema, X, y = _binary_car(car) if binary else (car.schema, car.X, car.y)
    led = Ledger(budget=Guarantee(10.0, 1e-5), relation=relation)
    m = DPGradientBoostingClassifier(
        epsilon=0.5,
        delta=1e-5,
        schema=schema,
        ledger=led,
        n_estimators=6,
        subsample=subsample,
        random_state=2,
    )
    if relation == "replace_one" and subsample < 1:
        # Poisson amplification is proven for add/remove only: refused before any data
        with pytest.raises(UnsupportedEntryError, match="add/remove neighbours only"):
            m.privacy_plan()
        with pytest.raises(UnsupportedEntryError):
            m.fit(X.iloc[:0], y.iloc[:0])  # empty data: a read would fail differently
        assert led.charges == [] and led.spent().epsilon == 0
        return
    planned = led.plan_cost(m.privacy_plan())
    assert planned.epsilon <= 0.5 * (1 + 1e-9) and planned.delta <= 1e-5 * (1 + 1e-9)
    m.fit(X, y)
    spent = led.spent()
    assert spent.epsilon <= 0.5 * (1 + 1e-9) and spent.delta <= 1e-5 * (1 + 1e-9)
    assert spent.epsilon >= 0.5 * (1 - 1e-3)  # and the budget is used


def test_poisson_subsampled_trees_are_priced_by_the_sampled_gaussian(car):
    """10 trees on Poisson samples at rate 0.5. Amplified as (eps, delta) each tree
    spent half the tree's delta and no noise level fitted (eps, 1e-5); the ledger's
    accountants (RDP, now PLD) price a Gaussian on a Poisson sample with no delta per tree, so
    the fit runs, within its budget, with less noise per leaf than without sampling."""

    def fit(subsample: float) -> tuple[DPGradientBoostingClassifier, str]:
        led = Ledger(budget=Guarantee(1.0, 1e-5))
        m = DPGradientBoostingClassifier(
            schema=car.schema, ledger=led, subsample=subsample, n_estimators=10
        ).fit(car.X, car.y)
        bound = led.spent_bound()
        assert bound.guarantee.epsilon <= 1.0 * (1 + 1e-9) and bound.guarantee.delta <= 1e-5
        assert m.privacy_spent_.epsilon <= 1.0 * (1 + 1e-9)
        return m, bound.method

    sampled, method = fit(0.5)
    whole, _ = fit(1.0)
    assert method == "pld"  # the PLD accountant prices the sampled Gaussians exactly

    def count_sigma(m: DPGradientBoostingClassifier) -> float:
        (sigma,) = {c.entry.sigma for c in m.ledger_.charges if c.step.startswith("class")}
        return sigma

    # the class counts (all rows) keep the noise they have without subsampling; tied to
    # the sampled trees' sigma they took most of the budget
    assert count_sigma(sampled) == pytest.approx(count_sigma(whole), rel=1e-9)
    # (0.76 since the class counts of the base score, on all rows, take a share of it)
    assert sampled.sigma_ < 0.8 * whole.sigma_


def test_over_budget_is_refused_before_data_is_read(car):
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    DPGradientBoostingClassifier(epsilon=0.8, schema=car.schema, ledger=led).fit(car.X, car.y)
    n = len(led.charges)

    class Exploding:
        def __getattr__(self, name):
            raise AssertionError("data was read before the budget check")

    # two Gaussian fits compose in Gaussian DP: 0.8 and 0.5 fit in 1.0, 0.8 twice does not
    with pytest.raises(BudgetExceededError):
        DPGradientBoostingClassifier(epsilon=0.8, schema=car.schema, ledger=led).fit(
            Exploding(), Exploding()
        )
    assert len(led.charges) == n
    DPGradientBoostingClassifier(epsilon=0.5, schema=car.schema, ledger=led).fit(car.X, car.y)
    assert len(led.charges) > n and led.spent().epsilon <= 1.0


# ------------------------------------------------------------------ bad input
def test_bad_data_charges_nothing(car):
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    X = car.X.copy()
    X.iloc[3, 0] = "expensive"
    with pytest.raises(SchemaError, match="expensive"):
        DPGradientBoostingClassifier(schema=car.schema, ledger=led).fit(X, car.y)
    with pytest.raises(SchemaError, match="rows"):
        DPGradientBoostingClassifier(schema=car.schema, ledger=led).fit(car.X, car.y[:10])
    with pytest.raises(SchemaError, match="public schema"):
        DPGradientBoostingClassifier(ledger=led).fit(car.X, car.y)
    assert led.charges == [] and led.remaining().epsilon == 1.0


def test_predict_before_fit(car):
    with pytest.raises(NotFittedError, match="fit"):
        DPGradientBoostingClassifier(schema=car.schema).predict(car.X)


# ------------------------------------------------------------------ estimator API
def test_estimator_api_basics(car):
    m = DPGradientBoostingClassifier(epsilon=2.0, n_estimators=6, schema=car.schema, random_state=3)
    params = m.get_params()
    assert params["epsilon"] == 2.0 and params["n_estimators"] == 6 and params["random_state"] == 3
    c = clone(m)
    assert c.get_params() == params and not hasattr(c, "trees_")
    m.fit(car.X, car.y)
    assert list(m.classes_) == list(car.schema.classes)
    assert m.n_features_in_ == car.schema.n_features and m.n_estimators_ == 6
    p = m.predict_proba(car.X.iloc[:40])
    assert p.shape == (40, car.schema.n_classes)
    assert np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()
    assert m.predict(car.X.iloc[:40]).shape == (40,)
    assert set(m.predict(car.X)) <= set(car.schema.classes)
    assert m.decision_function(car.X.iloc[:5]).shape == (5, car.schema.n_classes)


def test_binary_shapes(car):
    schema, X, y = _binary_car(car)
    m = DPGradientBoostingClassifier(schema=schema, random_state=0).fit(X, y)
    assert m.predict_proba(X.iloc[:7]).shape == (7, 2)
    assert m.decision_function(X.iloc[:7]).shape == (7,)


def test_tree_shapes_depend_on_random_state_only(car):
    a = DPGradientBoostingClassifier(schema=car.schema, random_state=5).fit(car.X, car.y)
    b = DPGradientBoostingClassifier(schema=car.schema, random_state=5).fit(car.X, car.y)
    assert [t.features for t in a.trees_] == [t.features for t in b.trees_]
    sched = feature_schedule(6, 12, 1, np.random.default_rng(0))
    assert sorted(f for (f,) in sched[:6]) == list(range(6))  # each pass visits every feature


EXPECTED = DP_EXPECTED | {
    "check_decision_proba_consistency": "its test rows lie outside the numeric bounds "
    "inferred from its training rows, which the schema refuses (SchemaError)",
}


@parametrize_with_checks(
    [DPGradientBoostingClassifier(public_domain="infer", epsilon=1.0, n_estimators=4)],
    expected_failed_checks=lambda est: EXPECTED,
)
def test_sklearn_compatible(estimator, check):
    run_check(estimator, check)


# ------------------------------------------------------------------ noise
def test_noise_hook_refuses_outside_pytest(monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    with pytest.raises(PrivetError, match="testing hook"):
        with noise_disabled_for_tests():
            pass


def test_without_noise_close_to_non_private_boosting():
    """Noise off, the booster is a plain boosted additive model on the schema's bins:
    its test AUC must be within 0.01 of sklearn's HistGradientBoosting on the same codes."""
    adult, adult_test = load_dataset("adult"), load_dataset("adult_test")
    schema = adult.schema
    with noise_disabled_for_tests():
        m = DPGradientBoostingClassifier(epsilon=1.0, schema=schema, random_state=0)
        m.fit(adult.X, adult.y)
    assert m.noise_disabled_for_tests_
    X, y = adult.codes()
    Xt, yt = adult_test.codes()
    hgb = HistGradientBoostingClassifier(categorical_features=list(range(X.shape[1])))
    auc_ref = roc_auc_score(yt, hgb.fit(X, y).predict_proba(Xt)[:, 1])
    auc = roc_auc_score(yt, m.predict_proba(adult_test.X)[:, 1])
    assert auc >= auc_ref - 0.01, (auc, auc_ref)


def test_released_noise_has_calibrated_sigma(car):
    """The leaf sums are released with N(0, sigma_^2) noise: the sample variance of
    4,000 noise draws lies in its two-sided 99.9% chi-square interval (false alarm
    rate 0.1%), and the mean in its 99.9% normal interval."""
    m = DPGradientBoostingClassifier(epsilon=0.3, schema=car.schema).fit(car.X, car.y)
    mech = m._mechanism(m.sigma_, car.schema.n_classes)
    led = Ledger(budget=Guarantee(1e6, 1e-3))
    n = 4000
    noise = mech(np.zeros(n), scope=led.root, caller="test")
    s2 = noise.var(ddof=1) / m.sigma_**2
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n - 1) / (n - 1)
    assert lo <= s2 <= hi, s2
    z = noise.mean() / (m.sigma_ / math.sqrt(n))
    assert abs(z) <= stats.norm.ppf(0.9995)
    assert led.charges[0].entry.sigma == m.sigma_


def test_generator_random_state_plans_what_it_fits(car):
    led = Ledger(budget=Guarantee(1.0, 1e-5), relation="replace_one")
    m = DPGradientBoostingClassifier(
        epsilon=1.0, schema=car.schema, ledger=led, random_state=np.random.default_rng(7)
    )
    m.fit(car.X, car.y)
    assert led.spent().epsilon == pytest.approx(1.0, rel=1e-6)
    assert led.spent().epsilon <= 1.0 * (1 + 1e-9)


def test_softmax_learns_car_well_above_majority(car):
    """Four classes, softmax: at eps=1 the mean training accuracy of 4 fits is well
    above the majority rate 0.70 (measured about 0.85 with spread 0.01; the floor
    0.78 leaves seven spreads of room)."""
    accs = [
        np.mean(
            DPGradientBoostingClassifier(epsilon=1.0, schema=car.schema, random_state=s)
            .fit(car.X, car.y)
            .predict(car.X)
            == car.y.to_numpy()
        )
        for s in range(4)
    ]
    assert np.mean(accs) >= 0.78, accs


def test_too_many_leaves_is_refused_before_reading(car, monkeypatch):
    from privet.learners.dp_boosting import estimator

    monkeypatch.setattr(estimator, "MAX_LEAVES", 100)  # any 4 of Car's features: >= 108 cells
    led = Ledger(budget=Guarantee(1.0, 1e-5))
    m = DPGradientBoostingClassifier(schema=car.schema, ledger=led, max_depth=4)
    with pytest.raises(InvalidParameterError, match="leaves"):
        m.fit(car.X, car.y)
    assert led.charges == [] and led.remaining().epsilon == 1.0


# ------------------------------------------------------------ the majority floor (issue 34)
def _noise_dominated(n: int, priors: list[float], seed: int) -> tuple[Any, pd.DataFrame, Any]:
    """Eight 5-level features independent of a label drawn from ``priors``."""
    from privet.data import Categorical, Schema

    rng = np.random.default_rng(seed)
    levels = [str(i) for i in range(5)]
    X = pd.DataFrame({f"f{j}": rng.choice(levels, n) for j in range(8)})
    classes = [f"c{k}" for k in range(len(priors))]
    y = pd.Series(rng.choice(classes, n, p=priors), name="y")
    schema = Schema(
        tuple(Categorical(f"f{j}", levels) for j in range(8)), Categorical("y", classes)
    )
    return schema, X, y


@pytest.mark.parametrize("priors", [[0.75, 0.25], [0.6, 0.3, 0.1]])
def test_never_worse_than_the_majority_class_when_noise_dominates(priors):
    """No feature carries signal and eps = 0.1 on 3,000 rows makes every leaf mostly
    noise. The majority class is right on a fraction priors[0] of new rows; the mean test
    accuracy of 8 fits must not fall more than 0.025 below it. Before issue 34 (scores
    starting at 0, leaves regularised by sigma + 1 only) it was 0.67 for 0.75 / 0.25
    (spread 0.03 per fit) and the softmax case fell likewise. Now a fit predicts the
    majority unless its noisy class counts (sigma about 100 at this budget, margins of
    1,000 rows and more) rank the classes wrongly, and its trees shrink to about 0.
    The allowance is set from measured fits (the noise is fresh each run): 1,000 fits
    at 0.75 / 0.25 had mean 0.7489 against a rate of 0.7508, sd 0.0073, but a heavy
    left tail (lowest 0.662), and 591 softmax fits mean 0.5984 against 0.5993, sd
    0.0053 (lowest 0.526). Means of 8 resampled from them fell below the rate by more
    than 0.01 in 1.9% and 0.4% of 4 million draws (the former allowance: one CI failure
    in 2026-11 came from it), by more than 0.025 in 1.6e-5 and 1e-6."""
    schema, X, y = _noise_dominated(3000, priors, seed=0)
    _, Xt, yt = _noise_dominated(20000, priors, seed=1)
    rate = float(np.mean(yt.to_numpy() == "c0"))
    accs = [
        float(np.mean(
            DPGradientBoostingClassifier(epsilon=0.1, schema=schema, random_state=s)
            .fit(X, y)
            .predict(Xt)
            == yt.to_numpy()
        ))
        for s in range(8)
    ]  # fmt: skip
    assert np.mean(accs) >= rate - 0.025, (accs, rate)


def test_base_score_is_the_noisy_class_prior(car):
    """Noise off, the base score is the log of the add-one smoothed class frequencies."""
    with noise_disabled_for_tests():
        m = DPGradientBoostingClassifier(epsilon=1.0, schema=car.schema, n_estimators=1)
        m.fit(car.X, car.y)
    counts = car.y.value_counts().reindex(car.schema.classes).to_numpy() + 1.0
    np.testing.assert_allclose(m.base_score_, np.log(counts / counts.sum()))


def _separable(n: int, seed: int) -> tuple[Any, pd.DataFrame, pd.Series]:
    """13 features of 8 levels, each the class's centre (3.5 -/+ 1) plus N(0, 1.5^2),
    rounded; 67% of the rows in class "a". Every feature carries signal (a Bayes
    accuracy near 1), none much on its own: a small table's shape."""
    from privet.data import Categorical, Schema

    r = np.random.default_rng(seed)
    z = r.random(n) >= 0.67
    centre = np.where(z, 4.5, 2.5)[:, None]
    codes = np.clip(np.rint(centre + r.normal(0, 1.5, (n, 13))), 0, 7).astype(int)
    X = pd.DataFrame({f"f{j}": codes[:, j].astype(str) for j in range(13)})
    levels = [str(i) for i in range(8)]
    schema = Schema(
        tuple(Categorical(f"f{j}", levels) for j in range(13)), Categorical("y", ["a", "b"])
    )
    return schema, X, pd.Series(np.where(z, "b", "a"))


def test_small_table_is_not_squeezed_to_the_prior():
    """300 rows, eps = 2: before (James-Stein factor 1.5, lambda = sigma T^(1/4) + 1) the
    leaves were shrunk twice (the factor, then a Newton denominator far above the leaf's
    hessian), the scores stayed near the prior and the accuracy near the majority rate
    (0.67): 0.711 (per-fit sd 0.043, 16 fits). Now (factor 1.25 for the logistic loss,
    lambda = sigma T^(1/8) + 1): 0.802 (sd 0.045, 60 fits). The mean of 16 fits must
    reach 0.755: 4.1 standard errors below the new mean (a false alarm below 1e-4,
    normal approximation) and 3.9 above the old one."""
    schema, X_test, y_test = _separable(10000, seed=1)
    accs = []
    for s in range(16):
        _, X, y = _separable(300, seed=100 + s)
        m = DPGradientBoostingClassifier(epsilon=2.0, schema=schema, random_state=s).fit(X, y)
        accs.append(float(np.mean(m.predict(X_test) == y_test.to_numpy())))
    assert np.mean(accs) >= 0.755, accs
