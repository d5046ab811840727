"""What the three DP ID3 learners of seed 000 share, checked on each.

DP ID3 (Alg. 6), CDP+PMPC-ID3 (Alg. 7-10) and the sound ODP+FMPC-ID3 (Alg. 1-4,
``split="exponential"``) pick every split by the exponential mechanism on the
max-operator scores, and at a large epsilon they come close to non-private ID3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privet.learners import (
    DPID3Classifier,
    ID3Classifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
)
from privet.learners._trees.scores import contingency, max_operator
from privet.ledger import Guarantee, Ledger

#: (learner, parameters) of a depth-1 tree whose root split costs 0.2: epsilon / (h + 1)
#: for the ID3 learners, split_fraction * epsilon / h for the oblivious one; trials; the
#: exponent's factor: 1/2 for Alg. 6's exp(eps' q / 2), 1 for the monotone form that
#: the three learners use under add/remove (em_form="auto", the default).
ROOT_SPLIT_AT_0_2 = [
    pytest.param(DPID3Classifier, {}, 600, 1.0, id="dp_id3"),
    pytest.param(DPID3Classifier, {"em_form": "paper"}, 600, 0.5, id="dp_id3-paper"),
    pytest.param(PartialMPCID3Classifier, {}, 400, 1.0, id="partial_mpc_id3"),
    pytest.param(
        PartialMPCID3Classifier, {"em_form": "paper"}, 400, 0.5, id="partial_mpc_id3-paper"
    ),
    pytest.param(
        ObliviousID3Classifier,
        {"split": "exponential", "split_fraction": 0.5},
        400,
        1.0,
        id="oblivious_id3",
    ),
    pytest.param(
        ObliviousID3Classifier,
        {"split": "exponential", "split_fraction": 0.5, "em_form": "paper"},
        400,
        0.5,
        id="oblivious_id3-paper",
    ),
]


@pytest.mark.parametrize("cls, params, trials, factor", ROOT_SPLIT_AT_0_2)
def test_root_split_follows_the_exponential_mechanism(toy, cls, params, trials, factor):
    """The root split follows P(a) ∝ exp(factor eps' q_a) (chi-square, alpha = 1e-6).

    Two attributes: 'good' predicts the class perfectly (q = n), 'noise' does not
    (q = n/2 + ...). With eps' = 0.2 small, both get picked often enough to test.
    """
    X, y, schema = toy
    codes, yc = schema.encode(X), schema.encode_target(pd.Series(y))
    q = np.array([max_operator(contingency(codes[:, a], yc, 2, 2)) for a in range(2)])
    p = np.exp(factor * 0.2 * (q - q.max()))
    p /= p.sum()
    picks = np.zeros(2)
    for _ in range(trials):
        m = cls(epsilon=0.4, max_depth=1, schema=schema, **params).fit(X, y)
        picks[m.tree_.feature[0]] += 1
    assert stats.chisquare(picks, trials * p).pvalue > 1e-6, (picks, trials * p)


#: (learner, parameters, fits, margin below non-private ID3's training accuracy on
#: Car at depth 3, 0.791). A single fit's accuracy varies: ties and near-ties between
#: attributes are broken by the noise, with a tail down to 0.70 when a poor first
#: split wins. Each margin sits far below the mean over the fits.
NEAR_ID3 = [
    # eps/(h+1) = 5 per level; 400 fits: mean 0.784, sd 0.039. The mean of 40 has sd
    # about 0.006: the threshold is about 7 sd below it (false failure below 1e-10).
    pytest.param(DPID3Classifier, {"epsilon": 20.0}, 40, 0.05, id="dp_id3"),
    # 60 fits: 0.70-0.79. The mean of 10 has sd about 0.008: a margin of 0.07 fails
    # by chance with probability below 1e-6.
    pytest.param(PartialMPCID3Classifier, {"epsilon": 40.0}, 10, 0.07, id="partial_mpc_id3"),
    # The paper's exact argmax splits (non-private: on an unbounded ledger) and the
    # sound exponential ones. 400 fits (exponential): mean 0.785, sd 0.038. The mean
    # of 40 has sd about 0.006: the threshold, 0.741, is about 7 sd below it. Splits
    # that ignore the scores do fail it: with split_fraction = 1e-6 (uniform splits,
    # near-exact leaves) the mean over 200 fits is 0.727.
    *(
        pytest.param(
            ObliviousID3Classifier,
            {"epsilon": 40.0, "split": split},
            40,
            0.05,
            id=f"oblivious_id3-{split}",
        )
        for split in ("exact", "exponential")
    ),
]


@pytest.mark.parametrize("cls, params, fits, margin", NEAR_ID3)
def test_accuracy_near_non_private_id3_at_large_epsilon(car, cls, params, fits, margin):
    """At a large epsilon the DP tree is about as accurate as non-private ID3 (max score)."""
    base = ID3Classifier(max_depth=3, schema=car.schema).fit(car.X, car.y)
    acc_base = np.mean(base.predict(car.X) == car.y.to_numpy())
    led = Ledger(budget=Guarantee.unbounded()) if params.get("split") == "exact" else None
    accs = [
        np.mean(
            cls(max_depth=3, schema=car.schema, ledger=led, **params)
            .fit(car.X, car.y)
            .predict(car.X)
            == car.y.to_numpy()
        )
        for _ in range(fits)
    ]
    assert np.mean(accs) > acc_base - margin
