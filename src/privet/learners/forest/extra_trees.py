"""``DPExtraTreesClassifier``: random splits from the public schema, DP leaves (seed 000, App. D)."""

from __future__ import annotations

from typing import Any

import numpy as np

from privet.data import Schema
from privet.learners._base import plan_depth
from privet.learners._params import StrOptions
from privet.learners._trees.accounting import (
    EM_FORMS,
    ClaimRule,
    exponential_mechanism,
    histogram_mechanism,
    leaf_entry,
    leaf_mechanism,
    monotone_selection,
    relation_of,
)
from privet.learners._trees.ops import ReferenceOps, scope_labels
from privet.learners._trees.tree import Tree, TreeBuilder
from privet.learners.forest.base import _BaseDPForest
from privet.ledger import (
    NeighbouringRelation,
    PlanNode,
    Scope,
)


def one_leaf_release(leaf: str, relation: NeighbouringRelation) -> bool:
    """Whether all of a tree's leaves are released by one charge in the tree's scope.

    Laplace leaves: the leaves x classes count array has L1 sensitivity 1 under
    add/remove and 2 under replace-one (a replaced record leaves one cell and
    enters another, in the same leaf or not), exactly the sensitivity of one
    leaf's histogram; so one histogram release over every leaf costs what one
    leaf costs. Exponential-mechanism labels: one record changes the utilities
    of one leaf under add/remove (parallel composition, one charge); under
    replace-one it can change two leaves, so each leaf keeps its own scope.
    """
    return leaf == "laplace" or relation is NeighbouringRelation.ADD_REMOVE


def plan_extra_tree(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    epsilon: float,
    leaf: str,
    relation: Any,
    claim: ClaimRule,
    em_form: str = "paper",
) -> None:
    """An extra tree's charges: none for its random splits; one for all leaves or one per leaf."""
    if not one_leaf_release(leaf, relation):
        for level in range(depth):
            node = node.partition(max(width, 2), label=f"depth {level + 1}")
    node.charge(
        leaf_entry(leaf, epsilon, relation, monotone_selection(em_form, relation)),
        mechanism=leaf_mechanism(leaf),
        step="leaf",
        claim=claim("leaf", epsilon),
    )


def random_structure(
    n_attributes: int, sizes: Any, depth: int, rng: np.random.Generator, n_classes: int
) -> TreeBuilder:
    """The splits of an extra tree, drawn from public randomness (no data read).

    Depth first: a ``random_state`` gives the same splits whichever way the
    leaves are then released.
    """
    builder = TreeBuilder(n_classes)

    def grow(node: int, attrs: list[int], h: int) -> None:
        if h == 0 or not attrs:
            return
        best = attrs[int(rng.integers(len(attrs)))]
        kids = builder.split(node, best, sizes[best])
        rest = [a for a in attrs if a != best]
        for kid in kids:
            grow(kid, rest, h - 1)

    grow(builder.add_node(0), list(range(n_attributes)), depth)
    return builder


def grow_extra_tree(
    ops: ReferenceOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rng: np.random.Generator,
    rows: np.ndarray,
    em_form: str = "paper",
) -> Tree:
    """A DP extra tree (App. D): split attributes drawn uniformly at random.

    The splits read no data (public randomness), so only the leaves are
    charged, with the full ``epsilon``; the leaves are disjoint. Where one
    release covers every leaf (:func:`one_leaf_release`), the rows are routed to
    their leaves in one vectorised pass and the leaves x classes counts are
    released by one charge in the tree's scope; otherwise each leaf is charged
    in its own scope (all in one batch).
    """
    builder = random_structure(ops.n_attributes, ops.sizes, depth, rng, ops.n_classes)
    structure = builder.build()
    if one_leaf_release(leaf, scope.ledger.relation):
        nodes, values = _release_all_leaves(
            ops,
            structure,
            scope,
            epsilon=epsilon,
            leaf=leaf,
            claim=claim,
            rows=rows,
            monotone=monotone_selection(em_form, scope.ledger.relation),
        )
    else:
        leaves = _leaves_in_scopes(ops, structure, scope, schema, rows)
        nodes = [node for node, _, _ in leaves]
        values = ops.release_leaves(
            [(sc, r) for _, sc, r in leaves],
            leaf=leaf,
            epsilon=epsilon,
            claim=claim("leaf", epsilon),
        )
    for node, value in zip(nodes, values, strict=True):
        builder.set_leaf(int(node), value)
    return builder.build()


def _release_all_leaves(
    ops: ReferenceOps,
    structure: Tree,
    scope: Scope,
    *,
    epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rows: np.ndarray,
    monotone: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The leaves of ``structure`` and their values, by one release in the tree's scope.

    The rows are routed to their leaves in one vectorised pass; the leaves x
    classes counts are released together (Laplace counts or one EM label per leaf,
    in the monotone form ``exp(eps c / 1)`` with ``monotone``: the counts are
    monotone under add/remove, the only relation with one release here).
    """
    relation = scope.ledger.relation
    leaf_nodes = np.flatnonzero(structure.feature < 0)
    position = np.full(structure.node_count, -1, dtype=np.int64)
    position[leaf_nodes] = np.arange(leaf_nodes.size)
    c = ops.n_classes
    at = position[structure.apply(ops.codes[rows])]
    counts = np.bincount(at * c + ops.y[rows], minlength=leaf_nodes.size * c).reshape(-1, c)
    step = "leaf"
    if leaf == "laplace":
        values = np.asarray(
            histogram_mechanism(float(epsilon), relation)(
                counts, scope=scope, caller=ops.caller, step=step, claim=claim("leaf", epsilon)
            ),
            dtype=float,
        )
    else:
        labels = exponential_mechanism(float(epsilon), 1.0, relation, monotone)(
            counts.astype(float),
            scope=scope,
            caller=ops.caller,
            step=step,
            claim=claim("leaf", epsilon),
            disjoint_rows=True,
        )
        values = np.eye(c)[np.asarray(labels, dtype=np.int64)]
    return leaf_nodes, values


def _leaves_in_scopes(
    ops: ReferenceOps, structure: Tree, scope: Scope, schema: Schema, rows: np.ndarray
) -> list[tuple[int, Scope, np.ndarray]]:
    """Each leaf of ``structure`` with its own scope and rows, depth first.

    A leaf's scope is its part of the partition of every split above it; the
    partitions are made depth first, the order in which the splits were drawn.
    """
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def walk(node: int, sc: Scope, rows: np.ndarray) -> None:
        attr = int(structure.feature[node])
        if attr < 0:
            leaves.append((node, sc, rows))
            return
        start = int(structure.child_start[node])
        kids = structure.children[start : start + ops.sizes[attr]]
        parts = sc.partition(scope_labels(schema, attr))
        for kid, part, sub in zip(kids, parts, ops.partition(rows, attr), strict=True):
            walk(int(kid), part, sub)

    walk(0, scope, rows)
    return leaves


class DPExtraTreesClassifier(_BaseDPForest):
    """A forest of DP extra trees (seed 000, App. D): random splits, DP leaves.

    Each tree draws its split attributes uniformly at random (from
    ``random_state``, without reading data) and releases DP leaves with the
    full per-tree ``epsilon``; only the leaves are charged. Under replace-one,
    exponential leaves are charged one by one and a replaced record reaches two
    leaves' labels (2 epsilon a tree), so ``fit`` gives each leaf ``epsilon / 2``
    (``calibrated_epsilon_``) and a tree costs ``epsilon``.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees, at most 10,000 (``MAX_ESTIMATORS``).
    sampling : {"disjoint", "poisson"}, default="disjoint"
    sampling_rate : float in (0, 1] or None, default=None
        Poisson rate (``None``: ``1 / n_estimators``).
    epsilon : float, default=1.0
        Budget of each tree, all of it on the leaves.
    max_depth : int, default=3
    leaf : {"laplace", "exponential"}, default="laplace"
    em_form : {"auto", "paper"}, default="auto"
        Form of the exponential leaves: ``"auto"`` samples ``exp(eps c / 1)``
        under add/remove neighbours, where a leaf's class counts are monotone
        (adding a record raises one of them by 1), ``"paper"`` the paper's
        ``exp(eps c / 2)``; same charges either way (see
        :func:`~privet.learners._trees.accounting.monotone_selection`). Under
        replace-one, and for Laplace leaves, it changes nothing.
    schema, ledger, public_domain
        As for :class:`DPRandomForestClassifier`.
    random_state : int, RandomState or None
        Public randomness: the split attributes. The disjoint subsets are drawn
        from OS entropy (see :class:`DPRandomForestClassifier`).

    Attributes
    ----------
    trees_, ledger_, privacy_spent_, privacy_claim_, calibrated_epsilon_, classes_, schema_

    Notes
    -----
    Claimed and proven as for :class:`DPRandomForestClassifier`: epsilon for
    disjoint subsets; for Poisson subsamples the claim ``k g epsilon`` of
    Claim D.1 against the proven ``k ln(1 + g (e^epsilon - 1))``.

    Reference path only (no ``backend``): the protocols of seed 000 choose
    their splits from the data (Alg. 1, Alg. 7), and privet has no protocol
    for trees with public random splits and secret DP leaves.

    References
    ----------
    Seed 000, App. D (the extra-trees DP forest, disjoint subsets) and App. D.1
    (Claim D.1, Poisson subsampling).
    """

    _parameter_constraints = {
        **_BaseDPForest._parameter_constraints,
        "em_form": [StrOptions(set(EM_FORMS))],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 10,
        sampling: str = "disjoint",
        sampling_rate: float | None = None,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        em_form: str = "auto",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.sampling = sampling
        self.sampling_rate = sampling_rate
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.em_form = em_form
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    def _plan_tree(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        plan_extra_tree(
            node,
            depth=plan_depth(self.max_depth, schema),
            width=schema.max_domain_size if schema is not None else 2,
            epsilon=float(self.epsilon),
            leaf=self.leaf,
            relation=relation_of(self.ledger),
            claim=claim,
            em_form=self.em_form,
        )

    def _grow_tree(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        rows: np.ndarray,
        claim: ClaimRule,
        rng: np.random.RandomState,
    ) -> Tree:
        schema = self.schema_
        ops = ReferenceOps(
            codes,
            y_codes,
            schema.domain_sizes,
            schema.n_classes,
            caller=type(self).__name__,
            em_form=self.em_form,
        )
        return grow_extra_tree(
            ops,
            scope,
            schema,
            depth=plan_depth(self.max_depth, schema),
            epsilon=float(self.epsilon),
            leaf=self.leaf,
            claim=claim,
            rng=np.random.default_rng(rng.randint(2**31)),
            rows=rows,
            em_form=self.em_form,
        )
