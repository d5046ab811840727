"""Learner audits: neighbouring pairs that move the structure, DP tests, one run, privacy truth.

Statistical design. Every DP test of a learner that claims (and whose ledger
proves) epsilon-DP is an honest check of the ledger at the stated confidence:
if the bound exceeds the proven epsilon, privet has a bug (DESIGN.md,
"Privacy truth") and the test fails; a correct learner fails such a test with
probability at most 1 - confidence (0.999 here, 0.01 over all of them). The
paper-faithful oblivious learner is not private, and the near-tie pair makes
its predictions nearly deterministic functions of the one record, so a few
dozen trainings refute its claim with overwhelming probability.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _seeded_learner import COIN

from privet.audits.learner_audit import (
    LEARNERS,
    LearnerAudit,
    LearnerSpec,
    audit_learner,
    audit_learner_leaf,
    available_learners,
    frame_from_codes,
    get_learner,
    learner_dp_test,
    learner_one_run,
    lone_leaf_pair,
    near_tie_pair,
)
from privet.errors import InvalidParameterError
from privet.learners._trees.scores import contingency, max_operator

CONFIDENCE = 0.999


@pytest.fixture(scope="module")
def tie(car):
    return near_tie_pair(car.schema)


def _scores(schema, X, y):
    codes, yc = schema.encode(X), schema.encode_target(y)
    return [
        max_operator(contingency(codes[:, a], yc, schema.domain_sizes[a], schema.n_classes))
        for a in range(schema.n_features)
    ]


# ------------------------------------------------------------------------- pairs


def test_near_tie_pair_ties_on_d_and_flips_on_d_prime(car, tie):
    s0 = _scores(car.schema, tie.X0, tie.y0)
    s1 = _scores(car.schema, tie.X1, tie.y1)
    assert s0[0] == s0[1] == max(s0)  # exact tie, first attribute wins ties
    assert s1[1] == s1[0] + 1 == max(s1)  # the record breaks it the other way
    assert len(tie.X1) == len(tie.X0) + 1
    assert tie.X1.iloc[:-1].equals(tie.X0)  # add/remove neighbours
    assert tie.max_depth == 1 and len(tie.probes) == 4


def test_near_tie_pair_validates_its_arguments(car):
    with pytest.raises(InvalidParameterError, match="two different attribute"):
        near_tie_pair(car.schema, attributes=(0, 0))
    with pytest.raises(InvalidParameterError, match="minority < majority"):
        near_tie_pair(car.schema, majority=3, minority=3)


def test_lone_leaf_canary_differs_from_every_record_everywhere(car):
    pair = lone_leaf_pair(car, max_rows=50, random_state=2)
    codes0 = car.schema.encode(pair.X0)
    canary = car.schema.encode(pair.probes)[0]
    assert len(pair.X0) == 50 and len(pair.X1) == 51
    assert np.all(codes0 != canary)  # every attribute of every record
    assert car.schema.encode(pair.X1.iloc[[-1]])[0].tolist() == canary.tolist()


def test_frame_from_codes_round_trips_through_the_schema(car):
    codes, y = car.codes()
    X, yy = frame_from_codes(car.schema, codes[:20], y[:20])
    assert (car.schema.encode(X) == codes[:20]).all()
    assert (car.schema.encode_target(yy) == y[:20]).all()


def test_numeric_attributes_get_a_value_inside_their_bin():
    from privet.data import Categorical, Numeric, Schema

    schema = Schema(
        [Numeric("age", 0, 100, bins=[30, 60]), Categorical("c", ["x", "y"])],
        Categorical("label", ["a", "b"]),
    )
    X, _ = frame_from_codes(schema, [[2, 1], [0, 0]])
    assert X["age"].tolist() == [80.0, 15.0]
    pair = near_tie_pair(schema)
    assert (schema.encode(pair.X1)[:, 0] <= 1).all()


# ---------------------------------------------------------------- privacy truth


def test_faithful_oblivious_split_is_refuted_and_proves_nothing(car, tie):
    """The showcase: claimed epsilon-DP, proven infinite, measured far above the claim."""
    t = learner_dp_test(
        "oblivious_id3_exact", tie, epsilon=1.0, trials=60, confidence=0.95, random_state=0
    )
    assert t.result.verdict == "FAIL"
    assert t.epsilon_lower > 1.0
    assert t.result.claimed_epsilon == 1.0
    # The released predictions jump with the one record: the probe (a=0, b=1) flips label.
    assert "acc" in t.result.event and t.result.more_likely_on == "D'"
    model = get_learner("oblivious_id3_exact").make(epsilon=1.0, max_depth=1, schema=car.schema)
    model.fit(tie.X1, tie.y1)
    assert math.isinf(model.privacy_spent_.epsilon)
    assert model.privacy_claim_.epsilon == 1.0
    assert [n for n, _ in t.curve] == sorted(n for n, _ in t.curve)


@pytest.mark.parametrize(
    "name", ["dp_id3", "partial_mpc_id3", "oblivious_id3", "dp_forest", "dp_extra_trees"]
)
def test_sound_learners_stay_within_their_proven_epsilon_on_the_near_tie(car, tie, name):
    if name not in LEARNERS:
        pytest.skip(f"{name} is not available")
    trials = 40 if "forest" in name or "extra" in name else 120
    t = learner_dp_test(name, tie, epsilon=1.0, trials=trials, confidence=CONFIDENCE)
    proven = (
        get_learner(name)
        .make(epsilon=1.0, max_depth=1, schema=car.schema)
        .fit(tie.X1, tie.y1)
        .privacy_spent_.epsilon
    )
    assert proven <= 1.0 + 1e-9
    assert t.epsilon_lower <= proven, str(t.result)
    assert t.result.verdict == "PASS"


def test_dp_id3_leaf_stays_within_its_proven_epsilon(car):
    pair = lone_leaf_pair(car, max_rows=40, random_state=1)
    t = learner_dp_test("dp_id3", pair, epsilon=2.0, trials=150, confidence=CONFIDENCE, max_depth=1)
    assert t.epsilon_lower <= 2.0 and t.result.verdict == "PASS"


def test_non_private_id3_is_caught_by_the_lone_leaf(car):
    pair = lone_leaf_pair(car, max_rows=60, random_state=0)
    t = learner_dp_test("id3", pair, epsilon=1.0, trials=40, confidence=0.95, claimed_epsilon=1.0)
    # Exact ID3 labels the lone canary's leaf with its class, and the empty leaf
    # with the parent's majority: deterministic, so the bound is only trial-limited.
    assert t.result.verdict == "FAIL" and t.result.k_d0 == 0


def test_protocol_path_of_the_faithful_learner_is_refuted_too(car, tie):
    """The same showcase through the MPyC protocol code (one-party runtime)."""
    if "oblivious_id3_exact_local" not in LEARNERS:
        pytest.skip("the MPC protocols are not available")
    t = learner_dp_test(
        "oblivious_id3_exact_local",
        tie,
        epsilon=1.0,
        trials=40,
        confidence=0.95,
        selection_fraction=0.25,
        curve=False,
    )
    assert t.result.verdict == "FAIL" and t.epsilon_lower > 1.0
    assert t.curve == ()


# --------------------------------------------------------------------- one run


def test_one_run_separates_exact_id3_from_dp_id3(car):
    exact = learner_one_run("id3", car, epsilon=1.0, confidence=0.95, random_state=0)
    assert exact.epsilon_lower > 1.0  # every canary alone in its leaf, labels exact
    dp = learner_one_run("dp_id3", car, epsilon=1.0, confidence=CONFIDENCE, random_state=0)
    assert dp.epsilon_lower <= 1.0  # proven 1: a larger bound would be a privet bug
    assert dp.m == exact.m == 864 and dp.n_trials == 1


def test_one_run_rejects_bad_canary_counts(car):
    with pytest.raises(InvalidParameterError, match="m must be"):
        learner_one_run("dp_id3", car, epsilon=1.0, confidence=0.95, m=len(car.frame))


# ------------------------------------------------------------------------ audits


def test_audit_learner_puts_claimed_proven_and_measured_side_by_side(exact_id3_audit):
    a = exact_id3_audit
    assert isinstance(a, LearnerAudit)
    assert a.claimed_epsilon == 1.0 and math.isinf(a.proven_epsilon)
    assert a.verdict == "FAIL" and a.consistent
    assert [t.pair for t in a.tests] == ["near_tie", "lone_leaf"]
    assert all(t.result.confidence == pytest.approx(0.975) for t in a.tests)  # Bonferroni
    row = a.row()
    assert row["near_tie_epsilon"] > 1.0 and row["verdict"] == "FAIL"
    d = a.to_dict()
    assert d["proven_epsilon"] == "inf" and d["one_run"]["m"] == 200
    assert "claimed ε = 1" in a.summary() and "proven ε = ∞" in a.summary()
    assert a.ledger is not None


def test_audit_of_a_non_private_learner_has_no_claim(car):
    a = audit_learner(
        "id3", car, epsilon=1.0, trials=20, confidence=0.9, pairs=("near_tie",), one_run=False
    )
    assert a.claimed_epsilon is None and a.verdict == "NO CLAIM"
    assert math.isinf(a.proven_epsilon) and a.consistent


def test_demo_audit_has_a_summary(car):
    r = audit_learner_leaf(car, epsilon=1.0, max_depth=1, trials=30, confidence=0.95, seed=0)
    assert "DPID3Classifier" in r.summary() and r.tests[0].pair == "lone_leaf"
    assert r.consistent


def test_progress_reports_every_training(car, tie):
    seen = []
    learner_dp_test(
        "dp_id3",
        tie,
        epsilon=1.0,
        trials=12,
        confidence=0.9,
        batch_size=5,
        progress=lambda done, total: seen.append((done, total)),
        curve=False,
    )
    assert seen[0] == (0, 24) and seen[-1] == (24, 24)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_learner_registry_and_errors():
    assert {"id3", "dp_id3"} <= set(available_learners(include_slow=False))
    assert all(not LEARNERS[n].slow for n in available_learners(include_slow=False))
    with pytest.raises(InvalidParameterError, match="No learner 'c45'"):
        get_learner("c45")
    spec = LearnerSpec(name="mine", title="mine", build=LEARNERS["dp_id3"].build)
    assert get_learner(spec) is spec


def test_bad_arguments_are_rejected(car, tie):
    with pytest.raises(InvalidParameterError, match="output must be"):
        learner_dp_test("dp_id3", tie, epsilon=1.0, trials=10, confidence=0.9, output="score")
    with pytest.raises(InvalidParameterError, match="trials must be"):
        learner_dp_test("dp_id3", tie, epsilon=1.0, trials=2, confidence=0.9)
    with pytest.raises(InvalidParameterError, match="Unknown pair"):
        audit_learner("dp_id3", car, epsilon=1.0, trials=10, confidence=0.9, pairs=("far",))
    with pytest.raises(InvalidParameterError, match="Dataset"):
        lone_leaf_pair(car.frame)


@pytest.mark.mpc
def test_three_party_protocol_follows_the_record_like_the_reference(car, tie):
    """One training per dataset through 3 MPyC parties over TCP: the probe follows the record.

    The leaf counts of the probe's leaf are 25 vs 5 (D) and 5 vs 26 (D'), and the
    Laplace noise at epsilon = 1 flips such a majority with probability below
    e^-9, so the exact split alone decides the label.
    """
    if "oblivious_id3_exact_mpc" not in LEARNERS:
        pytest.skip("the MPC protocols are not available")
    spec = get_learner("oblivious_id3_exact_mpc")
    labels = []
    for X, y in ((tie.X0, tie.y0), (tie.X1, tie.y1)):
        model = spec.make(epsilon=1.0, max_depth=1, schema=car.schema).fit(X, y)
        labels.append(model.predict(tie.probes.iloc[[1]])[0])
        assert math.isinf(model.privacy_spent_.epsilon)
    assert labels == ["unacc", "acc"]


def test_resolve_learner_takes_class_names_short_names_and_configurations():
    from privet.audits import SHORT_NAMES, learner_names, resolve_learner
    from privet.learners import __all__ as exported

    for row in learner_names():
        spec = resolve_learner(row.class_name)
        assert spec is resolve_learner(row.short_name) is resolve_learner(row.configuration)
        assert spec is resolve_learner(row.class_name.lower())
        assert SHORT_NAMES[row.class_name] == row.short_name
    names = {row.class_name for row in learner_names()}
    # Every estimator privet.learners exports is auditable by its class name.
    assert {n for n in exported if n.endswith("Classifier")} <= names
    assert resolve_learner("DPID3Classifier").name == "dp_id3"
    # The class's defaults: ObliviousID3Classifier is the sound split="exponential".
    assert resolve_learner("ObliviousID3Classifier").name == "oblivious_id3"
    assert resolve_learner("oblivious_id3_exact").name == "oblivious_id3_exact"
    assert len(set(SHORT_NAMES.values())) == len(SHORT_NAMES)
    with pytest.raises(InvalidParameterError, match=r"DPID3Classifier.*dpid3.*dp_id3"):
        resolve_learner("c45")
    with pytest.raises(InvalidParameterError, match="LearnerSpec"):
        resolve_learner(3)  # type: ignore[arg-type]


def test_builders_pass_only_the_arguments_a_class_takes(car):
    from privet.learners import ID3Classifier

    model = get_learner("id3").make(epsilon=1.0, max_depth=2, schema=car.schema)
    assert isinstance(model, ID3Classifier) and model.max_depth == 2
    seeded = get_learner("dpid3").make(epsilon=1.0, max_depth=2, schema=car.schema, random_state=7)
    assert seeded.random_state == 7 and seeded.epsilon == 1.0


def test_seeded_learner_tests_give_the_same_numbers_on_every_backend(tie):
    """Each training gets its own seed, and batches do not depend on n_jobs (issue 11)."""
    kw = dict(epsilon=1.0, trials=40, confidence=0.9, curve=False, random_state=5)
    one = learner_dp_test(COIN, tie, n_jobs=1, **kw).result
    for extra in ({"n_jobs": 2, "backend": "threading"}, {"n_jobs": 2}):
        other = learner_dp_test(COIN, tie, **extra, **kw).result
        assert (other.k_d0, other.k_d1, other.event) == (one.k_d0, one.k_d1, one.event)
    # Trainings are independent draws, not one seed repeated: both labels occur.
    assert 0 < one.k_d0 < one.n_d0 or 0 < one.k_d1 < one.n_d1


def test_audit_learner_refuses_bad_parallel_settings_before_training(car):
    for kw in ({"n_jobs": 0}, {"backend": "nope"}, {"random_state": -1}):
        with pytest.raises(InvalidParameterError, match=r"n_jobs|backend|random_state"):
            audit_learner(COIN, car, epsilon=1.0, trials=8, confidence=0.9, **kw)


def test_the_proven_epsilon_is_the_plans_not_one_fits_charges(car):
    """Secure-sum ID3 at depth 1 charges its root level (0.5) and, when its noisy counts
    make the root a leaf (about one fit in eight on this pair), nothing more: such a fit's
    ``privacy_spent_`` is 0.5. The learner as a mechanism is 1-DP (its plan), and an audit
    over all its runs must compare with that, whatever the fit it read the ledger from.
    120 fits: one charging only the root is missed with probability 0.87^120 < 1e-7."""
    from privet.audits.learners import claimed_and_proven, resolve_learner
    from privet.audits.learners.worst_case import worst_case_pair

    spec = resolve_learner("secure_sum_id3")
    pair = worst_case_pair(spec.make(epsilon=1.0, max_depth=1, schema=car.schema), car.schema)
    realized, proven, curve = set(), set(), set()
    for _ in range(120):
        g = claimed_and_proven(spec, pair.X1, pair.y1, epsilon=1.0, max_depth=1, schema=car.schema)
        realized.add(round(g.ledger.spent().epsilon, 9))
        proven.add((round(g.proven_epsilon, 9), g.proven_delta))
        curve.add(round(g.ledger.plan_cost(g.plan, delta=1e-3).epsilon, 9))
    assert realized == {0.5, 1.0}  # some fits charged half the plan
    assert proven == {(1.0, 0.0)}
    assert len(curve) == 1 and 0.8 < curve.pop() < 0.9  # the plan's epsilon(1e-3), every fit


def test_a_fit_that_charged_half_its_plan_proves_its_plan_in_the_mia_audit_too(car):
    """The same effect on one model, as the membership-inference audit and
    ``proven_guarantee`` read it: a secure-sum ID3 fit that stopped at the root has
    ``privacy_spent_`` 0.5 and proves 1 (its plan). Up to 200 fits until one stops at
    the root: none does with probability 0.87^200 < 1e-12."""
    from privet.audits.learners import resolve_learner
    from privet.audits.learners.registry import _unbounded_ledger
    from privet.audits.learners.worst_case import worst_case_pair
    from privet.audits.mia.signals import _model_info
    from privet.learners._base import proven_guarantee
    from privet.ledger import Guarantee

    spec = resolve_learner("secure_sum_id3")
    pair = worst_case_pair(spec.make(epsilon=1.0, max_depth=1, schema=car.schema), car.schema)
    for _ in range(200):
        model = spec.make(
            epsilon=1.0, max_depth=1, schema=car.schema, ledger=_unbounded_ledger()
        ).fit(pair.X1, pair.y1)
        if model.privacy_spent_.epsilon < 0.75:
            break
    assert model.privacy_spent_ == Guarantee(0.5)
    assert proven_guarantee(model) == Guarantee(1.0)
    info = _model_info(model)
    assert (info.proven_epsilon, info.proven_delta) == (1.0, 0.0)
    # the plan is the one fit reserved, whatever the parameters say now
    model.set_params(epsilon=0.25, max_depth=3)
    assert proven_guarantee(model) == Guarantee(1.0)


def test_proven_guarantee_is_the_fit_s_after_set_params_and_pickling(car):
    """DP boosting reserves a plan at the noise it calibrated; ``set_params`` after ``fit``
    (a larger epsilon, more trees) changes neither the plan nor the model's guarantee, and
    a pickled model keeps both."""
    import pickle

    from privet.learners import DPGradientBoostingClassifier, proven_guarantee

    model = DPGradientBoostingClassifier(epsilon=1.0, n_estimators=2, schema=car.schema)
    model.fit(car.X, car.y)
    before = proven_guarantee(model)
    assert before.epsilon == pytest.approx(1.0, rel=1e-6) and before.delta == 1e-5
    model.set_params(epsilon=3.0, n_estimators=8)
    assert proven_guarantee(model) == before
    assert proven_guarantee(pickle.loads(pickle.dumps(model))) == before


def test_proven_guarantee_refuses_what_is_not_a_fitted_estimator(car):
    """One privet error for a non-estimator and for an unfitted learner (never None, which
    would read as 'a non-private model'); a fitted non-private model proves nothing."""
    from privet.errors import NotFittedError
    from privet.learners import DPID3Classifier, ID3Classifier, proven_guarantee
    from privet.ledger import Guarantee, Ledger

    with pytest.raises(InvalidParameterError, match="fitted estimator"):
        proven_guarantee("DPID3Classifier")
    with pytest.raises(NotFittedError, match="not fitted"):
        proven_guarantee(DPID3Classifier(epsilon=1.0, schema=car.schema))
    assert proven_guarantee(ID3Classifier(max_depth=1, schema=car.schema).fit(car.X, car.y)) is None
    led = Ledger(budget=Guarantee(1.0))
    model = DPID3Classifier(epsilon=1.0, max_depth=1, schema=car.schema, ledger=led)
    assert proven_guarantee(model.fit(car.X, car.y)) == Guarantee(1.0)


def test_the_protocol_audit_wrapper_keeps_the_plan_its_learner_reserved(tennis):
    """The protocol audit's wrapper (MPyC's one-party runtime) passes on the plan its
    learner reserved, so an audit of it compares with the plan, not only the charges."""
    from privet.audits.learners import resolve_learner
    from privet.learners._base import fitted_plan

    spec = resolve_learner("oblivious_id3_exact_local")
    model = spec.make(epsilon=1.0, max_depth=1, schema=tennis.schema).fit(tennis.X, tennis.y)
    assert fitted_plan(model) is model._learner_.privacy_plan_ is not None
