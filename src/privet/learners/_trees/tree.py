"""A multiway decision tree over integer-coded categorical attributes.

Stored as flat arrays (like scikit-learn's ``Tree``) so prediction is a few
vectorised steps, one per level. Node 0 is the root. An internal node ``i``
splits on attribute ``feature[i]`` and its child for code ``v`` is
``children[child_start[i] + v]``; a leaf has ``feature[i] == -1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class TreeBuilder:
    """Grows a :class:`Tree` node by node (used by every learner's fit)."""

    n_classes: int
    feature: list[int] = field(default_factory=list)
    child_start: list[int] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    value: list[np.ndarray | None] = field(default_factory=list)  # None: zeros
    depth: list[int] = field(default_factory=list)

    def add_node(self, depth: int) -> int:
        self.feature.append(-1)
        self.child_start.append(-1)
        self.value.append(None)
        self.depth.append(depth)
        return len(self.feature) - 1

    def split(self, node: int, feature: int, n_children: int) -> list[int]:
        """Make ``node`` internal on ``feature`` and return its new children."""
        self.feature[node] = int(feature)
        self.child_start[node] = len(self.children)
        kids = [self.add_node(self.depth[node] + 1) for _ in range(n_children)]
        self.children.extend(kids)
        return kids

    def set_leaf(self, node: int, value: Sequence[float] | np.ndarray) -> None:
        self.value[node] = np.asarray(value, dtype=float)

    def _values(self) -> np.ndarray:
        out = np.zeros((len(self.value), self.n_classes))
        for i, v in enumerate(self.value):
            if v is not None:
                out[i] = v
        return out

    def build(self) -> Tree:
        return Tree(
            feature=np.asarray(self.feature, dtype=np.int64),
            child_start=np.asarray(self.child_start, dtype=np.int64),
            children=np.asarray(self.children, dtype=np.int64),
            value=self._values(),
            depth=np.asarray(self.depth, dtype=np.int64),
        )


@dataclass(frozen=True)
class Tree:
    """A fitted multiway tree (see module docstring).

    Attributes
    ----------
    value : ndarray of shape (n_nodes, n_classes)
        Per leaf, the released class scores (noisy counts or a one-hot label);
        zero rows for internal nodes.
    """

    feature: np.ndarray
    child_start: np.ndarray
    children: np.ndarray
    value: np.ndarray
    depth: np.ndarray

    @property
    def node_count(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.feature < 0))

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if self.node_count else 0

    def apply(self, codes: np.ndarray) -> np.ndarray:
        """Leaf index reached by each row of integer codes (n, d)."""
        codes = np.asarray(codes, dtype=np.int64)
        node = np.zeros(codes.shape[0], dtype=np.int64)
        rows = np.arange(codes.shape[0])
        for _ in range(self.max_depth):
            f = self.feature[node]
            inner = f >= 0
            if not inner.any():
                break
            r, n = rows[inner], node[inner]
            node[inner] = self.children[self.child_start[n] + codes[r, f[inner]]]
        return node

    def leaf_values(self, codes: np.ndarray) -> np.ndarray:
        return self.value[self.apply(codes)]

    def splits(self) -> list[tuple[int, int]]:
        """(node, feature) of every internal node, in node order."""
        return [(i, int(f)) for i, f in enumerate(self.feature) if f >= 0]

    def same_structure(self, other: Tree) -> bool:
        return (
            np.array_equal(self.feature, other.feature)
            and np.array_equal(self.child_start, other.child_start)
            and np.array_equal(self.children, other.children)
        )

    def to_text(
        self,
        feature_names: Sequence[str],
        category_names: Sequence[Sequence[object]],
        class_names: Sequence[object],
        *,
        max_lines: int = 60,
    ) -> str:
        """An indented text rendering, cut after ``max_lines`` lines."""
        lines: list[str] = []

        def walk(node: int, prefix: str) -> None:
            if len(lines) >= max_lines:
                return
            f = int(self.feature[node])
            if f < 0:
                label = class_names[int(np.argmax(self.value[node]))]
                lines.append(f"{prefix}→ {label}")
                return
            start = int(self.child_start[node])
            for v, cat in enumerate(category_names[f]):
                if len(lines) >= max_lines:
                    return
                child = int(self.children[start + v])
                if self.feature[child] < 0:
                    label = class_names[int(np.argmax(self.value[child]))]
                    lines.append(f"{prefix}{feature_names[f]} = {cat} → {label}")
                else:
                    lines.append(f"{prefix}{feature_names[f]} = {cat}:")
                    walk(child, prefix + "    ")

        walk(0, "")
        if len(lines) >= max_lines:
            lines.append("…")
        return "\n".join(lines)


def oblivious_predict(tree: Tree, onehot: np.ndarray) -> np.ndarray:
    """Seed 000, Alg. 4 (Predict) on plaintext: the leaf value each record selects.

    ``tree`` is a complete ``w``-ary tree: every internal node has exactly
    ``w`` children, the real branches first and then the *dummy* branches of
    the padded values (App. C.1). ``onehot`` is ``(n, m, w)`` from
    :func:`privet.data.one_hot`. At an internal node with attribute indicator
    vector ``I`` (one-hot of ``tree.feature``), the flag of branch ``i`` is
    ``f_i = t_i · I`` (Alg. 4 step 5), i.e. the record's ``i``-th one-hot
    column of that attribute; the node returns ``sum_i f_i c_i`` over its
    children's results ``c_i`` (steps 6-8). A dummy column is zero in every
    record, so a dummy branch's flag is 0 and its subtree never contributes:
    exactly one root-to-leaf path has all flags 1. Costs O(nodes * n); use
    :meth:`Tree.apply` for speed, this for checking the protocol's logic.

    Returns
    -------
    ndarray of shape (n, n_classes)
        The selected leaf's value row (a one-hot label for the oblivious tree).
    """
    H = np.asarray(onehot, dtype=float)
    n, m, w = H.shape
    c = tree.value.shape[1]
    n_internal = int(np.sum(tree.feature >= 0))
    if tree.children.shape[0] != w * n_internal:
        raise ValueError(
            f"oblivious_predict needs a complete {w}-ary tree (w from the one-hot width), but "
            f"the tree has {tree.children.shape[0]} children for {n_internal} internal nodes."
        )

    def predict(node: int) -> np.ndarray:
        f = int(tree.feature[node])
        if f < 0:  # step 1-2: a leaf returns its (secret) label
            return np.broadcast_to(tree.value[node], (n, c))
        indicator = np.zeros(m)
        indicator[f] = 1.0
        flags = np.einsum("niw,i->nw", H, indicator)  # step 5: f_i = t_i · I
        start = int(tree.child_start[node])
        out = np.zeros((n, c))
        for i in range(w):  # steps 6-8: c = sum_i f_i · Predict(t, Γ_2i)
            out += flags[:, i : i + 1] * predict(int(tree.children[start + i]))
        return out

    return predict(0)
