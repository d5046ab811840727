"""Side by side with the authors' code (seed 002, mrf-public) on small cases of Car.

The fixture ``data/mrf_public_small_cases.json`` is the authors' own output, recorded by
``benchmarks/seed002_authors.py --part fixture`` (which runs their code from a scratch
folder; it is not a dependency of these tests): their random trees, the leaf counts and
votes their code computes, and the strategy their optimiser returns with HDMM's error.
privet rebuilds the same trees and must give the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

from privet.data import load_dataset
from privet.learners.matrix_forest import matrices as mx
from privet.learners.matrix_forest.reference import (
    hard_votes,
    leaf_counts,
    leaf_index,
    weighted_votes,
)
from privet.learners.matrix_forest.trees import Ensemble, _tree_of_leaf
from privet.mechanisms.matrix import (
    IdentityStrategy,
    KroneckerStrategy,
    MatrixStrategy,
    ProductQueries,
    squared_error,
)

FIXTURE = json.loads((Path(__file__).parent / "data" / "mrf_public_small_cases.json").read_text())


def _ensemble(case: dict, domain: tuple[int, ...]) -> Ensemble:
    """privet's form of the authors' trees: a leaf's per-attribute 0/1 vectors -> value or -1."""
    rows = []
    for tree in case["paths"]:
        for leaf in tree:
            rows.append([-1 if all(leaf[i]) else leaf[i].index(1) for i in range(len(domain))])
    paths = ProductQueries(domain, rows)
    return Ensemble(tuple(range(len(domain))), domain, paths, _tree_of_leaf(paths, case["trees"]))


@pytest.fixture(scope="module")
def car() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ds = load_dataset("car")
    assert [a.name for a in ds.schema.attributes] == FIXTURE["attributes"]
    codes = ds.schema.encode(ds.frame.drop(columns=[ds.target]))
    y = np.asarray(
        [ds.schema.target.categories.index(v) for v in ds.frame[ds.target]], dtype=np.int64
    )
    tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
    return codes[tr], y[tr], codes[te[:20]]


@pytest.mark.parametrize("i", range(len(FIXTURE["cases"])))
def test_leaf_counts_and_votes_equal_the_authors(car, i: int) -> None:  # type: ignore[no-untyped-def]
    x, y, queries = car
    case = FIXTURE["cases"][i]
    domain = tuple(FIXTURE["domain"])
    ens = _ensemble(case, domain)
    assert queries.tolist() == case["queries"]  # the same rows in the same order
    k = FIXTURE["classes"]
    counts = leaf_counts(ens, leaf_index(ens, x), y, k)
    assert counts.astype(int).tolist() == case["leaf_counts"]
    assert (
        ens.paths.matmul(mx.data_matrix(ens, x, y, k)).astype(int).tolist() == case["leaf_counts"]
    )  # C = T D
    q_leaves = leaf_index(ens, queries)
    assert weighted_votes(counts, q_leaves).astype(int).tolist() == case["weighted_votes"]
    assert hard_votes(counts, q_leaves).astype(int).tolist() == case["hard_votes"]


@pytest.mark.parametrize("i", range(len(FIXTURE["cases"])))
def test_strategy_errors_equal_hdmm_and_privet_is_no_worse(i: int) -> None:
    """Def. 3's error ||A||_1^2 ||T A^+||_F^2 of the authors' optimised strategy, computed by
    privet, equals HDMM's; so does the identity's."""
    case = FIXTURE["cases"][i]
    ens = _ensemble(case, tuple(FIXTURE["domain"]))
    theirs = KroneckerStrategy([MatrixStrategy(np.asarray(f)) for f in case["strategy_factors"]])
    assert theirs.l1_norm() == pytest.approx(case["strategy_sensitivity"], rel=1e-12)
    assert squared_error(ens.paths, theirs) == pytest.approx(
        case["strategy_squared_error"], rel=1e-9
    )
    ident = KroneckerStrategy([IdentityStrategy(n) for n in FIXTURE["domain"]])
    assert squared_error(ens.paths, ident) == pytest.approx(
        case["identity_squared_error"], rel=1e-12
    )


@pytest.mark.slow
def test_privets_optimised_strategy_is_no_worse_than_the_authors() -> None:
    """privet's OPT (with the identity and T as fall-backs) on the larger case (16 trees)."""
    case = FIXTURE["cases"][-1]
    ens = _ensemble(case, tuple(FIXTURE["domain"]))
    ours, errors, _, chosen = mx.choose_strategy(ens.paths, "optimized", kind="training", seed=0)
    assert errors[chosen] == pytest.approx(squared_error(ens.paths, ours), rel=1e-9)
    assert errors[chosen] <= case["strategy_squared_error"] * (1 + 1e-9)
