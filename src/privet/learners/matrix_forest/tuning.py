"""Privacy-free hyperparameter tuning (seed 002, "Setting Hyperparameters").

The utility of Alg. 3 is measured by Err_{eps/q}(W^(i), A^(i)) = 2 q^2 / eps^2
||A||_1^2 ||W A^+||_F^2 (Def. 3; Thm. 4 and 6), which depends on the schema,
the tree shapes (tau, h, d_bar, q) and, for batch prediction, the public
queries, but not on the training data. Computing it, and choosing tau, h and
d_bar from a grid by it, therefore costs no privacy budget and needs no ledger.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.reference import leaf_index
from privet.learners.matrix_forest.trees import build_forest

__all__ = ["expected_error", "select_hyperparameters"]


def expected_error(
    schema: Schema,
    *,
    epsilon: float,
    n_trees: int,
    max_depth: int,
    n_ensembles: int = 1,
    max_features: int | None = None,
    mode: str = "batch_training",
    strategy: str = "optimized",
    queries: Any = None,
    random_state: Any = None,
) -> dict[str, float]:
    """Err_{eps/q}(W^(i), A^(i)) summed over the ensembles, without data or budget.

    ``mode``: "batch_training" (W = T) or "batch_prediction" (W = Q T^T T, needs
    ``queries`` as feature codes, an (b, d) int array in schema order).
    Returns ``{"error": total MSE over all rows and one class column,
    "per_row": error / rows, "rows": rows}``.
    """
    if not isinstance(schema, Schema):
        raise InvalidParameterError(
            "expected_error needs a privet.data.Schema with public domains."
        )
    eps = float(epsilon)
    if not eps > 0:
        raise InvalidParameterError(f"epsilon must be > 0, got {epsilon!r}.")
    d_bar = schema.n_features if max_features is None else int(max_features)
    rng = np.random.default_rng(random_state)
    forest = build_forest(
        schema.domain_sizes,
        n_trees=int(n_trees),
        max_depth=int(max_depth),
        n_ensembles=int(n_ensembles),
        max_features=d_bar,
        rng=rng,
    )
    seed = int(rng.integers(2**31 - 1))
    q = len(forest)
    total, rows = 0.0, 0
    for i, ens in enumerate(forest):
        if mode == "batch_training":
            _a, errors, _, chosen = mx.choose_strategy(
                ens.paths, strategy, kind="training", seed=seed + i
            )
            sq, r = errors[chosen], ens.n_leaves
        elif mode == "batch_prediction":
            if queries is None:
                raise InvalidParameterError("mode='batch_prediction' needs the public queries.")
            codes = np.asarray(queries, dtype=np.int64)
            w = mx.prediction_workload(ens, leaf_index(ens, codes[:, list(ens.features)]))
            _a, errors, _, chosen = mx.choose_strategy(
                w, strategy, kind="prediction", seed=seed + i
            )
            sq, r = errors[chosen], w.shape[0]
        else:
            raise InvalidParameterError(
                f"expected_error: mode must be 'batch_training' or 'batch_prediction', got {mode!r}."
            )
        total += 2.0 * q**2 / eps**2 * sq
        rows += r
    return {"error": total, "per_row": total / rows, "rows": float(rows)}


def select_hyperparameters(
    schema: Schema,
    grid: Mapping[str, Iterable[Any]],
    *,
    epsilon: float,
    n_records: int | None = None,
    mode: str = "batch_training",
    queries: Any = None,
    random_state: Any = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Pick n_trees, max_depth, max_features (and n_ensembles) from ``grid`` by Err alone.

    The score is the expected squared error of one noisy leaf count (batch
    training) or vote (batch prediction). With ``n_records`` (a public or
    assumed size, not read from data) it is divided by the squared mean count
    of a row if the records were spread evenly, n_records * tau / rows, so
    that deeper trees (smaller counts) are not favoured for their smaller
    noise alone. Returns the best setting and every setting with its score.
    """
    keys = [k for k in ("n_trees", "max_depth", "max_features", "n_ensembles") if k in grid]
    unknown = set(grid) - set(keys)
    if unknown:
        raise InvalidParameterError(f"select_hyperparameters: unknown grid keys {sorted(unknown)}.")
    results = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        params = dict(zip(keys, combo, strict=True))
        params.setdefault("n_trees", 128)
        params.setdefault("max_depth", 4)
        err = expected_error(
            schema, epsilon=epsilon, mode=mode, queries=queries, random_state=random_state, **params
        )
        score = err["per_row"]
        if n_records is not None:
            mean_count = n_records * params["n_trees"] / err["rows"]
            score = score / max(mean_count, 1e-12) ** 2
        results.append({**params, **err, "score": score})
    best = min(results, key=lambda r: r["score"])
    return {k: best[k] for k in keys}, results
