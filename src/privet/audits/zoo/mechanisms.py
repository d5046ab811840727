"""The bug zoo: deliberately broken mechanisms, each with the test that catches it.

Every :class:`ZooEntry` pairs a broken randomiser with the epsilon it pretends
to meet, the neighbouring inputs that expose it, the statistic and event family
the DP test should use there, and the correct counterpart (privet's own
mechanism wherever privet has one). :func:`run_zoo` runs
:func:`~privet.audits.dp_test` on both: the broken one must be flagged (verdict
``FAIL``: the lower bound exceeds the claim) and the correct one must pass.

=============================  ======================================================
entry                          what is wrong
=============================  ======================================================
``laplace_half_scale``         Laplace scale ``Δ / (2 ε)`` instead of ``Δ / ε``
``histogram_replace_one``      histogram noise for sensitivity 1 under replace-one
                               neighbours, where one record moves between two cells
``exponential_no_factor_2``    exponential mechanism with ``exp(ε u / Δ)``, the
                               monotone calibration, on a non-monotone utility
``report_noisy_max_laplace``   report-noisy-max with Laplace(``Δ / ε``) noise, the
                               counting-query calibration, on a non-monotone utility
``svt_roth_2011``              sparse vector releasing the noisy answer of each
                               positive query (Lyu, Su & Li 2017, Alg. 3)
``svt_lee_clifton_2014``       query noise not scaled with the cutoff ``c``
                               (Alg. 4: ``(1 + 6c) / 4 · ε``-DP, not ``ε``)
``svt_stoddard_2014``          no noise on the queries (Alg. 5: not DP at all)
``svt_chen_2015``              no cutoff on positive answers (Alg. 6: not DP at all)
``naive_float_laplace``        ``x + numpy.random.laplace(0, b)`` on doubles: the
                               set of representable outputs depends on ``x``
                               (Mironov 2012)
``naive_float_piecewise``      seed 004's Piecewise sampled in doubles: the outputs
                               it can reach depend on the input (Mironov's attack)
``linearised_subsampling``     Poisson subsampling at rate ``g`` credited as
                               ``g ε`` instead of ``ln(1 + g (e^ε - 1))``
=============================  ======================================================

The inputs of the selection and sparse-vector entries are the vectors of query
answers ``q(D)`` (each of sensitivity ``Δ = 1``), the abstraction used by Lyu et
al. and by DP testers (Ding et al. 2018): neighbouring datasets move every answer
by at most ``Δ``, in either direction. The other entries take datasets (arrays of
records) and compute their query inside the mechanism.

Noise comes from privet's OpenDP-backed mechanisms in every entry except
``naive_float_laplace``, whose bug *is* the sampler: this module is the only
place in privet that calls ``numpy.random.laplace``. The broken and correct
versions of an entry share their sampler, so each entry isolates one bug. The
mechanisms are vectorised (``mechanism(data, size=n)`` returns ``n`` independent
runs) and picklable, for joblib workers; each call charges a throw-away ledger
with an unbounded budget, since an audit is about the output distribution.

References
----------
.. [1] M. Lyu, D. Su, N. Li, "Understanding the sparse vector technique for
   differential privacy", PVLDB 10(6), 2017 (Algorithms 1 and 3-6, Sec. 3-4).
.. [2] I. Mironov, "On significance of the least significant bits for
   differential privacy", CCS 2012.
.. [3] F. McSherry, K. Talwar, "Mechanism design via differential privacy",
   FOCS 2007 (the factor 2 of the exponential mechanism).
.. [4] C. Dwork, A. Roth, "The algorithmic foundations of differential
   privacy", 2014, Sec. 3.3 (report noisy max) and 3.6 (sparse vector).
.. [5] B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by
   subsampling: tight analyses via couplings and divergences", NeurIPS 2018.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from privet.audits.bounds import check_confidence
from privet.audits.dptest import DPTestResult, EventsSpec, dp_test
from privet.audits.zoo import samplers as _mechanisms
from privet.audits.zoo.samplers import *  # noqa: F403  (re-exported, see __all__)
from privet.audits.zoo.samplers import (
    Histogram,
    LaplaceCount,
    NaiveFloatLaplace,
    NaiveFloatPiecewise,
    PiecewiseSupport,
    PiecewiseValue,
    Selection,
    SparseVector,
    SubsampledCount,
    SupportClass,
    SVTAnswers,
    SVTReleasedValue,
    TwoCellShift,
    inner_epsilon_for,
)
from privet.errors import InvalidParameterError

__all__ = [  # the mechanisms were defined here: they stay importable from privet.audits.zoo
    *_mechanisms.__all__,
    "ZOO",
    "ZooEntry",
    "ZooResult",
    "get_entry",
    "run_zoo",
    "zoo_names",
]

Which = Literal["broken", "correct"]


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True, kw_only=True, eq=False)
class ZooEntry:
    """One broken mechanism, its claim, the inputs that expose it and its correct twin.

    Attributes
    ----------
    name, title : str
        Registry key and a one-line name.
    bug : str
        What is wrong, and the true guarantee of the broken version.
    reference : str
        Where the mistake (or the mechanism) comes from.
    claimed_epsilon, claimed_delta : float
        What the broken version pretends to meet; the correct version meets it.
    true_epsilon : float
        The broken version's actual epsilon on this pair, or its worst case
        (``inf``: not DP for any epsilon).
    broken, correct : callable
        ``mechanism(data, size=n) -> n outputs``; picklable.
    d0, d1 : object
        The neighbouring inputs that expose the bug.
    relation : str
        ``"add_remove"`` or ``"replace_one"``: how ``d0`` and ``d1`` are neighbours.
    ci_trials : int or None
        Runs per input for the CI test (None: too slow for CI, benchmark only).
    benchmark_trials : int
        Runs per input for the benchmark.
    statistic : callable or None
        Maps a batch of outputs to the values the event is chosen on.
    events : str
        Event family for :func:`~privet.audits.dp_test`.
    """

    name: str
    title: str
    bug: str
    reference: str
    claimed_epsilon: float
    true_epsilon: float
    broken: Callable[..., Any] = field(repr=False)
    correct: Callable[..., Any] = field(repr=False)
    d0: Any = field(repr=False)
    d1: Any = field(repr=False)
    relation: str = "add_remove"
    statistic: Callable[[Any], Any] | None = field(default=None, repr=False)
    events: EventsSpec = "auto"
    claimed_delta: float = 0.0
    ci_trials: int | None = 8_000
    benchmark_trials: int = 100_000

    def trials_for(self, trials: int | Literal["ci", "benchmark"]) -> int:
        """Runs per input: the entry's CI or benchmark count, or ``trials`` itself."""
        if trials == "ci":
            return self.ci_trials or self.benchmark_trials
        if trials == "benchmark":
            return self.benchmark_trials
        return int(trials)

    def mechanism(self, which: Which) -> Callable[..., Any]:
        if which not in ("broken", "correct"):
            raise InvalidParameterError(f"'which' must be 'broken' or 'correct'; got {which!r}.")
        return self.broken if which == "broken" else self.correct

    def test(
        self,
        which: Which = "broken",
        *,
        confidence: float,
        trials: int | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        **kwargs: Any,
    ) -> DPTestResult:
        """Run :func:`~privet.audits.dp_test` on one version against the claim."""
        return dp_test(
            self.mechanism(which),
            self.d0,
            self.d1,
            epsilon=self.claimed_epsilon,
            delta=self.claimed_delta,
            trials=(self.ci_trials or self.benchmark_trials) if trials is None else trials,
            confidence=confidence,
            statistic=self.statistic,
            events=self.events,
            n_jobs=n_jobs,
            random_state=random_state,
            **kwargs,
        )


def _entries() -> list[ZooEntry]:
    eps = 1.0
    out: list[ZooEntry] = []

    out.append(
        ZooEntry(
            name="laplace_half_scale",
            title="Laplace mechanism with half the required scale",
            bug="noise Lap(Δ/(2ε)) on a count of sensitivity Δ = 1: (2ε)-DP, not ε-DP",
            reference="Dwork, McSherry, Nissim & Smith 2006 (scale Δ/ε)",
            claimed_epsilon=eps,
            true_epsilon=2 * eps,
            broken=LaplaceCount(scale=0.5 / eps),
            correct=LaplaceCount(scale=1.0 / eps),
            d0=np.ones(10),
            d1=np.ones(11),
            events="threshold",
        )
    )

    d0 = np.array([0, 0, 0, 1, 1, 2, 3, 3])
    d1 = d0.copy()
    d1[0] = 1  # the record moves from cell 0 to cell 1
    out.append(
        ZooEntry(
            name="histogram_replace_one",
            title="Histogram calibrated for sensitivity 1 under replace-one neighbours",
            bug=(
                "replacing a record moves it between two cells (L1 sensitivity 2), but the "
                "noise is Lap(1/ε): (2ε)-DP"
            ),
            reference="Dwork & Roth 2014, Sec. 3.3; privet's make_noisy_histogram",
            claimed_epsilon=eps,
            true_epsilon=2 * eps,
            broken=Histogram(bins=4, epsilon=eps, scale=1.0 / eps),
            correct=Histogram(bins=4, epsilon=eps),
            d0=d0,
            d1=d1,
            relation="replace_one",
            statistic=TwoCellShift(a=0, b=1, count_a=3, count_b=2),
            events="threshold",
        )
    )

    k = 10
    u0 = np.zeros(k)
    u0[0] = 1.0
    u1 = np.ones(k)
    u1[0] = 0.0  # every utility moves by Δ = 1, candidate 0 the other way
    out.append(
        ZooEntry(
            name="exponential_no_factor_2",
            title="Exponential mechanism without the factor 2",
            bug=(
                "selects with probability ∝ exp(ε u / Δ), valid only for monotone utilities; "
                "here candidate 0 loses while the others gain: up to 2ε (1.78ε on this pair)"
            ),
            reference="McSherry & Talwar 2007; privet's make_exponential(monotone=True) misused",
            claimed_epsilon=eps,
            true_epsilon=2 * eps,
            broken=Selection("exponential", eps, monotone=True),
            correct=Selection("exponential", eps),
            d0=u0,
            d1=u1,
            events="set",
            ci_trials=6_000,
            benchmark_trials=30_000,  # one OpenDP noisy-max call per run
        )
    )
    out.append(
        ZooEntry(
            name="report_noisy_max_laplace",
            title="Report-noisy-max with too little (Laplace) noise",
            bug=(
                "argmax of u + Lap(Δ/ε), the counting-query calibration, on a non-monotone "
                "utility: up to 2ε (1.94ε on this pair)"
            ),
            reference="Dwork & Roth 2014, Claim 3.9 (monotone counts only)",
            claimed_epsilon=eps,
            true_epsilon=2 * eps,
            broken=Selection("laplace_max", eps, laplace_scale=1.0 / eps),
            correct=Selection("report_noisy_max", eps),
            d0=u0,
            d1=u1,
            events="set",
            ci_trials=6_000,
            benchmark_trials=30_000,  # one OpenDP noisy-max call per run
        )
    )

    m3, eps_svt = 5, 2.0  # larger epsilons make the patterns likelier: fewer trials
    out.append(
        ZooEntry(
            name="svt_roth_2011",
            title="Sparse vector releasing noisy answers (Lyu et al. Alg. 3)",
            bug=(
                "releases q_i + ν_i for the positive query; with the released value bounding "
                "the threshold noise, each negative answer before it costs privacy: not DP"
            ),
            reference="Lyu, Su & Li 2017, Alg. 3 (Roth's 2011 lecture notes)",
            claimed_epsilon=eps_svt,
            true_epsilon=math.inf,
            broken=SparseVector("alg3", eps_svt, threshold=0.0),
            correct=SparseVector("alg1", eps_svt, threshold=0.0),
            d0=np.zeros(m3),
            d1=np.array([1.0] * (m3 - 1) + [-1.0]),
            statistic=SVTReleasedValue(m3),
            events="threshold",
            ci_trials=None,  # rare events: about 10^5 runs per input, benchmark only
            benchmark_trials=150_000,
        )
    )
    m4 = 5
    out.append(
        ZooEntry(
            name="svt_lee_clifton_2014",
            title="Sparse vector with query noise not scaled by the cutoff (Lyu et al. Alg. 4)",
            bug="ν_i ~ Lap(4Δ/(3ε)) whatever the cutoff c: ((1 + 6c)/4)ε-DP, 1.75ε for c = 1",
            reference="Lyu, Su & Li 2017, Alg. 4 (Lee & Clifton 2014)",
            claimed_epsilon=eps_svt,
            true_epsilon=1.75 * eps_svt,
            broken=SparseVector("alg4", eps_svt, threshold=0.0),
            correct=SparseVector("alg1", eps_svt, threshold=0.0),
            d0=np.array([0.0] * (m4 - 1) + [1.0]),
            d1=np.array([1.0] * (m4 - 1) + [0.0]),
            statistic=SVTAnswers(m4),
            events="set",
            ci_trials=24_000,
            benchmark_trials=100_000,
        )
    )
    out.append(
        ZooEntry(
            name="svt_stoddard_2014",
            title="Sparse vector without query noise (Lyu et al. Alg. 5)",
            bug="no noise on the queries: answers (above, below) are impossible on D': not DP",
            reference="Lyu, Su & Li 2017, Alg. 5 (Stoddard, Chen & Machanavajjhala 2014)",
            claimed_epsilon=eps,
            true_epsilon=math.inf,
            broken=SparseVector("alg5", eps, threshold=0.5),
            correct=SparseVector("alg1", eps, threshold=0.5, cutoff=1),
            d0=np.array([1.0, 0.0]),
            d1=np.array([0.0, 1.0]),
            statistic=SVTAnswers(2),
            events="set",
            ci_trials=4_000,
            benchmark_trials=20_000,
        )
    )
    k6 = 3
    out.append(
        ZooEntry(
            name="svt_chen_2015",
            title="Sparse vector without a cutoff (Lyu et al. Alg. 6)",
            bug=(
                "answers every query with no cutoff on positives: k positives on queries "
                "that moved down and k negatives on queries that moved up cost about 2kε2: "
                "not DP"
            ),
            reference="Lyu, Su & Li 2017, Alg. 6 (Chen, Machanavajjhala, Hay & Miklau 2015)",
            claimed_epsilon=eps_svt,
            true_epsilon=math.inf,
            broken=SparseVector("alg6", eps_svt, threshold=0.5),
            correct=SparseVector("alg1", eps_svt, threshold=0.5, cutoff=k6),
            d0=np.array([1.0] * k6 + [0.0] * k6),
            d1=np.array([0.0] * k6 + [1.0] * k6),
            statistic=SVTAnswers(2 * k6),
            events="set",
            ci_trials=10_000,
            benchmark_trials=60_000,
        )
    )

    out.append(
        ZooEntry(
            name="naive_float_laplace",
            title="Naive floating-point Laplace (Mironov 2012)",
            bug=(
                "x + numpy.random.laplace(0, 1/ε): the doubles it can output depend on x, so "
                "most outputs exclude one neighbour: not DP"
            ),
            reference="Mironov, CCS 2012; the correct version is OpenDP's float Laplace",
            claimed_epsilon=eps,
            true_epsilon=math.inf,
            broken=NaiveFloatLaplace(scale=1.0 / eps),
            correct=LaplaceCount(scale=1.0 / eps),
            d0=np.zeros(0),
            d1=np.ones(1),
            statistic=SupportClass(0.0, 1.0, 1.0 / eps),
            events="set",
            ci_trials=2_000,
            benchmark_trials=20_000,
        )
    )

    out.append(
        ZooEntry(
            name="naive_float_piecewise",
            title="Piecewise mechanism in doubles (seed 004, Alg. 3)",
            bug=(
                "left(x) + w (C - 1) in doubles: about 30% of the outputs on x = 0 are "
                "impossible on x = 1: not LDP"
            ),
            reference="Mironov, CCS 2012; the correct version is privet's discretised Piecewise",
            claimed_epsilon=1.0,
            true_epsilon=math.inf,
            broken=NaiveFloatPiecewise(1.0),
            correct=PiecewiseValue(1.0),
            d0=np.zeros(1),
            d1=np.ones(1),
            statistic=PiecewiseSupport(1.0, 1.0),
            events="set",
            ci_trials=2_000,
            benchmark_trials=20_000,
        )
    )

    rate, inner = 0.1, 5.0
    claimed = rate * inner
    out.append(
        ZooEntry(
            name="linearised_subsampling",
            title="Linearised amplification by subsampling (g·ε)",
            bug=(
                f"an ε={inner:g} count on a Poisson sample at rate {rate:g} credited as "
                f"g·ε = {claimed:g}; the exact bound ln(1 + g(e^ε - 1)) is "
                f"{math.log1p(rate * math.expm1(inner)):.3g}"
            ),
            reference="Balle, Barthe & Gaboardi 2018; seed 000 App. D.1 Claim D.1",
            claimed_epsilon=claimed,
            true_epsilon=math.log1p(rate * math.expm1(inner)),
            broken=SubsampledCount(rate=rate, inner_epsilon=inner),
            correct=SubsampledCount(rate=rate, inner_epsilon=inner_epsilon_for(claimed, rate)),
            d0=np.zeros(0),
            d1=np.ones(1),
            events="threshold",
            ci_trials=10_000,
        )
    )
    return out


ZOO: dict[str, ZooEntry] = {e.name: e for e in _entries()}
"""Every zoo entry by name, in a fixed order."""


def zoo_names() -> list[str]:
    """Names of the zoo entries, in order."""
    return list(ZOO)


def get_entry(name: str) -> ZooEntry:
    """The zoo entry called ``name``."""
    try:
        return ZOO[name]
    except KeyError:
        raise InvalidParameterError(
            f"No zoo entry {name!r}; choose among {', '.join(ZOO)}."
        ) from None


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True, kw_only=True)
class ZooResult:
    """The DP tests of one entry's broken and correct versions."""

    entry: ZooEntry = field(repr=False)
    broken: DPTestResult
    correct: DPTestResult | None

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def caught(self) -> bool:
        """Whether the broken version was flagged (verdict FAIL)."""
        return self.broken.verdict == "FAIL"

    @property
    def correct_passed(self) -> bool | None:
        return None if self.correct is None else self.correct.verdict == "PASS"

    def row(self) -> dict[str, Any]:
        """A flat record: claim, bounds, verdicts, trials."""
        c = self.correct
        return {
            "entry": self.entry.name,
            "title": self.entry.title,
            "claimed_epsilon": self.entry.claimed_epsilon,
            "true_epsilon": self.entry.true_epsilon,
            "broken_epsilon_lower": self.broken.epsilon_lower,
            "broken_verdict": self.broken.verdict,
            "broken_event": self.broken.event,
            "correct_epsilon_lower": None if c is None else c.epsilon_lower,
            "correct_verdict": None if c is None else c.verdict,
            "trials": self.broken.n_trials,
            "confidence": self.broken.confidence,
            "seconds": (self.broken.wall_time or 0.0) + (0.0 if c is None else c.wall_time or 0.0),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.row(),
            "bug": self.entry.bug,
            "reference": self.entry.reference,
            "broken": self.broken.to_dict(),
            "correct": None if self.correct is None else self.correct.to_dict(),
        }


def run_zoo(
    names: Iterable[str] | None = None,
    *,
    confidence: float,
    trials: int | Literal["ci", "benchmark"] = "ci",
    correct: bool = True,
    correct_confidence: float | None = None,
    n_jobs: int | None = None,
    random_state: int | None = 0,
    progress: Callable[[str, str], None] | None = None,
) -> list[ZooResult]:
    """DP-test the broken (and correct) version of every zoo entry against its claim.

    Parameters
    ----------
    names : iterable of str, optional
        Entries to run (default: all, in order; with ``trials="ci"`` only those
        with ``ci_trials``).
    confidence : float
        Confidence of every bound.
    trials : int, "ci" or "benchmark", default="ci"
        Runs per input: each entry's ``ci_trials`` (``benchmark_trials`` for an
        entry named explicitly that has none) or ``benchmark_trials``, or the
        same number for all.
    correct : bool, default=True
        Also test the correct counterparts.
    correct_confidence : float, optional
        Confidence of the correct counterparts' tests (default ``confidence``): a
        correct mechanism FAILs by chance with probability at most
        ``1 - correct_confidence``, so a test suite can hold that rate far below the
        one at which the broken versions must be caught.
    n_jobs : int, optional
        joblib workers of every test.
    random_state : int, optional
        Seed of the event selection (the mechanisms' noise is never seeded).
    progress : callable, optional
        ``progress(entry_name, which)`` is called before each test.

    Returns
    -------
    list of ZooResult
    """
    if names is None:
        chosen: Sequence[str] = [n for n, e in ZOO.items() if trials != "ci" or e.ci_trials]
    else:
        chosen = list(names)
    twin_confidence = (
        confidence
        if correct_confidence is None
        else check_confidence(correct_confidence, "correct_confidence")
    )
    results = []
    for name in chosen:
        entry = get_entry(name)
        n = entry.trials_for(trials)
        tests: dict[str, DPTestResult | None] = {"broken": None, "correct": None}
        for which in ("broken", "correct") if correct else ("broken",):
            if progress is not None:
                progress(name, which)
            tests[which] = entry.test(
                which,  # type: ignore[arg-type]
                confidence=twin_confidence if which == "correct" else confidence,
                trials=n,
                n_jobs=n_jobs,
                random_state=random_state,
            )
        assert tests["broken"] is not None
        results.append(ZooResult(entry=entry, broken=tests["broken"], correct=tests["correct"]))
    return results
