"""Mechanism.release_many: one batch charge over several scopes, then the draws.

The batch must charge exactly what one call per scope charges, refuse a bad input
before anything is charged, and draw each release from the mechanism's own
distribution (the histogram draws all cells in one OpenDP call).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privet.errors import BudgetExceededError, InvalidParameterError
from privet.ledger import Guarantee, Ledger
from privet.mechanisms import make_exponential, make_noisy_histogram, make_report_noisy_max


def test_histogram_batch_charges_each_scope_once_and_keeps_shapes():
    led = Ledger(budget=Guarantee(1.0))
    parts = led.root.partition(["a", "b", "c"])
    hist = make_noisy_histogram(0.5)
    counts = [np.array([3, 4]), np.array([[1, 2], [3, 4]]), np.array([7])]
    out = hist.release_many(counts, parts, caller="test", step="leaf")
    assert [o.shape for o in out] == [(2,), (2, 2), (1,)]
    assert all(o.dtype.kind == "i" for o in out)
    assert [c.path for c in led.charges] == [p.path for p in parts]
    assert led.spent() == Guarantee(0.5)  # disjoint parts: parallel composition


def test_a_bad_input_in_the_batch_charges_nothing():
    led = Ledger(budget=Guarantee(1.0))
    a, b = led.root.partition(["a", "b"])
    hist = make_noisy_histogram(0.5)
    with pytest.raises(InvalidParameterError, match="integer"):
        hist.release_many([np.array([1, 2]), np.array([0.5, 1.0])], [a, b])
    with pytest.raises(InvalidParameterError, match="one scope per input"):
        hist.release_many([np.array([1, 2])], [a, b])
    assert led.charges == []


def test_a_batch_over_budget_charges_nothing_and_draws_nothing():
    led = Ledger(budget=Guarantee(1.0))
    sel = make_exponential(0.75)
    with pytest.raises(BudgetExceededError):
        sel.release_many([np.zeros(3), np.zeros(3)], [led.root, led.root])
    assert led.charges == []


def test_batched_histogram_noise_has_the_discrete_laplace_variance():
    # 200 arrays x 200 cells = 40,000 draws of discrete Laplace(scale 2): variance
    # 2q/(1-q)^2 with q = e^(-1/2). The sample variance's relative standard error is
    # about sqrt((kurtosis - 1) / n) = sqrt(5 / 40000) ~ 1.1%, so a 10% band is more
    # than 8 standard errors (false failure probability < 1e-12).
    led = Ledger(budget=Guarantee.unbounded())
    scopes = led.root.partition(200)
    hist = make_noisy_histogram(scale=2.0)
    out = np.concatenate(hist.release_many([np.zeros(200, dtype=int)] * 200, scopes))
    q = math.exp(-0.5)
    var = 2 * q / (1 - q) ** 2
    assert abs(out.mean()) < 5 * math.sqrt(var / out.size)
    assert out.var() == pytest.approx(var, rel=0.10)
    # the arrays are independent draws, not copies of one
    assert len({tuple(o) for o in np.split(out, 200)}) == 200


def test_batched_discrete_noisy_max_selects_by_its_distribution():
    # utilities [0, 2]: P(pick 1) from the exact formula; 4,000 selections at 5 sigma
    led = Ledger(budget=Guarantee.unbounded())
    scopes = led.root.partition(4000)
    sel = make_report_noisy_max(1.0, noise="discrete_laplace")
    util = np.array([0.0, 2.0])
    picks = np.array(sel.release_many([util] * 4000, scopes))
    p = sel.probabilities(util)[1]
    sd = math.sqrt(p * (1 - p) / picks.size)
    assert abs(picks.mean() - p) < 5 * sd


def test_release_disjoint_is_one_charge_for_ragged_selections_under_add_remove():
    led = Ledger(budget=Guarantee(1.0))
    sel = make_exponential(0.5)
    picks = sel.release_disjoint(
        [np.array([0.0, 50.0]), np.array([9.0, 0.0, 0.0]), np.array([3.0])], scope=led.root
    )
    assert len(led.charges) == 1 and led.spent() == Guarantee(0.5)
    assert picks[2] == 0 and all(isinstance(p, int) for p in picks)
    # a bad vector anywhere in the batch: refused before the charge
    with pytest.raises(InvalidParameterError):
        sel.release_disjoint([np.array([1.0]), np.array([])], scope=led.root)
    assert len(led.charges) == 1


def test_release_disjoint_is_refused_under_replace_one():
    led = Ledger(budget=Guarantee(1.0), relation="replace_one")
    sel = make_exponential(0.5, relation="replace_one")
    with pytest.raises(InvalidParameterError, match="replace-one"):
        sel.release_disjoint([np.zeros(2), np.zeros(2)], scope=led.root)
    assert led.charges == []


def test_release_disjoint_draws_each_selection_from_the_exponential_mechanism():
    # utilities [0, 4] at epsilon 1: P(1) = e^2 / (1 + e^2); 3,000 selections, 5 sigma
    led = Ledger(budget=Guarantee.unbounded())
    sel = make_exponential(1.0)
    picks = np.array(sel.release_disjoint([np.array([0.0, 4.0])] * 3000, scope=led.root))
    p = math.exp(2) / (1 + math.exp(2))
    assert abs(picks.mean() - p) < 5 * math.sqrt(p * (1 - p) / picks.size)
