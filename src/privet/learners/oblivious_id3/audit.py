"""What the audits need to know about ODP+FMPC-ID3, declared where it lives.

``AUDIT_CONFIGURATIONS``: the configurations :mod:`privet.audits` can audit by
name (collected by :mod:`privet.audits.learners.registry` from every learner
package): the sound hidden exponential-mechanism split (the class's default),
the paper-faithful exact split, and both through the MPyC protocol, which
:class:`ProtocolObliviousID3` trains and queries.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.learners.oblivious_id3.estimator import ObliviousID3Classifier

__all__ = ["AUDIT_CONFIGURATIONS", "ProtocolObliviousID3"]


def _unbounded_ledger() -> Any:
    from privet.ledger import Guarantee, Ledger

    return Ledger(budget=Guarantee.unbounded(), dataset="audit")


class ProtocolObliviousID3:
    """ODP+FMPC-ID3 trained and queried through the MPyC protocol (seed 000, Alg. 1 and 4).

    A thin estimator over ``ObliviousID3Classifier(backend=...)``: the secret
    tree is trained by ``parties`` party processes (``backend="mpc"``) or
    MPyC's one-party runtime (``backend="local"``), and each prediction runs
    the oblivious prediction protocol, which reveals only the labels. Budgets,
    plan and charges are those of :class:`ObliviousID3Classifier` (the charges
    replayed from the run), so the ledger proves what it proves for the
    reference path.
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 1,
        split: str = "exact",
        schema: Any = None,
        ledger: Any = None,
        backend: str = "mpc",
        parties: int = 3,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.split = split
        self.schema = schema
        self.ledger = ledger
        self.backend = backend
        self.parties = parties
        self.random_state = random_state

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "epsilon",
                "max_depth",
                "split",
                "schema",
                "ledger",
                "backend",
                "parties",
                "random_state",
            )
        }

    def privacy_plan(self, schema: Any = None) -> Any:
        return self._learner().privacy_plan(schema)

    def _learner(self) -> ObliviousID3Classifier:
        return ObliviousID3Classifier(
            epsilon=self.epsilon,
            max_depth=self.max_depth,
            split=self.split,
            schema=self.schema,
            ledger=self.ledger if self.ledger is not None else _unbounded_ledger(),
            backend=self.backend,
            parties=1 if self.backend == "local" else int(self.parties),
            random_state=self.random_state,
        )

    def fit(self, X: Any, y: Any) -> ProtocolObliviousID3:
        """Train through the learner's own protocol path (plan, reservation, replayed charges)."""
        learner = self._learner().fit(X, y)
        for name in ("model_", "schema_", "classes_", "ledger_", "privacy_spent_", "privacy_plan_"):
            setattr(self, name, getattr(learner, name))
        self.privacy_claim_ = learner.privacy_claim_
        self._learner_ = learner
        return self

    def predict(self, X: Any) -> NDArray[Any]:
        """Labels by the oblivious prediction protocol (Alg. 4)."""
        return np.asarray(self._learner_.predict(X))

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """One-hot probabilities: the protocol reveals only the label."""
        labels = self.predict(X)
        return (labels[:, None] == self.classes_[None, :]).astype(float)  # type: ignore[no-any-return]


_REFERENCE = (
    {
        "name": "oblivious_id3_exact",
        "class": ObliviousID3Classifier,
        "title": "ObliviousID3Classifier(split='exact') (paper-faithful ODP+FMPC-ID3)",
        "note": "claims epsilon-DP; the hidden exact split is not private (proven: inf)",
        "options": {"split": "exact"},
        "order": 30,
    },
    {
        "name": "oblivious_id3",
        "class": ObliviousID3Classifier,
        "short_name": "obliviousid3",
        "title": "ObliviousID3Classifier(split='exponential') (sound variant)",
        "note": "hidden EM splits, proven epsilon-DP",
        "options": {"split": "exponential"},
        "order": 31,
    },
)

_PROTOCOL = (
    {
        "name": "oblivious_id3_exact_mpc",
        "class": ProtocolObliviousID3,
        "title": "ODP+FMPC-ID3 split='exact' through the MPyC protocol (3 parties)",
        "note": "the paper's protocol itself: secret shares do not make the split private",
        "options": {"split": "exact"},
        "path": "mpc",
        "slow": True,
        "order": 120,
    },
    {
        "name": "oblivious_id3_exact_local",
        "class": ProtocolObliviousID3,
        "title": "ODP+FMPC-ID3 split='exact' through the protocol (MPyC, one party)",
        "note": "the protocol code in MPyC's one-party runtime (fast)",
        "options": {"split": "exact", "backend": "local"},
        "path": "mpc",
        "order": 121,
    },
    {
        "name": "oblivious_id3_mpc",
        "class": ProtocolObliviousID3,
        "title": "ODP+FMPC-ID3 split='exponential' through the MPyC protocol (3 parties)",
        "note": "the sound protocol",
        "options": {"split": "exponential"},
        "path": "mpc",
        "slow": True,
        "order": 122,
    },
)

AUDIT_CONFIGURATIONS = _REFERENCE + (
    _PROTOCOL if importlib.util.find_spec("mpyc") is not None else ()
)
