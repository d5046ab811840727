"""The release recorder and the output laws: what a white-box audit sees of every release."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privet.ledger import Guarantee, Ledger
from privet.mechanisms import (
    make_exponential,
    make_gamma_dlpa,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    make_report_noisy_max,
    recorder,
)
from privet.mechanisms.laws import AdditiveLaw, NegativeBinomialDifferenceLaw, SelectionLaw


@pytest.fixture
def scope():
    return Ledger(budget=Guarantee.unbounded()).root


def test_outside_an_audit_nothing_is_recorded(scope):
    assert recorder.active() is None
    out = make_laplace(1.0)([1.0, 2.0], scope=scope)
    assert np.shape(out) == (2,)


def test_every_release_path_is_recorded_with_its_law_value_and_output(scope):
    hist = make_noisy_histogram(1.0)
    em = make_exponential(1.0)
    with recorder.recording() as rec:
        a = make_laplace(0.5)([1.0, 2.0], scope=scope)
        b = hist([[3, 4], [5, 6]], scope=scope)
        c = em.release_disjoint([[1.0, 2.0, 3.0], [4.0, 5.0]], scope=scope)
        d = hist.release_many([[1, 2], [3, 4]], [scope, scope])
        e = hist.argmax([[3, 9]], scope=scope)
        f = make_gaussian(sigma=2.0)([0.0], scope=scope)
        g = make_gamma_dlpa(1.0, parties=3, colluders=0, discrete=True)(
            np.ones((3, 2), dtype=np.int64), scope=scope
        )
    laws = [type(r.law).__name__ for r in rec.releases]
    assert laws == [
        "AdditiveLaw",  # laplace
        "AdditiveLaw",  # histogram
        "SelectionLaw",  # two disjoint selections
        "SelectionLaw",
        "AdditiveLaw",  # release_many: one release per input
        "AdditiveLaw",
        "AdditiveLaw",  # the noisy argmax: its noisy counts
        "AdditiveLaw",  # gaussian
        "AdditiveLaw",  # distributed Laplace: the parties' sum
    ]
    np.testing.assert_array_equal(rec.releases[0].output, a)
    np.testing.assert_array_equal(rec.releases[1].output, b)
    assert [int(r.output) for r in rec.releases[2:4]] == list(c)
    np.testing.assert_array_equal(rec.releases[4].output, d[0])
    counts = np.asarray(rec.releases[6].output).ravel()
    assert int(e[0]) in np.flatnonzero(counts == counts.max())  # ties broken by a coin
    np.testing.assert_array_equal(rec.releases[7].output, f)
    np.testing.assert_array_equal(rec.releases[8].output, g)
    assert rec.releases[8].law.parties == 3 and rec.releases[8].law.output_shape((3, 2)) == (2,)
    assert "laplace" in rec.releases[0].label


def test_a_replay_forces_the_recorded_outputs_and_keeps_the_new_values(scope):
    mech = make_noisy_histogram(1.0)
    with recorder.recording() as run:
        out = mech([5, 7], scope=scope)
        coin = recorder.privacy_rng().random()
    with recorder.replaying(run) as rep:
        again = mech([5, 8], scope=scope)  # another dataset: the same output comes back
        coin_again = recorder.privacy_rng().random()
    np.testing.assert_array_equal(again, out)
    assert coin_again == coin
    np.testing.assert_array_equal(rep.releases[0].value, [5, 8])
    assert rep.diverged == ""


def test_a_replay_that_leaves_the_recorded_run_says_why(scope):
    with recorder.recording() as run:
        make_noisy_histogram(1.0)([5, 7], scope=scope)
    with recorder.replaying(run) as rep:
        make_noisy_histogram(1.0)([5, 7, 9], scope=scope)  # another shape
    assert "output shape" in rep.diverged
    with recorder.replaying(run) as rep:
        make_noisy_histogram(1.0)([5, 7], scope=scope)
        make_noisy_histogram(1.0)([5, 7], scope=scope)  # one release too many
    assert "not made by the recorded run" in rep.diverged
    with recorder.replaying(run) as rep:
        pass  # one release too few
    assert "0 releases against 1" in rep.diverged


def test_poisson_coins_are_replayed_and_the_last_row_can_be_forced():
    with recorder.recording() as run:
        mask = recorder.poisson_sample(1000, 0.3)
    assert 200 < mask.sum() < 400 and run.sample_rates == [0.3]
    with recorder.replaying(run, force_last=True):
        again = recorder.poisson_sample(1001, 0.3)  # one row more: the canary
    np.testing.assert_array_equal(again[:1000], mask)
    assert again[-1]
    with recorder.replaying(run, force_last={0: False}):
        assert not recorder.poisson_sample(1000, 0.3)[-1]


def test_laplace_and_gaussian_laws():
    lap = AdditiveLaw("laplace", 2.0)
    assert lap.log_likelihood([3.0, 1.0], [1.0, 1.0]) == pytest.approx(-1.0)
    assert lap.max_loss([0.0, 0.0], [1.0, -1.0]) == pytest.approx(1.0)  # L1 2 at scale 2
    # the likelihood ratio of a shift s is capped at s/b: check against the density
    x = np.linspace(-5, 5, 101)
    ratio = stats.laplace.logpdf(x, 1, 2) - stats.laplace.logpdf(x, 0, 2)
    mine = [lap.log_likelihood(v, 1.0) - lap.log_likelihood(v, 0.0) for v in x]
    np.testing.assert_allclose(mine, ratio, atol=1e-12)
    gauss = AdditiveLaw("gaussian", 3.0)
    assert not gauss.pure and math.isinf(gauss.max_loss([0.0], [1.0]))
    assert gauss.shift([0.0, 0.0], [3.0, 4.0]) == pytest.approx(5.0 / 3.0)
    mine = gauss.log_likelihood([2.0], [1.0]) - gauss.log_likelihood([2.0], [0.0])
    assert mine == pytest.approx(stats.norm.logpdf(2, 1, 3) - stats.norm.logpdf(2, 0, 3))


def test_selection_laws_match_the_mechanisms_probabilities():
    u = np.array([1.0, 3.0, 2.0])
    em = make_exponential(1.0)
    law = em.law()
    assert isinstance(law, SelectionLaw)
    np.testing.assert_allclose(np.exp(law.log_probabilities(u)), em.probabilities(u))
    rnm = make_report_noisy_max(1.0, noise="discrete_laplace")
    np.testing.assert_allclose(np.exp(rnm.law().log_probabilities(u)), rnm.probabilities(u))
    # one candidate raised by 1 (a monotone score): the loss is at most epsilon / 2
    loss = law.max_loss(u, u + np.array([0.0, 0.0, 1.0]))
    assert 0 < loss <= 0.5 + 1e-12


def test_pooled_polya_noise_is_at_least_as_private_as_one_discrete_laplace():
    for parties, scale in ((3, 2.0), (3, 14.0), (5, 1.0)):
        law = NegativeBinomialDifferenceLaw.pooled(parties, scale)
        loss = law.max_loss(np.zeros(4), np.array([1.0, 0.0, 0.0, 0.0]))
        assert 0.9 / scale < loss <= 1.0 / scale + 1e-9
        # log-pmf symmetric and decreasing away from 0
        z = np.arange(-5, 6)
        lp = law._log_pmf(z)
        np.testing.assert_allclose(lp, lp[::-1], atol=1e-12)
        assert np.all(np.diff(lp[5:]) < 0)
