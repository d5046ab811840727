"""Which learners the audits can train, and the names they answer to: found, not listed.

Every learner package of :mod:`privet.learners` declares, in its own ``audit``
module, the configurations it can be audited in (``AUDIT_CONFIGURATIONS``: a
name, the estimator class, its short name, fixed options, a title; see
``privet/learners/dp_id3/audit.py``) and, where the generic pairs do not fit,
its worst-case neighbouring pair. This module collects the declarations of
every package it finds; a new learner package is auditable as soon as it ships
its ``audit`` module, and nothing here grows with it.

A configuration is a dict with ``name`` (what ``privet audit learner NAME``
takes), ``class`` (the estimator class), ``short_name`` (the class's short name,
on the configuration a class name stands for), ``title``, ``note`` and
optionally ``options`` (fixed constructor arguments), ``relation``, ``path``
(``"reference"`` or ``"mpc"``), ``slow`` and ``order`` (its place in listings).

Names
-----
:func:`resolve_learner` accepts, for every learner:

* its class name, e.g. ``"DPID3Classifier"``;
* its short name from :data:`SHORT_NAMES`, e.g. ``"dpid3"``;
* an audit *configuration* name of :data:`LEARNERS`, e.g. ``"dp_id3"`` or
  ``"oblivious_id3_exact_local"`` (a class with fixed options: the sound split,
  the protocol path, Poisson subsampling...).

A class name and its short name give the configuration that declares the
short name (:data:`CLASS_CONFIGURATIONS`): ``ObliviousID3Classifier`` and
``obliviousid3`` are the sound ``split="exponential"``; the paper-faithful
``split="exact"`` is the configuration ``oblivious_id3_exact``.

Your own estimator: ``LearnerSpec(name=..., title=..., build=..., pair=...)``
with a picklable builder and, optionally, its worst-case pair.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

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
    "available_learners",
    "get_learner",
    "learner_class",
    "learner_names",
    "resolve_learner",
]

Output = Literal["labels", "proba"]
"""What one trial of a learner test releases: predicted labels or probability vectors."""
Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after each batch of trainings."""


def _unbounded_ledger(relation: str = "add_remove") -> Any:
    from privet.ledger import Guarantee, Ledger, NeighbouringRelation

    return Ledger(
        budget=Guarantee.unbounded(), dataset="audit", relation=NeighbouringRelation(relation)
    )


def learner_class(name: str | type) -> type:
    """The estimator class ``name``: a class, or a class name a learner package declares."""
    if isinstance(name, type):
        return name
    for conf in _declarations():
        if conf["class"].__name__ == name:
            return conf["class"]  # type: ignore[no-any-return]
    learners = importlib.import_module("privet.learners")
    if name in getattr(learners, "__all__", ()):
        return getattr(learners, name)  # type: ignore[no-any-return]
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

    cls: str | type
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
    relation : {"add_remove", "replace_one"}
        The neighbouring relation of the learner's ledger.
    pair : callable, optional
        ``pair(schema) -> LearnerPair`` (or the keyword arguments of
        :func:`~privet.audits.learners.worst_case.pair_from_codes`): the
        learner's worst-case neighbouring pair for the white-box audit. By
        default the learner's own declaration, else one derived from its plan.
    """

    name: str
    title: str
    build: Callable[..., Any] = field(repr=False)
    path: str = "reference"
    slow: bool = False
    note: str = ""
    relation: str = "add_remove"
    pair: Callable[[Any], Any] | None = field(default=None, repr=False)

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


def _declarations() -> list[dict[str, Any]]:
    """``AUDIT_CONFIGURATIONS`` of every ``privet.learners.<package>.audit`` module, in order."""
    learners = importlib.import_module("privet.learners")
    found: list[dict[str, Any]] = []
    for info in sorted(pkgutil.iter_modules(learners.__path__), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        name = f"privet.learners.{info.name}.audit"
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        found += [dict(c) for c in getattr(module, "AUDIT_CONFIGURATIONS", ())]
    return sorted(found, key=lambda c: c.get("order", 1000))


def _spec_of(conf: dict[str, Any]) -> LearnerSpec:
    return LearnerSpec(
        name=conf["name"],
        title=conf["title"],
        build=LearnerBuilder(conf["class"].__name__, tuple(conf.get("options", {}).items())),
        path=conf.get("path", "reference"),
        slow=bool(conf.get("slow", False)),
        note=conf.get("note", ""),
        relation=conf.get("relation", "add_remove"),
    )


_DECLARED = _declarations()

LEARNERS: dict[str, LearnerSpec] = {c["name"]: _spec_of(c) for c in _DECLARED}
"""Every learner configuration privet can audit, by name (declared by the learner packages)."""

SHORT_NAMES: dict[str, str] = {
    c["class"].__name__: c["short_name"] for c in _DECLARED if "short_name" in c
}
"""One short name per learner class (``privet audit ... --learner dpid3``)."""

CLASS_CONFIGURATIONS: dict[str, str] = {
    c["class"].__name__: c["name"] for c in _DECLARED if "short_name" in c
}
"""The configuration of :data:`LEARNERS` that a class name (or its short name) stands for."""


def __getattr__(name: str) -> Any:
    if name == "ProtocolObliviousID3":  # declared with the oblivious tree since issue 32
        from privet.learners.oblivious_id3.audit import ProtocolObliviousID3

        return ProtocolObliviousID3
    raise AttributeError(name)


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
