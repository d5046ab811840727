"""The released noise has the covariance its strategy implies, and the release looks eps-DP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privet.data import Categorical, Schema
from privet.learners import MatrixRandomForestClassifier
from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.reference import leaf_counts, leaf_index
from privet.learners.matrix_forest.trees import build_forest
from privet.ledger import Guarantee, Ledger
from privet.mechanisms.matrix import MatrixMechanism, expected_error
from privet.testing import assert_dp

ALPHA = 1e-4  # overall false-alarm rate of each statistical test below


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["workload", "optimized", "identity"])
def test_noise_covariance_matches_the_strategy(strategy: str) -> None:
    """Cov of T A^+ z, z ~ Lap(b)^m iid, is 2 b^2 (T A^+)(T A^+)^T (Alg. 1; Thm. 4 for its trace).

    Every entry of the empirical covariance is compared with the theory by a
    z-test; Bonferroni over the entries keeps the overall false alarm at ALPHA.
    """
    rng = np.random.default_rng(5)
    (ens,) = build_forest((3, 2, 2), n_trees=3, max_depth=1, n_ensembles=1, max_features=3, rng=rng)
    x = np.column_stack([rng.integers(s, size=30) for s in ens.domain])
    y = rng.integers(2, size=30)
    d = mx.data_matrix(ens, x, y, 2)
    exact = leaf_counts(ens, leaf_index(ens, x), y, 2)
    a, *_ = mx.choose_strategy(ens.paths, strategy, kind="training", seed=1)
    mech = MatrixMechanism(workload=ens.paths, strategy=a, epsilon=1.0)
    led = Ledger(budget=Guarantee.unbounded())
    draws = 3000
    noise = np.concatenate(
        [(mech(d, scope=led.root) - exact).T for _ in range(draws)]
    )  # (2 * draws, o): the two class columns are independent draws
    t = ens.paths.to_sparse().toarray()
    ta = t @ a.solve(np.eye(a.shape[0]))
    theory = 2 * mech.scale**2 * ta @ ta.T
    o = theory.shape[0]
    iu = np.triu_indices(o)
    prods = noise[:, iu[0]] * noise[:, iu[1]]
    z = (prods.mean(axis=0) - theory[iu]) / (prods.std(axis=0, ddof=1) / np.sqrt(len(noise)))
    bound = stats.norm.ppf(1 - ALPHA / (2 * (len(iu[0]) + 1)))
    assert np.abs(z).max() < bound, (np.abs(z).max(), bound)
    # the trace is Err_eps(T, A) of Def. 3 (per class column)
    sq = (noise**2).sum(axis=1)
    err = expected_error(ens.paths, a, 1.0) * (1 + 2**-30) ** 2
    z_tr = (sq.mean() - err) / (sq.std(ddof=1) / np.sqrt(len(sq)))
    assert abs(z_tr) < bound
    assert np.isclose(np.trace(theory), err)


SCHEMA = Schema(
    [Categorical("a", ["0", "1"]), Categorical("b", ["0", "1"])], Categorical("y", ["n", "p"])
)
BASE = pd.DataFrame({"a": ["0", "0", "1", "1", "0"], "b": ["0", "1", "0", "1", "1"]})
LABELS = ["n", "p", "p", "n", "n"]


def _released(data, size: int, mode: str) -> np.ndarray:
    X, y = data
    out = []
    for _ in range(size):
        m = MatrixRandomForestClassifier(
            mode=mode, epsilon=1.0, n_trees=2, max_depth=1, schema=SCHEMA, random_state=3
        ).fit(X, y)
        if mode == "batch_training":
            out.append(np.concatenate([v.ravel() for v in m.leaf_values_]))
        else:
            out.append(m.predict_proba(BASE.iloc[:2])[:, 0])
    return np.asarray(out)


def train_release(data, size: int = 1) -> np.ndarray:
    return _released(data, size, "batch_training")


def predict_release(data, size: int = 1) -> np.ndarray:
    return _released(data, size, "batch_prediction")


def subsample_release(data, size: int = 1) -> np.ndarray:
    return _released(data, size, "subsample_aggregate")


@pytest.mark.slow
@pytest.mark.parametrize("fn", [train_release, predict_release, subsample_release])
def test_dp_test_finds_no_violation_on_a_small_schema(fn) -> None:
    extra = pd.concat([BASE, pd.DataFrame({"a": ["0"], "b": ["0"]})], ignore_index=True)
    assert_dp(
        fn,
        1.0,
        neighbours=((BASE, LABELS), (extra, [*LABELS, "n"])),  # add one record
        trials=2500,
        confidence=1 - ALPHA,
        statistic=lambda out: np.asarray(out)[:, 0],
        random_state=0,
    )
