"""Tests of privet.audits.mia: membership-inference attacks and their experiment driver.

Statistical assertions fix the confidence level, not the outcome: an overfitting
model must be attacked with an AUC whose lower confidence limit exceeds 0.5, a
model that ignores its training data must give AUC intervals that contain 0.5
(Bonferroni over the attacks). Runs are seeded, so they are also reproducible.
"""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from privet.audits.metrics import implied_epsilon
from privet.audits.mia import (
    ATTACKS,
    DEFAULT_ATTACKS,
    ImpliedEpsilon,
    MIAResult,
    attack_signals,
    auc_interval,
    compare_auc,
    fit_gaussians,
    implied_epsilon_estimate,
    inclusion_matrix,
    lira_offline,
    lira_online,
    logit_confidence,
    loss_attack,
    markdown_table,
    membership_inference,
    plot_roc,
    rmia,
    shokri_attack,
    tune_rmia_a,
)
from privet.errors import InvalidParameterError
from privet.learners import DPID3Classifier, ID3Classifier

CONF = 0.95


@pytest.fixture(scope="module")
def overfit(car) -> MIAResult:
    """Fully grown non-private ID3 on car: every row is unique, members get p_y = 1."""
    return membership_inference(
        car,
        functools.partial(ID3Classifier, max_depth=6, schema=car.schema),
        n_shadows=8,
        n_targets=2,
        confidence=CONF,
        random_state=0,
        n_jobs=1,
    )


# -- models that ignore their training data ---------------------------------------------------

_SEEDS = itertools.count()


class ConstantModel(ClassifierMixin, BaseEstimator):
    """Outputs the same probabilities for every row, whatever it was trained on."""

    def __init__(self, *, classes=("unacc", "acc", "good", "vgood")):
        self.classes = classes

    def fit(self, X, y):
        self.classes_ = np.asarray(self.classes, dtype=object)
        return self

    def predict_proba(self, X):
        p = np.array([0.6, 0.25, 0.1, 0.05])
        return np.tile(p, (len(X), 1))


class RandomOutputModel(ClassifierMixin, BaseEstimator):
    """Random probability vectors, drawn independently of the training data."""

    def __init__(self, *, classes=("unacc", "acc", "good", "vgood")):
        self.classes = classes

    def fit(self, X, y):
        self.classes_ = np.asarray(self.classes, dtype=object)
        self.seed_ = next(_SEEDS)
        return self

    def predict_proba(self, X):
        return np.random.default_rng(self.seed_).dirichlet(np.ones(4), size=len(X))


class ObliviousQuery:
    """Stands in for a secret-shared model's prediction protocol: only X in, probabilities out."""

    calls = 0

    def __init__(self, model):
        self._model = model

    def __call__(self, X):
        type(self).calls += 1
        assert "class" not in X.columns
        return self._model.predict_proba(X)


# -- end-to-end ----------------------------------------------------------------------------


def test_overfit_model_every_attack_beats_chance(overfit):
    assert overfit.names == list(DEFAULT_ATTACKS)
    assert overfit.train_accuracy > overfit.test_accuracy + 0.05  # it does overfit
    for a in overfit:
        lo, hi = a.auc.interval
        assert lo > 0.5, f"{a.attack}: AUC {a.metrics.auc:.3f} [{lo:.3f}, {hi:.3f}]"
        assert lo <= a.metrics.auc <= hi
        assert a.auc.auc == pytest.approx(a.metrics.auc)


def test_lira_online_not_worse_than_offline(overfit):
    on, off = overfit["lira_online"], overfit["lira_offline"]
    cmp = compare_auc(on.membership, on.scores, off.scores, confidence=CONF, groups=on.groups)
    assert cmp.interval[1] >= 0.0  # online is not significantly worse
    assert cmp.difference == pytest.approx(on.metrics.auc - off.metrics.auc)
    assert on.operating_point(0.001).tpr >= off.operating_point(0.001).tpr - 0.01


@pytest.mark.parametrize("model", [RandomOutputModel, ConstantModel])
def test_model_ignoring_its_data_gives_chance_auc(car, model):
    attacks = (*DEFAULT_ATTACKS, "rmia_online")
    res = membership_inference(
        car,
        model,
        attacks=attacks,
        n_shadows=6,
        n_targets=2,
        confidence=CONF,
        random_state=1,
        n_jobs=1,
    )
    family = 0.99
    per_attack = 1.0 - (1.0 - family) / len(attacks)  # Bonferroni over the attacks
    for a in res:
        est = auc_interval(a.membership, a.scores, confidence=per_attack, groups=a.groups)
        assert est.interval[0] <= 0.5 <= est.interval[1], (a.attack, est)
        if model is ConstantModel and a.attack.startswith("lira"):
            assert a.metrics.auc == 0.5  # phi(x) is the same for every model: all ties
    assert res.exceeds_proven == []


def test_dp_model_reports_the_ledger_epsilon(car):
    res = membership_inference(
        car,
        functools.partial(DPID3Classifier, epsilon=1.0, max_depth=2, schema=car.schema),
        n_shadows=4,
        confidence=CONF,
        random_state=2,
        n_jobs=1,
    )
    assert res.proven_epsilon == pytest.approx(1.0)
    assert 0.0 <= res.epsilon_lower <= res.proven_epsilon
    assert res.n_trials == res.n_candidates
    assert res.claimed_epsilon == pytest.approx(1.0)
    assert res.delta == 0.0
    assert "proven ε = 1" in res.to_markdown()
    for a in res:
        for p in a.heldout:  # the audit must not contradict the ledger
            assert p.epsilon_lower <= res.proven_epsilon


def test_query_interface_plugs_in(car):
    kw = dict(
        attacks=("loss", "lira_online"),
        n_shadows=4,
        confidence=CONF,
        random_state=3,
        n_jobs=1,
    )
    make = functools.partial(ID3Classifier, max_depth=4, schema=car.schema)
    ObliviousQuery.calls = 0
    via_query = membership_inference(car, make, query=ObliviousQuery, **kw)
    plain = membership_inference(car, make, **kw)
    assert ObliviousQuery.calls == 1  # one target, queried once on candidates + population
    for name in kw["attacks"]:
        np.testing.assert_array_equal(via_query[name].scores, plain[name].scores)


def test_parallel_training_gives_the_same_design(car):
    kw = dict(attacks=("lira_offline",), n_shadows=4, confidence=CONF, random_state=4)
    make = functools.partial(ID3Classifier, max_depth=3, schema=car.schema)
    one = membership_inference(car, make, n_jobs=1, **kw)
    two = membership_inference(car, make, n_jobs=2, **kw)
    np.testing.assert_array_equal(one.signals.shadow_in, two.signals.shadow_in)
    np.testing.assert_allclose(one["lira_offline"].scores, two["lira_offline"].scores)


def test_attack_signals_reruns_without_training(overfit):
    again = attack_signals(overfit.signals, confidence=CONF, attacks=("lira_online", "rmia"))
    np.testing.assert_allclose(again["lira_online"].scores, overfit["lira_online"].scores)
    other = attack_signals(
        overfit.signals, confidence=CONF, attacks=("rmia",), rmia_a=1.0, rmia_gamma=2.0
    )
    assert other["rmia"].info["a"] == 1.0 and other["rmia"].info["gamma"] == 2.0


def test_loss_only_needs_no_shadows(car):
    res = membership_inference(
        car,
        functools.partial(ID3Classifier, max_depth=6, schema=car.schema),
        attacks=("loss",),
        n_shadows=0,
        population_fraction=0.0,
        confidence=CONF,
        random_state=5,
        n_jobs=1,
    )
    assert res.n_shadows == 0 and res.n_population == 0
    assert res["loss"].auc.interval[0] > 0.5


# -- implied epsilon ---------------------------------------------------------------------------


def test_implied_epsilon_is_monotone():
    n = 1000
    for fp in (1, 5, 20):
        vals = [implied_epsilon(tp, n, fp, n, confidence=CONF) for tp in range(0, n + 1, 50)]
        assert all(b >= a for a, b in itertools.pairwise(vals))
    for tp in (100, 500, 900):
        vals = [implied_epsilon(tp, n, fp, n, confidence=CONF) for fp in range(0, 200, 10)]
        assert all(b <= a for a, b in itertools.pairwise(vals))
    grid = np.linspace(0.0, 1.0, 21)
    for f in (0.001, 0.01, 0.1):
        est = [implied_epsilon_estimate(t, f) for t in grid]
        assert all(b >= a for a, b in itertools.pairwise(est))
    for t in (0.05, 0.5):
        est = [implied_epsilon_estimate(t, f) for f in grid[1:]]
        assert all(b <= a for a, b in itertools.pairwise(est))
    assert implied_epsilon_estimate(0.5, 0.01, delta=0.1) < implied_epsilon_estimate(0.5, 0.01)
    assert implied_epsilon_estimate(0.2, 0.01) == pytest.approx(math.log(20))
    assert implied_epsilon_estimate(0.1, 0.0) == math.inf
    assert implied_epsilon_estimate(0.0, 0.0) == 0.0


def test_implied_epsilon_interval_brackets_the_estimate(overfit):
    for a in overfit:
        for imp, op in zip(a.implied, a.metrics.operating_points, strict=True):
            assert isinstance(imp, ImpliedEpsilon)
            assert imp.lower == op.epsilon_lower
            assert imp.lower <= imp.estimate <= imp.upper


# -- attacks on synthetic signals ----------------------------------------------------------------


def _gaussian_world(rng, n=3000, s=16, t=2, shift=1.0, spread=3.0):
    """phi = difficulty(x) + shift * member + N(0, 1): LiRA's model, per-example difficulty."""
    mu = rng.normal(0.0, spread, n)
    shadow_in = inclusion_matrix(s, n, rng=rng)
    target_in = inclusion_matrix(t, n, balanced=False, rng=rng)
    shadow = mu + shift * shadow_in + rng.normal(size=(s, n))
    target = mu + shift * target_in + rng.normal(size=(t, n))
    return target, target_in, shadow, shadow_in


def test_lira_calibrates_per_example_difficulty():
    rng = np.random.default_rng(7)
    target, target_in, shadow, shadow_in = _gaussian_world(rng)
    online = lira_online(target, shadow, shadow_in)
    offline = lira_offline(target, shadow, shadow_in)
    y = target_in.ravel()
    ideal = stats.norm.cdf(1.0 / math.sqrt(2.0))  # AUC of the exact likelihood ratio, 0.76
    auc_on = roc_auc_score(y, online.ravel())
    assert ideal - 0.05 < auc_on < ideal + 0.02
    raw = compare_auc(y, online.ravel(), target.ravel(), confidence=CONF)
    assert raw.interval[0] > 0  # beats the uncalibrated (global threshold) score
    assert roc_auc_score(y, offline.ravel()) > 0.65


def test_fit_gaussians_global_variance_and_fallback():
    rng = np.random.default_rng(8)
    _, _, shadow, shadow_in = _gaussian_world(rng, n=2000, s=8)
    g = fit_gaussians(shadow, shadow_in, variance="global")
    assert g.variance == "global"
    assert g.global_std_in == pytest.approx(1.0, abs=0.05)
    assert g.global_std_out == pytest.approx(1.0, abs=0.05)
    assert fit_gaussians(shadow, shadow_in).variance == "global"  # auto, 4 IN models < 32
    # DP trees: some examples get the same output from every shadow model
    shadow[:, :10] = 2.0
    g = fit_gaussians(shadow, shadow_in, variance="per_example")
    assert g.n_fallback >= 10
    assert np.all(g.std_in[:10] == g.global_std_in)
    assert np.all(np.isfinite(lira_online(shadow[:1], shadow, shadow_in, fit=g)))


def test_logit_confidence_clips_exact_zero_and_one():
    phi = logit_confidence([0.0, 0.5, 1.0], clip=1e-4)
    assert np.all(np.isfinite(phi))
    assert phi[1] == 0.0
    assert phi[2] == pytest.approx(math.log((1 - 1e-4) / 1e-4))
    assert phi[0] == pytest.approx(-phi[2])
    assert np.all(np.isfinite(loss_attack([0.0, 1.0])))


def test_rmia_score_refines_the_papers_count():
    rng = np.random.default_rng(9)
    n, m, s = 500, 200, 6
    shadow_in = inclusion_matrix(s, n, rng=rng)
    p = rng.uniform(0.05, 0.95, n)
    shadow = np.clip(p + 0.2 * shadow_in + rng.normal(0, 0.05, (s, n)), 0, 1)
    target = np.clip(p + 0.2 * (rng.random(n) < 0.5) + rng.normal(0, 0.05, n), 0, 1)
    z = rng.uniform(0.05, 0.95, m)
    zs = np.clip(z + rng.normal(0, 0.05, (s, m)), 0, 1)
    zt = np.clip(z + rng.normal(0, 0.05, m), 0, 1)
    for gamma in (1.0, 2.0):
        fine = rmia(target, shadow, shadow_in, zt, zs, a=0.3, gamma=gamma)[0]
        count = rmia(target, shadow, shadow_in, zt, zs, a=0.3, gamma=gamma, tie_break=False)[0]
        # The paper's Score_MIA is the fraction of z with LR >= gamma: recompute it directly.
        pr_x = 0.5 * (1.3 * np.where(~shadow_in, shadow, 0).sum(0) / (~shadow_in).sum(0) + 0.7)
        pr_z = 0.5 * (1.3 * zs.mean(0) + 0.7)
        lr = (np.maximum(target, 1e-4) / pr_x)[:, None] / (np.maximum(zt, 1e-4) / pr_z)[None, :]
        np.testing.assert_allclose(count, (lr >= gamma).mean(axis=1))
        np.testing.assert_allclose(np.floor(fine * m + 1e-9) / m, count)
        # For one target the ranking is that of Pr(x|theta) / Pr(x).
        assert stats.spearmanr(fine, np.maximum(target, 1e-4) / pr_x).statistic > 0.9999
    a, aucs = tune_rmia_a(shadow, shadow_in, zs)
    assert 0.0 <= a <= 1.0 and set(aucs) == {round(x, 2) for x in np.linspace(0, 1, 11)}


def test_shokri_attack_learns_from_shadows():
    rng = np.random.default_rng(10)
    n, s = 1000, 6
    shadow_in = inclusion_matrix(s, n, rng=rng)
    target_in = rng.random(n) < 0.5
    labels = rng.integers(0, 2, n)

    def outputs(member):
        conf = np.clip(0.6 + 0.3 * member + rng.normal(0, 0.1, member.shape), 0.01, 0.99)
        proba = np.stack([1 - conf, conf], axis=-1)
        return np.where(labels[..., None] == 1, proba, proba[..., ::-1])

    scores = shokri_attack(outputs(target_in), labels, outputs(shadow_in), shadow_in)
    assert scores.shape == (1, n)
    assert roc_auc_score(target_in, scores[0]) > 0.85


def test_inclusion_matrix_is_balanced():
    m = inclusion_matrix(16, 500, rng=0)
    assert np.all(m.sum(axis=0) == 8)
    assert np.all(np.abs(m.sum(axis=1) - 250) < 60)
    t = inclusion_matrix(3, 500, balanced=False, in_fraction=0.3, rng=0)
    assert np.all(t.sum(axis=1) == 150)


def test_delong_matches_the_pairwise_definition():
    rng = np.random.default_rng(11)
    y = rng.random(60) < 0.4
    s = np.round(rng.normal(size=60) + y, 1)  # with ties
    est = auc_interval(y, s, confidence=CONF)
    assert est.auc == pytest.approx(roc_auc_score(y, s))
    pos, neg = s[y], s[~y]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    var = np.var(psi.mean(1), ddof=1) / len(pos) + np.var(psi.mean(0), ddof=1) / len(neg)
    assert est.std_error == pytest.approx(math.sqrt(var))
    same = compare_auc(y, s, s, confidence=CONF)
    assert same.difference == 0 and same.p_value == 1.0
    # Clusters of one record give back DeLong's variance (up to the I/(I-1) factors).
    single = auc_interval(y, s, confidence=CONF, groups=np.arange(60))
    assert single.std_error == pytest.approx(est.std_error, rel=0.03)
    # Duplicating every record into a cluster of 3 copies must not shrink the interval.
    dup = auc_interval(
        np.repeat(y, 3), np.repeat(s, 3), confidence=CONF, groups=np.repeat(np.arange(60), 3)
    )
    naive = auc_interval(np.repeat(y, 3), np.repeat(s, 3), confidence=CONF)
    assert dup.std_error == pytest.approx(est.std_error, rel=0.05)
    assert naive.std_error < 0.7 * dup.std_error


# -- reports ---------------------------------------------------------------------------------


def test_reports(overfit, tmp_path):
    md = overfit.to_markdown()
    for name in overfit.names:
        assert f"| {name} |" in md
    assert "proven ε" in md and "∞" in md
    d = json.loads(json.dumps(overfit.to_dict()))
    assert d["proven_epsilon"] == "inf"
    assert [a["attack"] for a in d["attacks"]] == overfit.names
    rows = overfit.rows()
    assert len(rows) == len(overfit) and "eps_implied_at_1pct_lower" in rows[0]
    table = markdown_table({"a": overfit, "b": overfit})
    assert table.count("| a |") == len(overfit)
    for target in (overfit, {"one": overfit, "two": overfit}):
        out = plot_roc(target, tmp_path / "roc.png", title="test")
        with open(out, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(KeyError, match="No attack"):
        overfit["nope"]


# -- input errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_shadows": 1}, "'n_shadows'.*>= 2"),
        ({"n_shadows": 0}, "'n_shadows'.*>= 2"),
        ({"n_shadows": 2.5}, "'n_shadows'"),
        ({"n_targets": 0}, "'n_targets'"),
        ({"in_fraction": 0.0}, "'in_fraction'.*\\(0, 1\\)"),
        ({"in_fraction": 1.0}, "'in_fraction'"),
        ({"in_fraction": 1.5}, "'in_fraction'"),
        ({"in_fraction": "half"}, "'in_fraction'"),
        ({"population_fraction": 1.0}, "'population_fraction'"),
        ({"population_fraction": -0.1}, "'population_fraction'"),
        ({"population_fraction": 0.0}, "'population_fraction'.*\\(0, 1\\)"),
        ({"confidence": 1.5}, "'confidence'"),
        ({"attacks": ("lira", "loss")}, "Unknown attack"),
        ({"rmia_a": 1.5}, "'a'"),
        ({"rmia_gamma": 0.0}, "'gamma'"),
        ({"clip": 0.6}, "'clip'"),
        ({"variance": "median"}, "'variance'"),
        ({"fpr_targets": (0.0,)}, "'fpr_targets'"),
        ({"delta": 1.0}, "'delta'"),
    ],
)
def test_invalid_parameters(car, kwargs, match):
    args = {"confidence": CONF, "n_shadows": 4, **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        membership_inference(car, ConstantModel, **args)


def test_invalid_inputs_to_attack_functions(car):
    rng = np.random.default_rng(12)
    one = rng.normal(size=(1, 20))
    with pytest.raises(InvalidParameterError, match="at least 2 shadow models"):
        lira_online(one[0], one, np.ones((1, 20), bool))
    with pytest.raises(InvalidParameterError, match="at least 2 shadow models"):
        lira_offline(one[0], one, np.ones((1, 20), bool))
    with pytest.raises(InvalidParameterError, match="shape"):
        lira_online(one[0], rng.normal(size=(4, 19)), np.ones((4, 19), bool))
    with pytest.raises(InvalidParameterError, match="population"):
        rmia(one, rng.random((4, 20)), np.ones((4, 20), bool), np.zeros((1, 0)), np.zeros((4, 0)))
    with pytest.raises(InvalidParameterError, match="at least 2 shadow"):
        tune_rmia_a(one, np.ones((1, 20), bool), rng.random((1, 5)))
    with pytest.raises(InvalidParameterError, match="'data'"):
        membership_inference([1, 2, 3], ConstantModel, confidence=CONF)
    with pytest.raises(InvalidParameterError, match="target="):
        membership_inference(car.frame, ConstantModel, confidence=CONF, target="nope")

    class BadQuery(ConstantModel):
        def predict_proba(self, X):
            return np.ones((len(X), 2))

    with pytest.raises(InvalidParameterError, match="columns"):
        membership_inference(car, BadQuery, n_shadows=2, confidence=CONF, n_jobs=1)


def test_registry_names():
    assert set(DEFAULT_ATTACKS) <= set(ATTACKS)
    assert {"loss", "shokri", "lira_offline", "lira_online", "rmia"} == set(DEFAULT_ATTACKS)


def test_seeded_shadow_models_give_the_same_scores_on_every_backend():
    """Models whose random_state is None get one seed each from random_state (issue 11)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=(X[:, 0] > 0).astype(int))
    make = functools.partial(RandomForestClassifier, n_estimators=4, max_depth=4)
    kw = dict(target="label", attacks=("loss", "lira_offline"), n_shadows=4, confidence=CONF)
    one = membership_inference(frame, make, n_jobs=1, random_state=1, **kw)
    two = membership_inference(frame, make, n_jobs=2, random_state=1, **kw)
    threads = membership_inference(frame, make, n_jobs=2, backend="threading", random_state=1, **kw)
    for r in (two, threads):
        for name in kw["attacks"]:
            np.testing.assert_array_equal(r[name].scores, one[name].scores)
    other = membership_inference(frame, make, n_jobs=1, random_state=2, **kw)
    assert not np.array_equal(other["loss"].scores, one["loss"].scores)
