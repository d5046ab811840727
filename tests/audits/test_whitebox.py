"""White-box learner audits: the releases the mechanisms record, replayed on the neighbour.

Statistical design. Every assertion that a correct learner PASSes runs its
test at confidence 0.9999 (the learner zoo's twins at 1 - 1e-6), so it fails by
chance with probability at most 1e-4; every assertion that a bound *exceeds* something (a planted bug caught, a
bound close to the proven epsilon) uses a margin of at least four standard
deviations of the bound at the trial counts below. Together they keep the file's
chance failures well under one in a thousand runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.audits.bounds import gdp_epsilon
from privet.audits.learners import audit_learner, resolve_learner
from privet.audits.learners.transcripts import OK, run_trials
from privet.audits.learners.whitebox import release_one_run, release_test
from privet.audits.learners.worst_case import (
    count_pair,
    deep_split_pair,
    split_pair,
    worst_case_pair,
)
from privet.audits.zoo import LEARNER_ZOO, run_learner_zoo
from privet.errors import BudgetExceededError, InvalidParameterError
from privet.ledger import Guarantee, Ledger, NonPrivate

STRICT = 0.9999
# A correct twin can be as tight as its proven epsilon, so at STRICT it would FAIL
# by chance up to 1e-4 a run: three twins in each of CI's two runs make that 6e-4,
# most of the suite's 1e-3. At TWIN the whole zoo's share is at most 6e-6.
TWIN = 1 - 1e-6


def _sides(pair):
    return ((pair.X0, pair.y0, pair.fit_params0), (pair.X1, pair.y1, pair.fit_params1))


def test_the_statistic_is_the_exact_log_likelihood_ratio(car):
    """One Laplace leaf histogram per tree, a count pair: T is exactly +-epsilon."""
    spec = resolve_learner("dp_extra_trees")
    params = {"epsilon": 1.0, "max_depth": 1, "schema": car.schema}
    pair = count_pair(car.schema, rows=50)
    b = run_trials(spec, params, _sides(pair), pair.probes, [0, 1] * 20, list(range(40)))
    assert np.all(b.outcome == OK)
    np.testing.assert_allclose(np.abs(b.statistic), 1.0, atol=1e-9)
    np.testing.assert_allclose(b.pure_bound, 1.0, atol=1e-9)  # what the ledger charged


def test_a_tight_learner_is_measured_close_to_its_proven_epsilon(car):
    """On the count pair each training's statistic is exactly +-1 (the test above), +1
    with probability e/(1+e) on one side and 1/(1+e) on the other, so the bound's law can
    be drawn without training: ``statistics_bound`` on 20,000 such draws at 2,000
    trainings a side has mean 0.776, sd 0.042 and minimum 0.621, so ``> 0.5`` is 6.6 sd
    out. At 600 a side (this test's old size) the mean is 0.594 with sd 0.073, and 1 draw
    in 20,000 measured 0 (the threshold chosen on the selection share missed): it failed
    ``> 0.5`` about once in ten runs, as CI saw."""
    audit = audit_learner(
        "dp_extra_trees",
        car,
        epsilon=1.0,
        trials=2000,
        confidence=STRICT,
        max_depth=1,
        output="releases",
        one_run=False,
        n_jobs=1,
        random_state=3,
    )
    assert audit.verdict == "PASS" and audit.consistent
    assert 0.5 < audit.measured_epsilon <= audit.proven_epsilon
    best = audit.best_release_test
    assert best.estimate_method == "plug-in ratio"
    lo, hi = best.estimate_interval
    assert lo <= audit.proven_epsilon <= hi or abs(best.estimate - 1.0) < 0.35
    assert best.pair_epsilon == pytest.approx(1.0)


def test_an_exact_split_is_caught_through_the_model_it_shapes(car):
    """The faithful oblivious tree's exact split is no release: the replayed model differs."""
    audit = audit_learner(
        "oblivious_id3_exact",
        car,
        epsilon=1.0,
        trials=100,
        confidence=STRICT,
        max_depth=1,
        output="releases",
        one_run=False,
        n_jobs=1,
    )
    best = audit.best_release_test
    assert best.pair == "near_tie" and best.outcomes == {"model differs": 200}
    assert audit.measured_epsilon > 1.5 and math.isinf(audit.proven_epsilon)
    assert audit.verdict == "FAIL"


def test_gaussian_releases_get_a_gaussian_dp_estimate(car):
    audit = audit_learner(
        "dp_gbt",
        car,
        epsilon=1.0,
        trials=24,
        confidence=0.95,
        max_depth=1,
        output="releases",
        one_run=False,
        n_jobs=1,
    )
    best = audit.best_release_test
    assert best.estimate_method == "Gaussian DP fit" and audit.proven_delta == pytest.approx(1e-5)
    # the canary's clipped gradient sits near the bound: the pair's mu is most of the proven
    mu_proven = _mu_for(audit.proven_epsilon, audit.proven_delta)
    assert 0.8 * mu_proven < best.pair_mu <= mu_proven * (1 + 1e-6)
    assert best.pair_epsilon <= audit.proven_epsilon * (1 + 1e-6)


def _mu_for(epsilon: float, delta: float) -> float:
    lo, hi = 1e-6, 10.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if gdp_epsilon(delta, mid) > epsilon:
            hi = mid
        else:
            lo = mid
    return lo


def test_a_learner_that_releases_nothing_is_not_measured(car):
    audit = audit_learner(
        "id3",
        car,
        epsilon=1.0,
        trials=8,
        confidence=0.95,
        max_depth=1,
        output="releases",
        one_run=False,
        n_jobs=1,
    )
    assert audit.measured_epsilon is None and audit.verdict == "NOT MEASURED"
    assert "released nothing through privet's mechanisms" in audit.summary()
    assert "not measured" in audit.summary()


def test_a_time_limit_too_short_is_not_measured(car):
    spec = resolve_learner("dp_id3")
    pair = split_pair(car.schema)
    r = release_test(
        spec, pair, epsilon=1.0, trials=400, confidence=0.95, max_depth=1, time_limit=0.0, n_jobs=1
    )
    assert not r.measured and r.epsilon_lower is None and r.verdict == "NOT MEASURED"
    assert "time limit" in r.not_measured


def test_the_worst_case_pair_follows_the_plan_or_the_learners_declaration(car):
    schema = car.schema

    def pair_of(name):
        return worst_case_pair(
            resolve_learner(name).make(epsilon=1.0, max_depth=1, schema=schema), schema
        )

    assert pair_of("dp_id3").kind == "split"  # an exponential-mechanism split in its plan
    deep = worst_case_pair(
        resolve_learner("dp_id3").make(epsilon=1.0, max_depth=3, schema=schema), schema
    )
    assert deep.kind == "split"  # deep_split_pair only when asked for: it measures less
    assert pair_of("dp_extra_trees").kind == "count"
    assert pair_of("oblivious_id3_exact").kind == "near_tie"  # a non-private split
    fed = pair_of("federated_cart")  # declared in privet.learners.federated_cart.audit
    assert len(fed.fit_params1["owners"]) == len(fed.X1) and fed.fit_params1["owners"][-1] == 0
    assert len(pair_of("dp_gbt").X0) == 1000  # declared in privet.learners.dp_boosting.audit


def test_the_white_box_one_run_audit_uses_one_training(car):
    """The guesses score each canary against the base rows alone, never against the other
    canaries' secret inclusion (that made 20 of 20 guesses right and a bound of 1.24 > 1)."""
    for seed in range(3):
        res = release_one_run(
            "dp_id3", car.schema, epsilon=1.0, confidence=STRICT, max_depth=1, m=100,
            random_state=seed,
        )  # fmt: skip
        assert res.n_trials == 1 and res.m == 100
        assert 0.0 <= res.epsilon_lower <= 1.0


def test_the_white_box_one_run_audit_orders_impossible_and_certain_transcripts(car):
    """A non-private release makes some canaries' transcripts impossible (score -inf): one run
    ranks them below every finite score instead of refusing its own scores (it stopped the
    benchmark's audit of the paper-faithful oblivious tree). Few canaries move its exact
    split, so one run at m = 100 proves little: the many-trainings test refutes it."""
    from privet.audits.learners.whitebox import OneRunNotSupported, _finite_order

    scores = np.array([0.5, -np.inf, 2.0, np.inf, -np.inf, 0.0])
    assert np.array_equal(_finite_order(scores), [0.5, -1.0, 2.0, 3.0, -1.0, 0.0])
    assert np.array_equal(_finite_order(np.full(3, -np.inf)), [-1.0, -1.0, -1.0])
    try:  # its tie-breaks may draw coins in a fit: then one run is "not supported", by design
        res = release_one_run(
            "oblivious_id3_exact", car.schema, epsilon=1.0, confidence=0.95, max_depth=1, m=100
        )
    except OneRunNotSupported:
        return
    assert res.m == 100 and res.n_guesses >= 1 and res.epsilon_lower >= 0.0


def test_bad_input_is_refused(car):
    with pytest.raises(InvalidParameterError, match="'output' parameter"):
        audit_learner("dp_id3", car, epsilon=1.0, trials=10, confidence=0.95, output="model")
    with pytest.raises(InvalidParameterError, match="'neighbours' parameter"):
        audit_learner("dp_id3", car, epsilon=1.0, trials=10, confidence=0.95, neighbours="rows")
    with pytest.raises(InvalidParameterError, match="Unknown pair"):
        audit_learner(
            "dp_id3", car, epsilon=1.0, trials=10, confidence=0.95, output="releases", pairs=["x"]
        )
    with pytest.raises(InvalidParameterError, match="LearnerPair"):
        release_test("dp_id3", "split", epsilon=1.0, trials=10, confidence=0.95)
    with pytest.raises(InvalidParameterError, match="selection_penalty"):
        release_test(
            "dp_id3",
            count_pair(car.schema, rows=5),
            epsilon=1.0,
            trials=10,
            confidence=0.95,
            selection_penalty=-1.0,
        )


def test_the_default_threshold_choice_reaches_a_rare_top_level():
    """The laws of the sound ODP+FMPC-ID3 on its split pair (a selection that leaves the
    dominant attribute on 7% of trainings, loss 0.25 - log(1 + 0.07 (e^0.25 - 1)), and a
    discrete-Laplace leaf at 0.75): the top level, e^0.9765, is rare. 50,000 trainings a
    side, 8 seeded draws (deterministic). With the white-box default the mean bound is
    above 0.8 (20 draws: 0.861, 80% of them above 0.8); with the black-box pessimism
    (3), which prefers frequent levels of ratio e^0.77 at most, it is about 0.76."""
    from privet.audits.estimate import estimate_epsilon_lower_bound
    from privet.audits.learners.whitebox import SELECTION_PENALTY

    n, p, es, el = 50_000, 0.07, 0.25, 0.75
    leave_loss = es - math.log1p(p * math.expm1(es))
    stay_loss = -math.log1p(p * math.expm1(es))
    kw = {"events": "threshold", "confidence": 0.95, "selection_fraction": 0.25}
    default, black_box = [], []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)

        def side(canary, rng=rng):
            p_leave = p * math.exp(es) / (1 + p * math.expm1(es)) if canary else p
            p_high = 1 / (1 + math.exp(-el)) if canary else 1 / (1 + math.exp(el))
            sel = np.where(rng.random(n) < p_leave, leave_loss, stay_loss)
            return sel + np.where(rng.random(n) < p_high, el, -el)

        t0, t1 = side(False), side(True)
        for penalty, out in ((SELECTION_PENALTY, default), (3.0, black_box)):
            r = estimate_epsilon_lower_bound(
                t0, t1, selection_penalty=penalty, random_state=seed, **kw
            )
            assert r.epsilon_lower < el + leave_loss  # valid: below the pair's figure
            out.append(r.epsilon_lower)
    assert np.mean(default) > 0.8 and np.mean(black_box) < 0.78


def test_the_statistics_are_kept_for_recomputing_the_bound(car):
    from privet.audits.estimate import estimate_epsilon_lower_bound
    from privet.audits.learners.whitebox import SELECTION_PENALTY

    r = release_test(
        "dp_extra_trees",
        count_pair(car.schema, rows=20),
        epsilon=1.0,
        trials=40,
        confidence=0.95,
        max_depth=1,
        curve=False,
        n_jobs=1,
    )
    t0, t1 = r.statistics
    assert len(t0) == len(t1) == r.n_trials
    again = estimate_epsilon_lower_bound(
        t0,
        t1,
        events="threshold",
        confidence=0.95,
        claimed_epsilon=1.0,
        selection_fraction=0.25,
        selection_penalty=SELECTION_PENALTY,
        random_state=0,
    )
    assert again.epsilon_lower == r.epsilon_lower
    assert "statistics" not in r.to_dict()


# ---------------------------------------------------------------------- the zoo


@pytest.mark.parametrize("name", [n for n, e in LEARNER_ZOO.items() if e.ci_trials])
def test_planted_learner_bugs_fail_and_their_twins_pass(car, name):
    (r,) = run_learner_zoo(
        [name],
        schema=car.schema,
        trials="ci",
        confidence=STRICT,
        correct_confidence=TWIN,
        n_jobs=1,
    )
    assert r.caught, r.broken.summary()
    assert r.correct_passed, r.correct.summary()


# ------------------------------------------------------------- accounted audits


class _RowsRaise:
    """A dataset whose rows must not be read (only its public schema)."""

    def __init__(self, ds):
        self.schema, self.name, self.frame = ds.schema, ds.name, None

    @property
    def X(self):  # pragma: no cover - reading it is the failure
        raise AssertionError("the audit read the private rows")

    y = X


def test_schema_neighbours_never_read_the_rows(car):
    audit = audit_learner(
        "dp_id3",
        _RowsRaise(car),
        epsilon=1.0,
        trials=8,
        confidence=0.95,
        max_depth=1,
        output="releases",
        n_jobs=1,
    )
    assert audit.neighbours == "schema" and not audit.internal
    assert "the public schema alone" in str(audit.__rich__().renderable.columns[1]._cells)


def test_an_audit_on_private_rows_is_charged_or_refused(car):
    budgeted = Ledger(budget=Guarantee(1.0), dataset="car")
    with pytest.raises(BudgetExceededError, match="non-private release"):
        audit_learner(
            "dp_id3",
            car,
            epsilon=1.0,
            trials=8,
            confidence=0.95,
            neighbours="private_rows",
            ledger=budgeted,
        )
    assert budgeted.charges == []  # refused: nothing charged
    with pytest.raises(InvalidParameterError, match="pass the dataset's ledger"):
        audit_learner(
            "dp_id3", car, epsilon=1.0, trials=8, confidence=0.95, neighbours="private_rows"
        )
    open_ledger = Ledger(budget=Guarantee.unbounded(), dataset="car")
    audit = audit_learner(
        "dp_id3",
        car,
        epsilon=1.0,
        trials=8,
        confidence=0.95,
        max_depth=1,
        pairs=["lone_leaf"],
        neighbours="private_rows",
        ledger=open_ledger,
        one_run=False,
        n_jobs=1,
    )
    (charge,) = open_ledger.charges
    assert (
        isinstance(charge.entry, NonPrivate) and "audit on the private rows" in charge.entry.reason
    )
    assert audit.internal and "INTERNAL" in audit.summary()


@pytest.mark.mpc
def test_the_white_box_audit_runs_through_the_protocol_on_what_the_parties_open(car):
    """Three MPyC party processes open each level's noisy sums; replayed on the reference
    path of both datasets, every transcript is one the reference could have made. Two
    trainings run at once (each with its own parties and ports), two per joblib task."""
    r = _protocol_audit(car, max_depth=1, n_jobs=2, batch_size=2)
    assert r.outcomes == {"ok": 8}, r.notes  # no transcript the reference cannot follow
    # the view of party 0 (its own noise share, then the sum less it), as the proof covers
    assert any("party 0's own noise share" in lab for lab in r.releases), r.releases
    assert r.measured and 0.0 <= r.epsilon_lower <= 1.0
    assert 0.9 < r.pair_epsilon <= 1.0 + 1e-9  # the canary moves the sums by what is charged


def _protocol_audit(car, **kw):
    """Secure-sum ID3 through 3 MPyC parties, 4 trainings a side on Car's count pair."""
    from privet.audits.learners import LearnerBuilder, LearnerSpec
    from privet.audits.learners.whitebox import protocol_release_test

    spec = LearnerSpec(
        name="secure_sum_id3_mpyc",
        title="SecureSumID3Classifier through MPyC (3 parties)",
        build=LearnerBuilder("SecureSumID3Classifier", (("backend", "mpyc"), ("n_parties", 3))),
        path="mpc",
        slow=True,
    )
    pair = count_pair(car.schema, rows=40)
    return protocol_release_test(spec, pair, epsilon=1.0, trials=4, confidence=0.95, **kw)


@pytest.mark.parametrize(
    "bad, match",
    [({"n_jobs": 0}, "n_jobs"), ({"batch_size": 0}, "batch_size"), ({"time_limit": -1.0}, "time")],
)
def test_the_protocol_audit_refuses_bad_scheduling_before_any_party_starts(car, bad, match):
    with pytest.raises(InvalidParameterError, match=match):
        _protocol_audit(car, max_depth=0, **bad)


def _audit_both_forms(car, name, learner):
    """White-box audits of ``name`` at its default form and of ``learner(em_form="paper")``,
    at depth 1 and epsilon 1, on one fixed split pair (the default pair's blocks follow
    each form's plan, so the forms are compared on the same neighbours)."""
    from privet.audits.learners import LearnerSpec
    from privet.audits.learners.worst_case import split_pair

    def paper(*, epsilon, max_depth, schema, ledger, **_):
        return learner(
            epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger, em_form="paper"
        )

    kw = {
        "epsilon": 1.0,
        "trials": 20,
        "confidence": 0.95,
        "max_depth": 1,
        "output": "releases",
        "one_run": False,
        "n_jobs": 1,
        "random_state": 0,
        "pairs": [split_pair(car.schema, per_block=5)],
    }
    monotone = audit_learner(name, car.schema, **kw)
    faithful = audit_learner(
        LearnerSpec(name=f"{name}_paper", title="paper form", build=paper), car.schema, **kw
    )
    return monotone, faithful


@pytest.mark.parametrize(
    "name, cls, monotone_above, paper_below",
    [
        ("partial_mpc_id3", "PartialMPCID3Classifier", 0.95, 0.7),
        ("oblivious_id3", "ObliviousID3Classifier", 0.9, 0.85),
    ],
)
def test_seed000_selections_realise_their_charge_under_add_remove(
    car, name, cls, monotone_above, paper_below
):
    """Issue 32, the other learners of seed 000: with the monotone selections (their
    default under add/remove) the worst-case pair allows 0.979 (CDP+PMPC-ID3) and 0.921
    (ODP+FMPC-ID3) of the proven 1 at depth 1, against 0.671 and 0.825 with the paper's
    form (em_form="paper", as before the change)."""
    import privet.learners

    monotone, faithful = _audit_both_forms(car, name, getattr(privet.learners, cls))
    assert monotone.proven_epsilon == pytest.approx(1.0) == faithful.proven_epsilon
    assert monotone.best_release_test.pair_epsilon > monotone_above
    assert faithful.best_release_test.pair_epsilon < paper_below


def test_dp_id3_selections_realise_their_charge_under_add_remove(car):
    """Issue 32: Alg. 6's exp(eps' u / 2) on the monotone max-operator score spends only
    eps'/2 of the eps' it is charged, so no pair can show more than about 0.67 of a
    proven 1 at depth 1; the monotone form (DPID3's default under add/remove) lets the
    worst-case pair reach about 0.98. ``pair_epsilon`` is the largest loss the recorded
    transcripts allow by the mechanisms' laws: the same at every seed tried (0-4)."""
    from privet.learners import DPID3Classifier

    monotone, faithful = _audit_both_forms(car, "dp_id3", DPID3Classifier)
    assert monotone.proven_epsilon == pytest.approx(1.0) == faithful.proven_epsilon
    assert monotone.best_release_test.pair_epsilon > 0.95
    assert faithful.best_release_test.pair_epsilon < 0.7


def _max_operator_scores(schema, X, y, attrs):
    from privet.learners._trees.scores import contingency, max_operator

    sizes, c = schema.domain_sizes, schema.n_classes
    return {a: max_operator(contingency(X[:, a], y, sizes[a], c)) for a in attrs}


def _binary_schema():
    from privet.data import Categorical, Schema

    return Schema(
        [Categorical(f"a{j}", ["x", "y"]) for j in range(4)] + [Categorical("w", list("xyz"))],
        Categorical("label", ["p", "q"]),
    )


@pytest.mark.parametrize("depth", [1, 2, 3, 5, "binary"])
def test_the_deep_split_pair_is_worst_case_at_every_level(car, depth):
    """Issue 32: in the node the canary reaches at each level (following the attribute
    that leads there), one attribute leads every other candidate by >= gap and the canary
    leaves its max-operator score alone while it raises every other candidate's by 1; in
    the leaf it adds 1 to one class count. Computed from the pair's codes."""
    schema, depth = (_binary_schema(), 1) if depth == "binary" else (car.schema, depth)
    pair = deep_split_pair(schema, depth, gap=40)
    X0, y0 = schema.encode(pair.X0), schema.encode_target(pair.y0)
    X1, y1 = schema.encode(pair.X1), schema.encode_target(pair.y1)
    assert (X1[:-1] == X0).all() and (y1[:-1] == y0).all()  # D' = D + the canary
    canary = X1[-1]
    in0, in1 = np.ones(len(X0), bool), np.ones(len(X1), bool)
    attrs = list(range(schema.n_features))
    for _ in range(depth):
        s0 = _max_operator_scores(schema, X0[in0], y0[in0], attrs)
        s1 = _max_operator_scores(schema, X1[in1], y1[in1], attrs)
        lead = max(attrs, key=s0.__getitem__)
        assert all(s0[lead] >= s0[a] + 40 for a in attrs if a != lead)
        assert s1[lead] == s0[lead]
        assert all(s1[a] == s0[a] + 1 for a in attrs if a != lead)
        in0 &= X0[:, lead] == canary[lead]
        in1 &= X1[:, lead] == canary[lead]
        attrs.remove(lead)
    c = schema.n_classes
    moved = np.bincount(y1[in1], minlength=c) - np.bincount(y0[in0], minlength=c)
    assert sorted(moved.tolist()) == [0] * (c - 1) + [1]


def test_the_deep_split_pair_needs_enough_attributes(car):
    with pytest.raises(InvalidParameterError, match="cannot build 6 levels"):
        deep_split_pair(car.schema, 6)  # the last level would have one candidate
    binary = _binary_schema()  # one attribute with three values: one level
    with pytest.raises(InvalidParameterError, match="at least three values"):
        deep_split_pair(binary, 2)
    assert len(deep_split_pair(binary, 1).X1) > 1
    learner = resolve_learner("dp_id3").make(epsilon=1.0, max_depth=3, schema=binary)
    assert worst_case_pair(learner, binary).kind == "split"  # one level only: the root pair


def test_dp_id3_deep_selections_realise_their_charge(car):
    """Issue 32: at depth 3 the root-only split pair allows about 0.80 of the proven 1
    (below the root the canary's node moves no score); the deep split pair (the
    worst-case pair at depth >= 2) allows about 1.0. Every training whose selections
    follow the leading attributes (all but about 1e-4 of them) allows > 0.999. It is not
    the default pair: those transcripts are rare, so tests on it measure less."""
    kw = {
        "pairs": ["deep_split"],
        "epsilon": 1.0,
        "trials": 20,
        "confidence": 0.95,
        "max_depth": 3,
        "output": "releases",
        "one_run": False,
        "curve": False,
        "n_jobs": 1,
        "random_state": 0,
    }
    audit = audit_learner("dp_id3", car.schema, **kw)
    assert audit.proven_epsilon == pytest.approx(1.0)
    assert audit.best_release_test.pair == "deep_split"
    assert audit.best_release_test.pair_epsilon > 0.99


def test_the_split_pair_blocks_follow_the_selection_the_plan_charges(car):
    """The default split pair's score gap puts about SPLIT_TARGET_SHARE of the selections
    off the dominant attribute: a slower exponent (the paper's exp(eps' u / 2), a deeper
    tree's smaller eps') needs a wider gap, and a forest's blocks are dealt to its trees."""
    from privet.audits.learners.worst_case import worst_case_pair
    from privet.learners import DPID3Classifier, DPRandomForestClassifier

    def rows(est):
        return len(worst_case_pair(est, car.schema).X0)

    mono = rows(DPID3Classifier(epsilon=1.0, max_depth=1, schema=car.schema))
    paper = rows(DPID3Classifier(epsilon=1.0, max_depth=1, schema=car.schema, em_form="paper"))
    deeper = rows(DPID3Classifier(epsilon=1.0, max_depth=3, schema=car.schema))
    assert mono == 16  # 4 blocks of 4: gap 8 at eps' = 0.5, 5 other attributes
    assert paper == deeper == 32  # half the exponent: twice the gap
    forest = DPRandomForestClassifier(n_estimators=5, epsilon=1.0, max_depth=1, schema=car.schema)
    one = DPRandomForestClassifier(n_estimators=1, epsilon=1.0, max_depth=1, schema=car.schema)
    assert rows(forest) == 5 * rows(one)


def test_a_bad_twin_confidence_is_refused_before_any_training(car):
    with pytest.raises(InvalidParameterError, match="correct_confidence"):
        run_learner_zoo(["unnoised_leaf"], schema=car.schema, correct_confidence=1.0)
