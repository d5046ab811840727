"""Strategy optimisation: OPT_p on an explicit Gram matrix and OPT_x factor by factor.

McKenna, Miklau, Hay & Machanavajjhala (2018), Sec. 5 (p-Identity, L-BFGS-B on
the error with the analytic gradient given in :mod:`privet.mechanisms.matrix`)
and Sec. 6 (Kronecker products for product domains). The optimisation reads the
workload only (public), so it costs no privacy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, optimize

from privet.errors import InvalidParameterError
from privet.mechanisms import _validate as v
from privet.mechanisms.matrix._linalg import EXPLICIT_LIMIT, _explicit_ok
from privet.mechanisms.matrix.strategies import (
    IdentityStrategy,
    KroneckerStrategy,
    MatrixStrategy,
    PIdentityStrategy,
    Strategy,
    squared_error,
)
from privet.mechanisms.matrix.workloads import Workload, as_workload

__all__ = [
    "OptimisationResult",
    "optimize_kronecker",
    "optimize_p_identity",
    "optimize_strategy",
]


def _p_identity_objective(
    flat: NDArray[np.float64], gram: NDArray[np.float64], p: int
) -> tuple[float, NDArray[np.float64]]:
    """f(Theta) = tr[(A^T A)^{-1} G] and its gradient (module docstring)."""
    n = gram.shape[0]
    theta = flat.reshape(p, n)
    d = 1.0 + theta.sum(axis=0)
    chol = linalg.cho_factor(np.eye(p) + theta @ theta.T)
    r_theta = linalg.cho_solve(chol, theta)  # (I + Theta Theta^T)^{-1} Theta = Theta X
    x = np.eye(n) - theta.T @ r_theta
    dgd = gram * np.outer(d, d)
    f = float(np.sum(x * dgd))
    b = r_theta @ dgd  # Theta X D G D
    bx = b - (b @ theta.T) @ r_theta  # Theta X D G D X
    g = 2.0 * np.sum(x * gram * d[None, :], axis=1)
    grad = -2.0 * bx + g[None, :]
    return f, grad.ravel()


def _opt_p_on_gram(
    gram: NDArray[np.float64],
    p: int,
    rng: np.random.Generator,
    theta0: NDArray[np.float64] | None,
    maxiter: int,
) -> PIdentityStrategy:
    n = gram.shape[0]
    norm = float(np.trace(gram)) or 1.0
    g = gram / norm  # scale-free objective for the optimiser
    x0 = rng.random((p, n)) if theta0 is None else np.asarray(theta0, dtype=float)
    res = optimize.minimize(
        _p_identity_objective,
        x0.ravel(),
        args=(g, p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (p * n),
        options={"maxiter": maxiter},
    )
    best = res.x if res.fun <= _p_identity_objective(x0.ravel(), g, p)[0] else x0.ravel()
    return PIdentityStrategy(best.reshape(p, n))


def optimize_p_identity(
    workload: Any,
    p: int | None = None,
    *,
    random_state: int | np.random.Generator | None = None,
    maxiter: int = 500,
) -> PIdentityStrategy:
    """OPT_p: the p-Identity strategy minimising ||W A^+||_F^2, by L-BFGS-B.

    Needs W^T W explicitly (n <= EXPLICIT_LIMIT). ``p`` defaults to max(1, n // 16).
    The strategy depends on the workload only, so the optimisation costs no
    privacy; ``random_state`` seeds the starting point.
    """
    w = as_workload(workload)
    _explicit_ok(w.n, "OPT_p on an explicit workload")
    p = max(1, w.n // 16) if p is None else v.integer(p, "p", "optimize_p_identity")
    rng = np.random.default_rng(random_state)
    return _opt_p_on_gram(w.gram(), p, rng, None, maxiter)


def optimize_kronecker(
    workload: Any,
    ps: Sequence[int] | None = None,
    *,
    rounds: int = 10,
    random_state: int | np.random.Generator | None = None,
    maxiter: int = 200,
    rtol: float = 1e-6,
) -> KroneckerStrategy:
    """OPT_x: a Kronecker product of p-Identity factors, optimised factor by factor.

    With every factor but one fixed, the error is tr[(A_i^T A_i)^{-1} G_i] for
    the weighted Gram G_i = sum_j w_j (prod_{l != i} tr[G_jl X_l]) G_ji, an
    explicit OPT_p problem on an n_i x n_i matrix (module docstring). Starts
    from the identity and keeps a factor's update only if it lowers the error;
    ``ps`` defaults to ceil(n_i / 16) (one extra aggregate row for small
    attributes, so the strategy has at most prod(n_i + p_i) rows).
    """
    w = as_workload(workload)
    structure = w.kron_structure()
    if structure is None:
        raise InvalidParameterError(
            "optimize_kronecker needs a Kronecker, union-of-Kronecker or product-query workload; "
            "use optimize_p_identity for an explicit matrix."
        )
    dom = structure.domain
    if ps is None:
        ps = [max(1, math.ceil(n_i / 16)) for n_i in dom]
    ps = [v.integer(p, "p", "optimize_kronecker") for p in ps]
    if len(ps) != len(dom):
        raise InvalidParameterError(f"optimize_kronecker needs one p per attribute ({len(dom)}).")
    rng = np.random.default_rng(random_state)
    factors: list[Strategy] = [IdentityStrategy(n_i) for n_i in dom]
    traces = [structure.traces(i, np.eye(n_i)) for i, n_i in enumerate(dom)]
    thetas: list[NDArray[np.float64] | None] = [None] * len(dom)
    previous = math.inf
    for _ in range(v.integer(rounds, "rounds", "optimize_kronecker")):
        for i in range(len(dom)):
            others = structure.weights.copy()
            for l_, tr in enumerate(traces):
                if l_ != i:
                    others = others * tr
            gram_i = structure.weighted_gram(i, others)
            current = float(np.sum(gram_i * factors[i].gram_pinv()))
            cand = _opt_p_on_gram(gram_i, ps[i], rng, thetas[i], maxiter)
            if float(np.sum(gram_i * cand.gram_pinv())) < current:
                factors[i], thetas[i] = cand, cand.theta
                traces[i] = structure.traces(i, cand.gram_pinv())
        err = float((structure.weights * np.prod(traces, axis=0)).sum())
        if previous - err <= rtol * err:
            break
        previous = err
    return KroneckerStrategy(factors)


@dataclass(frozen=True)
class OptimisationResult:
    """The chosen strategy and the squared errors ||A||_1^2 ||W A^+||_F^2 compared.

    ``errors`` maps "optimised", "identity" and "workload" to their squared
    errors (multiply by 2 / epsilon^2 for Err_eps); ``chosen`` names the winner.
    """

    strategy: Strategy
    chosen: str
    errors: dict[str, float]
    seconds: float
    method: str
    details: dict[str, Any] = field(default_factory=dict)

    def ratio(self, baseline: str) -> float:
        """Chosen strategy's error over a baseline's (<= 1 by construction)."""
        return self.errors[self.chosen] / self.errors[baseline]


def optimize_strategy(
    workload: Any,
    *,
    method: str = "auto",
    p: int | Sequence[int] | None = None,
    random_state: int | np.random.Generator | None = None,
    maxiter: int | None = None,
) -> OptimisationResult:
    """Optimise a strategy for ``workload`` and keep it only if it beats both baselines.

    ``method``: "explicit" (OPT_p on W^T W), "kronecker" (OPT_x) or "auto"
    (Kronecker when the workload has that structure, explicit otherwise). The
    identity and, where its error can be computed (n <= EXPLICIT_LIMIT), the
    workload itself are the baselines; the strategy with the smallest error is
    returned (the simpler one on a tie), so the result is never worse than the
    better baseline.
    """
    w = as_workload(workload)
    if method not in ("auto", "explicit", "kronecker"):
        raise InvalidParameterError(
            f"The 'method' parameter of optimize_strategy must be 'auto', 'explicit' or "
            f"'kronecker'; got {method!r}."
        )
    if method == "auto":
        method = "kronecker" if w.kron_structure() is not None else "explicit"
    start = time.perf_counter()
    if method == "kronecker":
        ps = [p] * len(w.domain) if isinstance(p, int) else p
        opt: Strategy = optimize_kronecker(w, ps, random_state=random_state, maxiter=maxiter or 200)
    else:
        if p is not None and not isinstance(p, int):
            raise InvalidParameterError("The explicit OPT_p takes one int p.")
        opt = optimize_p_identity(w, p, random_state=random_state, maxiter=maxiter or 500)
    seconds = time.perf_counter() - start
    identity: Strategy = (
        KroneckerStrategy([IdentityStrategy(n) for n in w.domain])
        if isinstance(opt, KroneckerStrategy)
        else IdentityStrategy(w.n)
    )
    candidates: dict[str, Strategy] = {"optimised": opt, "identity": identity}
    errors = {"optimised": squared_error(w, opt), "identity": squared_error(w, identity)}
    if w.n <= EXPLICIT_LIMIT:
        errors["workload"] = w.l1_norm() ** 2 * w.rank()
        candidates["workload"] = _LazyWorkloadStrategy(w)  # type: ignore[assignment]
    # the smallest error wins; within a relative 1e-9 the simpler strategy wins
    # (identity, then the workload), as an optimiser that converged to Theta = 0
    # has found the identity and should not pay for its extra rows of noise
    low = min(errors.values())
    order = ("identity", "workload", "optimised")
    chosen = next(k for k in order if k in errors and errors[k] <= low * (1 + 1e-9))
    strategy = candidates[chosen]
    if isinstance(strategy, _LazyWorkloadStrategy):
        strategy = MatrixStrategy(w.to_sparse())
    return OptimisationResult(strategy, chosen, errors, seconds, method)


class _LazyWorkloadStrategy:
    """Placeholder for A = W, built only if it wins."""

    def __init__(self, w: Workload) -> None:
        self.w = w
