"""``PartialMPCID3Classifier``: CDP+PMPC-ID3 (seed 000, App. B, Algorithms 7-10).

The protocol trains the DP ID3 of Algorithm 6 on secret-shared data: split
scores and class counts are computed under MPC, the split attribute is chosen
by the exponential mechanism and *revealed* (Alg. 8), and each leaf reveals
either its Laplace-noised class counts (Alg. 9) or a label drawn by the
exponential mechanism (Alg. 10). Everything revealed is DP, so the tree is
public and its output distribution on the reference path equals DP ID3's
with the same ``em_form`` (under add/remove both use the monotone exponential
mechanism by default; ``em_form="paper"`` is Alg. 6 as written).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from privet.data import Schema
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    charged_in_full_on_failure,
    interrupts_deferred,
    plan_depth,
)
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.accounting import (
    CLAIM_SOURCE,
    EM_FORMS,
    NOISES,
    ClaimRule,
    NoiseAccounting,
    estimator_accounting,
    paper_claim,
    refuse_unproven_noise,
    relation_of,
    resolve_noise,
)
from privet.learners._trees.ops import ReferenceOps
from privet.learners._trees.tree import Tree
from privet.learners.partial_mpc_id3.reference import grow_partial_mpc, plan_partial_mpc
from privet.ledger import (
    Claim,
    PlanNode,
    PrivacyPlan,
    Scope,
)


class PartialMPCID3Classifier(BaseTreeClassifier):
    """CDP+PMPC-ID3: DP ID3 trained under partial MPC (seed 000, App. B, Alg. 7-10).

    The plaintext reference path of the baseline protocol of seed 000. Split
    scores (the max operator, Eq. 1) and class counts are computed on secret
    shares; the split attribute is chosen with the exponential mechanism and
    revealed (Alg. 8); each leaf reveals its Laplace-noised class counts and
    takes their argmax in the clear (Alg. 9) or reveals a label drawn with the
    exponential mechanism (Alg. 10). The budget ``epsilon`` is split evenly over
    the ``h + 1`` levels of a tree of depth ``h = min(max_depth, n_features)``:
    ``epsilon / (h + 1)`` per query. The released tree is public, and on the
    reference path its distribution equals that of
    :class:`~privet.learners.DPID3Classifier` with the same ``em_form``
    (``"paper"``: Alg. 6 as written).

    Under add/remove neighbours the selections take their monotone form by
    default (``em_form="auto"``), at the same charges: the max-operator scores
    and the class counts are monotone there (adding a record raises each by 0
    or 1), so the exponential mechanism samples ``exp(eps' u / Delta)`` and
    report-noisy-max (``noise="discrete"``, and the MPC samplers) adds discrete
    Laplace noise of scale ``ceil(Delta) / eps'``, both eps'-DP (argument in
    :func:`~privet.learners._trees.accounting.monotone_selection` and
    :mod:`privet.mpc.discrete`). The paper's form spends half of what it is
    charged.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``.
    max_depth : int, default=3
        Number of split levels ``h`` (capped at the number of attributes).
    leaf : {"laplace", "exponential"}, default="laplace"
        DP leaf update: Algorithm 9 (noisy counts) or Algorithm 10 (EM label).
    em_form : {"auto", "paper"}, default="auto"
        Form of the selections (splits and exponential leaves), as for
        :class:`~privet.learners.DPID3Classifier`. ``"auto"``: the monotone
        form under add/remove neighbours (``exp(eps u / Delta)``, or discrete
        Laplace noise of scale ``ceil(Delta) / eps`` for report-noisy-max), the
        paper's form under replace-one. ``"paper"``: the paper's form on every
        relation (``exp(eps u / (2 Delta))``, ``ceil(2 Delta) / eps``). Same
        charges either way; no effect on the fixed-point samplers in MPC.
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
        Seconds a party may wait for another before the run fails with MPCError (at least 1).
    owner_tables : bool, default=False
        ``True``: each party counts its own rows of the (public) paths of a
        level and inputs those contingency tables, summed on shares, instead of
        secret-sharing its one-hot rows (the paper's App. C.1). The same secret
        tables reach the same secure steps, so the same values are opened and
        charged; the cost no longer grows with the rows (what remains is the
        noise). It needs every data owner to be one
        of the computing parties, as privet runs them.
        A tree of a forest trained on a secret subsample shares rows whatever
        this says (the subsample must stay secret from the owners too).
    data_path : {"auto", "sorted", "partition"}, default="auto"
        How the protocol computes the contingency tables of the outsourced rows
        (seed 000's setting: the owners share their rows, the servers see only
        shares). ``"sorted"``: the rows are kept secretly sorted by node in the
        vector engine (:mod:`privet.learners._protocols.grouped`, after Hamada
        et al. 2023) and every secure step runs there, a cost linear in the rows
        whatever the number of nodes; the same values are opened and charged
        (plus openings of data-independent values, labelled as such).
        ``"partition"``: one secret partition vector per node in MPyC (App. B's
        MPC-Partition). ``"auto"``: ``"sorted"`` where it applies (discrete
        noise, depth >= 1, no owner tables, no secret subsample), else
        ``"partition"``.
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
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    privacy_claim_ : Claim
        What the paper claims (epsilon-DP).
    classes_, schema_, n_features_in_

    See Also
    --------
    DPID3Classifier : the centralised Algorithm 6, same distribution with the same ``em_form``.
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

    _protocol_discloses_row_counts = True  # the parties learn each owner's row count

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "leaf": [StrOptions({"laplace", "exponential"})],
        "em_form": [StrOptions(set(EM_FORMS))],
        "backend": [StrOptions({"reference", "mpc", "local"})],
        "noise": [StrOptions(set(NOISES)), None],
        "parties": [Interval(Integral, 1, None, closed="left")],
        "timeout": [Interval(Real, 1, None, closed="left")],
        "owner_tables": ["boolean"],
        "data_path": [StrOptions({"auto", "sorted", "partition"})],
        "ledger": "no_validation",  # checked in _validate_params / _scope
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 3,
        leaf: str = "laplace",
        em_form: str = "auto",
        backend: str = "reference",
        noise: str | None = None,
        parties: int = 3,
        timeout: float = 60.0,
        owner_tables: bool = False,
        data_path: str = "auto",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.leaf = leaf
        self.em_form = em_form
        self.backend = backend
        self.noise = noise
        self.parties = parties
        self.timeout = timeout
        self.owner_tables = owner_tables
        self.data_path = data_path
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
        return self._fit_reserved(X, y)

    def _train(self, scope: Scope, codes: np.ndarray, y_codes: np.ndarray) -> None:
        self.tree_ = self._grow(scope, codes, y_codes, self._claim_rule())

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
            em_form=self.em_form,
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
        from privet.learners._protocols.programs import (  # loads MPyC
            sized_numbers,
            sorted_table_fits,
            use_sorted_table,
        )
        from privet.learners.partial_mpc_id3.host import run_partial_mpc_id3
        from privet.learners.partial_mpc_id3.replay import ReplayOps

        schema = self.schema_
        if rows is not None:
            codes, y_codes = codes[rows], y_codes[rows]
        depth, eps = self._depth(schema), self._query_epsilon(schema)
        accounting = self._accounting(schema)
        # sized from public counts before launch: a run that cannot fit charges nothing
        numbers = sized_numbers(
            accounting,
            scope.ledger.relation,
            codes.shape[0],
            split_epsilon=eps,
            leaf_epsilon=eps,
            leaf=self.leaf,
        )
        sorted_path = use_sorted_table(
            self.data_path,
            mpc_noise=numbers.mpc_noise,
            depth=depth,
            owner_tables=bool(self.owner_tables),
            sample_rate=sample_rate,
            fits=sorted_table_fits(
                codes.shape[0],
                numbers,
                schema.n_features,
                n_classes=schema.n_classes,
                parties=self.parties,
                split_epsilon=eps,
                leaf_epsilon=eps,
                leaf=self.leaf,
            ),
        )
        with charged_in_full_on_failure(self, scope, schema):
            run = run_partial_mpc_id3(
                codes,
                y_codes,
                schema.domain_sizes,
                schema.n_classes,
                depth=depth,
                epsilon=eps,
                leaf=self.leaf,
                numbers=numbers,
                sample_rate=sample_rate,
                owner_tables=bool(self.owner_tables) and sample_rate is None,
                sorted_table=sorted_path,
                backend=self.backend,
                parties=self.parties,
                timeout=self.timeout,
            )
            self.mpc_stats_ = run.stats
            ops = ReplayOps(run, schema, caller=type(self).__name__, accounting=accounting)
        with interrupts_deferred():  # every opened value gets its charge, even on Ctrl-C
            return grow_partial_mpc(
                ops, scope, schema, depth=depth, epsilon=eps, leaf=self.leaf, claim=claim
            )
