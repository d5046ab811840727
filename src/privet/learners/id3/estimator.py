"""Non-private ID3: the accuracy ceiling for the private learners."""

from __future__ import annotations

from typing import Any

import numpy as np

from privet.learners._base import BaseTreeClassifier, _validate_params
from privet.learners._params import StrOptions
from privet.learners._trees.scores import SCORES, contingency
from privet.learners._trees.tree import TreeBuilder


class ID3Classifier(BaseTreeClassifier):
    """ID3 on categorical (or publicly binned) attributes, without privacy.

    Same tree shape as :class:`~privet.learners.DPID3Classifier` (a multiway
    split on one attribute per node, each attribute at most once on a path, at
    most ``max_depth`` splits), with exact scores and majority leaves. It
    releases exact counts: use it only as the non-private baseline.

    Parameters
    ----------
    max_depth : int, default=3
        Maximum number of splits on a root-to-leaf path.
    criterion : {"max", "entropy", "gini"}, default="max"
        Split score: the max operator of seed 000 (Eq. 1), information gain
        (Quinlan 1986), or Gini.
    schema : privet.data.Schema or None
        Public attribute domains.
    public_domain : {"schema", "infer"}, default="schema"
        ``"infer"`` reads domains from the data when no schema is given.
    random_state : None
        Unused; kept for a uniform learner API.

    Attributes
    ----------
    tree_ : Tree
        Fitted tree; leaf values are exact class counts.
    classes_ : ndarray
    schema_ : Schema
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "criterion": [StrOptions({"max", "entropy", "gini"})],
    }

    def __init__(
        self,
        *,
        max_depth: int = 3,
        criterion: str = "max",
        schema: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.max_depth = max_depth
        self.criterion = criterion
        self.schema = schema
        self.public_domain = public_domain
        self.random_state = random_state

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False  # no noise: the same data gives the same tree
        return tags

    def fit(self, X: Any, y: Any) -> ID3Classifier:
        _validate_params(self)
        self.schema_ = self._resolve_schema(X, y)
        codes, y_codes = self._prepare(X, y)
        self._fitted_common(self.schema_)
        sizes = self.schema_.domain_sizes
        c = self.schema_.n_classes
        score = SCORES[self.criterion]
        b = TreeBuilder(c)

        def grow(node: int, rows: np.ndarray, attrs: list[int], depth: int) -> None:
            counts = np.bincount(y_codes[rows], minlength=c)
            if depth == 0 or not attrs or rows.size == 0 or np.count_nonzero(counts) <= 1:
                b.set_leaf(node, counts if rows.size else np.zeros(c))
                return
            scores = [score(contingency(codes[rows, a], y_codes[rows], sizes[a], c)) for a in attrs]
            best = attrs[int(np.argmax(scores))]
            kids = b.split(node, best, sizes[best])
            col = codes[rows, best]
            rest = [a for a in attrs if a != best]
            for v, kid in enumerate(kids):
                sub = rows[col == v]
                if sub.size == 0:  # empty branch: parent's majority
                    b.set_leaf(kid, counts)
                else:
                    grow(kid, sub, rest, depth - 1)

        root = b.add_node(0)
        grow(root, np.arange(codes.shape[0]), list(range(len(sizes))), self.max_depth)
        self.tree_ = b.build()
        return self
