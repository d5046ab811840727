"""Strategy choice and privacy-free tuning: data independent, never worse than the baselines."""

from __future__ import annotations

import numpy as np
import pytest

from privet.data import Categorical, Schema
from privet.errors import InvalidParameterError
from privet.learners.matrix_forest import expected_error, select_hyperparameters
from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.trees import build_forest

SCHEMA = Schema(
    [Categorical(f"f{i}", [str(v) for v in range(s)]) for i, s in enumerate((4, 3, 3, 2))],
    Categorical("y", ["a", "b"]),
)


@pytest.mark.parametrize("tau", [1, 2, 8])
def test_chosen_strategy_is_the_best_candidate(tau: int) -> None:
    (ens,) = build_forest(
        (4, 4, 3, 3),
        n_trees=tau,
        max_depth=3,
        n_ensembles=1,
        max_features=4,
        rng=np.random.default_rng(0),
    )
    _a, errors, _, chosen = mx.choose_strategy(ens.paths, "optimized", kind="training", seed=0)
    assert errors[chosen] == min(errors.values())
    assert errors[chosen] <= errors["identity"] and errors[chosen] <= errors["workload"]
    if tau == 1:  # one tree: A = T answers each leaf with sensitivity 1, far below the identity
        assert errors[chosen] < 0.5 * errors["identity"]


def test_expected_error_is_data_free_and_orders_the_strategies() -> None:
    kw = dict(epsilon=1.0, n_trees=16, max_depth=2, random_state=0)
    opt = expected_error(SCHEMA, strategy="optimized", **kw)
    ident = expected_error(SCHEMA, strategy="identity", **kw)
    assert opt["error"] <= ident["error"]
    assert opt == expected_error(SCHEMA, strategy="optimized", **kw)  # deterministic
    # Err_eps scales as 1 / eps^2 (Def. 3)
    half = expected_error(SCHEMA, strategy="optimized", **{**kw, "epsilon": 0.5})
    assert np.isclose(half["error"], 4 * opt["error"])
    with pytest.raises(InvalidParameterError):
        expected_error(SCHEMA, strategy="optimized", **{**kw, "epsilon": 0.0})


def test_select_hyperparameters_picks_from_the_grid_without_a_ledger() -> None:
    grid = {"n_trees": [4, 16], "max_depth": [1, 2, 3]}
    best, table = select_hyperparameters(SCHEMA, grid, epsilon=1.0, n_records=500, random_state=0)
    assert len(table) == 6
    assert best["n_trees"] in (4, 16) and best["max_depth"] in (1, 2, 3)
    assert min(r["score"] for r in table) == next(
        r["score"]
        for r in table
        if r["n_trees"] == best["n_trees"] and r["max_depth"] == best["max_depth"]
    )
    with pytest.raises(InvalidParameterError, match="unknown grid keys"):
        select_hyperparameters(SCHEMA, {"bogus": [1]}, epsilon=1.0)
