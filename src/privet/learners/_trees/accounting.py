"""What each step of the seed-000 tree growers is charged, and the paper's claims.

:class:`NoiseAccounting` turns a learner's noise choice (the paper's mechanisms,
OpenDP's exact samplers, or the discrete samplers of the sound MPC path) into
the ledger entries of a split selection and a leaf release; the plan, the
reference path and the replay of a protocol run all take their entries from it,
so what is reserved is exactly what is charged. Shared by CDP+PMPC-ID3,
ODP+FMPC-ID3 and the forests built from them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._base import (
    refuse_non_private,
)
from privet.ledger import (
    ApproxDP,
    Claim,
    Entry,
    Exponential,
    Laplace,
    NeighbouringRelation,
    NonPrivate,
)
from privet.mechanisms import (
    ExponentialMechanism,
    NoisyHistogram,
    NoisyMax,
    ReportNoisyMax,
    make_exponential,
    make_noisy_histogram,
    make_report_noisy_max,
    recorder,
)
from privet.mechanisms.bitwise_geometric import discrete_laplace_delta, noisy_max_delta

CLAIM_SOURCE = "seed 000, App. B, Alg. 7-10 (CDP+PMPC-ID3)"


#: ``rule(kind, epsilon) -> Claim | None``: the paper's claim for one charge, where
#: ``kind`` is ``"split"`` or ``"leaf"`` and ``epsilon`` the charge's budget.
ClaimRule = Callable[[str, float], Claim | None]


def paper_claim(source: str, *, scale: float = 1.0, note: str = "") -> ClaimRule:
    """A claim rule that claims ``scale * epsilon`` for every charge."""

    def rule(kind: str, epsilon: float) -> Claim:
        return Claim(scale * epsilon, source=source, note=note)

    return rule


def no_claim(kind: str, epsilon: float) -> None:
    """A claim rule for steps the paper makes no statement about."""
    return None


def laplace_sensitivity(relation: NeighbouringRelation) -> float:
    """L1 sensitivity of a class histogram: 1 (add/remove), 2 (replace-one)."""
    return 1.0 if relation is NeighbouringRelation.ADD_REMOVE else 2.0


def leaf_entry(
    leaf: str, epsilon: float, relation: NeighbouringRelation, monotone: bool = False
) -> Entry:
    """Ledger entry of one DP leaf update (App. A.2.4) at ``epsilon``.

    ``monotone``: the exponential leaves' monotone form (:func:`monotone_selection`).
    """
    if leaf == "exponential":
        # Counts as utilities: one record moves each count by at most 1.
        return Exponential(epsilon=epsilon, sensitivity=1.0, monotone=monotone)
    sens = laplace_sensitivity(relation)
    return Laplace(scale=sens / epsilon, sensitivity=sens)


def leaf_mechanism(leaf: str) -> str:
    return "exponential" if leaf == "exponential" else "noisy_histogram"


NOISES = ("paper", "discrete")


#: The forms of the selections (``em_form``), as DPID3Classifier names them.
EM_FORMS = ("auto", "paper")


def monotone_selection(em_form: str, relation: NeighbouringRelation) -> bool:
    """Whether the selections of the seed-000 trees take their *monotone* form.

    True under add/remove neighbours with ``em_form="auto"`` (the learners'
    default). The utilities are monotone there: adding a record (v, c) raises
    one class count of one value of every attribute by 1, so each attribute's
    max-operator score (Eq. 1, the sum over its values of the largest class
    count; on one-hot rows Alg. 2's MAX, whose dummy columns add 0) rises by 0
    or 1, and a leaf's class counts rise by 0 or 1; removing a record lowers
    them alike. The exponential mechanism then samples ``exp(eps u / Delta)``
    (not ``exp(eps u / (2 Delta))``) and report-noisy-max adds discrete Laplace
    noise of scale ``ceil(Delta) / eps`` (not ``ceil(2 Delta) / eps``), at the
    same eps: both are eps-DP for monotone utilities (McSherry & Talwar 2007;
    Dwork & Roth 2014, the remark after Thm. 3.10; for discrete noisy max,
    Claim 3.9's argument with integer thresholds, written out in
    :mod:`privet.mpc.discrete`). The charges are the same, with their
    ``monotone`` flag set (in MPC, the discrete samplers' delta is that of the
    scale sampled). Under replace-one a record moves from one value (or leaf)
    to another, so scores can fall and rise at once: not monotone, and the
    paper's form is used. ``em_form="paper"`` keeps the paper's form on every
    relation. (The paper's fixed-point samplers in MPC always run Alg. 13 as
    written: :attr:`NoiseAccounting.monotone`.)
    """
    return em_form == "auto" and relation is NeighbouringRelation.ADD_REMOVE


FIXED_POINT_REASON = (
    "fixed-point Laplace / exponential mechanism of seed 000 (Alg. 12-13) run in MPC: "
    "noise on a grid with its tails cut, weights rounded (and clipped at -5 in the paper); "
    "no DP guarantee is proven for what is sampled (cf. Mironov 2012)"
)


def resolve_noise(noise: str | None, backend: str) -> str:
    """``None`` picks the samplers whose guarantee is proven on each backend.

    ``"paper"`` on the reference path (OpenDP's exact samplers of the paper's
    mechanisms), ``"discrete"`` in MPC, where the paper's fixed-point samplers
    have no proof.
    """
    if noise is None:
        return "paper" if backend == "reference" else "discrete"
    return noise


@dataclass(frozen=True)
class NoiseAccounting:
    """What one DP step of the ID3 family is charged, for a noise choice and a backend.

    The plan, the reference path and the replay of a protocol run all take
    their entries from here, so what is reserved is what is charged.

    =============  ========================================  =================================
    noise          reference (OpenDP, plaintext)             MPC (``backend="mpc"|"local"``)
    =============  ========================================  =================================
    ``"paper"``    exponential mechanism (Gumbel), discrete  Alg. 12-13 in fixed point:
                   Laplace leaves: ``Exponential``,          ``NonPrivate`` (no proof), with
                   ``Laplace`` entries, pure epsilon         the paper's epsilon as claim
    ``"discrete"`` report-noisy-max with discrete Laplace    the same, sampled exactly on
                   noise, discrete Laplace leaves: pure      shares (:mod:`privet.mpc.discrete`):
                   epsilon (``NoisyMax``, ``Laplace``)       ``ApproxDP(eps, delta ~ 1e-12)``
    =============  ========================================  =================================

    With ``em_form="auto"`` under add/remove (:attr:`monotone`, see
    :func:`monotone_selection`) the selections take their monotone form at the
    same epsilon: ``Exponential(monotone=True)``, ``NoisyMax(monotone=True)``,
    and in MPC the ``ApproxDP`` delta of the discrete noise at ceil(Δ)/ε.

    Parameters
    ----------
    noise : {"paper", "discrete"}
    backend : {"reference", "mpc", "local"}
    relation : NeighbouringRelation
        The ledger's; sets the leaf histograms' L1 sensitivity.
    n_candidates : int
        Candidates of a selection (the number of attributes: an upper bound
        at every node, so one delta serves the whole plan).
    n_classes : int
    security_bits : int, default=40
        Of the MPC discrete samplers.
    em_form : {"auto", "paper"}, default="paper"
        ``"auto"``: the selections' monotone form under add/remove
        (:attr:`monotone`, :data:`MONOTONE_NOTE`); the entries are the same with
        their ``monotone`` flag set (``NoisyMax``, ``Exponential``), and the MPC
        discrete samplers' delta is that of the scale ceil(Δ)/ε they sample.
    """

    noise: str
    backend: str
    relation: NeighbouringRelation
    n_candidates: int
    n_classes: int
    security_bits: int = 40
    em_form: str = "paper"

    @property
    def monotone(self) -> bool:
        """Whether the selections take their monotone form (not the fixed-point MPC ones)."""
        if self.in_mpc and self.noise == "paper":
            return False  # Alg. 13 in fixed point, as the paper writes it
        return monotone_selection(self.em_form, self.relation)

    @property
    def in_mpc(self) -> bool:
        return self.backend != "reference"

    @property
    def mpc_noise(self) -> str:
        """The protocol's sampler: ``"fixed_point"`` (paper) or ``"discrete"``."""
        return "fixed_point" if self.noise == "paper" else "discrete"

    @property
    def proven(self) -> bool:
        """Whether the DP steps have a proven guarantee (not the paper's fixed point in MPC)."""
        return not (self.in_mpc and self.noise == "paper")

    def selection(self, epsilon: float, candidates: int | None = None) -> tuple[Entry, str]:
        """Entry and mechanism name of one split (or EM leaf) selection at ``epsilon``.

        ``candidates``: how many values get noise in MPC (the attributes for a
        split, the default; the classes for a leaf); it sets the samplers' delta.
        """
        if self.in_mpc and self.noise == "paper":
            return NonPrivate(reason=FIXED_POINT_REASON), "secure exponential (MPC, Alg. 13)"
        if self.in_mpc:
            d = self.n_candidates if candidates is None else candidates
            delta = _below_one(
                noisy_max_delta(epsilon, 1.0, max(d, 1), self.security_bits, self.monotone),
                epsilon,
            )
            return (
                ApproxDP(epsilon=epsilon, delta=delta),
                "secure report-noisy-max (MPC, discrete Laplace)",
            )
        if self.noise == "discrete":
            return (
                NoisyMax(
                    epsilon=epsilon,
                    sensitivity=1.0,
                    noise="discrete_laplace",
                    monotone=self.monotone,
                ),
                "report_noisy_max",
            )
        return Exponential(epsilon=epsilon, sensitivity=1.0, monotone=self.monotone), "exponential"

    def leaf(self, leaf: str, epsilon: float) -> tuple[Entry, str]:
        """Entry and mechanism name of one DP leaf update at ``epsilon``."""
        if leaf == "exponential":  # noisy max over the leaf's classes
            return self.selection(epsilon, candidates=self.n_classes)
        sens = laplace_sensitivity(self.relation)
        if self.in_mpc and self.noise == "paper":
            return NonPrivate(reason=FIXED_POINT_REASON), "secure laplace (MPC, Alg. 12)"
        if self.in_mpc:
            # only the cells a neighbour changes (at most ceil(sens)) count, in one leaf's
            # counts or in a whole tree's leaves x classes histogram alike
            delta = _below_one(
                discrete_laplace_delta(epsilon, sens, None, self.security_bits), epsilon
            )
            return ApproxDP(epsilon=epsilon, delta=delta), "secure discrete laplace (MPC)"
        return Laplace(scale=sens / epsilon, sensitivity=sens), "noisy_histogram"


def _below_one(delta: float, epsilon: float) -> float:
    """The MPC samplers' delta, refused where it proves nothing (1, from a huge epsilon)."""
    if delta >= 1.0:
        raise InvalidParameterError(
            f"epsilon={epsilon:g} per release is too large for the discrete samplers in MPC: "
            "their bound on the distance to the exact noise, (1 + e^epsilon) times a tiny "
            "coin error, reaches 1, so nothing would be proven. Lower epsilon per release (the "
            "bound reaches 1 near 30 at the default security_bits), or use "
            "backend='reference'. Nothing was charged."
        )
    return delta


def estimator_accounting(estimator: Any, schema: Schema | None) -> NoiseAccounting:
    """The accounting of a seed-000 learner (its ``noise``, ``backend``, ``em_form``, ``ledger``)."""
    return NoiseAccounting(
        resolve_noise(estimator.noise, estimator.backend),
        estimator.backend,
        relation_of(estimator.ledger),
        schema.n_features if schema is not None else 1,
        schema.n_classes if schema is not None else 2,
        em_form=estimator.em_form,
    )


def refuse_unproven_noise(estimator: Any) -> None:
    """Refuse the paper's fixed-point MPC noise on a finite budget, before anything happens."""
    if estimator_accounting(estimator, estimator.schema).proven:
        return
    refuse_non_private(
        estimator,
        what=(
            f"noise='paper' with backend={estimator.backend!r} samples the exponential "
            "mechanism and the Laplace noise in fixed point (seed 000, Alg. 12-13), on a "
            "grid with cut tails and rounded weights, for which no DP proof exists."
        ),
        fix=(
            "Use noise='discrete' (the default in MPC: exact discrete samplers, proven), "
            "or pass ledger=Ledger(budget=Guarantee.unbounded()) to run the paper's "
            "samplers knowingly."
        ),
    )


def reference_accounting(relation: NeighbouringRelation) -> NoiseAccounting:
    """The accounting of the paper's mechanisms on the reference path."""
    return NoiseAccounting("paper", "reference", relation, 1, 2)


@functools.lru_cache(maxsize=512)
def exponential_mechanism(
    epsilon: float, sensitivity: float, relation: NeighbouringRelation, monotone: bool = False
) -> ExponentialMechanism:
    """The exponential mechanism for ``relation`` (cached: the growers call it per level).

    ``monotone``: its form for a utility that moves one way between neighbours,
    exp(epsilon u / sensitivity) (the caller shows the utility is monotone).
    """
    return make_exponential(epsilon, sensitivity=sensitivity, monotone=monotone, relation=relation)


@functools.lru_cache(maxsize=512)
def noisy_max_mechanism(
    epsilon: float, relation: NeighbouringRelation, monotone: bool = False
) -> ReportNoisyMax:
    """Report-noisy-max with discrete Laplace noise (the sound MPC path's selection).

    ``monotone``: scale ceil(1)/epsilon for a utility that moves one way between
    neighbours (the caller shows it is), instead of ceil(2)/epsilon.
    """
    return make_report_noisy_max(
        epsilon, noise="discrete_laplace", monotone=monotone, relation=relation
    )


@functools.lru_cache(maxsize=512)
def histogram_mechanism(epsilon: float, relation: NeighbouringRelation) -> NoisyHistogram:
    """Discrete Laplace class counts at ``epsilon``."""
    # L1 sensitivity 1 (add/remove) or 2 (replace-one), picked from the relation.
    return make_noisy_histogram(epsilon, relation=relation)


def relation_of(ledger: Any) -> NeighbouringRelation:
    """The relation of a ``ledger`` parameter (Ledger, Scope or None)."""
    led = getattr(ledger, "ledger", ledger)
    return led.relation if led is not None else NeighbouringRelation.ADD_REMOVE


def secure_rng() -> np.random.Generator:
    """A generator seeded with 256 bits of OS entropy, for privacy randomness.

    Used for Poisson sampling coins and for breaking ties between equal noisy
    counts. Never seeded from ``random_state``: an adversary who knows the
    seed would know the sample. PCG64DXSM is a statistical generator, not a
    cryptographic one (the same choice as the numpy samplers of privet).
    Drawn through :func:`privet.mechanisms.recorder.privacy_rng`, so that a
    white-box audit sees the same coins when it replays a fit.
    """
    return recorder.privacy_rng()
