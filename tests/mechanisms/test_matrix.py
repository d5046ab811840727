"""Matrix mechanism (seed 002): workloads, strategies, OPT_p, expected error, charges."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from mech_stats import Z
from scipy import optimize, sparse

from privet.errors import InvalidParameterError
from privet.ledger import Guarantee, Laplace, Ledger
from privet.mechanisms import (
    ROUNDING_SLACK,
    DenseWorkload,
    IdentityStrategy,
    KroneckerStrategy,
    KroneckerWorkload,
    MatrixMechanism,
    MatrixStrategy,
    PIdentityStrategy,
    ProductQueries,
    UnionWorkload,
    decision_path_workload,
    expected_error,
    make_matrix_mechanism,
    optimize_kronecker,
    optimize_p_identity,
    optimize_strategy,
    squared_error,
)
from privet.mechanisms.matrix.optimise import _p_identity_objective
from privet.mechanisms.matrix.workloads import _transpose_matmul
from privet.testing import check_dp

CAR = (4, 4, 4, 3, 3, 3)


def ranges(n: int) -> np.ndarray:
    """All range queries over a 1-D domain of n cells."""
    rows = [
        np.r_[np.zeros(i), np.ones(j - i + 1), np.zeros(n - j - 1)]
        for i in range(n)
        for j in range(i, n)
    ]
    return np.array(rows)


def test_p_identity_gradient_is_exact() -> None:
    rng = np.random.default_rng(0)
    n, p = 10, 3
    w = rng.random((25, n))
    g = w.T @ w
    theta = rng.random(p * n)
    err = optimize.check_grad(
        lambda t: _p_identity_objective(t, g, p)[0],
        lambda t: _p_identity_objective(t, g, p)[1],
        theta,
    )
    norm = np.linalg.norm(_p_identity_objective(theta, g, p)[1])
    assert err / norm < 1e-5


def test_p_identity_strategy_matches_its_explicit_matrix() -> None:
    rng = np.random.default_rng(1)
    a = PIdentityStrategy(rng.random((3, 8)))
    m = a.matrix()
    assert np.abs(m).sum(axis=0).max() == pytest.approx(1.0)
    x = rng.random((8, 2))
    y = rng.random((11, 2))
    assert np.allclose(a.matmul(x), m @ x)
    assert np.allclose(a.solve(y), np.linalg.pinv(m) @ y)
    assert np.allclose(a.gram_pinv(), np.linalg.inv(m.T @ m))
    w = rng.random((5, 8))
    assert squared_error(w, a) == pytest.approx(np.linalg.norm(w @ np.linalg.pinv(m)) ** 2)


def test_decision_path_workload_structure() -> None:
    t = decision_path_workload(CAR, 16, 4, random_state=3)
    s = t.to_sparse()
    assert t.shape[1] == 1728
    # every tree's leaves partition the domain: each cell is in exactly 16 paths
    assert np.all(np.asarray(s.sum(axis=0)).ravel() == 16)
    assert t.l1_norm() == 16
    assert t.frobenius_sq() == pytest.approx(16 * 1728)
    assert np.all((t.values >= 0).sum(axis=1) == 4)
    rng = np.random.default_rng(0)
    x = rng.random((1728, 3))
    assert np.allclose(t.matmul(x), s @ x)
    y = rng.random(t.shape[0])
    assert np.allclose(_transpose_matmul(t, y), s.T @ y)


def test_kronecker_strategy_and_error_match_explicit() -> None:
    rng = np.random.default_rng(2)
    dom = (4, 3, 2, 3)
    k = KroneckerStrategy([PIdentityStrategy(rng.random((1, d))) for d in dom])
    explicit = k._explicit()
    x = rng.random((72, 2))
    assert np.allclose(k.matmul(x), explicit @ x)
    assert np.allclose(k.solve(explicit @ x), x)
    assert k.l1_norm() == pytest.approx(np.abs(explicit).sum(axis=0).max())
    t = decision_path_workload(dom, 4, 3, random_state=0)
    direct = np.abs(explicit).sum(axis=0).max() ** 2 * np.trace(
        t.gram() @ np.linalg.pinv(explicit.T @ explicit)
    )
    assert squared_error(t, k) == pytest.approx(direct, rel=1e-8)
    assert expected_error(t, k, 2.0) == pytest.approx(direct / 2, rel=1e-8)


def test_union_and_kronecker_workloads_match_explicit() -> None:
    rng = np.random.default_rng(4)
    f1, f2, f3 = rng.random((2, 3)), rng.random((3, 4)), rng.random((1, 4))
    kw = KroneckerWorkload([f1, f2])
    assert np.allclose(kw.to_sparse().toarray(), np.kron(f1, f2))
    x = rng.random(12)
    assert np.allclose(kw.matmul(x), np.kron(f1, f2) @ x)
    u = UnionWorkload([kw, KroneckerWorkload([np.ones((1, 3)), f3])], weights=[1.0, 2.0])
    dense = np.vstack([np.kron(f1, f2), 2 * np.kron(np.ones((1, 3)), f3)])
    assert np.allclose(u.matmul(x), dense @ x)
    a = KroneckerStrategy([PIdentityStrategy(rng.random((2, 3))), IdentityStrategy(4)])
    assert squared_error(u, a) == pytest.approx(
        squared_error(DenseWorkload(dense), MatrixStrategy(a._explicit()))
    )
    assert kw.rank() == np.linalg.matrix_rank(np.kron(f1, f2))


def test_opt_p_beats_identity_on_ranges() -> None:
    w = ranges(64)
    a = optimize_p_identity(w, p=4, random_state=0)
    assert squared_error(w, a) < 0.8 * squared_error(w, IdentityStrategy(64))


def test_opt_kronecker_beats_identity_on_product_of_ranges() -> None:
    w = KroneckerWorkload([ranges(64), ranges(64)])
    a = optimize_kronecker(w, random_state=0)
    assert squared_error(w, a) < 0.6 * squared_error(
        w, KroneckerStrategy([IdentityStrategy(64)] * 2)
    )


@pytest.mark.parametrize(
    "workload",
    [
        ranges(24),
        np.eye(24)[:5],  # five single cells: the workload itself beats the identity
        np.ones((1, 24)),  # the total: workload strategy has error 1
    ],
)
def test_optimised_strategy_never_worse_than_identity_or_workload(workload: np.ndarray) -> None:
    res = optimize_strategy(workload, random_state=0)
    best = min(res.errors["identity"], res.errors["workload"])
    assert squared_error(workload, res.strategy) <= best * (1 + 1e-9)
    assert res.errors[res.chosen] == min(res.errors.values())
    assert res.ratio("identity") <= 1 + 1e-12


def test_optimise_decision_paths_kronecker_and_fallback() -> None:
    t = decision_path_workload((4, 4, 3, 3), 16, 3, random_state=1)
    res = optimize_strategy(t, method="kronecker", random_state=0)
    assert res.errors["identity"] == pytest.approx(16 * 144)
    assert res.errors["workload"] == pytest.approx(16**2 * t.rank())
    assert res.errors[res.chosen] <= min(res.errors["identity"], res.errors["workload"])


def test_large_product_domain_stays_tractable() -> None:
    """10^6 cells: Kronecker optimisation and errors without any n x n matrix."""
    domain = (10,) * 6
    t = decision_path_workload(domain, 8, 3, random_state=0)
    start = time.perf_counter()
    a = optimize_kronecker(t, random_state=0, rounds=3)
    assert time.perf_counter() - start < 30
    err = squared_error(t, a)
    ident = squared_error(t, KroneckerStrategy([IdentityStrategy(10)] * 6))
    assert ident == pytest.approx(t.frobenius_sq())
    assert err <= ident * (1 + 1e-9)
    with pytest.raises(InvalidParameterError, match="Kronecker form"):
        t.gram()


def test_matrix_mechanism_on_a_larger_domain(ledger: Ledger) -> None:
    domain = (10, 10, 10, 10)
    t = decision_path_workload(domain, 4, 2, random_state=0)
    a = KroneckerStrategy([PIdentityStrategy(np.full((1, 10), 0.1)) for _ in domain])
    mech = MatrixMechanism(workload=t, strategy=a, epsilon=1.0)
    data = np.zeros(10_000)
    answers = mech(data, scope=ledger)
    assert answers.shape == (t.shape[0],)


def test_expected_error_matches_empirical(ledger: Ledger) -> None:
    """Err_eps(W, A) = 2/eps^2 ||A||_1^2 ||W A^+||_F^2: each column of D is an independent
    replicate, so the mean squared error per column estimates it (CLT bound)."""
    w = ranges(12)
    a = optimize_p_identity(w, p=2, random_state=0)
    eps = 0.7
    mech = MatrixMechanism(workload=w, strategy=a, epsilon=eps)
    k = 4000
    data = np.tile(np.arange(12.0)[:, None], (1, k))
    answers = mech(data, scope=ledger)
    per_column = ((answers - w @ data) ** 2).sum(axis=0)
    predicted = expected_error(w, a, eps) * (1 + ROUNDING_SLACK) ** 2
    assert mech.expected_error() == pytest.approx(predicted)
    bound = Z * per_column.std(ddof=1) / math.sqrt(k)
    assert abs(per_column.mean() - predicted) <= bound
    assert len(ledger._charges) == 1


def test_matrix_mechanism_charges_l1_sensitivity(ledger: Ledger, replace_ledger: Ledger) -> None:
    t = decision_path_workload((3, 3, 2), 5, 2, random_state=0)
    mech = make_matrix_mechanism(t, 1.0, strategy="identity")
    assert mech.sensitivity == 1.0
    mech(np.ones((18, 2)), scope=ledger)
    (record,) = ledger._charges.values()
    assert isinstance(record.entry, Laplace) and record.entry.epsilon == pytest.approx(1.0)
    wmech = make_matrix_mechanism(t, 1.0, strategy="workload")
    assert wmech.sensitivity == 5.0  # ||T||_1 = number of trees
    rep = make_matrix_mechanism(t, 1.0, strategy="identity", relation="replace_one")
    assert rep.sensitivity == 2.0 and rep.scale == pytest.approx(2.0 * (1 + ROUNDING_SLACK))
    rep(np.ones(18), scope=replace_ledger)
    assert replace_ledger.spent().epsilon == pytest.approx(1.0)
    opt = make_matrix_mechanism(t, 1.0, random_state=0)
    assert "MatrixMechanism(relation='add_remove'" in repr(opt)


def test_matrix_mechanism_refuses_unsupported_strategy() -> None:
    led = Ledger(Guarantee(1.0))
    w = np.eye(4)
    a = MatrixStrategy(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]))
    with pytest.raises(InvalidParameterError, match="row space"):
        MatrixMechanism(workload=w, strategy=a, epsilon=1.0)
    mech = MatrixMechanism(workload=np.array([[1.0, 1.0, 0.0, 0.0]]), strategy=a, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="4 rows"):
        mech(np.ones(3), scope=led)
    with pytest.raises(InvalidParameterError, match="finite"):
        mech(np.array([1.0, np.nan, 0.0, 0.0]), scope=led)
    assert led.spent() == Guarantee(0.0)


def test_sparse_workload_input() -> None:
    w = sparse.random(30, 20, density=0.2, random_state=0, format="csr")
    res = optimize_strategy(w, random_state=0)
    assert res.errors[res.chosen] <= res.errors["identity"]


def test_product_queries_validation() -> None:
    with pytest.raises(InvalidParameterError, match="rows"):
        ProductQueries((2, 3), np.zeros((4, 3)))
    with pytest.raises(InvalidParameterError, match="-1 or in"):
        ProductQueries((2, 3), np.array([[0, 3]]))


def test_matrix_mechanism_dp_check(ledger: Ledger) -> None:
    """Neighbouring data: one record added to cell 0; statistic = first answer."""
    w = ranges(4)
    a = optimize_p_identity(w, p=1, random_state=0)
    mech = MatrixMechanism(workload=w, strategy=a, epsilon=1.0)
    base = np.array([3.0, 1.0, 2.0, 0.0])
    plus = base + np.array([1.0, 0, 0, 0])

    def sample(d: np.ndarray):
        return lambda n: mech(np.tile(d[:, None], (1, n)), scope=ledger)[0]

    res = check_dp(sample(base), sample(plus), n=20_000)
    assert res.consistent_with(1.0), res
