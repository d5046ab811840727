"""The matrix mechanism itself: one charge, noisy strategy answers, least-squares estimate."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError
from privet.ledger import ADD_REMOVE, Claim, Entry, Guarantee, Laplace, NeighbouringRelation
from privet.mechanisms import _opendp, recorder
from privet.mechanisms import _validate as v
from privet.mechanisms._opendp import ROUNDING_SLACK
from privet.mechanisms.base import Mechanism
from privet.mechanisms.laws import AdditiveLaw
from privet.mechanisms.matrix._linalg import _as_2d
from privet.mechanisms.matrix.optimise import optimize_strategy
from privet.mechanisms.matrix.strategies import (
    IdentityStrategy,
    MatrixStrategy,
    Strategy,
    squared_error,
)
from privet.mechanisms.matrix.workloads import as_workload

__all__ = ["MatrixMechanism", "make_matrix_mechanism"]


class MatrixMechanism(Mechanism):
    """The matrix mechanism (Li et al. 2015; seed 002, Def. 2 and Alg. 1-2).

    Releases W x_hat with x_hat = A^+ (A D + Lap(scale)^{m x k}), scale =
    ||A||_1 c (1 + 2^-30) / epsilon, c = 1 under add/remove and 2 under
    replace-one (one replaced record changes two cells of D). One charge of a
    Laplace entry with sensitivity ||A||_1 c covers the whole release.

    Parameters
    ----------
    workload : Workload, array or sparse matrix
    strategy : Strategy, optional
        Default: the identity.
    epsilon, scale : float
        Exactly one.
    relation : {"add_remove", "replace_one"}
    """

    mechanism = "matrix"

    def __init__(
        self,
        *,
        workload: Any,
        strategy: Strategy | None = None,
        epsilon: float | None = None,
        scale: float | None = None,
        relation: NeighbouringRelation | str = ADD_REMOVE,
    ) -> None:
        owner = type(self).__name__
        self.workload = as_workload(workload)
        if not self.workload.frobenius_sq() > 0:
            raise InvalidParameterError(
                f"The 'workload' parameter of {owner} is all zeros: it asks no query, so a "
                "release would spend budget on nothing. Pass the queries' coefficients (one row "
                "per query)."
            )
        self.strategy = IdentityStrategy(self.workload.n) if strategy is None else strategy
        if not isinstance(self.strategy, Strategy):
            raise InvalidParameterError(f"The 'strategy' parameter of {owner} must be a Strategy.")
        if self.strategy.shape[1] != self.workload.n:
            raise InvalidParameterError(
                f"{owner}: the strategy has {self.strategy.shape[1]} columns, the workload "
                f"{self.workload.n}."
            )
        if not self.strategy.supports(self.workload):
            raise InvalidParameterError(
                f"{owner}: the workload's rows are not in the strategy's row space, so W A^+ A != "
                "W and the answers would be biased; add the identity to the strategy."
            )
        self.relation = v.relation(relation, owner)
        self.sensitivity = self.strategy.l1_norm() * (1 if self.relation is ADD_REMOVE else 2)
        which = v.one_of({"epsilon": epsilon, "scale": scale}, owner)
        if which == "epsilon":
            self.scale = (
                self.sensitivity * (1 + ROUNDING_SLACK) / v.positive(epsilon, "epsilon", owner)
            )
        else:
            self.scale = v.positive(scale, "scale", owner)
        v.bounded_loss(self.sensitivity, self.scale, owner)

    def entry(self) -> Entry:
        return Laplace(scale=self.scale, sensitivity=self.sensitivity * (1 + ROUNDING_SLACK))

    def privacy_map(self, d_in: float | None = None) -> Guarantee:
        return Guarantee(self._d_in(d_in) * (1 + ROUNDING_SLACK) / self.scale)

    def expected_error(self, columns: int = 1) -> float:
        """E ||W x_hat - W D||_F^2 = 2 scale^2 ||W A^+||_F^2 per column, times ``columns``."""
        wa = squared_error(self.workload, self.strategy) / self.strategy.l1_norm() ** 2
        return 2 * self.scale**2 * wa * v.integer(columns, "columns", "expected_error")

    def _repr_extra(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "workload": self.workload.shape,
            "strategy": type(self.strategy).__name__,
        }

    def __call__(
        self,
        data: Any,
        *,
        scope: Any,
        caller: str = "",
        step: str = "",
        claim: Claim | None = None,
        return_estimate: bool = False,
    ) -> Any:
        """Charge ``scope``, then return the noisy answers W x_hat (and x_hat if asked).

        ``data`` is the data vector (n,) or data matrix D (n x k) of counts.
        """
        answers, x_hat = self._release(
            data,
            scope=scope,
            caller=caller,
            step=step,
            claim=claim,
            validate=self._data,
            sample=self._estimate,
            recorded=False,
        )
        return (answers, x_hat) if return_estimate else answers

    def _data(self, data: Any) -> NDArray[np.float64]:
        owner = type(self).__name__
        arr = v.finite_array(data, "data", owner)
        if arr.ndim not in (1, 2) or arr.shape[0] != self.workload.n:
            raise InvalidParameterError(
                f"The 'data' argument of {owner} must have {self.workload.n} rows (one per cell "
                f"of the domain); got shape {arr.shape}."
            )
        return arr

    def _estimate(
        self, arr: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(W x_hat, x_hat) with x_hat = A^+ (A D + noise) (called after the charge)."""
        d2, flat = _as_2d(arr)
        strategy_answers = np.asarray(self.strategy.matmul(d2))
        # the recorder sees the measurement A D + noise; the answers are post-processing
        measured = recorder.release(
            AdditiveLaw("laplace", self.scale),
            strategy_answers,
            lambda: _opendp.laplace_float(strategy_answers, self.scale, self.sensitivity),
            label=f"{self.mechanism}: strategy measurement",
        )
        x_hat = self.strategy.solve(measured)
        answers = np.asarray(self.workload.matmul(x_hat))
        if flat:
            answers, x_hat = answers[:, 0], x_hat[:, 0]
        return answers, x_hat


def make_matrix_mechanism(
    workload: Any,
    epsilon: float,
    *,
    strategy: Strategy | str = "optimised",
    relation: NeighbouringRelation | str = ADD_REMOVE,
    random_state: int | np.random.Generator | None = None,
) -> MatrixMechanism:
    """A matrix mechanism for ``workload`` at ``epsilon``.

    ``strategy``: a Strategy, "identity", "workload", or "optimised" (the best
    of :func:`optimize_strategy` and both baselines).
    """
    w = as_workload(workload)
    if isinstance(strategy, str):
        if strategy == "identity":
            a: Strategy = IdentityStrategy(w.n)
        elif strategy == "workload":
            a = MatrixStrategy(w.to_sparse())
        elif strategy == "optimised":
            a = optimize_strategy(w, random_state=random_state).strategy
        else:
            raise InvalidParameterError(
                "The 'strategy' parameter of make_matrix_mechanism must be a Strategy or one of "
                f"'identity', 'workload', 'optimised'; got {strategy!r}."
            )
    else:
        a = strategy
    return MatrixMechanism(workload=w, strategy=a, epsilon=epsilon, relation=relation)
