"""One-run auditing (Steinke, Nasr, Jagielski 2023, Theorem 3.1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from privet.audits import one_run_audit, one_run_epsilon_lower_bound, one_run_p_value
from privet.errors import InvalidParameterError

TEST_LEVEL = 1e-4


def at_most_rate(count: int, reps: int, rate: float) -> bool:
    return stats.binomtest(count, reps, rate, alternative="greater").pvalue > TEST_LEVEL


def test_pure_dp_p_value_is_the_binomial_tail():
    q = math.exp(1.0) / (1 + math.exp(1.0))
    assert one_run_p_value(70, 100, 500, epsilon=1.0, delta=0.0) == pytest.approx(
        stats.binom.sf(69, 100, q)
    )


def test_delta_term_matches_the_theorem_by_brute_force():
    v, r, m, eps, delta = 40, 60, 200, 0.5, 1e-4
    q = 1 / (1 + math.exp(-eps))

    def f(u):
        return 1.0 if u <= 0 else stats.binom.sf(u - 1, r, q)

    extra = max((f(v - i) - f(v)) / i for i in range(1, m + 1))
    expected = min(1.0, f(v) + 2 * m * delta * extra)
    assert one_run_p_value(v, r, m, epsilon=eps, delta=delta) == pytest.approx(expected)


def test_perfect_guesses_give_closed_form_bound():
    # f(r) = q^r < alpha  <=>  q > alpha^(1/r): eps = logit(alpha^(1/r)).
    r, alpha = 100, 0.05
    q = alpha ** (1 / r)
    expected = math.log(q / (1 - q))
    got = one_run_epsilon_lower_bound(r, r, 1000, 0.0, 1 - alpha)
    assert got == pytest.approx(expected, abs=1e-5) and got <= expected


def test_bound_is_monotone_in_correct_guesses_and_delta():
    r, m = 200, 1000
    bounds = [one_run_epsilon_lower_bound(v, r, m, 1e-5, 0.95) for v in range(90, 201, 10)]
    assert all(b2 >= b1 for b1, b2 in itertools.pairwise(bounds))
    assert bounds[0] == 0.0 and bounds[-1] > 3
    assert one_run_epsilon_lower_bound(170, r, m, 1e-3, 0.95) < one_run_epsilon_lower_bound(
        170, r, m, 0.0, 0.95
    )
    assert one_run_epsilon_lower_bound(170, r, m, 0.0, 0.99) < one_run_epsilon_lower_bound(
        170, r, m, 0.0, 0.9
    )


def test_chance_level_guessing_gives_zero():
    assert one_run_epsilon_lower_bound(100, 200, 1000, 0.0, 0.95) == 0.0
    rng = np.random.default_rng(0)
    reps, conf = 300, 0.95
    positive = 0
    for i in range(reps):
        res = one_run_audit(
            lambda mask: rng.random(mask.size),
            200,
            delta=0.0,
            confidence=conf,
            guesses=(50, 50),
            random_state=i,
        )
        positive += res.epsilon_lower > 0
    assert at_most_rate(positive, reps, 1 - conf)


def randomised_response_training(eps, rng):
    """Training whose scores are randomised response on each canary's inclusion: eps-DP."""
    keep = math.exp(eps) / (1 + math.exp(eps))

    def train(mask):
        truthful = rng.random(mask.size) < keep
        return np.where(truthful, mask, ~mask).astype(float) + 1e-3 * rng.random(mask.size)

    return train


def test_audit_of_an_eps_dp_algorithm_is_honest_and_informative():
    eps, conf, reps, m = 1.0, 0.9, 200, 400
    rng = np.random.default_rng(1)
    bounds = np.array(
        [
            one_run_audit(
                randomised_response_training(eps, rng),
                m,
                delta=0.0,
                confidence=conf,
                guesses=(m // 2, m // 2),
                claimed_epsilon=eps,
                random_state=i,
            ).epsilon_lower
            for i in range(reps)
        ]
    )
    assert at_most_rate(int(np.sum(bounds > eps)), reps, 1 - conf)
    # Power: with all m guessed, v ~ Binomial(m, q); the bound at the median count.
    q = 1 / (1 + math.exp(-eps))
    typical = one_run_epsilon_lower_bound(int(stats.binom.median(m, q)), m, m, 0.0, conf)
    assert np.median(bounds) == pytest.approx(typical, abs=0.15)


def test_several_guess_rules_are_bonferroni_corrected():
    rng = np.random.default_rng(3)
    res = one_run_audit(
        randomised_response_training(3.0, rng),
        500,
        delta=1e-5,
        confidence=0.95,
        guesses=[(10, 10), (50, 50), (250, 250)],
        claimed_epsilon=1.0,
        random_state=0,
    )
    single = one_run_epsilon_lower_bound(res.n_correct, res.n_guesses, 500, 1e-5, 1 - 0.05 / 3)
    assert res.epsilon_lower == pytest.approx(single)
    assert res.verdict == "FAIL" and res.n_trials == 1 and res.included.shape == (500,)
    assert "One-run audit FAIL" in str(res)
    assert "included" not in res.to_dict()


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((11, 10, 100, 0.0, 0.95), "n_correct <= n_guesses <= m"),
        ((5, 10, 100, 1.5, 0.95), "delta"),
        ((5, 10, 100, 0.0, 1.5), "confidence"),
        ((-1, 10, 100, 0.0, 0.95), "non-negative int"),
    ],
)
def test_bound_rejects_bad_arguments(args, match):
    with pytest.raises(InvalidParameterError, match=match):
        one_run_epsilon_lower_bound(*args)


def test_driver_rejects_bad_rules_and_scores():
    with pytest.raises(InvalidParameterError, match="k_positive"):
        one_run_audit(lambda m: np.zeros(10), 10, delta=0, confidence=0.9, guesses=(8, 8))
    with pytest.raises(InvalidParameterError, match="finite scores"):
        one_run_audit(lambda m: np.zeros(3), 10, delta=0, confidence=0.9, guesses=(2, 2))
