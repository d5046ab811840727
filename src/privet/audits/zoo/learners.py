"""The learner bug zoo: small learners on privet's mechanisms with planted accounting bugs.

Each class is a tiny classifier (one histogram of class counts per value of the
first attribute, or a variant) that draws its noise through privet's
mechanisms and charges a privet ledger. With ``correct=False`` (the default)
it carries one accounting bug of the kind the reviews of privet found by
reading code; with ``correct=True`` it is the correct twin, whose ledger proves
what it leaks. The white-box audit (``audit_learner(..., output="releases")``)
must FAIL every planted bug (bound above the epsilon its ledger proves) and
PASS every twin; :func:`run_learner_zoo` runs both.

=============================  ====================================================
entry                          the planted bug
=============================  ====================================================
``scaled_counts``              one release's sensitivity is 1.4x the charged one
                               (counts scaled by 1.4 before noise calibrated for 1)
``same_rows_as_parts``         two histograms of the same rows charged as the parallel
                               parts of a partition
``public_seed_subsample``      a Poisson subsample drawn from the public
                               ``random_state`` and charged as amplified
``replace_one_as_add_remove``  a histogram under replace-one neighbours calibrated for
                               add/remove (sensitivity 1 instead of 2)
``unnoised_leaf``              the first leaf's counts left without noise
``unclipped_values``           per-record values summed with Gaussian noise for an L2
                               bound of 1 that is never enforced (values up to 4)
``uncharged_second_pass``      a second noisy pass over the data charged to a
                               throw-away ledger
``private_tie_break``          ties between noisy counts broken by the true counts
``duplicated_minority``        minority-class rows duplicated (rebalancing) before a
                               histogram charged for sensitivity 1
=============================  ====================================================

Every learner here is an audit subject, not a model to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privet.audits.bounds import check_confidence
from privet.errors import InvalidParameterError, NotFittedError
from privet.ledger import (
    Claim,
    Guarantee,
    Ledger,
    NeighbouringRelation,
    PrivacyPlan,
)
from privet.mechanisms import (
    DiscreteLaplaceMechanism,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    recorder,
)

__all__ = [
    "LEARNER_ZOO",
    "LearnerZooEntry",
    "LearnerZooResult",
    "learner_zoo_names",
    "run_learner_zoo",
]

ZOO_SOURCE = "privet learner zoo (what the learner believes it charges)"


class _ZooLearner(ClassifierMixin, BaseEstimator):
    """One histogram of class counts per value of the first attribute (the leaves).

    Subclasses implement :meth:`_release` (the noisy leaf values, charging
    ``scope``) and :meth:`_plan`.
    """

    bug: ClassVar[str] = ""
    fix: ClassVar[str] = ""
    relation: ClassVar[str] = "add_remove"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 1,
        correct: bool = False,
        schema: Any = None,
        ledger: Any = None,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.correct = correct
        self.schema = schema
        self.ledger = ledger
        self.random_state = random_state

    # -- plan --------------------------------------------------------------------
    def privacy_plan(self, schema: Any = None) -> PrivacyPlan:
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=self.fix if self.correct else self.bug,
            claim=Claim(float(self.epsilon), source=ZOO_SOURCE),
        )
        self._plan(plan)
        return plan

    def _plan(self, plan: Any) -> None:
        plan.charge(self._histogram().entry(), mechanism="noisy_histogram", step="leaves")

    # -- fit -----------------------------------------------------------------------
    def _histogram(self, epsilon: float | None = None) -> Any:
        eps = float(self.epsilon) if epsilon is None else epsilon
        return make_noisy_histogram(eps, relation=self.relation)

    def fit(self, X: Any, y: Any) -> _ZooLearner:
        if self.schema is None:
            raise InvalidParameterError(f"{type(self).__name__} needs schema=... (public domains).")
        schema = self.schema
        codes = schema.encode(X)
        y_codes = schema.encode_target(y)
        ledger = self.ledger
        if ledger is None:
            ledger = Ledger(
                budget=Guarantee.unbounded(), relation=NeighbouringRelation(self.relation)
            )
        scope = getattr(ledger, "root", ledger)
        self.classes_ = np.asarray(schema.classes)
        self.n_leaves_ = int(schema.domain_sizes[0])
        leaf = codes[:, 0]
        counts = np.zeros((self.n_leaves_, schema.n_classes), dtype=np.int64)
        np.add.at(counts, (leaf, y_codes), 1)
        self.values_ = np.asarray(self._release(scope, counts, codes, y_codes), dtype=float)
        self.ledger_ = scope.ledger
        self.privacy_spent_ = scope.ledger.spent()
        self.privacy_claim_ = Claim(float(self.epsilon), source=ZOO_SOURCE)
        return self

    def _release(
        self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray
    ) -> np.ndarray:
        return self._histogram()(counts, scope=scope, caller=type(self).__name__, step="leaves")

    # -- predict -------------------------------------------------------------------
    def predict_proba(self, X: Any) -> np.ndarray:
        if not hasattr(self, "values_"):
            raise NotFittedError(f"This {type(self).__name__} is not fitted yet; call fit first.")
        leaf = self.schema.encode(X)[:, 0]
        v = np.clip(self.values_[leaf], 0.0, None) + 1e-9
        return v / v.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]  # type: ignore[no-any-return]


class ScaledCounts(_ZooLearner):
    bug = "counts scaled by 1.4 before Laplace noise calibrated for sensitivity 1"
    fix = "counts released as they are (sensitivity 1)"

    def _plan(self, plan: Any) -> None:
        plan.charge(make_laplace(float(self.epsilon)).entry(), mechanism="laplace", step="leaves")

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        factor = 1.0 if self.correct else 1.4
        mech = make_laplace(float(self.epsilon), sensitivity=1.0)
        noisy = mech(factor * counts, scope=scope, caller=type(self).__name__, step="leaves")
        return np.asarray(noisy) / factor


class SameRowsAsParts(_ZooLearner):
    bug = "two histograms of the same rows charged as two parts of a partition"
    fix = "the two histograms charged in sequence at epsilon/2 each"

    def _eps(self) -> float:
        return float(self.epsilon) / (2.0 if self.correct else 1.0)

    def _plan(self, plan: Any) -> None:
        entry = self._histogram(self._eps()).entry()
        if self.correct:
            plan.charge(entry, mechanism="noisy_histogram", step="leaves")
            plan.charge(entry, mechanism="noisy_histogram", step="leaves again")
        else:
            plan.partition(2, label="pass").charge(entry, mechanism="noisy_histogram")

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        mech = self._histogram(self._eps())
        if self.correct:
            first, second = scope, scope
        else:
            first, second = scope.partition(["first pass", "second pass"])
        a = mech(counts, scope=first, caller=type(self).__name__, step="leaves")
        b = mech(counts, scope=second, caller=type(self).__name__, step="leaves again")
        return (np.asarray(a, dtype=float) + np.asarray(b, dtype=float)) / 2.0


class PublicSeedSubsample(_ZooLearner):
    bug = "a Poisson subsample drawn from the public random_state, charged as amplified"
    fix = "the Poisson subsample drawn from secret coins (recorder.poisson_sample)"
    rate: ClassVar[float] = 0.5

    def _plan(self, plan: Any) -> None:
        plan.subsample(self.rate, "poisson").charge(
            self._histogram().entry(), mechanism="noisy_histogram", step="leaves"
        )

    def fit(self, X: Any, y: Any) -> PublicSeedSubsample:
        self._n = len(X)
        return super().fit(X, y)  # type: ignore[return-value]

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        n = codes.shape[0]
        if self.correct:
            keep = recorder.poisson_sample(n, self.rate)
        else:
            keep = np.random.default_rng(self.random_state).random(n) < self.rate
        sub = np.zeros_like(counts)
        np.add.at(sub, (codes[keep, 0], y[keep]), 1)
        part = scope.subsample(self.rate, "poisson")
        noisy = self._histogram()(sub, scope=part, caller=type(self).__name__, step="leaves")
        return np.asarray(noisy, dtype=float) / self.rate


class ReplaceOneAsAddRemove(_ZooLearner):
    bug = "under replace-one neighbours, a histogram calibrated for sensitivity 1 (add/remove)"
    fix = "sensitivity 2: a replaced record leaves one cell and enters another"
    relation = "replace_one"

    def _mechanism(self) -> DiscreteLaplaceMechanism:
        sens = 2.0 if self.correct else 1.0
        return DiscreteLaplaceMechanism(
            scale=sens / float(self.epsilon), sensitivity=sens, relation="replace_one"
        )

    def _plan(self, plan: Any) -> None:
        plan.charge(self._mechanism().entry(), mechanism="discrete_laplace", step="leaves")

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        return self._mechanism()(counts, scope=scope, caller=type(self).__name__, step="leaves")

    def audit_pair(self, schema: Any) -> dict[str, Any]:
        """Replace-one neighbours: the last record's class changes from 0 to 1."""
        n = 200
        rows = np.zeros((n, schema.n_features), dtype=np.int64)
        return {
            "kind": "replace",
            "description": (
                f"{n} identical records; the last one's class replaced by "
                f"{schema.classes[1]!r}: one cell -1, another +1"
            ),
            "rows": rows[:-1],
            "labels": [0] * (n - 1),
            "canary": rows[-1],
            "canary_label": 1,
            "replaced": (rows[-1], 0),
        }


class UnnoisedLeaf(_ZooLearner):
    bug = "the first leaf's counts released without noise"
    fix = "every leaf's counts through the noisy histogram"

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        noisy = np.asarray(super()._release(scope, counts, codes, y), dtype=float)
        if not self.correct:
            noisy[0] = counts[0]
        return noisy


class UnclippedValues(_ZooLearner):
    bug = "per-record values (class weights up to 4) summed with Gaussian noise for an L2 bound of 1, never clipped"
    fix = "each record's value clipped to [-1, 1] before the sum"
    delta: ClassVar[float] = 1e-5
    weights: ClassVar[tuple[float, ...]] = (1.0, 4.0)

    def _mechanism(self) -> Any:
        return make_gaussian(epsilon=float(self.epsilon), delta=self.delta, sensitivity=1.0)

    def _plan(self, plan: Any) -> None:
        plan.charge(self._mechanism().entry(), mechanism="gaussian", step="leaf sums")

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        w = np.asarray(self.weights + (1.0,) * max(0, counts.shape[1] - len(self.weights)))
        values = w[y]
        if self.correct:
            values = np.clip(values, -1.0, 1.0)
        sums = np.zeros(counts.shape, dtype=float)
        np.add.at(sums, (codes[:, 0], y), values)
        noisy = self._mechanism()(sums, scope=scope, caller=type(self).__name__, step="leaf sums")
        return np.asarray(noisy, dtype=float)


class UnchargedSecondPass(_ZooLearner):
    bug = "a second noisy pass over the data charged to a throw-away ledger"
    fix = "both passes charged to the learner's scope at epsilon/2 each"

    def _eps(self) -> float:
        return float(self.epsilon) / (2.0 if self.correct else 1.0)

    def _plan(self, plan: Any) -> None:
        entry = self._histogram(self._eps()).entry()
        plan.charge(entry, mechanism="noisy_histogram", step="leaves")
        if self.correct:
            plan.charge(entry, mechanism="noisy_histogram", step="second pass")

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        mech = self._histogram(self._eps())
        first = mech(counts, scope=scope, caller=type(self).__name__, step="leaves")
        where = scope if self.correct else Ledger(budget=Guarantee.unbounded()).root
        second = mech(counts, scope=where, caller=type(self).__name__, step="second pass")
        return (np.asarray(first, dtype=float) + np.asarray(second, dtype=float)) / 2.0


class PrivateTieBreak(_ZooLearner):
    bug = "ties between noisy counts broken by the true counts"
    fix = "ties broken by a secret coin"

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        noisy = np.asarray(super()._release(scope, counts, codes, y), dtype=float)
        top = noisy == noisy.max(axis=1, keepdims=True)
        if self.correct:
            keys = recorder.privacy_rng().random(noisy.shape)
        else:
            keys = counts.astype(float)
        pick = np.argmax(np.where(top, keys + 1.0, -np.inf), axis=1)
        return np.eye(counts.shape[1])[pick]  # the released model: one label per leaf

    def audit_pair(self, schema: Any) -> dict[str, Any]:
        """A true tie in the first leaf that the canary breaks."""
        k = 5
        rows = np.zeros((2 * k, schema.n_features), dtype=np.int64)
        return {
            "kind": "tie",
            "description": (
                f"{k} records of each of classes {schema.classes[0]!r} and "
                f"{schema.classes[1]!r} in one leaf; the canary breaks the tie"
            ),
            "rows": rows,
            "labels": [0] * k + [1] * k,
            "canary": rows[0],
            "canary_label": 1,
        }


class DuplicatedMinority(_ZooLearner):
    bug = (
        "minority-class rows duplicated (rebalancing) before a histogram charged for sensitivity 1"
    )
    fix = "no duplication (or sensitivity 2)"

    def _release(self, scope: Any, counts: np.ndarray, codes: np.ndarray, y: np.ndarray) -> Any:
        if not self.correct:
            totals = counts.sum(axis=0)
            minority = totals < totals.max()
            counts = counts + counts * minority[None, :]  # each minority row counted twice
        return super()._release(scope, counts, codes, y)


# ---------------------------------------------------------------------- entries


@dataclass(frozen=True, kw_only=True, eq=False)
class LearnerZooEntry:
    """One planted bug: the learner class, what is wrong, and its trial counts."""

    name: str
    cls: type[_ZooLearner] = field(repr=False)
    ci_trials: int = 0
    """Trainings per side in CI (0: not in CI)."""
    benchmark_trials: int = 2000

    @property
    def bug(self) -> str:
        return self.cls.bug

    @property
    def fix(self) -> str:
        return self.cls.fix

    def spec(self, correct: bool) -> Any:
        from privet.audits.learners.registry import LearnerSpec

        which = "correct twin" if correct else "planted bug"
        return LearnerSpec(
            name=f"zoo:{self.name}{':correct' if correct else ''}",
            title=f"{self.cls.__name__} ({which}: {self.fix if correct else self.bug})",
            build=_ZooBuilder(self.cls, bool(correct)),
            relation=self.cls.relation,
            note=self.bug,
        )


@dataclass(frozen=True, slots=True)
class _ZooBuilder:
    """Picklable builder of one zoo learner (for joblib workers)."""

    cls: type[_ZooLearner]
    correct: bool

    def __call__(self, **kwargs: Any) -> _ZooLearner:
        allowed = ("epsilon", "max_depth", "schema", "ledger", "random_state")
        return self.cls(correct=self.correct, **{k: v for k, v in kwargs.items() if k in allowed})


def _entries() -> list[LearnerZooEntry]:
    return [
        LearnerZooEntry(name="scaled_counts", cls=ScaledCounts),
        # 600 trials caught it at >= 0.951 < 1 once (estimate 1.89): 3,000 leave it >= about 1.4
        LearnerZooEntry(name="same_rows_as_parts", cls=SameRowsAsParts, ci_trials=3000),
        LearnerZooEntry(name="public_seed_subsample", cls=PublicSeedSubsample),
        LearnerZooEntry(name="replace_one_as_add_remove", cls=ReplaceOneAsAddRemove),
        LearnerZooEntry(name="unnoised_leaf", cls=UnnoisedLeaf, ci_trials=100),
        LearnerZooEntry(name="unclipped_values", cls=UnclippedValues, benchmark_trials=4000),
        LearnerZooEntry(name="uncharged_second_pass", cls=UnchargedSecondPass),
        # 800 trials once measured >= 0.812 (ties are rare events): 3,000 leave it near 2
        LearnerZooEntry(name="private_tie_break", cls=PrivateTieBreak, ci_trials=3000),
        LearnerZooEntry(name="duplicated_minority", cls=DuplicatedMinority),
    ]


LEARNER_ZOO: dict[str, LearnerZooEntry] = {e.name: e for e in _entries()}
"""The learner bug zoo by name."""


def learner_zoo_names() -> list[str]:
    return list(LEARNER_ZOO)


@dataclass(frozen=True, kw_only=True, eq=False)
class LearnerZooResult:
    """The white-box audits of one planted bug and of its correct twin."""

    entry: LearnerZooEntry
    broken: Any
    correct: Any

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def caught(self) -> bool:
        """The planted bug measured above what its ledger proves."""
        b = self.broken
        return b.measured_epsilon is not None and b.measured_epsilon > b.proven_epsilon

    @property
    def correct_passed(self) -> bool | None:
        c = self.correct
        if c is None:
            return None
        return c.measured_epsilon is not None and c.measured_epsilon <= c.proven_epsilon

    def row(self) -> dict[str, Any]:
        b, c = self.broken, self.correct
        return {
            "entry": self.name,
            "bug": self.entry.bug,
            "broken_proven_epsilon": b.proven_epsilon,
            "broken_measured_epsilon": b.measured_epsilon,
            "broken_estimate": b.estimate,
            "broken_seconds": round(b.wall_time, 1),
            "broken_cpu_seconds": round(b.cpu_time, 1),
            "caught": self.caught,
            "correct_proven_epsilon": None if c is None else c.proven_epsilon,
            "correct_measured_epsilon": None if c is None else c.measured_epsilon,
            "correct_estimate": None if c is None else c.estimate,
            "correct_cpu_seconds": None if c is None else round(c.cpu_time, 1),
            "correct_passed": self.correct_passed,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.row(),
            "broken": self.broken.to_dict(),
            "correct": None if self.correct is None else self.correct.to_dict(),
        }


def run_learner_zoo(
    names: Sequence[str] | None = None,
    *,
    schema: Any,
    trials: int | str = "benchmark",
    confidence: float = 0.95,
    epsilon: float = 1.0,
    correct: bool = True,
    correct_confidence: float | None = None,
    n_jobs: int | None = None,
    random_state: int | None = 0,
) -> list[LearnerZooResult]:
    """White-box audits of planted bugs (and their twins) on pairs built from ``schema``.

    ``trials``: trainings per side, ``"ci"`` or ``"benchmark"`` (each entry's
    own count). The verdict compares each bound with the epsilon the learner's
    own ledger proves (what it charged). ``correct_confidence`` (default
    ``confidence``) is the twins' confidence: a correct twin FAILs by chance
    with probability at most ``1 - correct_confidence``, so a test suite can
    hold that rate far below the one at which the bugs must be caught.
    """
    from privet.audits.learners.audit import audit_learner

    chosen = list(LEARNER_ZOO) if names is None else list(names)
    unknown = [n for n in chosen if n not in LEARNER_ZOO]
    if unknown:
        raise InvalidParameterError(
            f"No learner zoo entry {unknown}; the entries are {', '.join(LEARNER_ZOO)}."
        )
    twin_confidence = (
        confidence
        if correct_confidence is None
        else check_confidence(correct_confidence, "correct_confidence")
    )
    out = []
    for name in chosen:
        entry = LEARNER_ZOO[name]
        n = _trials(entry, trials)
        runs = []
        for which in (False, True) if correct else (False,):
            runs.append(
                audit_learner(
                    entry.spec(which),
                    schema,
                    epsilon=epsilon,
                    trials=n,
                    confidence=twin_confidence if which else confidence,
                    max_depth=1,
                    output="releases",
                    one_run=False,
                    n_jobs=n_jobs,
                    random_state=random_state,
                )
            )
        out.append(
            LearnerZooResult(entry=entry, broken=runs[0], correct=runs[1] if correct else None)
        )
    return out


def _trials(entry: LearnerZooEntry, trials: int | str) -> int:
    if trials == "ci":
        return entry.ci_trials or 300
    if trials == "benchmark":
        return entry.benchmark_trials
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 4:
        raise InvalidParameterError(
            f"'trials' must be an int >= 4, 'ci' or 'benchmark'; got {trials!r}."
        )
    return int(trials)
