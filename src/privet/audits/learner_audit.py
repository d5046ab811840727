"""Empirical DP tests of the tree learners: trainings as trials, predictions as outputs.

A learner is a randomised algorithm from datasets to models, and every model is
queried only through its predictions, so the released output of one *trial* is
a full training run followed by predictions on a few fixed *probe* queries.
Neighbouring datasets ``D`` and ``D' = D + r`` (add/remove) are chosen so that
the one record ``r`` changes the learner's structure:

* :func:`near_tie_pair` — two attributes whose split scores tie on ``D``; ``r``
  raises one score by 1 and flips which attribute an exact argmax picks, and the
  probe queries land in leaves with opposite majorities. This is the record
  that exposes a non-randomised ("hidden") split.
* :func:`lone_leaf_pair` — ``r`` differs from every record of ``D`` in every
  attribute, so whatever splits a tree makes, ``r`` sits alone in its leaf; the
  probe is ``r`` itself.

:func:`learner_dp_test` runs the trainings (joblib, with a progress callback),
keeps the predictions and bounds epsilon from below with
:func:`~privet.audits.estimate_epsilon_lower_bound` (events chosen on half the
trainings, counted on the other half; Clopper–Pearson). :func:`learner_one_run`
is the one-training audit of Steinke, Nasr and Jagielski (2023) with ``m``
mislabelled canaries. :func:`audit_learner` puts it all together with the
learner's *claimed* and *proven* epsilon (DESIGN.md, "Privacy truth"), and
optionally a membership-inference experiment.

Every learner of privet is registered in :data:`LEARNERS` (built from what is
importable): the paper-faithful ``ObliviousID3Classifier(split="exact")`` claims
epsilon-DP, its ledger proves nothing finite, and the near-tie pair shows why.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray

from privet.audits.bounds import check_confidence
from privet.audits.dptest import DPTestResult, estimate_epsilon_lower_bound
from privet.audits.one_run import OneRunAuditResult, one_run_audit
from privet.errors import InvalidParameterError

__all__ = [
    "LEARNERS",
    "Guarantees",
    "LearnerAudit",
    "LearnerDPTest",
    "LearnerPair",
    "LearnerSpec",
    "audit_learner",
    "audit_learner_leaf",
    "available_learners",
    "claimed_and_proven",
    "frame_from_codes",
    "get_learner",
    "learner_dp_test",
    "learner_one_run",
    "lone_leaf_pair",
    "near_tie_pair",
]

Output = Literal["labels", "proba"]
Progress = Callable[[int, int], None]


# --------------------------------------------------------------------------- learners


def _unbounded_ledger() -> Any:
    from privet.ledger import Guarantee, Ledger

    return Ledger(budget=Guarantee.unbounded(), dataset="audit")


def _build_id3(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners import ID3Classifier

    return ID3Classifier(max_depth=max_depth, schema=schema)


def _build_dp_id3(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners import DPID3Classifier

    return DPID3Classifier(epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger)


def _build_partial(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.partial_mpc_id3 import PartialMPCID3Classifier

    return PartialMPCID3Classifier(
        epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger
    )


def _build_oblivious_exact(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.oblivious_id3 import ObliviousID3Classifier

    return ObliviousID3Classifier(
        epsilon=epsilon, max_depth=max_depth, split="exact", schema=schema, ledger=ledger
    )


def _build_oblivious(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.oblivious_id3 import ObliviousID3Classifier

    return ObliviousID3Classifier(
        epsilon=epsilon, max_depth=max_depth, split="exponential", schema=schema, ledger=ledger
    )


def _build_forest(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.forest import DPRandomForestClassifier

    return DPRandomForestClassifier(
        n_estimators=5, epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger
    )


def _build_forest_poisson(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.forest import DPRandomForestClassifier

    return DPRandomForestClassifier(
        n_estimators=5,
        sampling="poisson",
        epsilon=epsilon,
        max_depth=max_depth,
        schema=schema,
        ledger=ledger,
    )


def _build_extra_trees(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.forest import DPExtraTreesClassifier

    return DPExtraTreesClassifier(
        n_estimators=5, epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger
    )


def _build_mpc_id3(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    from privet.learners.mpc_id3 import MPCID3Classifier

    return MPCID3Classifier(max_depth=max_depth, backend="mpc", schema=schema, ledger=ledger)


class ProtocolObliviousID3:
    """ODP+FMPC-ID3 trained and queried through the MPyC protocol (seed 000, Alg. 1 and 4).

    A thin estimator over :func:`privet.learners.oblivious_id3.host.run_oblivious_id3` and
    :func:`~privet.learners.oblivious_id3.host.run_oblivious_predict`: the secret tree is
    trained by ``parties`` party processes (``backend="mpc"``) or MPyC's
    one-party runtime (``backend="local"``), and each prediction runs the
    oblivious prediction protocol, which reveals only the labels. Budgets,
    plan and charges are those of :class:`~privet.learners.ObliviousID3Classifier`
    (the charges replayed from the run by
    :func:`~privet.learners.oblivious_id3.replay.charge_oblivious_run`), so the ledger
    proves what it proves for the reference path.
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
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.split = split
        self.schema = schema
        self.ledger = ledger
        self.backend = backend
        self.parties = parties

    def _learner(self) -> Any:
        from privet.learners.oblivious_id3 import ObliviousID3Classifier

        return ObliviousID3Classifier(
            epsilon=self.epsilon,
            max_depth=self.max_depth,
            split=self.split,
            schema=self.schema,
            ledger=self.ledger if self.ledger is not None else _unbounded_ledger(),
            backend=self.backend,
            parties=1 if self.backend == "local" else int(self.parties),
        )

    def fit(self, X: Any, y: Any) -> ProtocolObliviousID3:
        """Train through the learner's own protocol path (plan, reservation, replayed charges)."""
        learner = self._learner().fit(X, y)
        self.model_ = learner.model_
        self.schema_ = learner.schema_
        self.classes_ = learner.classes_
        self.ledger_ = learner.ledger_
        self.privacy_spent_ = learner.privacy_spent_
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


def _build_protocol_exact(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    return ProtocolObliviousID3(
        epsilon=epsilon, max_depth=max_depth, split="exact", schema=schema, ledger=ledger
    )


def _build_protocol_exact_local(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    return ProtocolObliviousID3(
        epsilon=epsilon,
        max_depth=max_depth,
        split="exact",
        schema=schema,
        ledger=ledger,
        backend="local",
    )


def _build_protocol_sound(*, epsilon: float, max_depth: int, schema: Any, ledger: Any) -> Any:
    return ProtocolObliviousID3(
        epsilon=epsilon, max_depth=max_depth, split="exponential", schema=schema, ledger=ledger
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnerSpec:
    """How to build one learner for an audit.

    Attributes
    ----------
    name : str
        Registry key (``privet audit ... --learner NAME``).
    title : str
        Class and configuration, e.g. ``"ObliviousID3Classifier(split='exact')"``.
    build : callable
        ``build(*, epsilon, max_depth, schema, ledger) -> estimator``; must be
        picklable (a module-level function) for ``n_jobs != 1``.
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

    def make(
        self, *, epsilon: float, max_depth: int, schema: Any, ledger: Any | None = None
    ) -> Any:
        """A fresh estimator; ``ledger=None`` gives it its own unbounded ledger."""
        return self.build(
            epsilon=epsilon,
            max_depth=max_depth,
            schema=schema,
            ledger=_unbounded_ledger() if ledger is None else ledger,
        )


def _registry() -> dict[str, LearnerSpec]:
    specs = [
        LearnerSpec(
            name="id3",
            title="ID3Classifier (non-private baseline)",
            build=_build_id3,
            note="no claim, no ledger: exact splits and counts, any bound is possible",
        ),
        LearnerSpec(
            name="dp_id3",
            title="DPID3Classifier (seed 000, Alg. 6)",
            build=_build_dp_id3,
            note="EM splits and Laplace leaves: claimed = proven",
        ),
    ]
    optional = [
        (
            "privet.learners.partial_mpc_id3",
            LearnerSpec(
                name="partial_mpc_id3",
                title="PartialMPCID3Classifier (CDP+PMPC-ID3, reference path)",
                build=_build_partial,
                note="revealed EM splits, DP leaves: claimed = proven",
            ),
        ),
        (
            "privet.learners.oblivious_id3",
            LearnerSpec(
                name="oblivious_id3_exact",
                title="ObliviousID3Classifier(split='exact') (paper-faithful ODP+FMPC-ID3)",
                build=_build_oblivious_exact,
                note="claims epsilon-DP; the hidden exact split is not private (proven: inf)",
            ),
        ),
        (
            "privet.learners.oblivious_id3",
            LearnerSpec(
                name="oblivious_id3",
                title="ObliviousID3Classifier(split='exponential') (sound variant)",
                build=_build_oblivious,
                note="hidden EM splits, proven epsilon-DP",
            ),
        ),
        (
            "privet.learners.forest",
            LearnerSpec(
                name="dp_forest",
                title="DPRandomForestClassifier(5 trees, disjoint subsets)",
                build=_build_forest,
                note="parallel composition over disjoint subsets: claimed = proven",
            ),
        ),
        (
            "privet.learners.forest",
            LearnerSpec(
                name="dp_forest_poisson",
                title="DPRandomForestClassifier(5 trees, Poisson subsamples)",
                build=_build_forest_poisson,
                note="claims k g epsilon (linearised amplification); proves the exact bound",
            ),
        ),
        (
            "privet.learners.forest",
            LearnerSpec(
                name="dp_extra_trees",
                title="DPExtraTreesClassifier(5 trees, disjoint subsets)",
                build=_build_extra_trees,
                note="random splits, DP leaves: claimed = proven",
            ),
        ),
        (
            "privet.learners.mpc_id3",
            LearnerSpec(
                name="mpc_id3",
                title="MPCID3Classifier (MPC-ID3 baseline, 3 parties over TCP)",
                build=_build_mpc_id3,
                path="mpc",
                slow=True,
                note="non-private: the opened tree is exact",
            ),
        ),
        (
            "privet.learners.oblivious_id3.host",
            LearnerSpec(
                name="oblivious_id3_exact_mpc",
                title="ODP+FMPC-ID3 split='exact' through the MPyC protocol (3 parties)",
                build=_build_protocol_exact,
                path="mpc",
                slow=True,
                note="the paper's protocol itself: secret shares do not make the split private",
            ),
        ),
        (
            "privet.learners.oblivious_id3.host",
            LearnerSpec(
                name="oblivious_id3_exact_local",
                title="ODP+FMPC-ID3 split='exact' through the protocol (MPyC, one party)",
                build=_build_protocol_exact_local,
                path="mpc",
                note="the protocol code in MPyC's one-party runtime (fast)",
            ),
        ),
        (
            "privet.learners.oblivious_id3.host",
            LearnerSpec(
                name="oblivious_id3_mpc",
                title="ODP+FMPC-ID3 split='exponential' through the MPyC protocol (3 parties)",
                build=_build_protocol_sound,
                path="mpc",
                slow=True,
                note="the sound protocol",
            ),
        ),
    ]
    import importlib.util

    for module, spec in optional:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # pragma: no cover - parent package missing
            found = False
        if found:
            specs.append(spec)
    return {s.name: s for s in specs}


LEARNERS: dict[str, LearnerSpec] = _registry()
"""Every learner privet can audit, by name (those whose modules exist)."""


def available_learners(*, include_slow: bool = True) -> list[str]:
    """Names of the registered learners (``include_slow=False``: reference paths only)."""
    return [n for n, s in LEARNERS.items() if include_slow or not s.slow]


def get_learner(learner: str | LearnerSpec) -> LearnerSpec:
    """The :class:`LearnerSpec` of ``learner`` (a name or a spec)."""
    if isinstance(learner, LearnerSpec):
        return learner
    try:
        return LEARNERS[learner]
    except KeyError:
        raise InvalidParameterError(
            f"No learner {learner!r}; choose among {', '.join(LEARNERS)}, or pass a "
            "LearnerSpec(name=..., title=..., build=...)."
        ) from None


# ------------------------------------------------------------------ neighbouring pairs


def _raw_value(attr: Any, code: int) -> Any:
    from privet.data import Categorical

    if isinstance(attr, Categorical):
        return attr.categories[int(code)]
    edges = attr.edges
    return 0.5 * (edges[int(code)] + edges[int(code) + 1])  # the middle of the public bin


def frame_from_codes(
    schema: Any, codes: Any, y_codes: Any | None = None
) -> tuple[pd.DataFrame, pd.Series | None]:
    """Records with the given attribute (and class) codes, as raw values in ``schema``.

    Categorical codes become their categories, numeric codes the middle of
    their public bin. Returns ``(X, y)``, ``y`` None without ``y_codes``.
    """
    codes = np.atleast_2d(np.asarray(codes, dtype=np.int64))
    X = pd.DataFrame(
        {a.name: [_raw_value(a, c) for c in codes[:, j]] for j, a in enumerate(schema.attributes)}
    )
    if y_codes is None:
        return X, None
    y = pd.Series(
        [schema.target.categories[int(c)] for c in np.asarray(y_codes).ravel()],
        name=schema.target_name,
    )
    return X, y


@dataclass(frozen=True, eq=False)
class LearnerPair:
    """Neighbouring training sets ``D`` and ``D' = D + record``, and the probe queries.

    Attributes
    ----------
    kind : str
        ``"near_tie"``, ``"lone_leaf"`` or a user label.
    description : str
        What the record does to the learner.
    X0, y0, X1, y1
        ``D`` and ``D'``.
    probes : DataFrame
        The queries whose predictions are the released output of one trial.
    schema : Schema
        The public schema of the records.
    max_depth : int or None
        The depth the pair is designed for (None: any).
    """

    kind: str
    description: str
    X0: pd.DataFrame = field(repr=False)
    y0: pd.Series = field(repr=False)
    X1: pd.DataFrame = field(repr=False)
    y1: pd.Series = field(repr=False)
    probes: pd.DataFrame = field(repr=False)
    schema: Any = field(repr=False)
    max_depth: int | None = None

    @property
    def n_records(self) -> tuple[int, int]:
        return len(self.X0), len(self.X1)


def near_tie_pair(
    schema: Any,
    *,
    attributes: tuple[int, int] = (0, 1),
    classes: tuple[int, int] = (0, 1),
    majority: int = 20,
    minority: int = 5,
) -> LearnerPair:
    """A record that flips an exact tie between two split attributes.

    With ``a, b`` the two attributes (codes 0 and 1 of each) and classes
    ``c0, c1``, ``D`` holds ``majority`` records ``(a=0, b=0, c0)``,
    ``majority`` records ``(a=1, b=1, c1)`` and ``minority`` records each of
    ``(a=0, b=1, c0)`` and ``(a=0, b=1, c1)``; every other attribute is at code
    0 (constant, so it never scores above ``a`` and ``b``). The max-operator
    scores (seed 000, Eq. 1) of ``a`` and ``b`` are both
    ``2 * majority + minority``: an exact tie, won by ``a`` (the lower index;
    every exact argmax in privet breaks ties that way). The record
    ``r = (a=0, b=1, c1)`` raises the score of ``b`` by one and leaves ``a``'s,
    so on ``D' = D + r`` the exact argmax picks ``b``. The probe ``(a=0, b=1)``
    then lands in a leaf whose majority is ``c0`` on ``D`` and ``c1`` on ``D'``.

    Designed for depth-1 trees (``max_depth=1``): deeper trees that split on
    both ``a`` and ``b`` end with the same leaves in either order, which hides
    the flip in this two-attribute construction.
    """
    a, b = attributes
    if a == b or not (0 <= a < schema.n_features and 0 <= b < schema.n_features):
        raise InvalidParameterError(
            f"near_tie_pair needs two different attribute indices below {schema.n_features}; "
            f"got {attributes}."
        )
    for j in (a, b):
        if schema.domain_sizes[j] < 2:
            raise InvalidParameterError(
                f"Attribute {schema.feature_names[j]!r} has one value; the near-tie pair needs "
                "two attributes with at least two values each."
            )
    c0, c1 = classes
    if c0 == c1 or max(c0, c1) >= schema.n_classes:
        raise InvalidParameterError(
            f"near_tie_pair needs two different class indices below {schema.n_classes}; got "
            f"{classes}."
        )
    if not 0 < minority < majority:
        raise InvalidParameterError(
            f"near_tie_pair needs 0 < minority < majority; got {minority}, {majority}."
        )
    blocks = [((0, 0), c0, majority), ((1, 1), c1, majority), ((0, 1), c0, minority)]
    blocks.append(((0, 1), c1, minority))
    rows, labels = [], []
    for (va, vb), c, count in blocks:
        for _ in range(count):
            r = np.zeros(schema.n_features, dtype=np.int64)
            r[a], r[b] = va, vb
            rows.append(r)
            labels.append(c)
    record = np.zeros(schema.n_features, dtype=np.int64)
    record[a], record[b] = 0, 1
    codes0 = np.array(rows)
    X0, y0 = frame_from_codes(schema, codes0, labels)
    X1, y1 = frame_from_codes(schema, np.vstack([codes0, record]), [*labels, c1])
    probe_codes = np.zeros((4, schema.n_features), dtype=np.int64)
    probe_codes[:, a] = [0, 0, 1, 1]
    probe_codes[:, b] = [0, 1, 0, 1]
    probes, _ = frame_from_codes(schema, probe_codes)
    fa, fb = schema.feature_names[a], schema.feature_names[b]
    return LearnerPair(
        kind="near_tie",
        description=(
            f"{fa!r} and {fb!r} tie at score {2 * majority + minority} on D ({len(X0)} records); "
            f"the added record raises {fb!r} to {2 * majority + minority + 1}"
        ),
        X0=X0,
        y0=y0,  # type: ignore[arg-type]
        X1=X1,
        y1=y1,  # type: ignore[arg-type]
        probes=probes,
        schema=schema,
        max_depth=1,
    )


def lone_leaf_pair(
    data: Any,
    *,
    schema: Any = None,
    canary: int | None = None,
    max_rows: int | None = None,
    random_state: int | np.random.Generator | None = None,
) -> LearnerPair:
    """A record that sits alone in its leaf, whatever the tree's splits.

    The canary is row ``canary`` of ``data`` or, by default, a record made of
    the least frequent value of every attribute; ``D`` keeps only the records
    that differ from it in *every* attribute (at most ``max_rows`` of them,
    drawn at random), so on any root-to-leaf path of length at least one the
    canary shares its leaf with nobody. Its class is
    set to the rarest class of ``D`` (one absent from ``D`` if there is one), so
    that the empty leaf of ``D`` and the canary's leaf of ``D'`` disagree as much
    as they can. The probe is the canary itself.

    Parameters
    ----------
    data : privet Dataset or (X, y)
        Where the canary and ``D`` come from.
    schema : Schema, optional
        Required when ``data`` is ``(X, y)``.
    canary : int, optional
        Row index of the canary (default: the rarest values, see above).
    max_rows : int, optional
        Size cap of ``D``.
    random_state : int or Generator, optional
    """
    X, y, schema = _xy_schema(data, schema)
    rng = np.random.default_rng(random_state)
    codes = schema.encode(X)
    y_codes = schema.encode_target(y)
    if canary is None:
        record = np.array(
            [
                int(np.argmin(np.bincount(codes[:, j], minlength=size)))
                for j, size in enumerate(schema.domain_sizes)
            ]
        )
        what = "a canary of the rarest value of every attribute"
    else:
        idx = int(canary)
        if not 0 <= idx < len(X):
            raise InvalidParameterError(
                f"canary must be a row index below {len(X)}; got {canary!r}."
            )
        record = codes[idx]
        what = f"row {idx}"
    keep = np.flatnonzero(np.all(codes != record, axis=1))
    if keep.size == 0:
        raise InvalidParameterError(
            f"No record of the data differs from {what} in every attribute; pick another "
            "canary or a dataset with more varied records."
        )
    if max_rows is not None and keep.size > max_rows:
        keep = np.sort(rng.choice(keep, size=int(max_rows), replace=False))
    counts = np.bincount(y_codes[keep], minlength=schema.n_classes)
    label = int(np.argmin(counts))  # the rarest class of D (absent ones first)
    X0, y0 = frame_from_codes(schema, codes[keep], y_codes[keep])
    X1, y1 = frame_from_codes(
        schema, np.vstack([codes[keep], record]), [*y_codes[keep].tolist(), label]
    )
    probes, _ = frame_from_codes(schema, record)
    return LearnerPair(
        kind="lone_leaf",
        description=(
            f"{what} (class {schema.classes[label]!r}) differs from each of the "
            f"{len(keep)} records of D in every attribute: alone in its leaf"
        ),
        X0=X0,
        y0=y0,  # type: ignore[arg-type]
        X1=X1,
        y1=y1,  # type: ignore[arg-type]
        probes=probes,
        schema=schema,
    )


def _xy_schema(data: Any, schema: Any) -> tuple[pd.DataFrame, pd.Series, Any]:
    if hasattr(data, "frame") and hasattr(data, "schema"):
        return data.X, data.y, schema if schema is not None else data.schema
    if isinstance(data, tuple) and len(data) == 2:
        if schema is None:
            raise InvalidParameterError("Pass schema=... with data given as (X, y).")
        return data[0], data[1], schema
    raise InvalidParameterError(
        "'data' must be a privet Dataset (load_dataset(name)) or a tuple (X, y); got "
        f"{type(data).__name__}."
    )


# ------------------------------------------------------------------------- sampling


def _fit_predict(
    spec: LearnerSpec,
    params: dict[str, Any],
    X: pd.DataFrame,
    y: pd.Series,
    probes: pd.DataFrame,
    output: Output,
    size: int,
) -> NDArray[Any]:
    """``size`` independent trainings on ``(X, y)``; their predictions on ``probes``."""
    rows = []
    for _ in range(size):
        model = spec.make(**params).fit(X, y)
        if output == "labels":
            rows.append(np.asarray(model.predict(probes), dtype=object))
        else:
            rows.append(np.asarray(model.predict_proba(probes), dtype=np.float64).ravel())
    out = np.array(rows, dtype=object if output == "labels" else np.float64)
    if output == "labels":
        # Labels as strings: a fixed dtype for the set events whatever the class type.
        out = out.astype(str)
    return out


def _sample_trainings(
    spec: LearnerSpec,
    params: dict[str, Any],
    pair: LearnerPair,
    output: Output,
    trials: int,
    *,
    n_jobs: int | None,
    batch_size: int | None,
    progress: Progress | None,
) -> tuple[NDArray[Any], NDArray[Any]]:
    workers = max(1, effective_n_jobs(n_jobs))
    bs = batch_size or max(1, min(50, math.ceil(trials / (4 * workers))))
    sizes = [bs] * (trials // bs) + ([trials % bs] if trials % bs else [])
    tasks = [(side, s) for s in sizes for side in (0, 1)]
    data = ((pair.X0, pair.y0), (pair.X1, pair.y1))
    parts: list[list[NDArray[Any]]] = [[], []]
    total, done = 2 * trials, 0
    if progress is not None:
        progress(0, total)
    calls = (
        delayed(_fit_predict)(spec, params, *data[side], pair.probes, output, s)
        for side, s in tasks
    )
    results = Parallel(n_jobs=n_jobs, return_as="generator")(calls)
    for (side, s), arr in zip(tasks, results, strict=True):
        parts[side].append(arr)
        done += s
        if progress is not None:
            progress(done, total)
    return np.concatenate(parts[0]), np.concatenate(parts[1])


# --------------------------------------------------------------------- DP test


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnerDPTest:
    """A many-trainings DP test of one learner on one neighbouring pair.

    Attributes
    ----------
    learner : str
    pair : str
        The pair's kind.
    pair_description : str
    result : DPTestResult
        The bound, its event and counts (one trial = one training).
    curve : tuple of (int, float)
        ``(trainings per dataset, epsilon lower bound)`` on growing prefixes of
        the same trainings, each at ``result.confidence`` on its own.
    output : str
        ``"labels"`` or ``"proba"``: what the trials released.
    n_probes : int
    """

    learner: str
    pair: str
    pair_description: str
    result: DPTestResult
    curve: tuple[tuple[int, float], ...]
    output: str
    n_probes: int

    @property
    def epsilon_lower(self) -> float:
        return self.result.epsilon_lower

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "pair": self.pair,
            "pair_description": self.pair_description,
            "output": self.output,
            "n_probes": self.n_probes,
            "curve": [list(p) for p in self.curve],
            **self.result.to_dict(),
        }


def _curve_points(n: int, points: int = 8) -> list[int]:
    lo = max(8, n // 2**points)
    grid = np.unique(np.geomspace(lo, n, points).round().astype(int))
    return [int(g) for g in grid if g >= 4]


def learner_dp_test(
    learner: str | LearnerSpec,
    pair: LearnerPair,
    *,
    epsilon: float,
    trials: int,
    confidence: float,
    max_depth: int | None = None,
    claimed_epsilon: float | None = None,
    output: Output = "labels",
    selection_fraction: float = 0.5,
    n_jobs: int | None = None,
    batch_size: int | None = None,
    random_state: int | None = 0,
    progress: Progress | None = None,
    curve: bool = True,
) -> LearnerDPTest:
    """Empirical DP test of a learner: ``trials`` independent trainings on each of ``D, D'``.

    Parameters
    ----------
    learner : str or LearnerSpec
        A name of :data:`LEARNERS` or a spec.
    pair : LearnerPair
        From :func:`near_tie_pair`, :func:`lone_leaf_pair`, or your own.
    epsilon : float
        The learner's privacy parameter.
    trials : int
        Trainings per dataset (selection and estimation together).
    confidence : float
        Confidence of the bound.
    max_depth : int, optional
        Tree depth; default the pair's design depth, else 3.
    claimed_epsilon : float, optional
        The claim the verdict compares with; default ``epsilon`` (every DP
        learner of privet claims its parameter).
    output : {"labels", "proba"}, default="labels"
        What a trial releases: predicted labels (set events) or the
        probability vectors (classifier events).
    selection_fraction : float, default=0.5
        Share of the trainings that choose the event.
    n_jobs, batch_size
        joblib workers and trainings per task.
    random_state : int, optional
        Seed of the selection/estimation split (training noise is never seeded).
    progress : callable, optional
        ``progress(done, total)`` after each batch of trainings.
    curve : bool, default=True
        Also compute the bound on growing prefixes of the trainings.

    Returns
    -------
    LearnerDPTest
    """
    spec = get_learner(learner)
    confidence = check_confidence(confidence)
    if output not in ("labels", "proba"):
        raise InvalidParameterError(f"output must be 'labels' or 'proba'; got {output!r}.")
    if isinstance(trials, bool) or not isinstance(trials, int | np.integer) or trials < 4:
        raise InvalidParameterError(f"trials must be an int >= 4; got {trials!r}.")
    depth = max_depth if max_depth is not None else (pair.max_depth or 3)
    schema = pair.schema
    params = {"epsilon": float(epsilon), "max_depth": int(depth), "schema": schema}
    t0 = time.perf_counter()
    x0, x1 = _sample_trainings(
        spec,
        params,
        pair,
        output,
        int(trials),
        n_jobs=n_jobs,
        batch_size=batch_size,
        progress=progress,
    )
    claim = float(epsilon) if claimed_epsilon is None else claimed_epsilon
    kwargs = {
        "confidence": confidence,
        "claimed_epsilon": claim,
        "selection_fraction": selection_fraction,
        "random_state": random_state,
        "events": "set" if output == "labels" else "auto",
    }
    result = estimate_epsilon_lower_bound(x0, x1, **kwargs)  # type: ignore[arg-type]
    result = _with_time(result, time.perf_counter() - t0)
    points: list[tuple[int, float]] = []
    if curve:
        for n in _curve_points(len(x0)):
            if n == len(x0):
                points.append((n, result.epsilon_lower))
                continue
            try:
                r = estimate_epsilon_lower_bound(x0[:n], x1[:n], **kwargs)  # type: ignore[arg-type]
            except InvalidParameterError:
                continue
            points.append((n, r.epsilon_lower))
    return LearnerDPTest(
        learner=spec.name,
        pair=pair.kind,
        pair_description=pair.description,
        result=result,
        curve=tuple(points),
        output=output,
        n_probes=len(pair.probes),
    )


def _with_time(result: DPTestResult, seconds: float) -> DPTestResult:
    d = {k: getattr(result, k) for k in result.__dataclass_fields__ if k != "verdict"}
    d["wall_time"] = seconds
    return DPTestResult(**d)


# -------------------------------------------------------------------------- one run


def learner_one_run(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    confidence: float,
    schema: Any = None,
    max_depth: int | None = None,
    m: int | None = None,
    guesses: Sequence[tuple[int, int]] | None = None,
    claimed_epsilon: float | None = None,
    random_state: int | None = 0,
) -> OneRunAuditResult:
    """One-run audit (Steinke, Nasr, Jagielski 2023) of a learner with ``m`` canaries.

    ``m`` records of ``data`` become canaries: their class is changed to
    another class drawn at random (mislabelled records stand out), and each
    is included in the single training run independently with probability
    1/2, on top of the other records. The trained model scores every canary by
    the probability it gives the canary's (changed) class at the canary's
    features; the auditor guesses "in" for the highest scores and "out" for the
    lowest (the rules of ``guesses``, Bonferroni-corrected), and
    :func:`~privet.audits.one_run_audit` turns the correct guesses into an
    epsilon lower bound.

    ``max_depth`` defaults to the number of attributes: full-depth trees give
    every canary a leaf of its own when the records are distinct (Car holds
    each combination of values once).
    """
    spec = get_learner(learner)
    X, y, schema = _xy_schema(data, schema)
    confidence = check_confidence(confidence)
    rng = np.random.default_rng(random_state)
    n = len(X)
    if m is None:
        m = min(1000, n // 2)
    if not 2 <= m < n:
        raise InvalidParameterError(f"m must be in [2, {n - 1}] for {n} records; got {m!r}.")
    codes = schema.encode(X)
    y_codes = schema.encode_target(y)
    order = rng.permutation(n)
    can, base = order[:m], order[m:]
    shift = rng.integers(1, schema.n_classes, size=m)
    can_y = (y_codes[can] + shift) % schema.n_classes
    Xc, yc = frame_from_codes(schema, codes[can], can_y)
    Xb, yb = frame_from_codes(schema, codes[base], y_codes[base])
    depth = schema.n_features if max_depth is None else int(max_depth)
    if guesses is None:
        ks = sorted({max(1, m // d) for d in (40, 20, 10, 4)})
        guesses = [(k, 0) for k in ks] + [(k, k) for k in ks if 2 * k <= m]

    def train(included: NDArray[np.bool_]) -> NDArray[np.float64]:
        Xt = pd.concat([Xb, Xc[included]], ignore_index=True)
        yt = pd.concat([yb, yc[included]], ignore_index=True)
        model = spec.make(epsilon=float(epsilon), max_depth=depth, schema=schema).fit(Xt, yt)
        proba = np.asarray(model.predict_proba(Xc), dtype=np.float64)
        return proba[np.arange(m), can_y]

    return one_run_audit(
        train,
        m,
        delta=0.0,
        confidence=confidence,
        guesses=list(guesses),
        claimed_epsilon=float(epsilon) if claimed_epsilon is None else claimed_epsilon,
        random_state=rng,
    )


# ------------------------------------------------------------------------- audits


@dataclass(frozen=True, kw_only=True, eq=False)
class LearnerAudit:
    """Claimed, proven and measured epsilon of one learner (DESIGN.md, "Privacy truth").

    Attributes
    ----------
    learner, title : str
    dataset : str
    epsilon : float
        The learner's privacy parameter.
    max_depth : int
    claimed_epsilon : float or None
        What the paper claims (``privacy_claim_``); None for a non-private learner.
    claim_source : str
    proven_epsilon, proven_delta : float
        What the ledger proves for the audited configuration (``inf``: nothing).
    confidence : float
        Overall confidence of the measured bound (Bonferroni over the tests).
    tests : tuple of LearnerDPTest
        Many-trainings tests, each at ``1 - (1 - confidence) / len(tests)``.
    one_run : OneRunAuditResult or None
    mia : MIAResult or None
    ledger : Ledger or None
        The ledger of one fit, for reports.
    wall_time : float
    """

    learner: str
    title: str
    dataset: str
    epsilon: float
    max_depth: int
    claimed_epsilon: float | None
    claim_source: str
    proven_epsilon: float
    proven_delta: float
    confidence: float
    tests: tuple[LearnerDPTest, ...]
    one_run: OneRunAuditResult | None = None
    mia: Any = None
    ledger: Any = field(default=None, repr=False)
    wall_time: float = 0.0

    @property
    def measured_epsilon(self) -> float:
        """The many-trainings bound: the largest over the tests (0 without tests)."""
        return max((t.epsilon_lower for t in self.tests), default=0.0)

    @property
    def mia_epsilon(self) -> float | None:
        """The held-out epsilon lower bound of the best membership-inference attack."""
        return None if self.mia is None else float(self.mia.epsilon_lower)

    @property
    def verdict(self) -> str:
        """Against the claim: FAIL if the measured bound exceeds it (NO CLAIM without one)."""
        if self.claimed_epsilon is None or math.isinf(self.claimed_epsilon):
            return "NO CLAIM"
        return "FAIL" if self.measured_epsilon > self.claimed_epsilon else "PASS"

    @property
    def consistent(self) -> bool:
        """Whether every bound (tests, one run) is at most the proven epsilon.

        False is a bug in privet: the ledger proved less than the learner leaks.
        """
        bounds = [self.measured_epsilon]
        if self.one_run is not None:
            bounds.append(self.one_run.epsilon_lower)
        return all(b <= self.proven_epsilon + 1e-12 for b in bounds)

    def summary(self) -> str:
        claim = "none" if self.claimed_epsilon is None else _eps(self.claimed_epsilon)
        runs = " + ".join(f"{t.result.n_trials:,} ({t.pair})" for t in self.tests)
        parts = [
            f"{self.title}: claimed ε = {claim}, proven ε = {_eps(self.proven_epsilon)}, "
            f"measured ε ≥ {self.measured_epsilon:.3g} at {self.confidence:.0%} "
            f"from {runs or 'no'} trainings per dataset → {self.verdict}"
        ]
        if self.one_run is not None:
            parts.append(f"one run ε ≥ {self.one_run.epsilon_lower:.3g}")
        if self.mia is not None:
            parts.append(f"MIA ε ≥ {self.mia.epsilon_lower:.3g}")
        if not self.consistent:
            parts.append("EXCEEDS THE PROVEN EPSILON: a privet bug")
        return "; ".join(parts)

    def row(self) -> dict[str, Any]:
        """A flat record for tables (CSV, markdown)."""
        row: dict[str, Any] = {
            "learner": self.learner,
            "title": self.title,
            "dataset": self.dataset,
            "epsilon": self.epsilon,
            "max_depth": self.max_depth,
            "claimed_epsilon": self.claimed_epsilon,
            "proven_epsilon": self.proven_epsilon,
            "measured_epsilon": self.measured_epsilon,
            "confidence": self.confidence,
            "verdict": self.verdict,
            "consistent_with_proven": self.consistent,
            "one_run_epsilon": None if self.one_run is None else self.one_run.epsilon_lower,
            "mia_epsilon": self.mia_epsilon,
            "seconds": round(self.wall_time, 2),
        }
        for t in self.tests:
            row[f"{t.pair}_epsilon"] = t.epsilon_lower
            row[f"{t.pair}_trials"] = t.result.n_trials
        return row

    def to_dict(self) -> dict[str, Any]:
        from privet.audits.mia.experiment import _finite

        d = {
            **self.row(),
            "claim_source": self.claim_source,
            "proven_delta": self.proven_delta,
            "tests": [t.to_dict() for t in self.tests],
            "one_run": None if self.one_run is None else self.one_run.to_dict(),
            "mia": None if self.mia is None else self.mia.to_dict(),
        }
        return _finite(d)

    def __str__(self) -> str:
        return self.summary()

    def __rich__(self) -> Any:
        from rich.panel import Panel
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        claim = "none (not private)" if self.claimed_epsilon is None else _eps(self.claimed_epsilon)
        table.add_row("claimed ε", f"{claim}  {self.claim_source}")
        table.add_row("proven ε", f"{_eps(self.proven_epsilon)} (the ledger)")
        for t in self.tests:
            r = t.result
            table.add_row(
                f"measured ε ({t.pair})",
                f"≥ {r.epsilon_lower:.4g} at {r.confidence:.2%}; {r.n_trials:,} trainings per "
                f"dataset; event {r.event}",
            )
        if self.one_run is not None:
            o = self.one_run
            table.add_row(
                "one-run ε",
                f"≥ {o.epsilon_lower:.4g} ({o.n_correct}/{o.n_guesses} correct, m = {o.m})",
            )
        if self.mia is not None:
            table.add_row("MIA ε (held-out)", f"≥ {self.mia.epsilon_lower:.4g}")
        colour = {"PASS": "green", "FAIL": "bold red"}.get(self.verdict, "yellow")
        title = f"{self.title} on {self.dataset}: [{colour}]{self.verdict}[/]"
        if not self.consistent:
            title += " [bold red]measured > proven: privet bug[/]"
        return Panel(table, title=title, expand=False)


def _eps(x: float | None) -> str:
    if x is None:
        return "—"
    return "∞" if math.isinf(x) else f"{x:.4g}"


class Guarantees(NamedTuple):
    """What a learner claims and what its ledger proves, read from one fit."""

    claimed_epsilon: float | None
    claim_source: str
    proven_epsilon: float
    proven_delta: float
    ledger: Any


def claimed_and_proven(
    learner: str | LearnerSpec,
    X: Any,
    y: Any,
    *,
    epsilon: float,
    max_depth: int,
    schema: Any,
) -> Guarantees:
    """Fit once on ``(X, y)`` with an unbounded ledger; read ``privacy_claim_`` and ``privacy_spent_``.

    A learner without a ledger (non-private) proves ``inf``; an infinite
    "claim" (a non-private baseline's record) counts as no claim.
    """
    spec = get_learner(learner)
    ledger = _unbounded_ledger()
    model = spec.make(epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger)
    model.fit(X, y)
    spent = getattr(model, "privacy_spent_", None)
    claim = getattr(model, "privacy_claim_", None)
    proven = (math.inf, 0.0) if spent is None else (float(spent.epsilon), float(spent.delta))
    claimed = None if claim is None else float(claim.epsilon)
    if claimed is not None and math.isinf(claimed):
        claimed = None
    source = "" if claim is None else str(getattr(claim, "source", ""))
    return Guarantees(claimed, source, proven[0], proven[1], getattr(model, "ledger_", None))


def audit_learner(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    trials: int,
    confidence: float,
    pairs: Sequence[str | LearnerPair] = ("near_tie", "lone_leaf"),
    max_depth: int = 3,
    output: Output = "labels",
    one_run: bool = True,
    one_run_m: int | None = None,
    mia: bool = False,
    mia_shadows: int = 8,
    mia_rows: int | None = 600,
    n_jobs: int | None = None,
    random_state: int | None = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> LearnerAudit:
    """Claimed vs proven vs measured epsilon of one learner on one dataset.

    Parameters
    ----------
    learner : str or LearnerSpec
    data : privet Dataset
        Supplies the schema, the lone-leaf canary and ``D``, the one-run
        canaries and the MIA population.
    epsilon : float
        The learner's privacy parameter (its claim, for every DP learner).
    trials : int
        Trainings per dataset in each many-trainings test.
    confidence : float
        Overall confidence: each of the ``len(pairs)`` tests runs at
        ``1 - (1 - confidence) / len(pairs)`` so that their maximum holds at
        ``confidence``.
    pairs : sequence of "near_tie", "lone_leaf" or LearnerPair
    max_depth : int, default=3
        Depth of the lone-leaf test (the near-tie pair uses depth 1).
    output : {"labels", "proba"}
    one_run : bool, default=True
        Also run :func:`learner_one_run` (one training, full depth).
    one_run_m : int, optional
        Its number of canaries.
    mia : bool, default=False
        Also run :func:`~privet.audits.mia.membership_inference` (loss, LiRA,
        RMIA...) on up to ``mia_rows`` records with ``mia_shadows`` shadows.
    n_jobs, random_state
    progress : callable, optional
        ``progress(stage, done, total)`` during the trainings of each stage.

    Returns
    -------
    LearnerAudit
    """
    t0 = time.perf_counter()
    spec = get_learner(learner)
    confidence = check_confidence(confidence)
    X, y, schema = _xy_schema(data, None)
    name = getattr(data, "name", "data")
    per_test = 1.0 - (1.0 - confidence) / max(1, len(pairs))
    built: list[LearnerPair] = []
    for p in pairs:
        if isinstance(p, LearnerPair):
            built.append(p)
        elif p == "near_tie":
            built.append(near_tie_pair(schema))
        elif p == "lone_leaf":
            built.append(lone_leaf_pair(data, max_rows=300, random_state=random_state))
        else:
            raise InvalidParameterError(
                f"Unknown pair {p!r}; use 'near_tie', 'lone_leaf' or a LearnerPair."
            )
    claimed, source, proven, proven_delta, ledger = claimed_and_proven(
        spec, X, y, epsilon=float(epsilon), max_depth=int(max_depth), schema=schema
    )
    tests = []
    for pair in built:
        cb = None if progress is None else _stage(progress, f"{spec.name}: {pair.kind}")
        tests.append(
            learner_dp_test(
                spec,
                pair,
                epsilon=epsilon,
                trials=trials,
                confidence=per_test,
                max_depth=pair.max_depth or max_depth,
                claimed_epsilon=claimed if claimed is not None else math.inf,
                output=output,
                n_jobs=n_jobs,
                random_state=random_state,
                progress=cb,
            )
        )
    one = None
    if one_run:
        if progress is not None:
            progress(f"{spec.name}: one run", 0, 1)
        one = learner_one_run(
            spec,
            data,
            epsilon=epsilon,
            confidence=confidence,
            m=one_run_m,
            claimed_epsilon=claimed if claimed is not None else math.inf,
            random_state=random_state,
        )
        if progress is not None:
            progress(f"{spec.name}: one run", 1, 1)
    mia_result = None
    if mia:
        mia_result = learner_mia(
            spec,
            data,
            epsilon=epsilon,
            max_depth=max_depth,
            confidence=confidence,
            n_shadows=mia_shadows,
            rows=mia_rows,
            n_jobs=n_jobs,
            random_state=random_state,
            progress=progress,
        )
    return LearnerAudit(
        learner=spec.name,
        title=spec.title,
        dataset=name,
        epsilon=float(epsilon),
        max_depth=int(max_depth),
        claimed_epsilon=claimed,
        claim_source=source,
        proven_epsilon=proven,
        proven_delta=proven_delta,
        confidence=confidence,
        tests=tuple(tests),
        one_run=one,
        mia=mia_result,
        ledger=ledger,
        wall_time=time.perf_counter() - t0,
    )


def learner_mia(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    max_depth: int,
    confidence: float,
    n_shadows: int = 8,
    rows: int | None = 600,
    attacks: Sequence[str] | None = None,
    n_jobs: int | None = None,
    random_state: int | None = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> Any:
    """Membership inference (:func:`~privet.audits.mia.membership_inference`) on a learner.

    Uses ``rows`` random records of ``data`` as the population (all of them if
    None), ``n_shadows`` shadow models and every default attack.
    """
    from privet.audits.mia import DEFAULT_ATTACKS, membership_inference

    spec = get_learner(learner)
    X, y, schema = _xy_schema(data, None)
    frame = pd.concat([X, y], axis=1)
    if rows is not None and len(frame) > rows:
        pick = np.random.default_rng(random_state).choice(len(frame), rows, replace=False)
        frame = frame.iloc[np.sort(pick)].reset_index(drop=True)
    if progress is not None:
        progress(f"{spec.name}: membership inference", 0, 1)
    make = _ModelMaker(spec, float(epsilon), int(max_depth), schema)
    res = membership_inference(
        frame,
        make,
        target=y.name,
        confidence=confidence,
        n_shadows=n_shadows,
        attacks=tuple(attacks) if attacks is not None else DEFAULT_ATTACKS,
        n_jobs=n_jobs,
        random_state=random_state,
    )
    if progress is not None:
        progress(f"{spec.name}: membership inference", 1, 1)
    return res


@dataclass(frozen=True, slots=True)
class _ModelMaker:
    """Picklable ``make_model()`` for the MIA experiment."""

    spec: LearnerSpec
    epsilon: float
    max_depth: int
    schema: Any

    def __call__(self) -> Any:
        return self.spec.make(epsilon=self.epsilon, max_depth=self.max_depth, schema=self.schema)


def _stage(progress: Callable[[str, int, int], None], name: str) -> Progress:
    def cb(done: int, total: int) -> None:
        progress(name, done, total)

    return cb


def audit_learner_leaf(
    data: Any,
    *,
    epsilon: float,
    max_depth: int,
    trials: int,
    confidence: float,
    seed: int | None = 0,
    learner: str | LearnerSpec = "dp_id3",
    n_jobs: int | None = None,
) -> LearnerAudit:
    """A short audit for ``privet demo``: the lone-leaf test of DP ID3 on ``data``.

    ``trials`` trainings on each of ``D`` and ``D' = D + canary`` (the canary
    alone in its leaf, :func:`lone_leaf_pair`), predictions of the canary's
    label as the output; no one-run or MIA step.
    """
    return audit_learner(
        learner,
        data,
        epsilon=epsilon,
        trials=trials,
        confidence=confidence,
        pairs=("lone_leaf",),
        max_depth=max_depth,
        one_run=False,
        n_jobs=n_jobs,
        random_state=seed,
    )
