"""The matrix mechanism with optimised strategies (seed 002, Tajima et al.; McKenna et al. 2018).

Given a workload W (l x n) of linear counting queries over a data matrix D
(n x k: one row per cell of the feature domain, one column per class), and a
strategy A (m x n) whose row space contains W's, the matrix mechanism (Li et al.
2015; seed 002, Def. 2) releases

    W D + W A^+ Lap(||A||_1 / epsilon)^{m x k},

computed as W x_hat with x_hat = A^+ (A D + noise) the least-squares estimate of
D. ||A||_1 (the largest column L1 norm) is the L1 sensitivity of A D when one
record is added or removed (it changes one cell of D by 1); replace-one
doubles it. The expected total squared error per column of D is (seed 002,
Def. 3)

    Err_eps(W, A) = 2 / eps^2 ||A||_1^2 ||W A^+||_F^2,
    ||W A^+||_F^2 = tr[W^T W (A^T A)^+].

Strategies. The identity (A = I), the workload itself (A = W), explicit
p-Identity strategies A(Theta) = [I; Theta] diag(1 / (1 + 1^T Theta)) with Theta
>= 0 of shape p x n, optimised by L-BFGS-B on the error with its analytic
gradient (McKenna, Miklau, Hay & Machanavajjhala 2018, "Optimizing error of
high-dimensional statistical queries under differential privacy", Sec. 5,
OPT_0 with the p-Identity parameterisation), and Kronecker products of
p-Identity strategies for product domains (McKenna et al. 2018, Sec. 6, OPT_x),
optimised factor by factor: for A = A_1 x ... x A_d and a workload that is a
union of Kronecker products, sum_j W_j1 x ... x W_jd,

    ||A||_1 = prod_i ||A_i||_1,
    ||W A^+||_F^2 = sum_j prod_i tr[W_ji^T W_ji (A_i^T A_i)^+],

so with the other factors fixed each factor solves an explicit OPT_p problem on
a weighted sum of its Gram matrices. Only the factors' n_i x n_i matrices are
ever formed, so domains of 10^4 - 10^6 cells stay tractable.

:func:`optimize_strategy` compares the optimised strategy with the identity
and with W itself and returns the best of them, so it is never worse than
either.

Gradient of the p-Identity objective (derived here). With d = 1 + Theta^T 1,
M = I + Theta^T Theta, X = M^{-1} = I - Theta^T (I + Theta Theta^T)^{-1} Theta
(Woodbury) and G = W^T W, the objective is f = tr[diag(d) X diag(d) G] =
sum_ij d_i X_ij d_j G_ij and

    grad f = -2 Theta X (D G D) X + 1_p g^T,   g = 2 (X o G) d,

where D = diag(d), o is the elementwise product, and Theta X = (I + Theta
Theta^T)^{-1} Theta, so one evaluation costs O(p n^2).

Modules: :mod:`.workloads` (query matrices), :mod:`.strategies` (strategy
matrices and their error), :mod:`.optimise` (OPT_p, OPT_x and the choice
against the baselines), :mod:`.mechanism` (the mechanism that charges and
releases).
"""

from __future__ import annotations

from privet.mechanisms.matrix._linalg import EXPLICIT_LIMIT
from privet.mechanisms.matrix.mechanism import MatrixMechanism, make_matrix_mechanism
from privet.mechanisms.matrix.optimise import (
    OptimisationResult,
    optimize_kronecker,
    optimize_p_identity,
    optimize_strategy,
)
from privet.mechanisms.matrix.strategies import (
    IdentityStrategy,
    KroneckerStrategy,
    MatrixStrategy,
    PIdentityStrategy,
    Strategy,
    expected_error,
    squared_error,
)
from privet.mechanisms.matrix.workloads import (
    DenseWorkload,
    KroneckerWorkload,
    ProductQueries,
    UnionWorkload,
    Workload,
    as_workload,
    decision_path_workload,
)

__all__ = [
    "EXPLICIT_LIMIT",
    "DenseWorkload",
    "IdentityStrategy",
    "KroneckerStrategy",
    "KroneckerWorkload",
    "MatrixMechanism",
    "MatrixStrategy",
    "OptimisationResult",
    "PIdentityStrategy",
    "ProductQueries",
    "Strategy",
    "UnionWorkload",
    "Workload",
    "as_workload",
    "decision_path_workload",
    "expected_error",
    "make_matrix_mechanism",
    "optimize_kronecker",
    "optimize_p_identity",
    "optimize_strategy",
    "squared_error",
]
