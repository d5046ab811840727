"""Claimed vs proven vs measured epsilon of one learner (DESIGN.md, "Privacy truth").

:func:`audit_learner` fits the learner once to read what it claims
(``privacy_claim_``) and what its ledger proves (``privacy_spent_``), runs the
many-trainings tests on the near-tie and lone-leaf pairs, optionally the
one-run audit and a membership-inference experiment, and returns a
:class:`LearnerAudit`. The paper-faithful ``ObliviousID3Classifier(split="exact")``
claims epsilon-DP, its ledger proves nothing finite, and the near-tie pair shows why.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from privet.audits.bounds import check_confidence, check_real
from privet.audits.cluster import resolve_backend
from privet.audits.estimate import check_positive_int, check_split
from privet.audits.formatting import finite, format_epsilon
from privet.audits.learners.pairs import LearnerPair, lone_leaf_pair, near_tie_pair, xy_schema
from privet.audits.learners.registry import (
    LearnerSpec,
    Output,
    Progress,
    _unbounded_ledger,
    resolve_learner,
)
from privet.audits.learners.trials import LearnerDPTest, learner_dp_test, learner_one_run
from privet.audits.one_run import OneRunAuditResult
from privet.audits.sampling import check_seed, parallel
from privet.errors import InvalidParameterError

__all__ = [
    "Guarantees",
    "LearnerAudit",
    "audit_learner",
    "audit_learner_leaf",
    "claimed_and_proven",
    "learner_mia",
]


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
        """Against the claim: FAIL if the measured bound exceeds it.

        NO CLAIM without a claim; NOT TESTED when no many-trainings test ran (a
        bound of 0 from no training must never read as a PASS).
        """
        if not self.tests:
            return "NOT TESTED"
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
        claim = "none" if self.claimed_epsilon is None else format_epsilon(self.claimed_epsilon, 4)
        runs = " + ".join(f"{t.result.n_trials:,} ({t.pair})" for t in self.tests)
        parts = [
            f"{self.title}: claimed ε = {claim}, proven ε = {format_epsilon(self.proven_epsilon, 4)}, "
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
        d = {
            **self.row(),
            "claim_source": self.claim_source,
            "proven_delta": self.proven_delta,
            "tests": [t.to_dict() for t in self.tests],
            "one_run": None if self.one_run is None else self.one_run.to_dict(),
            "mia": None if self.mia is None else self.mia.to_dict(),
        }
        return finite(d)

    def __str__(self) -> str:
        return self.summary()

    def __rich__(self) -> Any:
        from rich.panel import Panel
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        claim = (
            "none (not private)"
            if self.claimed_epsilon is None
            else format_epsilon(self.claimed_epsilon, 4)
        )
        table.add_row("claimed ε", f"{claim}  {self.claim_source}")
        table.add_row("proven ε", f"{format_epsilon(self.proven_epsilon, 4)} (the ledger)")
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
    spec = resolve_learner(learner)
    ledger = _unbounded_ledger(spec.relation)
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


def _check_pairs(pairs: Any) -> tuple[str | LearnerPair, ...]:
    if isinstance(pairs, str | LearnerPair):
        pairs = (pairs,)
    try:
        out = tuple(pairs)
    except TypeError:
        raise InvalidParameterError(
            "'pairs' must be a sequence of 'near_tie', 'lone_leaf' or LearnerPair; got "
            f"{type(pairs).__name__}."
        ) from None
    if not out:
        raise InvalidParameterError(
            "'pairs' is empty: an audit that trains on no neighbouring pair tests nothing and "
            "cannot pass; give at least one of 'near_tie', 'lone_leaf' or a LearnerPair."
        )
    return out


def _check_trials(trials: Any, pairs: Sequence[LearnerPair]) -> dict[str, int]:
    """Trainings per pair kind: one number for every pair, or a mapping naming each."""
    kinds = [p.kind for p in pairs]
    if not isinstance(trials, Mapping):
        n = check_positive_int(trials, "trials", minimum=4)
        return dict.fromkeys(kinds, n)
    missing = [k for k in kinds if k not in trials]
    extra = [k for k in trials if k not in kinds]
    if missing or extra:
        raise InvalidParameterError(
            f"'trials' must give a number for each pair and no other; the pairs are "
            f"{kinds}, missing {missing}, unknown {extra}."
        )
    return {k: check_positive_int(v, f"trials[{k!r}]", minimum=4) for k, v in trials.items()}


def _check_rows(rows: Any) -> int | None:
    return None if rows is None else check_positive_int(rows, "rows", minimum=8)


def audit_learner(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    trials: int | Mapping[str, int],
    confidence: float,
    pairs: Sequence[str | LearnerPair] = ("near_tie", "lone_leaf"),
    max_depth: int = 3,
    output: Output = "labels",
    selection_fraction: float = 0.5,
    curve: bool = True,
    one_run: bool = True,
    one_run_m: int | None = None,
    mia: bool = False,
    mia_shadows: int = 8,
    mia_rows: int | None = 600,
    n_jobs: int | None = None,
    backend: Any = None,
    scheduler: Any = None,
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
    trials : int or mapping of str to int
        Trainings per dataset in each many-trainings test; a mapping gives each
        pair its own number, by the pair's ``kind`` (``{"near_tie": 1000,
        "lone_leaf": 400}``), and must name every pair and no other.
    confidence : float
        Overall confidence: each of the ``len(pairs)`` tests runs at
        ``1 - (1 - confidence) / len(pairs)`` so that their maximum holds at
        ``confidence``.
    pairs : sequence of "near_tie", "lone_leaf" or LearnerPair
        At least one: an audit that tests no pair is refused (it would
        report a bound from no training at all).
    max_depth : int, default=3
        Depth of the lone-leaf test (the near-tie pair uses depth 1).
    output : {"labels", "proba"}
    selection_fraction, curve
        Passed to :func:`learner_dp_test`: the share of the trainings that
        chooses the event (the rest bound epsilon), and whether to record the
        bound against the number of trainings.
    one_run : bool, default=True
        Also run :func:`learner_one_run` (one training, full depth).
    one_run_m : int, optional
        Its number of canaries.
    mia : bool, default=False
        Also run :func:`~privet.audits.mia.membership_inference` (loss, LiRA,
        RMIA...) on up to ``mia_rows`` records with ``mia_shadows`` shadows.
    n_jobs, backend, random_state
        joblib workers and backend (None: the active
        ``joblib.parallel_config``) of every many-trainings step, and the
        seed of the auditor's choices and of the learners' ``random_state``
        (see :func:`learner_dp_test`).
    scheduler : str, distributed.Client or cluster, optional
        Run the trainings on this Dask cluster (``"tcp://HOST:8786"``) through
        joblib's Dask backend; seeded runs give the same numbers as in one
        process (see :mod:`privet.audits.cluster`). Not with ``backend``.
    progress : callable, optional
        ``progress(stage, done, total)`` during the trainings of each stage.

    Returns
    -------
    LearnerAudit
    """
    backend = resolve_backend(backend, scheduler)
    t0 = time.perf_counter()
    spec = resolve_learner(learner)
    confidence = check_confidence(confidence)
    X, y, schema = xy_schema(data, None)
    name = getattr(data, "name", "data")
    pairs = _check_pairs(pairs)
    epsilon = check_real(epsilon, "epsilon", lower=0.0)
    max_depth = check_positive_int(max_depth, "max_depth", minimum=0)
    if output not in ("labels", "proba"):
        raise InvalidParameterError(f"output must be 'labels' or 'proba'; got {output!r}.")
    if one_run_m is not None:
        one_run_m = check_positive_int(one_run_m, "one_run_m", minimum=2)
    if mia:
        mia_shadows = check_positive_int(mia_shadows, "mia_shadows", minimum=2)
        mia_rows = _check_rows(mia_rows)
    check_seed(random_state)
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    per_test = 1.0 - (1.0 - confidence) / len(pairs)
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
    trials_of = _check_trials(trials, built)
    for n in trials_of.values():
        check_split(n, selection_fraction)
    claimed, source, proven, proven_delta, ledger = claimed_and_proven(
        spec, X, y, epsilon=epsilon, max_depth=max_depth, schema=schema
    )
    tests = []
    for pair in built:
        cb = None if progress is None else _stage(progress, f"{spec.name}: {pair.kind}")
        tests.append(
            learner_dp_test(
                spec,
                pair,
                epsilon=epsilon,
                trials=trials_of[pair.kind],
                confidence=per_test,
                max_depth=pair.max_depth or max_depth,
                claimed_epsilon=claimed if claimed is not None else math.inf,
                output=output,
                selection_fraction=selection_fraction,
                curve=curve,
                n_jobs=n_jobs,
                backend=backend,
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
            backend=backend,
            random_state=random_state,
            progress=progress,
        )
    return LearnerAudit(
        learner=spec.name,
        title=spec.title,
        dataset=name,
        epsilon=epsilon,
        max_depth=max_depth,
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
    backend: Any = None,
    random_state: int | None = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> Any:
    """Membership inference (:func:`~privet.audits.mia.membership_inference`) on a learner.

    Uses ``rows`` random records of ``data`` as the population (all of them if
    None), ``n_shadows`` shadow models and every default attack.
    """
    from privet.audits.mia import DEFAULT_ATTACKS, membership_inference

    spec = resolve_learner(learner)
    X, y, schema = xy_schema(data, None)
    rows = _check_rows(rows)
    epsilon = check_real(epsilon, "epsilon", lower=0.0)
    max_depth = check_positive_int(max_depth, "max_depth", minimum=0)
    check_seed(random_state)
    frame = pd.concat([X, y], axis=1)
    if rows is not None and len(frame) > rows:
        pick = np.random.default_rng(random_state).choice(len(frame), rows, replace=False)
        frame = frame.iloc[np.sort(pick)].reset_index(drop=True)
    if progress is not None:
        progress(f"{spec.name}: membership inference", 0, 1)
    make = _ModelMaker(spec, epsilon, max_depth, schema)
    res = membership_inference(
        frame,
        make,
        target=y.name,
        confidence=confidence,
        n_shadows=n_shadows,
        attacks=tuple(attacks) if attacks is not None else DEFAULT_ATTACKS,
        n_jobs=n_jobs,
        backend=backend,
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
