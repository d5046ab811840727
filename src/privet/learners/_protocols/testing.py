"""Agreement of the MPC protocols with the plaintext reference paths, for tests.

The reference paths (:mod:`privet.learners.partial_mpc_id3.reference`,
:mod:`privet.learners.oblivious_id3.reference`) and the protocols draw privacy noise
from different samplers (OpenDP on plaintext, fixed-point MPC mechanisms on
shares), so their trees agree only in distribution. To check that they
compute the same thing, both are run with the *same* noise:

* the protocol with ``_testing_noise=seed``: a
  :class:`~privet.learners._protocols.noise.FixedNoise` replaces the random
  inputs of Algorithms 12 and 13 by public draws keyed by (seed, kind, node
  path);
* the reference control flow (``grow_partial_mpc`` / ``grow_oblivious``,
  unchanged) with :class:`HookedReferenceOps` / :class:`HookedOneHotOps`,
  which keep the reference's counts, scores, partitions and ledger charges
  and take the same draws: Laplace leaves add ``scale * L`` to the exact
  counts; exponential-mechanism choices invert the CDF of
  :meth:`SecureExponentialMechanism.probabilities` at the same uniform, as
  Algorithm 13's linear scan does. With ``mpc_noise="discrete"`` both add the
  same public integer discrete Laplace draws and take the first maximum.

The two trees must then be equal: same structure, same split attributes,
same labels, and leaf values equal up to the fixed-point grid. Fixed-point
rounding could only flip a choice whose uniform lies within about 2**-14 of
a CDF boundary (or an argmax of two noisy counts that close); the hooked ops
record the smallest such margin and :func:`robust_seed` picks a seed whose
margin exceeds 1e-3, so the tests are deterministic.

Everything here needs ``PRIVET_TESTING_NOISE`` to be set
(:func:`allow_testing_noise`); public noise is no privacy at all.

The hooked ops of each system live in its own ``testing`` module.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import PrivetError
from privet.learners._protocols.noise import FixedNoise
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.switch import ENV_ALLOW, ENV_VAR
from privet.learners._trees.accounting import (
    laplace_sensitivity,
)
from privet.learners._trees.tree import Tree
from privet.ledger import Exponential, Guarantee, Laplace, Ledger, Scope


@contextlib.contextmanager
def allow_testing_noise() -> Iterator[None]:
    """Allow public testing noise in this process and the parties it launches."""
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = ENV_ALLOW
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = previous


class _PathRows(np.ndarray):
    """Row indices that also know their node's path (branch indices from the root)."""

    path: tuple[int, ...] = ()


def _with_path(rows: np.ndarray, path: tuple[int, ...]) -> _PathRows:
    out = np.asarray(rows).view(_PathRows)
    out.path = tuple(path)
    return out


class _Hooked:
    """The noisy steps of the reference ops, drawing the protocol's testing noise.

    A system's hooked ops class derives from this and from its reference ops,
    which it builds for ``schema`` in :meth:`_init_reference`.
    """

    noise: FixedNoise
    n_classes: int
    caller: str

    def __init__(
        self,
        codes: np.ndarray,
        y_codes: np.ndarray,
        schema: Schema,
        *,
        seed: int,
        numbers: SecureNumbers | None = None,
    ) -> None:
        self._init_reference(codes, y_codes, schema)
        self.noise = FixedNoise(seed)
        self.numbers = numbers if numbers is not None else SecureNumbers()
        self.margin = math.inf
        self._path: tuple[int, ...] = ()
        self._split_at: dict[tuple[int, ...], int] = {}

    def _init_reference(self, codes: np.ndarray, y_codes: np.ndarray, schema: Schema) -> None:
        """Initialise the reference ops on the data (their ``caller`` is "reference")."""
        raise NotImplementedError

    # -- paths -------------------------------------------------------------------
    def all_rows(self) -> np.ndarray:
        return _with_path(super().all_rows(), ())  # type: ignore[misc]

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        self._split_at[rows.path] = attr  # type: ignore[attr-defined]
        parts = super().partition(rows, attr)  # type: ignore[misc]
        return [_with_path(p, (*rows.path, v)) for v, p in enumerate(parts)]  # type: ignore[attr-defined]

    def _noise_positions(self, kind: str, path: tuple[int, ...], d: int) -> np.ndarray | None:
        """Which of the protocol's noise values belong to the ``d`` candidates (None: all)."""
        return None

    def scores(self, rows: np.ndarray, attrs: Any = None) -> np.ndarray:
        self._path = rows.path  # type: ignore[attr-defined]  # select() follows for this node
        return super().scores(rows, attrs)  # type: ignore[misc]

    # -- noisy steps ---------------------------------------------------------------
    def _choose(self, kind: str, path: tuple[int, ...], utilities: Any, epsilon: float) -> int:
        mech = self.numbers.selection(epsilon)
        if self.numbers.mpc_noise == "discrete":  # report-noisy-max: public integer noise
            u = np.asarray(utilities, dtype=float)
            positions = self._noise_positions(kind, path, u.size)
            size = u.size if positions is None else self.n_attributes  # type: ignore[attr-defined]
            z = self.noise.discrete_laplace_values(kind, path, size, mech.scale, mech.noise_bound)
            z = z if positions is None else z[positions]
            return int(np.argmax(u + z))  # first max
        cumulative = np.cumsum(mech.probabilities(np.asarray(utilities, dtype=float)))
        u = self.noise.uniform_value(kind, path)
        if cumulative.size > 1:
            self.margin = min(self.margin, float(np.min(np.abs(cumulative[:-1] - u))))
        return min(int(np.searchsorted(cumulative, u, side="right")), cumulative.size - 1)

    def select(
        self,
        scope: Scope,
        utilities: np.ndarray,
        *,
        epsilon: float,
        step: str,
        claim: Any,
        sensitivity: float = 1.0,
    ) -> int:
        scope.charge(
            Exponential(epsilon=epsilon, sensitivity=sensitivity),
            mechanism="exponential",
            sensitivity=sensitivity,
            caller=self.caller,
            step=step,
            claim=claim,
        )
        return self._choose("split", self._path, utilities, epsilon)

    def select_level(
        self,
        nodes: Sequence[tuple[Scope, np.ndarray, np.ndarray]],
        *,
        tree_scope: Scope | None,
        epsilon: float,
        step: str,
        claim: Any,
    ) -> list[int]:
        entry = Exponential(epsilon=epsilon, sensitivity=1.0)
        for sc in [tree_scope] if tree_scope is not None else [sc for sc, _, _ in nodes]:
            sc.charge(entry, mechanism="exponential", caller=self.caller, step=step, claim=claim)
        return [self._choose("split", rows.path, u, epsilon) for _, rows, u in nodes]  # type: ignore[attr-defined]

    def release_leaves(
        self,
        leaves: Sequence[tuple[Scope, np.ndarray]],
        *,
        leaf: str,
        epsilon: float,
        claim: Any,
        step: str = "leaf",
        tree_scope: Scope | None = None,
    ) -> list[np.ndarray]:
        if not leaves:
            return []
        sens = laplace_sensitivity(leaves[0][0].ledger.relation)
        entry = (
            Exponential(epsilon=epsilon, sensitivity=1.0)
            if leaf == "exponential"
            else Laplace(scale=sens / epsilon, sensitivity=sens)
        )
        # one charge in the tree's scope (add/remove), else one per leaf
        for sc in [tree_scope] if tree_scope is not None else [sc for sc, _ in leaves]:
            sc.charge(entry, mechanism=leaf, caller=self.caller, step=step, claim=claim)
        out = []
        eye = np.eye(self.n_classes)
        for _, rows in leaves:
            counts = self.count(rows)  # type: ignore[attr-defined]
            path = rows.path  # type: ignore[attr-defined]
            if leaf == "exponential":
                out.append(eye[self._choose("leaf", path, counts, epsilon)])
            elif self.numbers.mpc_noise == "discrete":
                lap = self.numbers.laplace(epsilon)
                noise = self.noise.discrete_laplace_values(
                    "laplace", path, self.n_classes, lap.scale, lap.noise_bound
                )
                out.append(counts + noise)
            else:
                noise = self.noise.laplace_values(path, self.n_classes) * (sens / epsilon)
                out.append(counts + noise)
        return out

    def labels(self, values: np.ndarray) -> np.ndarray:
        return np.array([self.label(v) for v in values]).reshape(-1, self.n_classes)

    def label(self, value: np.ndarray) -> np.ndarray:
        """First maximum, as the protocols; with continuous noise the margin is tracked.

        Integer (discrete) noisy counts tie, and both sides break ties to the
        first class, so no margin is needed then.
        """
        top = np.sort(np.asarray(value, dtype=float))[::-1]
        if top.size > 1 and self.numbers.mpc_noise != "discrete":
            self.margin = min(self.margin, float(top[0] - top[1]))
        return np.eye(self.n_classes)[int(np.argmax(value))]


def _scratch_scope() -> Scope:
    return Ledger(budget=Guarantee.unbounded(), dataset="agreement test").root


def robust_seed(
    reference: Callable[[int], tuple[Tree, float]],
    *,
    start: int = 0,
    margin: float = 1e-3,
    tries: int = 100,
) -> tuple[int, Tree]:
    """The first seed whose reference run keeps every noisy choice ``margin`` from a tie."""
    for seed in range(start, start + tries):
        tree, found = reference(seed)
        if found >= margin:
            return seed, tree
    raise PrivetError(f"no seed in [{start}, {start + tries}) keeps a margin of {margin}.")


def agreement_runs(
    reference: Callable[..., tuple[Tree, float]],
    protocol: Callable[..., Any],
    schema: Schema,
    codes: np.ndarray,
    y_codes: np.ndarray,
    *,
    backend: str = "local",
    start: int = 0,
    **params: Any,
) -> tuple[Any, Tree, int]:
    """A system's reference path and its protocol run with the same testing noise.

    ``reference`` (the system's ``reference_*``, see its ``testing`` module) runs
    with the first seed from ``start`` that :func:`robust_seed` accepts;
    ``protocol`` (the system's host ``run_*``) then runs on the same rows on
    ``backend`` with that seed's testing noise. Both get ``params``. Returns the
    protocol's run, the reference tree and the seed.
    """
    with allow_testing_noise():
        seed, tree = robust_seed(
            lambda s: reference(codes, y_codes, schema, seed=s, **params), start=start
        )
        run = protocol(
            codes,
            y_codes,
            schema.domain_sizes,
            schema.n_classes,
            backend=backend,
            _testing_noise=seed,
            **params,
        )
    return run, tree, seed


def compare_trees(protocol: Tree, reference: Tree, *, atol: float = 1e-3) -> list[str]:
    """Differences between an opened protocol tree and the reference tree (empty: equal)."""
    if not protocol.same_structure(reference):
        return [
            f"structure differs: splits {protocol.splits()} vs {reference.splits()}",
        ]
    problems = []
    leaves = np.flatnonzero(reference.feature < 0)
    for node in leaves:
        a, b = protocol.value[node], reference.value[node]
        if not np.allclose(a, b, atol=atol, rtol=0):
            problems.append(f"leaf {node}: {a.tolist()} vs {b.tolist()}")
    return problems


def compare_secret_tree(
    opened: dict[str, Any], reference: Tree, sizes: Sequence[int], width: int
) -> list[str]:
    """Differences between a reconstructed secret tree and the reference complete tree.

    Walks the reference: an internal node at level l, position j must have the
    one-hot indicator of its attribute in ``opened["indicators"][l][j]``; a
    leaf must have its label in ``opened["leaves"][j]``. Dummy branches (values
    beyond the attribute's domain size: zero leaves in the reference, empty
    subtrees in the protocol) are never reached by a prediction and are not
    compared.
    """
    depth = len(opened["indicators"])
    problems: list[str] = []
    m = opened["indicators"][0].shape[1] if depth else 0

    def walk(node: int, level: int, j: int) -> None:
        f = int(reference.feature[node])
        if f < 0:
            got, want = opened["leaves"][j], reference.value[node]
            if not np.array_equal(got, want.astype(np.int64)):
                problems.append(f"leaf {j}: {got.tolist()} vs {want.tolist()}")
            return
        row = opened["indicators"][level][j]
        want = np.eye(m, dtype=np.int64)[f]
        if not np.array_equal(row, want):
            problems.append(f"level {level} node {j}: indicator {row.tolist()}, want attribute {f}")
        start = int(reference.child_start[node])
        for v in range(int(sizes[f])):  # the real branches; the dummies follow
            walk(int(reference.children[start + v]), level + 1, j * width + v)

    walk(0, 0, 0)
    return problems
