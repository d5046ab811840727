"""CDP+PMPC-ID3 (seed 000, App. B, Algorithms 7-10): the plaintext reference path.

The protocol trains the DP ID3 of Algorithm 6 on secret-shared data: split
scores and class counts are computed under MPC, the split attribute is chosen
by the exponential mechanism and *revealed* (Alg. 8), and each leaf reveals
either its Laplace-noised class counts (Alg. 9) or a label drawn by the
exponential mechanism (Alg. 10). Everything revealed is DP, so the tree is
public and its output distribution equals DP ID3's.

The module is split so that an MPC backend can reuse it unchanged:

* :func:`plan_partial_mpc` writes the privacy plan (what is charged, in which
  scope) from public parameters only;
* :func:`grow_partial_mpc` is the public control flow of Algorithm 7: it opens
  the ledger scopes, decides what is charged where, and asks an *ops* object for
  every data operation (MPC-Count, MPC-Score, MPC-Partition, and the DP
  releases, which charge before they reveal);
* :class:`ReferenceOps` is the plaintext ops object. A protocol backend supplies
  one whose node data are secret indicator vectors and whose releases open
  secret-shared values after charging the same entries.

:class:`ReferenceOps` and the claim helpers are shared with the oblivious learner
(:mod:`privet.learners.oblivious_id3`) and the forests.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema
from privet.errors import InvalidParameterError
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    charged_in_full_on_failure,
    plan_depth,
    refuse_non_private,
)
from privet.learners._params import Interval, StrOptions
from privet.learners._scores import contingency, max_operator
from privet.learners._tree import Tree, TreeBuilder
from privet.ledger import (
    ApproxDP,
    Claim,
    Entry,
    Exponential,
    Laplace,
    NeighbouringRelation,
    NonPrivate,
    PlanNode,
    PrivacyPlan,
    Scope,
)
from privet.mechanisms import (
    ExponentialMechanism,
    NoisyHistogram,
    NoisyMax,
    ReportNoisyMax,
    make_exponential,
    make_noisy_histogram,
    make_report_noisy_max,
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


def leaf_entry(leaf: str, epsilon: float, relation: NeighbouringRelation) -> Entry:
    """Ledger entry of one DP leaf update (App. A.2.4) at ``epsilon``."""
    if leaf == "exponential":
        # Counts as utilities: one record moves each count by at most 1.
        return Exponential(epsilon=epsilon, sensitivity=1.0)
    sens = laplace_sensitivity(relation)
    return Laplace(scale=sens / epsilon, sensitivity=sens)


def leaf_mechanism(leaf: str) -> str:
    return "exponential" if leaf == "exponential" else "noisy_histogram"


# ------------------------------------------------------------------- noise

NOISES = ("paper", "discrete")

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
    """

    noise: str
    backend: str
    relation: NeighbouringRelation
    n_candidates: int
    n_classes: int
    security_bits: int = 40

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

    def selection(self, epsilon: float) -> tuple[Entry, str]:
        """Entry and mechanism name of one split (or EM leaf) selection at ``epsilon``."""
        if self.in_mpc and self.noise == "paper":
            return NonPrivate(reason=FIXED_POINT_REASON), "secure exponential (MPC, Alg. 13)"
        if self.in_mpc:
            delta = noisy_max_delta(epsilon, 1.0, max(self.n_candidates, 1), self.security_bits)
            return (
                ApproxDP(epsilon=epsilon, delta=delta),
                "secure report-noisy-max (MPC, discrete Laplace)",
            )
        if self.noise == "discrete":
            return (
                NoisyMax(epsilon=epsilon, sensitivity=1.0, noise="discrete_laplace"),
                "report_noisy_max",
            )
        return Exponential(epsilon=epsilon, sensitivity=1.0), "exponential"

    def leaf(self, leaf: str, epsilon: float) -> tuple[Entry, str]:
        """Entry and mechanism name of one DP leaf update at ``epsilon``."""
        if leaf == "exponential":
            return self.selection(epsilon)
        sens = laplace_sensitivity(self.relation)
        if self.in_mpc and self.noise == "paper":
            return NonPrivate(reason=FIXED_POINT_REASON), "secure laplace (MPC, Alg. 12)"
        if self.in_mpc:
            delta = discrete_laplace_delta(epsilon, sens, self.n_classes, self.security_bits)
            return ApproxDP(epsilon=epsilon, delta=delta), "secure discrete laplace (MPC)"
        return Laplace(scale=sens / epsilon, sensitivity=sens), "noisy_histogram"


def estimator_accounting(estimator: Any, schema: Schema | None) -> NoiseAccounting:
    """The accounting of a seed-000 learner (its ``noise``, ``backend``, ``ledger``)."""
    return NoiseAccounting(
        resolve_noise(estimator.noise, estimator.backend),
        estimator.backend,
        relation_of(estimator.ledger),
        schema.n_features if schema is not None else 1,
        schema.n_classes if schema is not None else 2,
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
def _exponential(
    epsilon: float, sensitivity: float, relation: NeighbouringRelation
) -> ExponentialMechanism:
    return make_exponential(epsilon, sensitivity=sensitivity, relation=relation)


@functools.lru_cache(maxsize=512)
def _noisy_max(epsilon: float, relation: NeighbouringRelation) -> ReportNoisyMax:
    return make_report_noisy_max(epsilon, noise="discrete_laplace", relation=relation)


@functools.lru_cache(maxsize=512)
def _histogram(epsilon: float, relation: NeighbouringRelation) -> NoisyHistogram:
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
    """
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))


class ReferenceOps:
    """The data operations of Algorithms 1 and 7 on plaintext data.

    A node's data is the array of its row indices (the protocol's secret
    indicator vector ``T``). The DP releases (:meth:`select`,
    :meth:`release_leaves`) charge their scope *before* drawing, through
    :mod:`privet.mechanisms`, so a refused charge reveals nothing. A protocol
    backend supplies the same methods: ``all_rows``, ``count``, ``scores``,
    ``partition``, ``select``, ``release_leaves`` and ``label``.

    Parameters
    ----------
    codes : ndarray of shape (n, m)
        Integer attribute codes.
    y_codes : ndarray of shape (n,)
        Class codes.
    sizes : sequence of int
        Public domain size of each attribute.
    n_classes : int
    caller : str
        Learner name written on every charge.
    noise : {"paper", "discrete"}, default="paper"
        Selections by the exponential mechanism (paper) or by report-noisy-max
        with discrete Laplace noise (the distribution of the sound MPC path).
    """

    def __init__(
        self,
        codes: np.ndarray,
        y_codes: np.ndarray,
        sizes: Sequence[int],
        n_classes: int,
        *,
        caller: str,
        noise: str = "paper",
    ) -> None:
        self.codes = np.asarray(codes, dtype=np.int64)
        self.y = np.asarray(y_codes, dtype=np.int64)
        self.sizes = tuple(int(s) for s in sizes)
        self.n_classes = int(n_classes)
        self.caller = caller
        self.noise = noise
        self._rng: np.random.Generator | None = None

    @property
    def n_attributes(self) -> int:
        return len(self.sizes)

    def all_rows(self) -> np.ndarray:
        return np.arange(self.codes.shape[0])

    # -- computations that stay secret in the protocol -------------------------
    def count(self, rows: np.ndarray) -> np.ndarray:
        """MPC-Count: class frequencies of a node (Alg. 1 steps 5-7)."""
        return np.bincount(self.y[rows], minlength=self.n_classes)

    def scores(self, rows: np.ndarray, attrs: Sequence[int]) -> np.ndarray:
        """MPC-Score: max-operator score (Eq. 1, sensitivity 1) of each attribute."""
        ys = self.y[rows]
        return np.array(
            [
                max_operator(contingency(self.codes[rows, a], ys, self.sizes[a], self.n_classes))
                for a in attrs
            ],
            dtype=float,
        )

    def partition(self, rows: np.ndarray, attr: int) -> list[np.ndarray]:
        """MPC-Partition: the rows of each value of ``attr``, in code order."""
        col = self.codes[rows, attr]
        order = np.argsort(col, kind="stable")
        bounds = np.searchsorted(col[order], np.arange(self.sizes[attr] + 1))
        return [rows[order[bounds[v] : bounds[v + 1]]] for v in range(self.sizes[attr])]

    # -- DP releases: charge, then draw ----------------------------------------
    def select(
        self,
        scope: Scope,
        utilities: np.ndarray,
        *,
        epsilon: float,
        step: str,
        claim: Claim | None,
        sensitivity: float = 1.0,
    ) -> int:
        """MPC-EM (Alg. 13): index i with probability ∝ exp(ε u_i / (2Δ)).

        Used for the split attribute (Alg. 8) and the exponential-mechanism leaf
        (Alg. 10). Gumbel report-noisy-max is the same distribution. With
        ``noise="discrete"``: report-noisy-max with discrete Laplace noise of
        scale 2Δ/ε, first maximum (the sound MPC path's selection).
        """
        mech: Any
        if self.noise == "discrete":
            if float(sensitivity) != 1.0:
                raise InvalidParameterError(
                    "the discrete noisy-max selection is built for sensitivity 1 (max-operator "
                    f"scores, counts); got {sensitivity}."
                )
            mech = _noisy_max(float(epsilon), scope.ledger.relation)
        else:
            mech = _exponential(float(epsilon), float(sensitivity), scope.ledger.relation)
        pick = mech(
            np.asarray(utilities, dtype=float),
            scope=scope,
            caller=self.caller,
            step=step,
            claim=claim,
        )
        return int(pick)

    def release_leaves(
        self,
        leaves: Sequence[tuple[Scope, np.ndarray]],
        *,
        leaf: str,
        epsilon: float,
        claim: Claim | None,
        step: str = "leaf",
    ) -> list[np.ndarray]:
        """DP leaf updates of a tree's leaves, given each leaf's scope and rows.

        ``"laplace"``: MPC-LM (Alg. 12) on every class count, the noisy counts
        revealed (Alg. 9); ``"exponential"``: an EM label per leaf (Alg. 10),
        returned one-hot. The tree's shape never depends on its leaves, so the
        growers release the leaves together once the splits are done, as a
        protocol gathers its MPC-LM calls; each leaf is charged in its own
        scope before its value is drawn.
        """
        eye = np.eye(self.n_classes)
        out: list[np.ndarray] = []
        for sc, rows in leaves:
            counts = self.count(rows)
            if leaf == "exponential":
                out.append(eye[self.select(sc, counts, epsilon=epsilon, step=step, claim=claim)])
                continue
            hist = _histogram(float(epsilon), sc.ledger.relation)
            noisy = hist(counts, scope=sc, caller=self.caller, step=step, claim=claim)
            out.append(np.asarray(noisy, dtype=float))
        return out

    def label(self, value: np.ndarray) -> np.ndarray:
        """The one-hot argmax of a leaf's noisy counts (Alg. 1 step 10).

        Post-processing. Ties break uniformly at random: with discrete Laplace
        noise they are frequent at large epsilon, and the paper's continuous
        Laplace has none.
        """
        top = np.flatnonzero(value == value.max())
        label = int(top[0])
        if top.size > 1:
            if self._rng is None:
                self._rng = secure_rng()
            label = int(top[self._rng.integers(top.size)])
        return np.eye(self.n_classes)[label]


def scope_labels(schema: Schema, attr: int) -> list[str]:
    """Labels of the ledger scopes of a split on ``attr``."""
    name = schema.feature_names[attr]
    return [f"{name}={lab}" for lab in schema.attributes[attr].labels]


def plan_partial_mpc(
    node: PlanNode,
    *,
    depth: int,
    width: int,
    epsilon: float,
    leaf: str,
    relation: NeighbouringRelation,
    claim: ClaimRule,
    accounting: NoiseAccounting | None = None,
) -> None:
    """Write Algorithm 7's charges into ``node``: per level one EM split, then a leaf.

    ``epsilon`` is the per-query budget ``ε/(h+1)``; nodes of a level hold
    disjoint records (a partition), so a level costs one query. ``accounting``
    says what each step is charged (default: the paper's mechanisms on the
    reference path).
    """
    acc = accounting if accounting is not None else reference_accounting(relation)
    for level in range(depth):
        entry, name = acc.selection(epsilon)
        node.charge(
            entry, mechanism=name, step=f"split, depth {level}", claim=claim("split", epsilon)
        )
        node = node.partition(max(width, 2), label=f"depth {level + 1}")
    entry, name = acc.leaf(leaf, epsilon)
    node.charge(entry, mechanism=name, step="leaf", claim=claim("leaf", epsilon))


def grow_partial_mpc(
    ops: ReferenceOps,
    scope: Scope,
    schema: Schema,
    *,
    depth: int,
    epsilon: float,
    leaf: str,
    claim: ClaimRule,
    rows: np.ndarray | None = None,
) -> Tree:
    """Algorithm 7 (CDP+PMPC-ID3): grow the public DP tree, charging ``scope``.

    Every node charges ``epsilon`` (the per-query budget) in its own scope;
    children are a partition of their parent's scope. The stopping rule is
    data independent (depth reached or no attribute left, App. A.2.4), so the
    tree is complete.
    """
    builder = TreeBuilder(ops.n_classes)
    leaves: list[tuple[int, Scope, np.ndarray]] = []

    def grow(node: int, sc: Scope, rows: np.ndarray, attrs: list[int], h: int) -> None:
        if h == 0 or not attrs:  # Alg. 7 steps 2-5: a leaf, released below
            leaves.append((node, sc, rows))
            return
        level = depth - h
        scores = ops.scores(rows, attrs)  # steps 6-7: MPC-Score (max operator)
        pick = ops.select(  # step 8: MPC-DPNodeSplit (Alg. 8), revealed
            sc, scores, epsilon=epsilon, step=f"split, depth {level}", claim=claim("split", epsilon)
        )
        best = attrs[pick]
        kids = builder.split(node, best, ops.sizes[best])
        parts = sc.partition(scope_labels(schema, best))
        subsets = ops.partition(rows, best)  # step 9: MPC-Partition
        rest = [a for a in attrs if a != best]
        for kid, part, sub in zip(kids, parts, subsets, strict=True):
            grow(kid, part, sub, rest, h - 1)  # steps 10-12

    root = builder.add_node(0)
    start = ops.all_rows() if rows is None else rows
    grow(root, scope, start, list(range(ops.n_attributes)), depth)
    # MPC-Count and the DP leaf update (Alg. 9 or 10) of every leaf
    values = ops.release_leaves(
        [(sc, r) for _, sc, r in leaves], leaf=leaf, epsilon=epsilon, claim=claim("leaf", epsilon)
    )
    for (node, _, _), value in zip(leaves, values, strict=True):
        builder.set_leaf(node, value)
    return builder.build()


class PartialMPCID3Classifier(BaseTreeClassifier):
    """CDP+PMPC-ID3: DP ID3 trained under partial MPC (seed 000, App. B, Alg. 7-10).

    The plaintext reference path of the baseline protocol of seed 000. Split
    scores (the max operator, Eq. 1) and class counts are computed on secret
    shares; the split attribute is chosen with the exponential mechanism and
    revealed (Alg. 8); each leaf reveals its Laplace-noised class counts and
    takes their argmax in the clear (Alg. 9) or reveals a label drawn with the
    exponential mechanism (Alg. 10). The budget ``epsilon`` is split evenly over
    the ``h + 1`` levels of a tree of depth ``h = min(max_depth, n_features)``:
    ``epsilon / (h + 1)`` per query. The released tree is public, and its
    distribution equals that of :class:`~privet.learners.DPID3Classifier`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``.
    max_depth : int, default=3
        Number of split levels ``h`` (capped at the number of attributes).
    leaf : {"laplace", "exponential"}, default="laplace"
        DP leaf update: Algorithm 9 (noisy counts) or Algorithm 10 (EM label).
    backend : {"reference", "mpc", "local"}, default="reference"
        ``"reference"`` runs the plaintext reference path; ``"mpc"`` runs the
        protocol with ``parties`` MPyC party processes over TCP (the data owners'
        rows are secret-shared), ``"local"`` the same protocol with one
        in-process party. The protocol's openings are replayed through
        :func:`grow_partial_mpc`, so the ledger scopes are the reference's.
    noise : {"paper", "discrete"} or None, default=None
        ``"paper"``: the exponential mechanism and Laplace leaves of the paper.
        On the reference path they are sampled exactly by OpenDP (proven
        epsilon); in MPC by the paper's fixed-point Algorithms 12-13, which have
        no DP proof, so the ledger records them as non-private and such a fit
        needs an unbounded ledger. ``"discrete"``: report-noisy-max with
        discrete Laplace noise for the selections and discrete Laplace leaves;
        in MPC sampled exactly on shares (:mod:`privet.mpc.discrete`), proven
        (epsilon, delta) with delta about 1e-12 per step. ``None``: ``"paper"``
        on the reference path, ``"discrete"`` in MPC.
    parties : int, default=3
        Number of MPC parties for ``backend="mpc"``.
    timeout : float, default=60
        Seconds a party may wait for another before the run fails with MPCError.
    schema : privet.data.Schema or None
        Public attribute domains (required unless ``public_domain="infer"``).
    ledger : Ledger, Scope or None
        Where ``fit`` charges; ``None`` makes a ledger with budget ``epsilon``.
    public_domain : {"schema", "infer"}, default="schema"
    random_state : None
        Unused: all randomness is privacy noise from OpenDP's samplers.

    Attributes
    ----------
    tree_ : Tree
        The revealed tree: noisy counts (Laplace leaves) or one-hot labels.
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        What the ledger proves for the charges of this fit.
    privacy_claim_ : Claim
        What the paper claims (epsilon-DP).
    classes_, schema_, n_features_in_

    See Also
    --------
    DPID3Classifier : the centralised Algorithm 6, same distribution.
    ObliviousID3Classifier : the paper's fully oblivious protocol.

    Notes
    -----
    Claimed: epsilon-DP for the released tree and every prediction (seed 000,
    App. B, by sequential composition over levels and parallel composition
    within a level). Proven by the ledger: the same, under add/remove
    neighbours. Each charge carries its claim, ``epsilon / (h + 1)``.

    Under replace-one neighbours the Laplace leaves need sensitivity 2 and a
    replaced record may move between branches, so the ledger proves up to about
    twice the claim and reports it.

    References
    ----------
    Seed 000, App. B (Algorithms 7-10) and App. C.3 (Algorithms 12-13);
    de Hoogh et al., "Practical secure decision tree learning in a
    teletreatment application", FC 2014 (Protocol 4.1).
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "leaf": [StrOptions({"laplace", "exponential"})],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "noise": [StrOptions(set(NOISES)), None],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 0, None, closed="neither")],
        "ledger": "no_validation",  # checked in _validate_params / _scope
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        backend: str = "reference",
        noise: str | None = None,
        parties: int = 3,
        timeout: float = 60.0,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.backend = backend
        self.noise = noise
        self.parties = parties
        self.timeout = timeout
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    # -- plan ------------------------------------------------------------------
    def _depth(self, schema: Schema | None) -> int:
        return plan_depth(self.max_depth, schema)

    def _accounting(self, schema: Schema | None) -> NoiseAccounting:
        return estimator_accounting(self, schema)

    def _check_noise(self) -> None:
        """Refuse the paper's fixed-point MPC noise on a finite budget, before anything."""
        refuse_unproven_noise(self)

    def _query_epsilon(self, schema: Schema | None) -> float:
        """Budget of one query: ε / (h + 1)."""
        return float(self.epsilon) / (self._depth(schema) + 1)

    def _claim_rule(self) -> ClaimRule:
        return paper_claim(CLAIM_SOURCE, note="epsilon/(h+1) per query")

    def _plan_into(self, node: PlanNode, schema: Schema | None, claim: ClaimRule) -> None:
        plan_partial_mpc(
            node,
            depth=self._depth(schema),
            width=schema.max_domain_size if schema is not None else 2,
            epsilon=self._query_epsilon(schema),
            leaf=self.leaf,
            relation=relation_of(self.ledger),
            claim=claim,
            accounting=self._accounting(schema),
        )

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone."""
        _validate_params(self)
        schema = schema if schema is not None else self.schema
        h = self._depth(schema)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=(
                f"epsilon/(h+1) = {self._query_epsilon(schema):.4g} per query over {h + 1} "
                "levels (EM splits revealed, DP leaves); nodes of a level in parallel"
            ),
            claim=Claim(float(self.epsilon), source=CLAIM_SOURCE),
        )
        self._plan_into(plan, schema, self._claim_rule())
        return plan

    # -- fit -------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> PartialMPCID3Classifier:
        """Fit under the ledger's budget; raises BudgetExceededError before reading data."""
        _validate_params(self)
        self._check_noise()
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        scope = self._scope(float(self.epsilon))
        with self.ledger_.reserve(plan, scope=scope, caller=type(self).__name__) as res:
            codes, y_codes = self._prepare(X, y)
            self.tree_ = self._grow(scope, codes, y_codes, self._claim_rule())
        self._fitted_common(self.schema_)
        self.privacy_spent_ = res.used()
        self.privacy_claim_ = plan.claim
        return self

    def _grow(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        claim: ClaimRule,
        rows: np.ndarray | None = None,
        sample_rate: float | None = None,
    ) -> Tree:
        schema = self.schema_
        if self.backend != "reference":
            return self._grow_protocol(scope, codes, y_codes, claim, rows, sample_rate)
        ops = ReferenceOps(
            codes,
            y_codes,
            schema.domain_sizes,
            schema.n_classes,
            caller=type(self).__name__,
            noise=resolve_noise(self.noise, self.backend),
        )
        return grow_partial_mpc(
            ops,
            scope,
            schema,
            depth=self._depth(schema),
            epsilon=self._query_epsilon(schema),
            leaf=self.leaf,
            claim=claim,
            rows=rows,
        )

    def _grow_protocol(
        self,
        scope: Scope,
        codes: np.ndarray,
        y_codes: np.ndarray,
        claim: ClaimRule,
        rows: np.ndarray | None,
        sample_rate: float | None = None,
    ) -> Tree:
        """Run Alg. 7-10 in MPC, then replay its openings through the ledger.

        ``sample_rate``: train on a secret Poisson subsample drawn inside MPC
        (a forest's tree; the caller's scope is the subsample's).

        The parties see each DP value when it is opened during the run, before
        the replay commits its charge. The reservation made before launch covers
        them; if the run fails part-way, what was opened is unknown, so the
        whole reserved plan is charged (conservative) before the error is raised.
        """
        from privet.mpc.protocols import ReplayOps, run_partial_mpc_id3

        schema = self.schema_
        if rows is not None:
            codes, y_codes = codes[rows], y_codes[rows]
        depth, eps = self._depth(schema), self._query_epsilon(schema)
        accounting = self._accounting(schema)
        with charged_in_full_on_failure(self, scope, schema):
            run = run_partial_mpc_id3(
                codes,
                y_codes,
                schema.domain_sizes,
                schema.n_classes,
                depth=depth,
                epsilon=eps,
                leaf=self.leaf,
                laplace_sensitivity=laplace_sensitivity(scope.ledger.relation),
                mpc_noise=accounting.mpc_noise,
                security_bits=accounting.security_bits,
                sample_rate=sample_rate,
                backend=self.backend,
                parties=self.parties,
                timeout=self.timeout,
            )
        self.mpc_stats_ = run.stats
        ops = ReplayOps(run, schema, caller=type(self).__name__, accounting=accounting)
        return grow_partial_mpc(
            ops, scope, schema, depth=depth, epsilon=eps, leaf=self.leaf, claim=claim
        )


__all__ = [
    "CLAIM_SOURCE",
    "NOISES",
    "ClaimRule",
    "NoiseAccounting",
    "PartialMPCID3Classifier",
    "ReferenceOps",
    "grow_partial_mpc",
    "leaf_entry",
    "no_claim",
    "paper_claim",
    "plan_partial_mpc",
    "resolve_noise",
]
