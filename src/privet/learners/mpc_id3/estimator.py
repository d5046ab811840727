"""MPC-ID3: non-private ID3 trained on secret shares (seed 000's baseline, de Hoogh et al.)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

from privet.data import Schema
from privet.errors import BudgetExceededError
from privet.learners._base import BaseTreeClassifier, _validate_params
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.ops import scope_labels
from privet.ledger import Claim, Guarantee, Ledger, NonPrivate, PrivacyPlan, Scope

CLAIM_SOURCE = "seed 000, Sec. 4 (MPC-ID3 baseline; de Hoogh et al., FC 2014, Protocol 4.1)"


OPENED_REASON = (
    "MPC-ID3 opens the tree in the clear (stop tests, exact-argmax split attributes, leaf "
    "labels): exact functions of the data, no DP"
)


class MPCID3Classifier(BaseTreeClassifier):
    """ID3 with the max operator computed on secret shares; the tree is opened, no DP.

    The MPC-ID3 baseline of seed 000 (Sec. 4): the training rows are split
    over ``parties`` data owners, each secret-shares its one-hot rows with the
    parties (MPyC, Shamir, semi-honest honest majority), and the parties run
    de Hoogh et al.'s ID3 protocol with seed 000's max-operator score (Eq. 1)
    instead of Gini (:func:`privet.learners.mpc_id3.protocol.mpc_id3`). What is
    opened is the tree, as in de Hoogh et al.: each node's stop test (pure or
    empty), each split attribute, each leaf's label. The result is exactly
    :class:`~privet.learners.ID3Classifier` with ``criterion="max"`` and the
    same ``max_depth``: same structure, same labels (ties to the first
    maximum in both). Its leaves hold one-hot labels, not counts, since the
    counts are never opened.

    Parameters
    ----------
    max_depth : int, default=3
        Maximum number of splits on a root-to-leaf path.
    parties : int, default=3
        Number of MPC parties (and data owners) for ``backend="mpc"``.
    backend : {"mpc", "local"}, default="mpc"
        ``"mpc"``: ``parties`` separate processes over TCP on localhost
        (:func:`privet.mpc.launch`); ``"local"``: MPyC's one-party runtime in
        this process (no secret sharing; for unit tests).
    timeout : float, default=60
        Seconds a party waits for a silent peer before the run fails.
    bit_length : int or None, default=None
        Bit length of the secure integers. ``None`` takes the smallest length
        whose comparisons are exact for the data (about log2(n m) + 2 bits;
        comparisons cost one secret random bit per bit); seed 000 uses 32.
    owner_tables : bool, default=False
        ``True``: each party counts its own rows of the (public) paths of a
        level and inputs those contingency tables, summed on shares, instead of
        secret-sharing its one-hot rows (the paper's App. C.1). The same secret
        tables reach the same secure steps, so the same values are opened and
        charged; the cost no longer grows with the rows (Adult, 32,561 rows,
        depth 5: about 2 CPU-s per party). It needs every data owner to be one
        of the computing parties, as privet runs them.
    schema : privet.data.Schema or None
        Public attribute domains.
    ledger : Ledger, Scope or None
        If given, its budget must be ``Guarantee.unbounded()``: the openings are
        charged as :class:`~privet.ledger.NonPrivate`. ``None`` makes an
        unbounded ledger that records them.
    public_domain : {"schema", "infer"}, default="schema"
    random_state : None
        Unused (the protocol is deterministic).

    Attributes
    ----------
    tree_ : Tree
        The opened tree; leaf values are one-hot labels.
    mpc_stats_ : RunStats
        Time and traffic per party (``seconds``, ``bytes_sent``,
        ``bytes_received``, ``message_batches``); zero traffic for ``"local"``.
    mpc_reveals_ : tuple of dict
        Every opening of party 0: label, shape and the entry that paid.
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        Infinite: nothing here is differentially private.
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    classes_, schema_, n_features_in_

    See Also
    --------
    ID3Classifier : the same tree on plaintext.
    PartialMPCID3Classifier, ObliviousID3Classifier : the DP protocols of seed 000.

    Notes
    -----
    No DP is claimed or proven: this is the accuracy baseline of seed 000's
    Fig. 2-5. The stop tests open only whether ``sum(counts) - max(counts)``
    is zero (masked opening); whether a leaf is empty is not opened (an empty
    leaf takes its parent's majority, chosen obliviously).

    References
    ----------
    de Hoogh, Schoenmakers, Chen, op den Akker, "Practical secure decision
    tree learning in a teletreatment application", FC 2014; seed 000, Eq. 1
    and Sec. 4.

    Examples
    --------
    >>> from privet.data import load_dataset
    >>> from privet.learners.mpc_id3 import MPCID3Classifier
    >>> ds = load_dataset("car")
    >>> clf = MPCID3Classifier(max_depth=3, schema=ds.schema).fit(ds.X, ds.y)  # doctest: +SKIP
    >>> clf.mpc_stats_.seconds, clf.mpc_stats_.bytes_sent  # doctest: +SKIP
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "parties": [Interval(Integral, 1, None, closed="left")],
        "backend": [StrOptions({"mpc", "local"})],
        "timeout": [Interval(Real, 1, None, closed="left")],
        "bit_length": [Interval(Integral, 8, None, closed="left"), None],
        "owner_tables": ["boolean"],
        "ledger": "no_validation",  # checked in _validate_params
    }

    def __init__(
        self,
        *,
        max_depth: int = 3,
        parties: int = 3,
        backend: str = "mpc",
        timeout: float = 60.0,
        bit_length: int | None = None,
        owner_tables: bool = False,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.max_depth = max_depth
        self.parties = parties
        self.backend = backend
        self.timeout = timeout
        self.bit_length = bit_length
        self.owner_tables = owner_tables
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` charges: non-private openings (infinite), from parameters alone."""
        _validate_params(self)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description="no DP: the tree (stop tests, splits, leaf labels) is opened in the clear",
            claim=Claim(math.inf, source=CLAIM_SOURCE, note="a non-private baseline"),
        )
        plan.charge(NonPrivate(reason=OPENED_REASON), mechanism="opened in the clear", step="tree")
        return plan

    def _check_budget(self) -> None:
        led = getattr(self.ledger, "ledger", self.ledger)
        if led is None or not led.budget.is_finite:
            return
        raise BudgetExceededError(
            f"{type(self).__name__} is the non-private MPC-ID3 baseline: it opens the tree "
            "(split attributes, stop tests, leaf labels) computed exactly from the data, a "
            f"release with no DP guarantee (epsilon = infinity). It cannot be charged to the "
            f"finite budget {led.budget} of dataset {led.dataset!r}; nothing was charged. Use "
            "a DP learner (PartialMPCID3Classifier, ObliviousID3Classifier(split="
            "'exponential')) or pass ledger=Ledger(budget=Guarantee.unbounded())."
        )

    def _unbounded_scope(self) -> Scope:
        if self.ledger is None:
            self.ledger_ = Ledger(budget=Guarantee.unbounded(), dataset="training data")
            return self.ledger_.root
        return self._scope(math.inf)

    def fit(self, X: Any, y: Any) -> MPCID3Classifier:
        """Train on secret shares with ``parties`` parties; charges NonPrivate openings."""
        _validate_params(self)
        self._check_budget()
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        scope = self._unbounded_scope()
        with self._reserve(plan, scope) as res:
            codes, y_codes = self._prepare(X, y)
            from privet.learners.mpc_id3.host import run_mpc_id3

            schema = self.schema_
            run = run_mpc_id3(
                codes,
                y_codes,
                schema.domain_sizes,
                schema.n_classes,
                depth=int(self.max_depth),
                bit_length=None if self.bit_length is None else int(self.bit_length),
                owner_tables=bool(self.owner_tables),
                backend=self.backend,
                parties=int(self.parties),
                timeout=float(self.timeout),
            )
            self._charge_openings(scope, run.nodes)
            self.tree_ = run.tree(schema.domain_sizes, schema.n_classes)
        self._fitted_common(self.schema_)
        self.mpc_stats_ = run.stats
        self.mpc_reveals_ = run.reveals
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        return self

    def _charge_openings(self, scope: Scope, nodes: dict[tuple[int, ...], dict]) -> None:
        """One NonPrivate charge per opened value, in the scope of its node."""
        schema = self.schema_
        caller = type(self).__name__

        def charge(sc: Scope, what: str, depth: int) -> None:
            sc.charge(
                NonPrivate(reason=OPENED_REASON),
                mechanism=f"opened in the clear: {what}",
                caller=caller,
                step=f"{what}, depth {depth}",
            )

        def walk(sc: Scope, path: tuple[int, ...]) -> None:
            node = nodes[path]
            depth = len(path)
            if node.get("tested"):
                charge(sc, "stop test", depth)
            if "split" not in node:
                charge(sc, "leaf label", depth)
                return
            a = int(node["split"])
            charge(sc, "split attribute", depth)
            for v, part in enumerate(sc.partition(scope_labels(schema, a))):
                walk(part, (*path, v))

        walk(scope, ())
