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
from privet.audits.learners.pairs import (
    LearnerPair,
    frame_from_codes,
    lone_leaf_pair,
    near_tie_pair,
    xy_schema,
)
from privet.audits.learners.registry import (
    LearnerSpec,
    Progress,
    _unbounded_ledger,
    resolve_learner,
)
from privet.audits.learners.trials import LearnerDPTest, learner_dp_test, learner_one_run
from privet.audits.learners.whitebox import OneRunNotSupported, release_one_run, release_test
from privet.audits.learners.worst_case import (
    count_pair,
    deep_split_levels,
    deep_split_pair,
    pair_from_codes,
    split_pair,
    worst_case_pair,
)
from privet.audits.one_run import OneRunAuditResult
from privet.audits.sampling import check_seed, parallel
from privet.errors import InvalidParameterError
from privet.learners._base import fitted_plan, planned_guarantee

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
        What the paper claims (``privacy_claim_``), or the epsilon a trained
        model was trained at; None for a non-private learner.
    claim_source : str
    proven_epsilon, proven_delta : float
        What the ledger proves for the audited configuration (``inf``: nothing).
    confidence : float
        Overall confidence of the measured bound (Bonferroni over the tests).
    tests : tuple of LearnerDPTest
        Black-box many-trainings tests (predictions as outputs).
    release_tests : tuple of ReleaseTest
        White-box tests (the releases the mechanisms recorded as outputs).
    one_run : OneRunAuditResult or None
    mia : MIAResult or None
    ledger : Ledger or None
        The ledger of one fit, for reports.
    neighbours : {"schema", "private_rows"}
        Where the neighbouring datasets came from: the public schema alone, or
        the private rows (then the audit was charged as a non-private release
        and ``internal`` is True).
    internal : bool
        Whether the report states facts about private data.
    not_measured : str
        Why nothing was measured ('' when something was).
    wall_time, cpu_time : float
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
    tests: tuple[LearnerDPTest, ...] = ()
    release_tests: tuple[Any, ...] = ()
    one_run: OneRunAuditResult | None = None
    mia: Any = None
    ledger: Any = field(default=None, repr=False)
    neighbours: str = "schema"
    internal: bool = False
    not_measured: str = ""
    wall_time: float = 0.0
    cpu_time: float = 0.0

    @property
    def mode(self) -> str:
        """``"releases"`` (white box), ``"labels"``/``"proba"`` (black box) or both."""
        kinds = []
        if self.release_tests:
            kinds.append("releases")
        kinds += sorted({t.output for t in self.tests})
        return " + ".join(kinds) or "none"

    @property
    def measured(self) -> bool:
        """Whether any many-trainings test gave a bound."""
        return bool(self.tests) or any(t.measured for t in self.release_tests)

    @property
    def measured_epsilon(self) -> float | None:
        """The largest many-trainings bound (None when nothing was measured)."""
        bounds = [t.epsilon_lower for t in self.tests]
        bounds += [t.epsilon_lower for t in self.release_tests if t.measured]
        return max(bounds) if bounds else None

    @property
    def best_release_test(self) -> Any:
        """The white-box test with the largest bound (None without one)."""
        measured = [t for t in self.release_tests if t.measured]
        return max(measured, key=lambda t: t.epsilon_lower) if measured else None

    @property
    def estimate(self) -> float | None:
        """The white-box estimate of the best test (None without one)."""
        best = self.best_release_test
        return None if best is None else best.estimate

    @property
    def mia_epsilon(self) -> float | None:
        """The held-out epsilon lower bound of the best membership-inference attack."""
        return None if self.mia is None else float(self.mia.epsilon_lower)

    @property
    def claim_for_verdict(self) -> float | None:
        return self.claimed_epsilon

    @property
    def verdict(self) -> str:
        """Against the claim: FAIL if the measured bound exceeds it.

        NOT MEASURED when no many-trainings test gave a bound (a bound of 0 from
        no training must never read as a PASS); NO CLAIM without a claim.
        """
        measured = self.measured_epsilon
        if measured is None:
            return "NOT MEASURED"
        if self.claimed_epsilon is None or math.isinf(self.claimed_epsilon):
            return "NO CLAIM"
        return "FAIL" if measured > self.claimed_epsilon else "PASS"

    @property
    def consistent(self) -> bool:
        """Whether every bound (tests, one run) is at most the proven epsilon.

        False is a bug in privet: the ledger proved less than the learner leaks.
        """
        bounds = [self.measured_epsilon or 0.0]
        if self.one_run is not None:
            bounds.append(self.one_run.epsilon_lower)
        return all(b <= self.proven_epsilon + 1e-12 for b in bounds)

    def summary(self) -> str:
        claim = "none" if self.claimed_epsilon is None else format_epsilon(self.claimed_epsilon, 4)
        head = (
            f"{self.title}: claimed ε = {claim}, proven ε = "
            f"{format_epsilon(self.proven_epsilon, 4)}"
        )
        measured = self.measured_epsilon
        if measured is None:
            why = self.not_measured or "; ".join(
                t.not_measured for t in self.release_tests if not t.measured
            )
            parts = [f"{head}, measured ε: not measured ({why or 'no test ran'}) → {self.verdict}"]
        else:
            runs = [f"{t.result.n_trials:,} ({t.pair})" for t in self.tests]
            runs += [f"{t.n_trials:,} ({t.pair}, releases)" for t in self.release_tests]
            parts = [
                f"{head}, measured ε ≥ {measured:.3g} at {self.confidence:.0%} "
                f"from {' + '.join(runs)} trainings per dataset → {self.verdict}"
            ]
            best = self.best_release_test
            if best is not None:
                lo, hi = best.estimate_interval
                parts.append(
                    f"estimate ε ≈ {best.estimate:.3g} [{lo:.3g}, {hi:.3g}] ({best.estimate_method})"
                )
        if self.one_run is not None:
            parts.append(f"one run ε ≥ {self.one_run.epsilon_lower:.3g}")
        if self.mia is not None:
            parts.append(f"MIA ε ≥ {self.mia.epsilon_lower:.3g}")
        if not self.consistent:
            parts.append("EXCEEDS THE PROVEN EPSILON: a privet bug")
        if self.internal:
            parts.append("INTERNAL: contains facts about the private data")
        return "; ".join(parts)

    def row(self) -> dict[str, Any]:
        """A flat record for tables (CSV, markdown)."""
        best = self.best_release_test
        row: dict[str, Any] = {
            "learner": self.learner,
            "title": self.title,
            "dataset": self.dataset,
            "epsilon": self.epsilon,
            "max_depth": self.max_depth,
            "mode": self.mode,
            "neighbours": self.neighbours,
            "claimed_epsilon": self.claimed_epsilon,
            "proven_epsilon": self.proven_epsilon,
            "proven_delta": self.proven_delta,
            "measured_epsilon": self.measured_epsilon,
            "estimate": None if best is None else best.estimate,
            "estimate_low": None if best is None else best.estimate_interval[0],
            "estimate_high": None if best is None else best.estimate_interval[1],
            "pair_epsilon": None if best is None else best.pair_epsilon,
            "confidence": self.confidence,
            "verdict": self.verdict,
            "consistent_with_proven": self.consistent,
            "one_run_epsilon": None if self.one_run is None else self.one_run.epsilon_lower,
            "mia_epsilon": self.mia_epsilon,
            "seconds": round(self.wall_time, 2),
            "cpu_seconds": round(self.cpu_time, 2),
            "internal": self.internal,
        }
        for t in self.tests:
            row[f"{t.pair}_epsilon"] = t.epsilon_lower
            row[f"{t.pair}_trials"] = t.result.n_trials
        for rt in self.release_tests:
            row[f"{rt.pair}_releases_epsilon"] = rt.epsilon_lower
            row[f"{rt.pair}_releases_trials"] = rt.n_trials
        return row

    def to_dict(self) -> dict[str, Any]:
        d = {
            **self.row(),
            "claim_source": self.claim_source,
            "not_measured": self.not_measured,
            "tests": [t.to_dict() for t in self.tests],
            "release_tests": [t.to_dict() for t in self.release_tests],
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
        table.add_column(style="dim", no_wrap=True)
        table.add_column(overflow="fold")
        if self.claimed_epsilon is not None:
            claim = format_epsilon(self.claimed_epsilon, 4)
        elif math.isfinite(self.proven_epsilon):
            claim = "none recorded (no paper claim)"
        else:
            claim = "none (not private)"
        table.add_row("claimed ε", f"{claim}  {self.claim_source}".rstrip())
        proven = format_epsilon(self.proven_epsilon, 4)
        if self.proven_delta:
            proven += f", δ = {self.proven_delta:.3g}"
        table.add_row("proven ε", f"{proven} (the ledger)")
        for rt in self.release_tests:
            if not rt.measured:
                table.add_row(
                    f"measured ε ({rt.pair}, releases)", f"not measured: {rt.not_measured}"
                )
                continue
            r = rt.result
            lo, hi = rt.estimate_interval
            table.add_row(
                f"measured ε ({rt.pair}, releases)",
                f"≥ {r.epsilon_lower:.4g} at {r.confidence:.2%}; {rt.n_trials:,} trainings per "
                f"dataset; event {r.event}",
            )
            table.add_row(
                "estimate ε",
                f"{rt.estimate:.4g} [{lo:.4g}, {hi:.4g}] ({rt.estimate_method}); the pair "
                f"allows {format_epsilon(rt.pair_epsilon, 4)}",
            )
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
        table.add_row(
            "neighbours",
            "the public schema alone"
            if self.neighbours == "schema"
            else "the private rows (charged; INTERNAL report)",
        )
        colour = {"PASS": "green", "FAIL": "bold red"}.get(self.verdict, "yellow")
        title = f"{self.title} on {self.dataset}: [{colour}]{self.verdict}[/]"
        if not self.consistent:
            title += " [bold red]measured > proven: privet bug[/]"
        return Panel(table, title=title, expand=False)


class Guarantees(NamedTuple):
    """What a learner claims and what its ledger proves for it, read from one fit."""

    claimed_epsilon: float | None
    claim_source: str
    proven_epsilon: float
    proven_delta: float
    ledger: Any
    #: The fit's privacy plan (None for a learner without one): ``ledger.plan_cost(plan,
    #: delta=...)`` is the learner's proven epsilon(delta) as a mechanism.
    plan: Any = None


def claimed_and_proven(
    learner: str | LearnerSpec,
    X: Any,
    y: Any,
    *,
    epsilon: float,
    max_depth: int,
    schema: Any,
) -> Guarantees:
    """Fit once on ``(X, y)`` with an unbounded ledger; read ``privacy_claim_``, and what
    the ledger proves for the learner as a mechanism.

    The proven figure is the cost of the fit's privacy plan (what ``fit`` reserved before
    it read the data), not only what this one fit charged (``privacy_spent_``): a learner
    whose later steps depend on earlier noisy outputs charges less on some runs (secure-sum
    ID3 at depth 1 stops at the root on about one fit in eight on a small pair, charging
    half its plan), and an audit measures the learner over all its runs. The larger of the
    two is kept. A learner without a ledger (non-private) proves ``inf``; an infinite
    "claim" (a non-private baseline's record) counts as no claim.
    """
    spec = resolve_learner(learner)
    ledger = _unbounded_ledger(spec.relation)
    model = spec.make(epsilon=epsilon, max_depth=max_depth, schema=schema, ledger=ledger)
    model.fit(X, y)
    spent = getattr(model, "privacy_spent_", None)
    claim = getattr(model, "privacy_claim_", None)
    fit_ledger = getattr(model, "ledger_", None)
    plan = None if spent is None or fit_ledger is None else fitted_plan(model)
    guarantee = planned_guarantee(spent, fit_ledger, plan)
    proven = (math.inf, 0.0) if guarantee is None else (guarantee.epsilon, guarantee.delta)
    claimed = None if claim is None else float(claim.epsilon)
    if claimed is not None and math.isinf(claimed):
        claimed = None
    source = "" if claim is None else str(getattr(claim, "source", ""))
    return Guarantees(claimed, source, proven[0], proven[1], fit_ledger, plan)


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


NEIGHBOURS = ("schema", "private_rows")
OUTPUTS = ("releases", "labels", "proba")


def synthetic_data(schema: Any, rows: int, random_state: Any) -> tuple[pd.DataFrame, pd.Series]:
    """``rows`` records drawn uniformly from the schema's domains, with uniform classes.

    Public randomness only: the stand-in for a dataset in an audit that builds
    its neighbours from the public schema alone.
    """
    rng = np.random.default_rng(random_state)
    codes = np.stack([rng.integers(s, size=rows) for s in schema.domain_sizes], axis=1)
    X, y = frame_from_codes(schema, codes, rng.integers(schema.n_classes, size=rows))
    return X, y  # type: ignore[return-value]


def charge_private_audit(ledger: Any, dataset: str, what: str) -> None:
    """Record an audit on private rows in ``ledger`` as a non-private release, or refuse.

    An audit that trains on the private rows and reports on them (a tie, a
    count, a measured bound) releases facts about them with no DP guarantee:
    the ledger records it as ``NonPrivate``, which only an unbounded budget
    accepts. The charge comes before any row is read.
    """
    from privet.errors import BudgetExceededError
    from privet.ledger import NonPrivate

    if ledger is None:
        raise InvalidParameterError(
            "An audit on the private rows (neighbours='private_rows') releases facts about "
            "them; pass the dataset's ledger (ledger=...) so that the audit is recorded, or "
            "build the neighbours from the public schema alone (neighbours='schema', the "
            "default)."
        )
    scope = getattr(ledger, "root", ledger)
    budget = scope.ledger.budget
    if math.isfinite(budget.epsilon):
        raise BudgetExceededError(
            f"An audit on the private rows of {dataset!r} is a non-private release (its report "
            f"states facts about them: {what}), and the ledger's budget {budget} is finite. "
            "Audit with neighbours from the public schema (neighbours='schema', the default), "
            "or record it on a ledger with budget=Guarantee.unbounded() if the data may be "
            "examined in the clear. Nothing was charged."
        )
    scope.charge(
        NonPrivate(reason=f"audit on the private rows: {what}"),
        mechanism="audit",
        caller="audit_learner",
        step="audit on private rows (internal report)",
    )


def _check_choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise InvalidParameterError(
            f"The '{name}' parameter must be one of {', '.join(map(repr, allowed))}; got {value!r}."
        )
    return str(value)


def audit_learner(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    trials: int | Mapping[str, int],
    confidence: float,
    pairs: Sequence[str | LearnerPair] | None = None,
    max_depth: int = 3,
    output: str = "labels",
    neighbours: str = "schema",
    ledger: Any = None,
    claimed_epsilon: float | None = None,
    selection_fraction: float | None = None,
    curve: bool = True,
    one_run: bool = True,
    one_run_m: int | None = None,
    mia: bool = False,
    mia_shadows: int = 8,
    mia_rows: int | None = 600,
    time_limit: float | None = None,
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
    data : privet Dataset, (X, y) or Schema
        Supplies the public schema; its rows are read only with
        ``neighbours="private_rows"``.
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
    pairs : sequence of str or LearnerPair, optional
        ``"worst_case"`` (the learner's own pair, built from the schema: see
        :func:`~privet.audits.learners.worst_case.worst_case_pair`), ``"count"``,
        ``"split"``, ``"deep_split"`` (at ``max_depth`` levels), ``"near_tie"``,
        ``"lone_leaf"``, or pairs of your own.
        Default: ``("worst_case",)`` for ``output="releases"``, else
        ``("near_tie", "lone_leaf")``.
    max_depth : int, default=3
    output : {"labels", "proba", "releases"}, default="labels"
        What a training releases to the test. ``"releases"`` is the white-box
        audit: every noisy value the mechanisms draw during ``fit``, with the
        exact likelihood ratio of ``D`` against ``D'`` as the statistic
        (:func:`~privet.audits.learners.whitebox.release_test`); the others are
        the black-box predictions on probe records.
    neighbours : {"schema", "private_rows"}, default="schema"
        ``"schema"``: every dataset the audit trains on is built from the
        public schema (pairs, one-run canaries, the fit that reads the proven
        epsilon); the audit states no fact about private data and costs
        nothing. ``"private_rows"``: the lone-leaf pair, the canaries and the
        membership-inference population come from ``data``'s rows; the audit is
        recorded in ``ledger`` as a non-private release (only an unbounded
        budget accepts it) and its report is marked internal.
    ledger : Ledger or Scope, optional
        The dataset's ledger (required with ``neighbours="private_rows"``).
    claimed_epsilon : float, optional
        The claim the verdict compares with; default the learner's
        ``privacy_claim_`` (the paper's), e.g. the epsilon a model was trained at.
    selection_fraction : float, optional
        Share of the trainings that chooses the event (default 0.25 for
        releases, 0.5 for predictions).
    curve : bool, default=True
        Also record the bound against the number of trainings.
    one_run : bool, default=True
        Also run the one-run audit (one training with random canaries; with
        ``output="releases"`` the white-box one-run audit where the learner
        allows it, else the black-box one).
    one_run_m : int, optional
        Its number of canaries.
    mia : bool, default=False
        Also run :func:`~privet.audits.mia.membership_inference` (needs
        ``neighbours="private_rows"``: a population of records).
    time_limit : float, optional
        Seconds after which the white-box tests start no new trainings.
    n_jobs, backend, random_state
        joblib workers and backend (None: the active
        ``joblib.parallel_config``) of every many-trainings step, and the
        seed of the auditor's choices and of the learners' ``random_state``.
    scheduler : str, distributed.Client or cluster, optional
        Run the trainings on this Dask cluster (``"tcp://HOST:8786"``).
    progress : callable, optional
        ``progress(stage, done, total)`` during the trainings of each stage.

    Returns
    -------
    LearnerAudit
    """
    backend = resolve_backend(backend, scheduler)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    spec = resolve_learner(learner)
    confidence = check_confidence(confidence)
    output = _check_choice(output, "output", OUTPUTS)
    neighbours = _check_choice(neighbours, "neighbours", NEIGHBOURS)
    schema = _schema_of(data)
    name = getattr(data, "name", None) or getattr(schema, "name", None) or "data"
    pairs = _check_pairs(
        pairs if pairs is not None else (("worst_case",) if output == "releases" else DEFAULT_PAIRS)
    )
    epsilon = check_real(epsilon, "epsilon", lower=0.0)
    max_depth = check_positive_int(max_depth, "max_depth", minimum=0)
    if claimed_epsilon is not None:
        claimed_epsilon = check_real(claimed_epsilon, "claimed_epsilon", lower=0.0)
    if selection_fraction is None:
        selection_fraction = 0.25 if output == "releases" else 0.5
    if one_run_m is not None:
        one_run_m = check_positive_int(one_run_m, "one_run_m", minimum=2)
    if mia:
        mia_shadows = check_positive_int(mia_shadows, "mia_shadows", minimum=2)
        mia_rows = _check_rows(mia_rows)
        if neighbours == "schema":
            raise InvalidParameterError(
                "Membership inference needs a population of records: pass "
                "neighbours='private_rows' (with the dataset's ledger, charged as a "
                "non-private release), or mia=False."
            )
    check_seed(random_state)
    parallel(n_jobs, backend)  # refuses a bad n_jobs or backend before any training
    if neighbours == "private_rows":
        charge_private_audit(
            ledger,
            str(name),
            "neighbouring datasets, canaries and measured bounds from its rows",
        )
        X, y, schema = xy_schema(data, schema)
    else:
        X, y = synthetic_data(schema, 300, random_state)
    base = (X, y)
    built = _build_pairs(pairs, spec, schema, base, epsilon, max_depth, random_state)
    trials_of = _check_trials(trials, built)
    for n in trials_of.values():
        check_split(n, selection_fraction)
    fit_on = (built[0].X1, built[0].y1) if output == "releases" else base
    claimed, source, proven, proven_delta, fit_ledger, _ = claimed_and_proven(
        spec, *fit_on, epsilon=epsilon, max_depth=max_depth, schema=schema
    )
    if claimed_epsilon is not None:
        claimed, source = claimed_epsilon, "the epsilon the model was trained at"
    per_test = 1.0 - (1.0 - confidence) / len(built)
    claim_for_tests = claimed if claimed is not None else math.inf
    tests: list[LearnerDPTest] = []
    release_tests: list[Any] = []
    for pair in built:
        cb = None if progress is None else _stage(progress, f"{spec.name}: {pair.kind}")
        if output == "releases":
            release_tests.append(
                release_test(
                    spec,
                    pair,
                    epsilon=epsilon,
                    trials=trials_of[pair.kind],
                    confidence=per_test,
                    max_depth=pair.max_depth or max_depth,
                    delta=proven_delta if math.isfinite(proven) else 0.0,
                    claimed_epsilon=claim_for_tests,
                    selection_fraction=selection_fraction,
                    time_limit=time_limit,
                    curve=curve,
                    n_jobs=n_jobs,
                    backend=backend,
                    random_state=random_state,
                    progress=cb,
                )
            )
            continue
        tests.append(
            learner_dp_test(
                spec,
                pair,
                epsilon=epsilon,
                trials=trials_of[pair.kind],
                confidence=per_test,
                max_depth=pair.max_depth or max_depth,
                claimed_epsilon=claim_for_tests,
                output=output,  # type: ignore[arg-type]
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
        one = _one_run(
            spec,
            base,
            schema,
            output=output,
            epsilon=epsilon,
            max_depth=max_depth,
            confidence=confidence,
            m=one_run_m,
            delta=proven_delta if math.isfinite(proven) else 0.0,
            claimed=claimed,
            random_state=random_state,
        )
        if progress is not None:
            progress(f"{spec.name}: one run", 1, 1)
    mia_result = None
    if mia:
        mia_result = learner_mia(
            spec,
            (X, y),
            schema=schema,
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
    cpu = time.process_time() - cpu0 + sum(t.cpu_seconds for t in release_tests)
    return LearnerAudit(
        learner=spec.name,
        title=spec.title,
        dataset=str(name),
        epsilon=epsilon,
        max_depth=max_depth,
        claimed_epsilon=claimed,
        claim_source=source,
        proven_epsilon=proven,
        proven_delta=proven_delta,
        confidence=confidence,
        tests=tuple(tests),
        release_tests=tuple(release_tests),
        one_run=one,
        mia=mia_result,
        ledger=fit_ledger,
        neighbours=neighbours,
        internal=neighbours == "private_rows",
        wall_time=time.perf_counter() - t0,
        cpu_time=cpu,
    )


DEFAULT_PAIRS = ("near_tie", "lone_leaf")
PAIR_NAMES = ("worst_case", "count", "split", "deep_split", "near_tie", "lone_leaf")


def _schema_of(data: Any) -> Any:
    """The public schema of ``data``, without touching its rows."""
    from privet.data import Schema

    if isinstance(data, Schema):
        return data
    if isinstance(data, tuple):
        return _tuple_schema(data)
    if hasattr(data, "schema") and hasattr(data, "frame"):
        return data.schema
    return xy_schema(data, None)[2]


def _tuple_schema(data: tuple[Any, ...]) -> Any:
    if len(data) == 3:
        return data[2]
    raise InvalidParameterError(
        "With data given as a tuple, pass (X, y, schema): the audit needs the public schema."
    )


def _build_pairs(
    pairs: Sequence[str | LearnerPair],
    spec: LearnerSpec,
    schema: Any,
    base: tuple[Any, Any],
    epsilon: float,
    max_depth: int,
    random_state: Any,
) -> list[LearnerPair]:
    built: list[LearnerPair] = []
    for p in pairs:
        if isinstance(p, LearnerPair):
            built.append(p)
        elif p == "worst_case":
            if spec.pair is not None:  # the user's own estimator declares its pair
                declared = spec.pair(schema)
                built.append(
                    declared
                    if isinstance(declared, LearnerPair)
                    else pair_from_codes(schema, **declared)
                )
                continue
            est = spec.make(epsilon=epsilon, max_depth=max_depth, schema=schema)
            built.append(worst_case_pair(est, schema))
        elif p == "count":
            built.append(count_pair(schema))
        elif p == "split":
            built.append(split_pair(schema))
        elif p == "deep_split":  # worst case at every level of a tree of max_depth
            built.append(deep_split_pair(schema, max(1, deep_split_levels(schema, max_depth))))
        elif p == "near_tie":
            built.append(near_tie_pair(schema))
        elif p == "lone_leaf":
            built.append(
                lone_leaf_pair(base, schema=schema, max_rows=300, random_state=random_state)
            )
        else:
            raise InvalidParameterError(
                f"Unknown pair {p!r}; use one of {', '.join(map(repr, PAIR_NAMES))} or a "
                "LearnerPair."
            )
    kinds = [b.kind for b in built]
    if len(set(kinds)) != len(kinds):
        raise InvalidParameterError(
            f"Two pairs share a kind ({kinds}); give each LearnerPair its own kind."
        )
    return built


def _one_run(
    spec: LearnerSpec,
    base: tuple[Any, Any],
    schema: Any,
    *,
    output: str,
    epsilon: float,
    max_depth: int,
    confidence: float,
    m: int | None,
    delta: float,
    claimed: float | None,
    random_state: Any,
) -> OneRunAuditResult:
    claim = claimed if claimed is not None else math.inf
    if output == "releases":
        try:
            return release_one_run(
                spec,
                schema,
                epsilon=epsilon,
                confidence=confidence,
                max_depth=max_depth,
                m=m or 200,
                delta=delta,
                claimed_epsilon=claim,
                random_state=random_state,
            )
        except OneRunNotSupported:
            pass  # the black-box one-run audit below
    return learner_one_run(
        spec,
        base,
        schema=schema,
        epsilon=epsilon,
        confidence=confidence,
        m=m,
        claimed_epsilon=claim,
        random_state=random_state,
    )


def learner_mia(
    learner: str | LearnerSpec,
    data: Any,
    *,
    epsilon: float,
    max_depth: int,
    confidence: float,
    schema: Any = None,
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
    X, y, schema = xy_schema(data, schema)
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
