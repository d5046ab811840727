"""Empirical DP tests: honesty (false FAILs at most 1 - confidence) and power.

The samplers here are numpy's, for speed: tests may use them; privet's own code
never draws Laplace noise with numpy (OpenDP does it, see the benchmark).
"""

from __future__ import annotations

import json
import math
import threading

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from scipy import stats
from threadpoolctl import threadpool_limits

from privet.audits import (
    DPTestResult,
    canary_pair,
    dp_test,
    estimate_epsilon_lower_bound,
    search_neighbouring_pairs,
)
from privet.errors import InvalidParameterError

TEST_LEVEL = 1e-4  # chance that a statistical assertion fails by bad luck


def at_most_rate(count: int, reps: int, rate: float) -> bool:
    """Is ``count`` out of ``reps`` compatible with a true rate <= ``rate``?"""
    return stats.binomtest(count, reps, rate, alternative="greater").pvalue > TEST_LEVEL


def laplace_pair(rng, scale, n, shift=1.0):
    return rng.laplace(0.0, scale, n), rng.laplace(shift, scale, n)


# ----------------------------------------------------------------- honesty


@pytest.mark.parametrize("events", ["threshold", "set"])
def test_false_fail_rate_is_at_most_alpha(events):
    """A correct mechanism FAILs in at most 1 - confidence of independent tests."""
    rng = np.random.default_rng(11)
    eps, conf, reps, n = 1.0, 0.9, 150, 4000
    fails = 0
    for i in range(reps):
        if events == "threshold":
            x0, x1 = laplace_pair(rng, 1 / eps, n)
        else:  # randomised response on a bit: exactly eps-DP
            keep = math.exp(eps) / (1 + math.exp(eps))
            x0, x1 = rng.random(n) >= keep, rng.random(n) < keep
        r = estimate_epsilon_lower_bound(
            x0, x1, confidence=conf, claimed_epsilon=eps, events=events, random_state=i
        )
        fails += r.verdict == "FAIL"
    assert at_most_rate(fails, reps, 1 - conf)


# -------------------------------------------------------------------- power


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_correct_laplace_passes_and_bound_is_tight(eps):
    rng = np.random.default_rng(int(eps * 10))
    n, conf = 200_000, 0.95
    x0, x1 = laplace_pair(rng, 1 / eps, n)
    r = estimate_epsilon_lower_bound(x0, x1, confidence=conf, claimed_epsilon=eps, random_state=0)
    assert r.verdict == "PASS"
    # The best event has p ~ 1/2 on the likely side; the bound should be within a
    # few standard errors of eps. sd of the log-ratio with n/2 estimation trials:
    p_hi, p_lo = 0.5, 0.5 * math.exp(-eps)
    sd = math.sqrt((1 - p_hi) / (p_hi * n / 2) + (1 - p_lo) / (p_lo * n / 2))
    assert r.epsilon_lower > eps - 6 * sd
    assert r.event_family == "threshold"
    assert r.n_trials == n and r.n_selection + r.n_estimation == n


def test_half_scale_laplace_fails():
    """Laplace with half the scale its claim needs is (2 eps)-DP: the test refutes eps."""
    rng = np.random.default_rng(5)
    eps = 1.0
    x0, x1 = laplace_pair(rng, 0.5 / eps, 20_000)
    r = estimate_epsilon_lower_bound(x0, x1, confidence=0.95, claimed_epsilon=eps, random_state=0)
    assert r.verdict == "FAIL"
    assert r.epsilon_lower > eps


@pytest.mark.parametrize(("classifier", "n"), [("logistic", 100_000), ("boosting", 30_000)])
def test_classifier_event_finds_a_violation_in_two_dimensions(classifier, n):
    """Two Laplace releases of the same count, each at scale 1, claimed 1-DP together.

    The truth is 2-DP (basic composition is tight here); no single coordinate
    shows more than 1, the classifier's posterior does.
    """
    rng = np.random.default_rng(8)
    x0 = rng.laplace(0.0, 1.0, (n, 2))
    x1 = rng.laplace(1.0, 1.0, (n, 2))
    with threadpool_limits(1):  # boosting's OpenMP threads crawl on a loaded machine
        r = estimate_epsilon_lower_bound(
            x0, x1, confidence=0.95, claimed_epsilon=1.0, classifier=classifier, random_state=0
        )
    assert r.event_family == "classifier" and "posterior" in r.event
    assert r.verdict == "FAIL" and r.epsilon_lower > 1.0


def test_discrete_labels_use_set_events():
    """Randomised response over 3 labels with eps = ln 4, tested against a claim of 0.5."""
    rng = np.random.default_rng(2)
    labels = np.array(["a", "b", "c"])
    eps = math.log(4)

    def rr(truth, n):
        keep = rng.random(n) < math.exp(eps) / (math.exp(eps) + 2)
        other = rng.choice(np.setdiff1d(labels, [truth]), n)
        return np.where(keep, truth, other)

    x0, x1 = rr("a", 5000), rr("b", 5000)
    r = estimate_epsilon_lower_bound(x0, x1, confidence=0.95, claimed_epsilon=0.5, random_state=0)
    assert r.event_family == "set" and r.verdict == "FAIL"
    assert "output in" in r.event
    ok = estimate_epsilon_lower_bound(x0, x1, confidence=0.95, claimed_epsilon=eps, random_state=1)
    assert ok.verdict == "PASS"


def test_vector_of_labels_rows_are_events():
    rng = np.random.default_rng(4)
    n = 6000
    # two predicted labels; the first leaks the secret bit with prob 0.6 vs 0.4
    x0 = np.column_stack([rng.random(n) < 0.4, rng.integers(0, 2, n)]).astype(np.int64)
    x1 = np.column_stack([rng.random(n) < 0.6, rng.integers(0, 2, n)]).astype(np.int64)
    r = estimate_epsilon_lower_bound(x0, x1, confidence=0.95, events="set", random_state=0)
    assert r.event_family == "set"
    assert 0 < r.epsilon_lower < math.log(1.5)
    event = r.selected_event
    assert event is not None and event.contains(x0[:10]).shape == (10,)


def test_delta_absorbs_a_rare_catastrophic_leak():
    """Reveal the input with probability 0.05, else a fair coin: (0, 0.05)-DP exactly."""
    rng = np.random.default_rng(6)
    n, leak = 20_000, 0.05

    def release(secret):
        out = rng.integers(0, 2, n)
        return np.where(rng.random(n) < leak, 2 + secret, out)

    x0, x1 = release(0), release(1)
    strict = estimate_epsilon_lower_bound(
        x0, x1, confidence=0.95, claimed_epsilon=1.0, random_state=0
    )
    assert strict.verdict == "FAIL"  # an event like {3} (or {s >= 3}) is impossible on D
    lenient = estimate_epsilon_lower_bound(
        x0, x1, delta=leak, confidence=0.95, claimed_epsilon=0.0, random_state=0
    )
    assert lenient.verdict == "PASS" and lenient.claimed_delta == leak


# ---------------------------------------------------------------- dp_test


def vectorised_laplace(x, size, scale=0.5):
    return np.random.default_rng().laplace(x, scale, size)


def test_dp_test_vectorised_in_two_workers_fails_half_scale():
    r = dp_test(vectorised_laplace, 0.0, 1.0, epsilon=1.0, trials=20_000, confidence=0.95, n_jobs=2)
    assert isinstance(r, DPTestResult)
    assert r.verdict == "FAIL" and r.epsilon_lower > 1.0
    assert r.n_trials == 20_000 and r.wall_time is not None


def test_dp_test_follows_the_callers_joblib_backend():
    """n_jobs=None defers to joblib.parallel_config: how Dask or Ray clusters plug in."""
    calls = []

    def recording(x, size):
        calls.append(threading.get_ident())
        return vectorised_laplace(x, size, scale=1.0)

    with parallel_config(backend="threading", n_jobs=2):
        r = dp_test(recording, 0.0, 1.0, epsilon=2.0, trials=8000, confidence=0.9, batch_size=500)
    assert r.verdict == "PASS"
    assert len(calls) == 2 * 8000 // 500  # every batch ran, in the caller's backend


def test_dp_test_loops_and_applies_statistic_to_batches():
    rng = np.random.default_rng(9)

    def release(data):  # one output per call: a dict, reduced by the statistic
        return {"noisy_sum": float(np.sum(data)) + rng.laplace(0.0, 2.0)}

    def statistic(outputs):
        return np.array([o["noisy_sum"] for o in outputs])

    # Laplace(2) on a sum of sensitivity 1 is exactly 0.5-DP, tight on its tail events:
    # with an unseeded split a correct mechanism FAILs about 1 % of runs at 0.9 (measured:
    # 32 in 4000 at n = 3000). The noise is seeded above, so seeding the split makes the
    # verdict fixed; it is PASS, as a true claim's verdict should be.
    d0, d1 = canary_pair(np.zeros(5), 1.0)
    r = dp_test(
        release,
        d0,
        d1,
        epsilon=0.5,
        trials=4000,
        confidence=0.9,
        statistic=statistic,
        n_jobs=1,
        random_state=0,
    )
    assert r.verdict == "PASS" and r.n_trials == 4000


def test_target_epsilon_stops_estimation_early():
    """Laplace at scale 0.5 is 2-DP, and *tight* on its tail events (ratio e^2 exactly), so
    claiming 2.0 at 95% fails a correct mechanism now and then (it did once in CI). The
    claim here is 2.5: the test is about stopping early, and the verdict still checks that
    the bound stays below a true claim."""
    r = dp_test(
        vectorised_laplace,
        0.0,
        1.0,
        epsilon=2.5,
        trials=1_000_000,
        confidence=0.95,
        selection_fraction=0.02,
        target_epsilon=1.5,
    )
    assert r.n_estimation < 200_000
    assert r.verdict == "PASS"


def test_result_renders_and_serialises():
    rng = np.random.default_rng(1)
    x0, x1 = laplace_pair(rng, 1.0, 2000)
    r = estimate_epsilon_lower_bound(x0, x1, confidence=0.9, claimed_epsilon=1.0)
    text = str(r)
    assert r.verdict in text and "90% confidence" in text and "event" in text
    json.dumps(r.to_dict())
    assert set(r.counts) == {"D", "D'"}
    with pytest.raises(AttributeError):
        r.epsilon_lower = 0.0  # type: ignore[misc]
    from rich.console import Console

    console = Console(record=True, width=100)
    console.print(r)
    assert "epsilon lower bound" in console.export_text()
    none = estimate_epsilon_lower_bound(x0, x1, confidence=0.9)
    assert none.verdict == "NO CLAIM"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"confidence": 95}, "confidence"),
        ({"confidence": 0.95, "delta": -0.1}, "delta"),
        ({"confidence": 0.95, "selection_fraction": 1.0}, "selection_fraction"),
        ({"confidence": 0.95, "events": "magic"}, "events"),
        ({"confidence": 0.95, "events": "threshold", "two_d": True}, "scalar statistic"),
    ],
)
def test_estimator_rejects_bad_arguments(kwargs, match):
    x = np.zeros((100, 2)) if kwargs.pop("two_d", False) else np.zeros(100)
    with pytest.raises(InvalidParameterError, match=match):
        estimate_epsilon_lower_bound(x, x + 1, **kwargs)


def test_estimator_rejects_nan_and_mismatched_shapes():
    with pytest.raises(InvalidParameterError, match="NaN"):
        estimate_epsilon_lower_bound(np.array([0.0, np.nan] * 5), np.zeros(10), confidence=0.9)
    with pytest.raises(InvalidParameterError, match="different shapes"):
        estimate_epsilon_lower_bound(np.zeros((10, 2)), np.zeros((10, 3)), confidence=0.9)


def test_dp_test_rejects_bad_batches():
    def wrong(x, size):
        return np.zeros(size + 1)

    with pytest.raises(InvalidParameterError, match="outputs from one batch"):
        dp_test(wrong, 0, 1, epsilon=1.0, trials=100, confidence=0.9)
    with pytest.raises(InvalidParameterError, match="trials"):
        dp_test(vectorised_laplace, 0, 1, epsilon=1.0, trials=1, confidence=0.9)


# --------------------------------------------------------- neighbouring pairs


def test_canary_pair_for_common_containers():
    x = np.arange(6.0).reshape(3, 2)
    d0, d1 = canary_pair(x, [9.0, 9.0])
    assert d0 is x and d1.shape == (4, 2) and (d1[-1] == 9).all()
    _, d1 = canary_pair(x, [9.0, 9.0], relation="replace_one", index=1)
    assert d1.shape == (3, 2) and (d1[1] == 9).all() and (x[1] != 9).all()
    frame = pd.DataFrame({"a": [1, 2], "b": ["u", "v"]})
    _, f1 = canary_pair(frame, {"a": 7, "b": "w"})
    assert len(f1) == 3 and f1.iloc[-1]["b"] == "w"
    _, f2 = canary_pair(frame, {"a": 7, "b": "w"}, relation="replace_one", index=0)
    assert len(f2) == 2 and f2.iloc[0]["a"] == 7 and frame.iloc[0]["a"] == 1
    _, (xs, ys) = canary_pair((x, np.zeros(3)), ([5.0, 5.0], 1.0))
    assert xs.shape == (4, 2) and ys.tolist() == [0, 0, 0, 1]
    _, lst = canary_pair([1, 2], 3, index=0)
    assert lst == [3, 1, 2]


def test_canary_pair_errors():
    with pytest.raises(InvalidParameterError, match="index"):
        canary_pair(np.zeros((2, 2)), [1, 1], relation="replace_one")
    with pytest.raises(InvalidParameterError, match="shape"):
        canary_pair(np.zeros((2, 2)), [1, 1, 1])
    with pytest.raises(InvalidParameterError, match="relation"):
        canary_pair(np.zeros(2), 1.0, relation="swap")  # type: ignore[arg-type]


def clipped_sum(data, size):
    """Sum clipped to [-1, 1] per record plus Laplace(1): 1-DP... unless clipping is skipped."""
    total = float(np.sum(data))  # bug: no clipping, large canaries leak
    return total + np.random.default_rng().laplace(0.0, 1.0, size)


def test_pair_search_picks_the_leaky_canary_and_re_tests_afresh():
    base = np.zeros(10)
    pairs = [canary_pair(base, c) for c in (0.5, 1.0, 4.0)]
    res = search_neighbouring_pairs(
        clipped_sum, pairs, epsilon=1.0, pilot_trials=4000, trials=20_000, confidence=0.95
    )
    assert res.best_index == 2
    assert res.verdict == "FAIL" and res.epsilon_lower > 1.0
    assert res.result.n_trials == 20_000
    assert len(res.pilot_results) == 3 and "Pair search" in str(res)


def seeded_laplace(x, size, random_state=None):
    return np.random.default_rng(random_state).laplace(x, 0.5, size)


def test_seeded_dp_test_gives_the_same_numbers_on_every_backend():
    """Batches no longer depend on n_jobs and each gets its own seed (issue 11)."""
    kw = dict(epsilon=1.0, trials=20_000, confidence=0.95, random_state=3)
    one = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=1, **kw)
    two = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=2, **kw)  # loky processes
    threads = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=2, backend="threading", **kw)
    with parallel_config(backend="threading", n_jobs=3):
        configured = dp_test(seeded_laplace, 0.0, 1.0, **kw)
    for r in (two, threads, configured):
        assert (r.k_d0, r.k_d1, r.event) == (one.k_d0, one.k_d1, one.event)
        assert r.epsilon_lower == one.epsilon_lower
    other = dp_test(seeded_laplace, 0.0, 1.0, n_jobs=1, **{**kw, "random_state": 4})
    assert (other.k_d0, other.k_d1) != (one.k_d0, one.k_d1)  # the seed does reach the noise
    assert one.verdict == "FAIL"  # scale 0.5 is 2-DP, not 1-DP


def test_bad_backend_or_n_jobs_is_refused_before_any_run():
    calls = []

    def mech(x, size):
        calls.append(size)
        return np.zeros(size)

    for kw in ({"n_jobs": 0}, {"n_jobs": 1.5}, {"backend": "nope"}, {"backend": 3}):
        with pytest.raises(InvalidParameterError, match=r"n_jobs|backend"):
            dp_test(mech, 0.0, 1.0, epsilon=1.0, trials=100, confidence=0.9, **kw)
    assert calls == []
