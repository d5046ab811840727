"""Fuzz of the public audit and testing entry points (issue 11, "Bad input").

Every call below gets arguments drawn by hypothesis, good and bad mixed. The
property is the same everywhere: the call either returns a correct result or
raises a :class:`privet.errors.PrivetError` whose message says what was wrong
(names the parameter or the value); never another exception, and never a hang
(each example runs under an alarm). Bad arguments must be refused before any
training starts, so the learner fuzz counts the fits.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _alarm import time_limit
from privet.audits import (
    audit_learner,
    canary_pair,
    dp_test,
    estimate_epsilon_lower_bound,
    implied_epsilon,
    learner_dp_test,
    mia_metrics,
    near_tie_pair,
    resolve_learner,
    search_neighbouring_pairs,
    tpr_at_fpr,
)
from privet.audits.learners import LearnerBuilder, LearnerSpec
from privet.audits.mia import evaluate_scores, membership_inference
from privet.errors import PrivetError
from privet.learners import ID3Classifier
from privet.ledger.entries import Entry
from privet.testing import assert_dp, datasets, entries, neighbouring_pairs, schemas

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ALARM_SECONDS = 60  # generous: the machine is shared; a hang is far longer


def no_hang(seconds: int = ALARM_SECONDS) -> contextlib.AbstractContextManager[None]:
    """Fail the example if the call runs for more than ``seconds``."""
    return time_limit(seconds)


def privet_error_or(call: Callable[[], Any]) -> Any:
    """The call's result, or None after a PrivetError with an actionable message.

    Any other exception propagates and fails the example.
    """
    with no_hang():
        try:
            return call()
        except PrivetError as exc:
            msg = str(exc)
            assert len(msg) >= 25, f"message too short to act on: {msg!r}"
            return None


# Values of every kind that a caller might pass where a number is expected. Counts
# (trials, shadows...) draw their integers from small ranges: a huge valid count is
# a long run, not a bug.
junk_no_int = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.sampled_from([[], [1, 2], (), {"a": 1}, object(), b"x", 1j, np.float64("nan")]),
)
junk = st.one_of(junk_no_int, st.integers(-(2**70), 2**70))
probability = st.one_of(junk, st.floats(0.0, 1.0))


def real_in(v: Any, lo: float, hi: float = math.inf) -> bool:
    """Whether the audits must accept ``v`` as a real in the open interval (lo, hi)."""
    return not isinstance(v, bool) and isinstance(v, int | float) and lo < v < hi


def int_ge(v: Any, minimum: int) -> bool:
    return type(v) is int and v >= minimum


def resolves(name: Any) -> bool:
    try:
        resolve_learner(name)
    except PrivetError:
        return False
    return True


# --------------------------------------------------------------- audit_learner


class CountingBuilder:
    """A learner builder that counts its trainings (in this process)."""

    fits = 0

    def __call__(self, **kw: Any) -> Any:
        CountingBuilder.fits += 1
        return LearnerBuilder("ID3Classifier")(**kw)


COUNTED = LearnerSpec(name="counted", title="counted ID3", build=CountingBuilder())


def test_audit_learner_refuses_an_empty_pair_list(car):
    """``pairs=[]`` returned PASS having tested nothing; now it is refused, untrained."""
    CountingBuilder.fits = 0
    with pytest.raises(PrivetError, match="'pairs' is empty"):
        audit_learner(COUNTED, car, epsilon=1.0, trials=8, confidence=0.9, pairs=[])
    with pytest.raises(PrivetError, match="'pairs' is empty"):
        audit_learner("dp_id3", car, epsilon=1.0, trials=8, confidence=0.9, pairs=())
    assert CountingBuilder.fits == 0


@FUZZ
@given(
    epsilon=st.one_of(junk, st.floats(0.1, 5.0)),
    trials=st.one_of(junk, st.integers(-3, 8)),
    confidence=probability,
    pairs=st.one_of(junk, st.lists(st.sampled_from(["near_tie", "lone_leaf", "other"]))),
    max_depth=st.one_of(junk, st.integers(-2, 4)),
    output=st.sampled_from(["labels", "proba", "scores", 3]),
    n_jobs=st.one_of(junk, st.sampled_from([None, 1])),
    backend=st.one_of(st.sampled_from([None, "threading", "nope", 7])),
    random_state=st.one_of(junk, st.integers(0, 5)),
    learner=st.one_of(st.sampled_from(["id3", "ID3Classifier", "c45", "dpid3"]), junk),
)
def test_audit_learner_bad_arguments_are_refused_before_training(
    car,
    epsilon,
    trials,
    confidence,
    pairs,
    max_depth,
    output,
    n_jobs,
    backend,
    random_state,
    learner,
):
    kwargs = dict(
        epsilon=epsilon,
        trials=trials,
        confidence=confidence,
        pairs=pairs,
        max_depth=max_depth,
        output=output,
        n_jobs=n_jobs,
        backend=backend,
        random_state=random_state,
        one_run=False,
    )
    # A valid call would train (too slow for a fuzz): keep only calls with something wrong.
    valid = (
        real_in(epsilon, 0.0)
        and int_ge(trials, 4)
        and real_in(confidence, 0.0, 1.0)
        and isinstance(pairs, list)
        and bool(pairs)
        and set(pairs) <= {"near_tie", "lone_leaf"}
        and int_ge(max_depth, 0)
        and output in ("labels", "proba")
        and (n_jobs is None or (type(n_jobs) is int and n_jobs != 0))
        and backend in (None, "threading")
        and (random_state is None or int_ge(random_state, 0))
        and resolves(learner)
    )
    assume(not valid)
    CountingBuilder.fits = 0
    spec = COUNTED if resolves(learner) else learner
    with no_hang():
        with pytest.raises(PrivetError) as info:
            audit_learner(spec, car, **kwargs)
    assert len(str(info.value)) >= 25
    assert CountingBuilder.fits == 0  # refused before any training


def test_a_valid_tiny_audit_reports_what_it_ran(car):
    audit = audit_learner(
        "ID3Classifier", car, epsilon=1.0, trials=6, confidence=0.9, pairs="near_tie",
        one_run=False, n_jobs=1,
    )  # fmt: skip
    (test,) = audit.tests
    assert test.result.n_trials == 6 and test.result.n_selection + test.result.n_estimation == 6
    assert audit.verdict == "NO CLAIM"  # the non-private baseline claims nothing


def test_each_pair_can_have_its_own_number_of_trainings(car):
    audit = audit_learner(
        "ID3Classifier", car, epsilon=1.0, trials={"near_tie": 8, "lone_leaf": 12},
        confidence=0.9, one_run=False, n_jobs=1, selection_fraction=0.25, curve=False,
    )  # fmt: skip
    assert {t.pair: t.result.n_trials for t in audit.tests} == {"near_tie": 8, "lone_leaf": 12}
    for t in audit.tests:
        assert t.result.n_selection == t.result.n_trials // 4
        assert not t.curve


@pytest.mark.parametrize(
    ("trials", "selection_fraction", "match"),
    [
        ({"near_tie": 6}, 0.5, "missing \\['lone_leaf'\\]"),
        ({"near_tie": 6, "lone_leaf": 6, "near-tie": 6}, 0.5, "unknown \\['near-tie'\\]"),
        ({"near_tie": 6, "lone_leaf": 2}, 0.5, "lone_leaf"),
        (8, 1.5, "selection_fraction"),
    ],
)
def test_bad_per_pair_trainings_are_refused_before_training(car, trials, selection_fraction, match):
    CountingBuilder.fits = 0
    with pytest.raises(PrivetError, match=match):
        audit_learner(
            COUNTED, car, epsilon=1.0, trials=trials, confidence=0.9, one_run=False,
            selection_fraction=selection_fraction,
        )  # fmt: skip
    assert CountingBuilder.fits == 0


@FUZZ
@given(
    trials=st.one_of(junk_no_int, st.integers(-2, 12)),
    selection_fraction=probability,
    batch_size=st.one_of(junk, st.integers(-1, 3)),
    pair=st.sampled_from(["tie", None, "near_tie", 5]),
)
def test_learner_dp_test_validates_before_training(
    car, trials, selection_fraction, batch_size, pair
):
    tie = near_tie_pair(car.schema)
    p = tie if pair == "tie" else pair
    CountingBuilder.fits = 0
    result = privet_error_or(
        lambda: learner_dp_test(
            COUNTED,
            p,
            epsilon=1.0,
            trials=trials,
            confidence=0.9,
            selection_fraction=selection_fraction,
            batch_size=batch_size,
            curve=False,
            n_jobs=1,
        )
    )
    if result is None:
        assert CountingBuilder.fits == 0
    else:
        r = result.result
        assert r.n_trials == trials and r.n_selection + r.n_estimation == trials
        assert CountingBuilder.fits == 2 * trials
        assert 0.0 <= r.epsilon_lower


@FUZZ
@given(name=st.one_of(junk, st.text(max_size=30), st.sampled_from(["dpid3", "DPID3Classifier"])))
def test_resolve_learner_names_or_refuses(name):
    spec = privet_error_or(lambda: resolve_learner(name))
    assert spec is None or isinstance(spec, LearnerSpec)


# ----------------------------------------------------------------- DP tests


def seeded_laplace(x: float, size: int, random_state: Any = None) -> np.ndarray:
    return np.random.default_rng(random_state).laplace(x, 1.0, size)


@FUZZ
@given(
    epsilon=st.one_of(junk, st.floats(0.0, 5.0)),
    delta=probability,
    trials=st.one_of(junk_no_int, st.integers(-2, 400)),
    confidence=probability,
    selection_fraction=probability,
    batch_size=st.one_of(st.none(), junk, st.integers(-1, 50)),
    n_jobs=st.one_of(st.sampled_from([None, 1, 0, -1, 1.5, "2", True])),
    backend=st.sampled_from([None, "threading", "sequential", "nope", 3]),
    random_state=st.one_of(st.none(), junk, st.integers(0, 10)),
    target_epsilon=st.one_of(st.none(), junk, st.floats(0.0, 3.0)),
    options=st.fixed_dictionaries(  # issue 37: these were accepted whatever they were
        {},
        optional={
            "power": st.one_of(junk, st.floats(0.0, 1.0)),
            "classifier": st.sampled_from(["logistic", "boosting", "foo", 3, None]),
            "max_thresholds": st.one_of(junk, st.integers(-2, 600)),
            "max_discrete_values": st.one_of(junk, st.integers(-2, 80)),
            "selection_penalty": st.one_of(junk, st.floats(0.0, 5.0)),
        },
    ),
)
def test_dp_test_gives_a_correct_result_or_a_privet_error(
    epsilon, delta, trials, confidence, selection_fraction, batch_size, n_jobs, backend,
    random_state, target_epsilon, options,
):  # fmt: skip
    assume(n_jobs not in (-1,) or backend in ("threading", "sequential"))  # no process pools
    r = privet_error_or(
        lambda: dp_test(
            seeded_laplace,
            0.0,
            1.0,
            epsilon=epsilon,
            delta=delta,
            trials=trials,
            confidence=confidence,
            selection_fraction=selection_fraction,
            batch_size=batch_size,
            n_jobs=n_jobs,
            backend=backend,
            random_state=random_state,
            target_epsilon=target_epsilon,
            **options,
        )
    )
    if r is None:
        return
    o = options
    assert "power" not in o or real_in(o["power"], 0.0, 1.0), o
    assert o.get("classifier", "logistic") in ("logistic", "boosting"), o
    assert all(int_ge(o.get(k, 1), 1) for k in ("max_thresholds", "max_discrete_values")), o
    assert "selection_penalty" not in o or (
        real_in(o["selection_penalty"], -1e-300) and math.isfinite(o["selection_penalty"])
    ), o
    assert real_in(epsilon, -1e-300, math.inf) or epsilon == math.inf, epsilon
    assert r.n_selection + r.n_estimation == r.n_trials <= trials
    if target_epsilon is None:
        assert r.n_trials == trials
    assert 0 <= r.k_d0 <= r.n_d0 == r.n_estimation and 0 <= r.k_d1 <= r.n_d1 == r.n_estimation
    assert r.epsilon_lower >= 0.0 and not math.isnan(r.epsilon_lower)
    assert r.verdict in ("PASS", "FAIL")


@FUZZ
@given(
    s0=st.lists(st.one_of(st.floats(-5, 5), st.floats()), max_size=30),
    s1=st.lists(st.floats(-5, 5), max_size=30),
    confidence=probability,
    selection_fraction=probability,
    claimed=st.one_of(st.none(), junk),
    events=st.sampled_from(["auto", "threshold", "set", "classifier", "nope", ["set"], []]),
)
def test_estimate_epsilon_lower_bound_on_arbitrary_samples(
    s0, s1, confidence, selection_fraction, claimed, events
):
    r = privet_error_or(
        lambda: estimate_epsilon_lower_bound(
            np.array(s0, dtype=float),
            np.array(s1, dtype=float),
            confidence=confidence,
            selection_fraction=selection_fraction,
            claimed_epsilon=claimed,
            events=events,
            random_state=0,
        )
    )
    if r is not None:
        assert r.n_estimation >= 1 and r.n_selection >= 1
        assert 1 <= r.n_d0 < len(s0) and 1 <= r.n_d1 < len(s1)
        assert 0 <= r.k_d0 <= r.n_d0 and 0 <= r.k_d1 <= r.n_d1
        assert r.epsilon_lower >= 0.0


@FUZZ
@given(
    dataset=st.sampled_from([np.zeros((3, 2)), [1, 2, 3], pd.DataFrame({"a": [1, 2]}), 7, "ab"]),
    canary=st.one_of(junk, st.sampled_from([np.zeros(2), np.zeros(3), {"a": 3}])),
    relation=st.sampled_from(["add_remove", "replace_one", "swap", None]),
    index=st.one_of(st.none(), st.integers(-5, 5), junk),
)
def test_canary_pair(dataset, canary, relation, index):
    out = privet_error_or(lambda: canary_pair(dataset, canary, relation=relation, index=index))
    if out is not None:
        d0, d1 = out
        assert d0 is dataset
        delta_rows = len(d1) - len(d0)
        assert delta_rows == (1 if relation == "add_remove" else 0)


@FUZZ
@given(
    pairs=st.sampled_from([[], [(0.0, 1.0)], [(0.0, 1.0), (0.0, 2.0)], [0.0], None]),
    pilot=st.one_of(st.integers(-1, 60), junk_no_int),
)
def test_search_neighbouring_pairs(pairs, pilot):
    res = privet_error_or(
        lambda: search_neighbouring_pairs(
            seeded_laplace, pairs, epsilon=1.0, pilot_trials=pilot, trials=100, confidence=0.9,
            random_state=0,
        )
    )  # fmt: skip
    if res is not None:
        assert 0 <= res.best_index < len(pairs) and res.result.n_trials == 100


# --------------------------------------------------------------------- MIA


@FUZZ
@given(
    membership=st.lists(st.booleans(), max_size=40),
    scores=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40),
    confidence=probability,
    target=st.one_of(st.floats(-1, 2), junk),
)
def test_mia_metrics_and_operating_points(membership, scores, confidence, target):
    m = privet_error_or(
        lambda: mia_metrics(membership, scores, confidence=confidence, fpr_targets=(0.1,))
    )
    if m is not None:
        assert 0.0 <= m.auc <= 1.0
    op = privet_error_or(lambda: tpr_at_fpr(membership, scores, target, confidence=0.9))
    if op is not None:
        assert op.fpr <= target + 1e-12 and 0 <= op.tp <= op.n_members
    ev = privet_error_or(
        lambda: evaluate_scores(
            np.asarray(scores, dtype=float), np.asarray(membership, dtype=bool), confidence=0.9
        )
    )
    if ev is not None:
        assert len(ev.scores) == len(scores)


@FUZZ
@given(
    tp=st.one_of(st.integers(-2, 12), junk),
    fp=st.one_of(st.integers(-2, 12), junk),
    confidence=probability,
    delta=probability,
)
def test_implied_epsilon(tp, fp, confidence, delta):
    e = privet_error_or(lambda: implied_epsilon(tp, 10, fp, 10, delta=delta, confidence=confidence))
    if e is not None:
        assert e >= 0.0


@pytest.fixture(scope="module")
def tiny_frame(car):
    return car.frame.sample(40, random_state=0).reset_index(drop=True)


@FUZZ
@given(
    n_shadows=st.one_of(st.integers(-1, 3), junk_no_int),
    n_targets=st.one_of(st.integers(-1, 2), junk_no_int),
    in_fraction=probability,
    population_fraction=probability,
    attacks=st.sampled_from([("loss",), ("lira_offline",), ("rmia",), ("nope",), (), "loss"]),
    clip=st.one_of(st.floats(0, 1), junk),
    fpr=st.sampled_from([(0.1,), (0.0,), (2.0,), ("a",)]),
    n_jobs=st.sampled_from([1, 0, "x", None]),
    random_state=st.one_of(st.integers(0, 3), st.sampled_from([-1, "s", 1.5, None])),
    factory=st.sampled_from(["id3", "none", "object", "not callable"]),
)
def test_membership_inference_tiny(
    car, tiny_frame, n_shadows, n_targets, in_fraction, population_fraction, attacks, clip, fpr,
    n_jobs, random_state, factory,
):  # fmt: skip
    make = {  # issue 37: a factory of no estimator was a raw AttributeError
        "id3": functools.partial(ID3Classifier, max_depth=2, schema=car.schema),
        "none": lambda: None,
        "object": object,
        "not callable": ID3Classifier(max_depth=2, schema=car.schema),
    }[factory]
    res = privet_error_or(
        lambda: membership_inference(
            tiny_frame,
            make,
            target=car.schema.target_name,
            confidence=0.9,
            n_shadows=n_shadows,
            n_targets=n_targets,
            in_fraction=in_fraction,
            population_fraction=population_fraction,
            attacks=attacks,
            clip=clip,
            fpr_targets=fpr,
            n_jobs=n_jobs,
            random_state=random_state,
        )
    )
    if res is not None:
        assert factory == "id3"
        assert res.n_shadows == n_shadows and res.n_targets == n_targets
        assert res.n_candidates + res.n_population == len(tiny_frame)
        for a in res.attacks:
            assert len(a.scores) == n_targets * res.n_candidates


# ----------------------------------------------------------------- testing


@FUZZ
@given(
    min_features=st.one_of(st.integers(-1, 3), junk),
    max_features=st.one_of(st.integers(-1, 4), junk),
    max_categories=st.one_of(st.integers(0, 4), junk),
    min_rows=st.one_of(st.integers(-1, 3), junk),
    max_rows=st.one_of(st.integers(-1, 5), junk),
    relation=st.sampled_from(["add_remove", "replace_one", "swap", 3]),
    max_epsilon=st.one_of(st.floats(-1, 3), junk),
    data=st.data(),
)
def test_strategies_refuse_bad_arguments_at_construction(
    min_features, max_features, max_categories, min_rows, max_rows, relation, max_epsilon, data
):
    schema_strategy = privet_error_or(
        lambda: schemas(
            min_features=min_features, max_features=max_features, max_categories=max_categories
        )
    )
    if schema_strategy is not None:
        schema = data.draw(schema_strategy)
        assert min_features <= schema.n_features <= max_features
        frames = privet_error_or(lambda: datasets(schema, min_rows=min_rows, max_rows=max_rows))
        if frames is not None:
            frame = data.draw(frames)
            assert min_rows <= len(frame) <= max_rows
            schema.validate(frame)
        pairs = privet_error_or(
            lambda: neighbouring_pairs(
                schema, relation=relation, min_rows=min_rows, max_rows=max_rows
            )
        )
        if pairs is not None:
            d0, d1 = data.draw(pairs)
            assert len(d1) - len(d0) == (1 if relation == "add_remove" else 0)
    entry_strategy = privet_error_or(lambda: entries(max_epsilon=max_epsilon))
    if entry_strategy is not None:
        assert isinstance(data.draw(entry_strategy), Entry)


def test_strategies_accept_only_schemas():
    for bad in ("car", 3, None):
        for make in (datasets, neighbouring_pairs):
            with pytest.raises(PrivetError, match="schema must be"):
                make(bad)


def returns_none(x: float, size: int, random_state: Any = None) -> None:
    return None


@FUZZ
@given(
    neighbours=st.sampled_from(
        [(0.0, 1.0), [(0.0, 1.0)], [], (0.0,), "ab", None, [(0.0, 1.0, 2.0)]]
    ),
    trials=st.one_of(st.integers(-1, 200), junk_no_int),
    confidence=probability,
    epsilon=st.one_of(st.floats(0.0, 50.0), junk, st.sampled_from([math.inf, "1"])),
    fn=st.sampled_from([seeded_laplace, returns_none, None, "laplace"]),
)
def test_assert_dp_validates_its_arguments(neighbours, trials, confidence, epsilon, fn):
    with no_hang():
        try:
            r = assert_dp(
                fn, epsilon, neighbours=neighbours, trials=trials,
                confidence=confidence, random_state=0,
            )  # fmt: skip
        except PrivetError as exc:
            assert len(str(exc)) >= 25
            return
        except AssertionError as exc:  # a refuted claim: the evidence is in the message
            assert "is not (" in str(exc) and "trials per input" in str(exc)
            return
    assert r.verdict == "PASS" and r.n_trials == trials
    assert fn is seeded_laplace and real_in(epsilon, -1e-300), (fn, epsilon)  # issue 37


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n_shadows=st.integers(2, 3),
    n_targets=st.integers(1, 2),
    in_fraction=st.floats(0.3, 0.7),
    population_fraction=st.floats(0.1, 0.4),
    attacks=st.sampled_from([("loss",), ("lira_offline", "rmia"), ("shokri", "lira_online")]),
    random_state=st.integers(0, 2**32),
)
def test_membership_inference_tiny_valid_runs_are_complete(
    car, tiny_frame, n_shadows, n_targets, in_fraction, population_fraction, attacks, random_state
):
    """The valid corner of the fuzz above: every attack scores every (target, candidate)."""
    make = functools.partial(ID3Classifier, max_depth=2, schema=car.schema)
    res = privet_error_or(
        lambda: membership_inference(
            tiny_frame, make, target=car.schema.target_name, confidence=0.9,
            n_shadows=n_shadows, n_targets=n_targets, in_fraction=in_fraction,
            population_fraction=population_fraction, attacks=attacks, n_jobs=1,
            random_state=random_state,
        )
    )  # fmt: skip
    assert res is not None, "valid parameters were refused"
    assert res.names == list(attacks) and res.n_shadows == n_shadows
    for a in res.attacks:
        assert len(a.scores) == n_targets * res.n_candidates
        assert np.isfinite(a.scores).all()


def _dp(**kw: Any) -> Any:
    args = {"epsilon": 1.0, "trials": 100, "confidence": 0.9, "random_state": 0, **kw}
    return dp_test(seeded_laplace, 0.0, 1.0, **args)


def _assert(fn: Any, epsilon: Any) -> Any:
    return assert_dp(fn, epsilon, neighbours=(0.0, 1.0), trials=100, confidence=0.9, random_state=0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: _assert(seeded_laplace, math.inf),
        lambda: _assert(seeded_laplace, "1"),
        lambda: _assert(returns_none, 1.0),
        lambda: _assert(lambda x: None, 1.0),
        lambda: _dp(power=2),
        lambda: _dp(classifier="foo"),
        lambda: _dp(max_discrete_values=-1),
        lambda: _dp(selection_penalty=math.nan),
        lambda: _dp(max_thresholds=0),
    ],
    ids=[
        "assert_dp-epsilon-inf",
        "assert_dp-epsilon-text",
        "assert_dp-returns-none",
        "assert_dp-returns-none-unvectorised",
        "dp_test-power-2",
        "dp_test-classifier-foo",
        "dp_test-max_discrete_values-negative",
        "dp_test-selection_penalty-nan",
        "dp_test-max_thresholds-0",
    ],
)
def test_the_issue_37_audit_arguments_are_refused_with_a_privet_error(call):
    """Each was accepted (a test that could not fail) or a raw ValueError."""
    with no_hang(), pytest.raises(PrivetError):
        call()


def test_membership_inference_refuses_a_factory_of_no_estimator(car, tiny_frame):
    """Issue 37: membership_inference(..., lambda: None, ...) was a raw AttributeError."""
    with pytest.raises(PrivetError, match="predict_proba"):
        membership_inference(
            tiny_frame, lambda: None, target=car.schema.target_name, confidence=0.9
        )
