"""Which learners the audits can train, and the names they answer to.

Every learner is looked up by its class name in :data:`privet.learners.__all__`
(``MPCID3Classifier``, not exported there, in :mod:`privet.learners.mpc_id3`)
and built by one picklable :class:`LearnerBuilder`; nothing here imports a
learner's module by hand, so a new system that registers itself in
:mod:`privet.learners` is auditable by its class name at once.

Names
-----
:func:`resolve_learner` accepts, for every learner:

* its class name, e.g. ``"DPID3Classifier"``;
* its short name from :data:`SHORT_NAMES`, e.g. ``"dpid3"``;
* an audit *configuration* name of :data:`LEARNERS`, e.g. ``"dp_id3"`` or
  ``"oblivious_id3_exact_local"`` (a class with fixed options: the sound split,
  the protocol path, Poisson subsampling...).

A class name and its short name give the configuration of
:data:`CLASS_CONFIGURATIONS`: the class with its own defaults, except that
forests audit five trees. ``ObliviousID3Classifier`` and ``obliviousid3`` are
therefore the sound ``split="exponential"`` (the class's default, configuration
``oblivious_id3``); the paper-faithful ``split="exact"`` is the configuration
``oblivious_id3_exact``.

==========================  ================  ==============================
class                       short name        configuration
==========================  ================  ==============================
``ID3Classifier``           ``id3``           ``id3``
``DPID3Classifier``         ``dpid3``         ``dp_id3``
``PartialMPCID3Classifier`` ``partialmpcid3`` ``partial_mpc_id3``
``ObliviousID3Classifier``  ``obliviousid3``  ``oblivious_id3``
``DPRandomForestClassifier`` ``dpforest``     ``dp_forest``
``DPExtraTreesClassifier``  ``dpextratrees``  ``dp_extra_trees``
``MPCID3Classifier``        ``mpcid3``        ``mpc_id3``
==========================  ================  ==============================
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from privet.errors import InvalidParameterError

__all__ = [
    "CLASS_CONFIGURATIONS",
    "LEARNERS",
    "SHORT_NAMES",
    "LearnerBuilder",
    "LearnerName",
    "LearnerSpec",
    "Output",
    "Progress",
    "ProtocolObliviousID3",
    "available_learners",
    "get_learner",
    "learner_class",
    "learner_names",
    "resolve_learner",
]

SHORT_NAMES: dict[str, str] = {
    "ID3Classifier": "id3",
    "DPID3Classifier": "dpid3",
    "PartialMPCID3Classifier": "partialmpcid3",
    "ObliviousID3Classifier": "obliviousid3",
    "DPRandomForestClassifier": "dpforest",
    "DPExtraTreesClassifier": "dpextratrees",
    "MPCID3Classifier": "mpcid3",
    "DPGradientBoostingClassifier": "dpgbt",
    "SecureSumID3Classifier": "securesumid3",
    "MatrixRandomForestClassifier": "matrixforest",
    "LDPBoostingClassifier": "ldpboosting",
    "FederatedDPTreeClassifier": "federatedcart",
}
"""One short name per learner class (``privet audit ... --learner dpid3``)."""

CLASS_CONFIGURATIONS: dict[str, str] = {
    "ID3Classifier": "id3",
    "DPID3Classifier": "dp_id3",
    "PartialMPCID3Classifier": "partial_mpc_id3",
    "ObliviousID3Classifier": "oblivious_id3",
    "DPRandomForestClassifier": "dp_forest",
    "DPExtraTreesClassifier": "dp_extra_trees",
    "MPCID3Classifier": "mpc_id3",
    "DPGradientBoostingClassifier": "dp_gbt",
    "SecureSumID3Classifier": "secure_sum_id3",
    "MatrixRandomForestClassifier": "matrix_forest",
    "LDPBoostingClassifier": "ldp_boosting",
    "FederatedDPTreeClassifier": "federated_cart",
}
"""The configuration of :data:`LEARNERS` that a class name (or its short name) stands for."""

Output = Literal["labels", "proba"]
"""What one trial of a learner test releases: predicted labels or probability vectors."""
Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after each batch of trainings."""

# Learners that privet.learners does not export (module to import them from).
_NOT_EXPORTED = {"MPCID3Classifier": "privet.learners.mpc_id3"}


def _unbounded_ledger(relation: str = "add_remove") -> Any:
    from privet.ledger import Guarantee, Ledger, NeighbouringRelation

    return Ledger(
        budget=Guarantee.unbounded(), dataset="audit", relation=NeighbouringRelation(relation)
    )


def learner_class(name: str) -> type:
    """The estimator class ``name``, looked up in :data:`privet.learners.__all__`."""
    if name == "ProtocolObliviousID3":
        return ProtocolObliviousID3
    learners = importlib.import_module("privet.learners")
    if name in getattr(learners, "__all__", ()):
        return getattr(learners, name)  # type: ignore[no-any-return]
    if name in _NOT_EXPORTED:
        return getattr(importlib.import_module(_NOT_EXPORTED[name]), name)  # type: ignore[no-any-return]
    raise InvalidParameterError(
        f"privet.learners has no learner class {name!r}; its learners are "
        f"{', '.join(n for n in learners.__all__ if n.endswith('Classifier'))}."
    )


def _accepts(func: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


@dataclass(frozen=True, slots=True)
class LearnerBuilder:
    """Picklable ``build(*, epsilon, max_depth, schema, ledger, random_state=None)``.

    Builds ``cls`` (a class name, see :func:`learner_class`) with ``options``
    and those of the audit's arguments that the class takes (a non-private
    learner has no ``epsilon`` or ``ledger``).
    """

    cls: str
    options: tuple[tuple[str, Any], ...] = ()

    def __call__(
        self,
        *,
        epsilon: float,
        max_depth: int,
        schema: Any,
        ledger: Any,
        random_state: Any = None,
    ) -> Any:
        klass = learner_class(self.cls)
        given = {
            "epsilon": epsilon,
            "max_depth": max_depth,
            "schema": schema,
            "ledger": ledger,
            "random_state": random_state,
            **dict(self.options),
        }
        return klass(**{k: v for k, v in given.items() if _accepts(klass, k)})


class ProtocolObliviousID3:
    """ODP+FMPC-ID3 trained and queried through the MPyC protocol (seed 000, Alg. 1 and 4).

    A thin estimator over ``ObliviousID3Classifier(backend=...)``: the secret
    tree is trained by ``parties`` party processes (``backend="mpc"``) or
    MPyC's one-party runtime (``backend="local"``), and each prediction runs
    the oblivious prediction protocol, which reveals only the labels. Budgets,
    plan and charges are those of :class:`~privet.learners.ObliviousID3Classifier`
    (the charges replayed from the run), so the ledger proves what it proves
    for the reference path.
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

    def _learner(self) -> Any:
        return learner_class("ObliviousID3Classifier")(
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
        for name in ("model_", "schema_", "classes_", "ledger_", "privacy_spent_"):
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
        return (labels[:, None] == self.classes_[None, :]).astype(float)


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnerSpec:
    """How to build one learner for an audit.

    Attributes
    ----------
    name : str
        Configuration name (``privet audit ... --learner NAME``).
    title : str
        Class and configuration, e.g. ``"ObliviousID3Classifier(split='exact')"``.
    build : callable
        ``build(*, epsilon, max_depth, schema, ledger) -> estimator`` (and
        ``random_state=`` if it takes it); must be picklable (a module-level
        function or a :class:`LearnerBuilder`) for ``n_jobs != 1``.
    path : str
        ``"reference"`` (plaintext reference path) or ``"mpc"`` (the protocol).
    slow : bool
        Whether one training takes seconds (protocol runs): audit with few trials.
    note : str
        What the audit is expected to show.
    """

    name: str
    title: str
    build: Callable[..., Any] = field(repr=False)
    path: str = "reference"
    slow: bool = False
    note: str = ""
    relation: str = "add_remove"

    def make(
        self,
        *,
        epsilon: float,
        max_depth: int,
        schema: Any,
        ledger: Any | None = None,
        random_state: Any = None,
    ) -> Any:
        """A fresh estimator; ``ledger=None`` gives it its own unbounded ledger.

        ``random_state`` seeds the training noise when the builder takes it.
        """
        kwargs: dict[str, Any] = {
            "epsilon": epsilon,
            "max_depth": max_depth,
            "schema": schema,
            "ledger": _unbounded_ledger(self.relation) if ledger is None else ledger,
        }
        if random_state is not None and _accepts(self.build, "random_state"):
            kwargs["random_state"] = random_state
        return self.build(**kwargs)


def _spec(name: str, title: str, cls: str, note: str, **kw: Any) -> LearnerSpec:
    options = tuple(kw.pop("options", {}).items())
    return LearnerSpec(name=name, title=title, build=LearnerBuilder(cls, options), note=note, **kw)


def _protocol_available() -> bool:
    try:
        return importlib.util.find_spec("mpyc") is not None
    except (ImportError, ValueError):  # pragma: no cover
        return False


def _registry() -> dict[str, LearnerSpec]:
    five = {"n_estimators": 5}
    specs = [
        _spec(
            "id3",
            "ID3Classifier (non-private baseline)",
            "ID3Classifier",
            "no claim, no ledger: exact splits and counts, any bound is possible",
        ),
        _spec(
            "dp_id3",
            "DPID3Classifier (seed 000, Alg. 6)",
            "DPID3Classifier",
            "EM splits and Laplace leaves: claimed = proven",
        ),
        _spec(
            "partial_mpc_id3",
            "PartialMPCID3Classifier (CDP+PMPC-ID3, reference path)",
            "PartialMPCID3Classifier",
            "revealed EM splits, DP leaves: claimed = proven",
        ),
        _spec(
            "oblivious_id3_exact",
            "ObliviousID3Classifier(split='exact') (paper-faithful ODP+FMPC-ID3)",
            "ObliviousID3Classifier",
            "claims epsilon-DP; the hidden exact split is not private (proven: inf)",
            options={"split": "exact"},
        ),
        _spec(
            "oblivious_id3",
            "ObliviousID3Classifier(split='exponential') (sound variant)",
            "ObliviousID3Classifier",
            "hidden EM splits, proven epsilon-DP",
            options={"split": "exponential"},
        ),
        _spec(
            "dp_forest",
            "DPRandomForestClassifier(5 trees, disjoint subsets)",
            "DPRandomForestClassifier",
            "parallel composition over disjoint subsets: claimed = proven",
            options=five,
        ),
        _spec(
            "dp_forest_poisson",
            "DPRandomForestClassifier(5 trees, Poisson subsamples)",
            "DPRandomForestClassifier",
            "claims k g epsilon (linearised amplification); proves the exact bound",
            options={**five, "sampling": "poisson"},
        ),
        _spec(
            "dp_extra_trees",
            "DPExtraTreesClassifier(5 trees, disjoint subsets)",
            "DPExtraTreesClassifier",
            "random splits, DP leaves: claimed = proven",
            options=five,
        ),
        _spec(
            "dp_gbt",
            "DPGradientBoostingClassifier (privet's DP boosted trees)",
            "DPGradientBoostingClassifier",
            "random splits, Gaussian Newton leaves in zCDP: proven (epsilon, delta)",
        ),
        _spec(
            "secure_sum_id3",
            "SecureSumID3Classifier(epsilon=...) (seed 001, sound DP variant)",
            "SecureSumID3Classifier",
            "distributed discrete Laplace on every summed count: proven epsilon",
        ),
        _spec(
            "matrix_forest",
            "MatrixRandomForestClassifier(16 trees, batch training) (seed 002)",
            "MatrixRandomForestClassifier",
            "matrix mechanism on the leaf counts: claimed = proven",
            options={"n_trees": 16},
        ),
        _spec(
            "ldp_boosting",
            "LDPBoostingClassifier(strict=True) (seed 004, local DP)",
            "LDPBoostingClassifier",
            "each owner perturbs once: epsilon-LDP under replace-one",
            relation="replace_one",
        ),
        _spec(
            "federated_cart",
            "FederatedDPTreeClassifier (seed 003, reference path)",
            "FederatedDPTreeClassifier",
            "Laplace histograms per node, budget-saving splits: proven epsilon per path",
        ),
    ]
    if _protocol_available():
        specs += [
            _spec(
                "mpc_id3",
                "MPCID3Classifier (MPC-ID3 baseline, 3 parties over TCP)",
                "MPCID3Classifier",
                "non-private: the opened tree is exact",
                options={"backend": "mpc"},
                path="mpc",
                slow=True,
            ),
            _spec(
                "oblivious_id3_exact_mpc",
                "ODP+FMPC-ID3 split='exact' through the MPyC protocol (3 parties)",
                "ProtocolObliviousID3",
                "the paper's protocol itself: secret shares do not make the split private",
                options={"split": "exact"},
                path="mpc",
                slow=True,
            ),
            _spec(
                "oblivious_id3_exact_local",
                "ODP+FMPC-ID3 split='exact' through the protocol (MPyC, one party)",
                "ProtocolObliviousID3",
                "the protocol code in MPyC's one-party runtime (fast)",
                options={"split": "exact", "backend": "local"},
                path="mpc",
            ),
            _spec(
                "oblivious_id3_mpc",
                "ODP+FMPC-ID3 split='exponential' through the MPyC protocol (3 parties)",
                "ProtocolObliviousID3",
                "the sound protocol",
                options={"split": "exponential"},
                path="mpc",
                slow=True,
            ),
        ]
    return {s.name: s for s in specs if _class_available(s)}


def _class_available(spec: LearnerSpec) -> bool:
    try:
        learner_class(spec.build.cls)  # type: ignore[attr-defined]
    except (InvalidParameterError, ImportError, AttributeError):
        return False
    return True


LEARNERS: dict[str, LearnerSpec] = _registry()
"""Every learner configuration privet can audit, by name (those whose classes exist)."""


class LearnerName(NamedTuple):
    """One row of :func:`learner_names`."""

    class_name: str
    short_name: str
    configuration: str


def learner_names() -> list[LearnerName]:
    """The class name, short name and configuration of every auditable learner class."""
    return [
        LearnerName(cls, SHORT_NAMES[cls], conf)
        for cls, conf in CLASS_CONFIGURATIONS.items()
        if conf in LEARNERS
    ]


def available_learners(*, include_slow: bool = True) -> list[str]:
    """Configuration names of the registered learners (``include_slow=False``: no protocol runs)."""
    return [n for n, s in LEARNERS.items() if include_slow or not s.slow]


def resolve_learner(learner: str | LearnerSpec) -> LearnerSpec:
    """The :class:`LearnerSpec` of ``learner``: a class name, a short name or a configuration.

    >>> resolve_learner("DPID3Classifier").name, resolve_learner("dpid3").name
    ('dp_id3', 'dp_id3')
    """
    if isinstance(learner, LearnerSpec):
        return learner
    if not isinstance(learner, str):
        raise InvalidParameterError(
            f"'learner' must be a learner name or a LearnerSpec; got {type(learner).__name__}."
        )
    if learner in LEARNERS:
        return LEARNERS[learner]
    by_short = {s: c for c, s in SHORT_NAMES.items()}
    cls = learner if learner in CLASS_CONFIGURATIONS else by_short.get(learner.lower())
    if cls is None:  # a class name in another case
        cls = next((c for c in CLASS_CONFIGURATIONS if c.lower() == learner.lower()), None)
    if cls is not None and CLASS_CONFIGURATIONS[cls] in LEARNERS:
        return LEARNERS[CLASS_CONFIGURATIONS[cls]]
    names = learner_names()
    raise InvalidParameterError(
        f"No learner {learner!r}; use a class name ({', '.join(n.class_name for n in names)}), "
        f"a short name ({', '.join(n.short_name for n in names)}) or a configuration "
        f"({', '.join(LEARNERS)}), or pass a LearnerSpec(name=..., title=..., build=...)."
    )


get_learner = resolve_learner
"""Alias of :func:`resolve_learner` (its name before the class and short names)."""
