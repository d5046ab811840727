"""``SecureSumID3Classifier``: seed 001 (Emekci et al.) as a scikit-learn estimator."""

from __future__ import annotations

import contextlib
import math
import re
import tempfile
import warnings
from collections.abc import Iterator
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privet.data import Schema
from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    MPCError,
    SchemaError,
)
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    calibrated_epsilon,
    charged_in_full_on_failure,
    refuse_non_private,
)
from privet.learners._params import Interval, StrOptions
from privet.learners._trees.tree import Tree
from privet.learners.secure_sum_id3 import protocol as proto
from privet.learners.secure_sum_id3.field import check_prime, choose_prime
from privet.learners.secure_sum_id3.grower import TreeArrays
from privet.learners.secure_sum_id3.reference import grow_reference
from privet.learners.secure_sum_id3.sharing import SummationIntegrityError
from privet.learners.secure_sum_id3.verified import ACCUSES
from privet.ledger import (
    Claim,
    DiscreteLaplaceCounts,
    NeighbouringRelation,
    NonPrivate,
    PrivacyPlan,
    Scope,
)

CLAIM_SOURCE = "seed 001 (Emekci et al.), Sec. 4.2-4.3, Lemmas 1-2"
CLAIM_NOTE = (
    "input privacy only: no party learns another party's rows beyond the released sums "
    "(Lemma 1), an eavesdropper learns nothing without the points X (Lemma 2); the paper "
    "makes no DP claim and admits (end of Sec. 5) that the sums and entropies leak"
)
EXACT_REASON = (
    "exact sums released to every party (seed 001, Alg. 3): class totals, |T(a_i)| and "
    "|T(a_i, c_j)| of every candidate attribute at this node"
)
DEFAULT_DP_DEPTH = 4
NOISE_TAIL = 60.0  # P(|noise| > 60 * scale) < e^-60 per count: the field margin
DEFAULT_MAX_ROWS = 2**29
"""The DP variant's public row bound when ``max_rows`` is not given (about 5.4e8 rows)."""


#: Most parties fit deals the rows to (2**70 overflowed numpy).
MAX_PARTIES = 10_000


class SecureSumID3Classifier(BaseTreeClassifier):
    """ID3 over many horizontally partitioned parties by Shamir secure summation.

    Seed 001 (Emekci, Sahin, Agrawal, El Abbadi): every data owner keeps its
    rows; the parties grow an ID3 tree (Alg. 3) whose counts |T(c_j)|,
    |T(a_i)| and |T(a_i, c_j)| are summed over the parties with Shamir secret
    sharing (Alg. 1-2), verified against a party that sends a wrong
    intermediate result (Sec. 4.3: degree 2n - 2 polynomials, 2n points,
    two (2n-1)-subsets, commit-then-reveal). One summation round per tree
    level carries every count of every open node of the level.

    Two variants:

    * ``epsilon=None`` -- the paper's protocol: exact sums. Every party learns
      every count and every entropy, so the release has no DP guarantee
      (epsilon = infinity); it runs only on an unbounded ledger, which records
      each node's release as ``NonPrivate`` with the paper's claim (input
      privacy, Lemmas 1-2) next to it.
    * ``epsilon=...`` -- the sound variant, the default whenever a budget is
      given: each party adds its share of distributed discrete-Laplace noise
      to its counts before summation (no party ever sees an exact count), the
      budget is split evenly over the ``h + 1`` levels, and the counts of
      all nodes of a level are charged as one histogram (a record in one
      node under add/remove; replaced within a node or moved between two
      under replace-one, the same sensitivity), so the ledger proves
      ``epsilon`` on both relations. Each count of a level moves by at most
      1 between neighbours, so the level is charged as
      :class:`~privet.ledger.DiscreteLaplaceCounts` (see :meth:`_level_entries`):
      on a pure budget that is ``epsilon / (h + 1)`` per level; on a budget with
      delta > 0 the ledger proves less than ``epsilon`` for the same noise, and
      records that smaller figure (``privacy_spent_``).

    Parameters
    ----------
    epsilon : float or None, default=None
        Total budget of the DP variant; None runs the exact protocol, which has no
        DP guarantee and is refused unless ``ledger`` is given with
        ``budget=Guarantee.unbounded()`` (a non-private fit is never implicit).
    max_depth : int or None, default=None
        Maximum number of splits on a path. None: no limit in the exact
        protocol (Alg. 3 stops when no attribute is left), and
        ``min(4, n_features)`` in the DP variant (each level costs budget).
    n_parties : int, default=3
        Number of parties when ``fit`` deals the rows itself (at most 10,000).
    backend : {"reference", "shamir", "mpyc"}, default="reference"
        ``"reference"``: sums in this process (fast, same counts);
        ``"shamir"``: the paper's protocol, every party an OS process
        talking over TCP through MPyC's runtime; ``"mpyc"``: the same party
        processes, summing with MPyC's built-in Shamir secret sharing.
    verify : {"two", "all", "malicious"}, default="two"
        Sec. 4.3: compare the sums from two different (2n-1)-subsets of the
        2n intermediate results, or from all 2n. Neither catches a party that
        shifts both of its results consistently (see Notes).
        ``"malicious"``: sharing polynomials of degree 2n - 3, a masked random
        linear check of every party's results against the dealers' signed
        combinations, Ed25519-signed messages; a wrong result stops the run
        with :class:`SummationIntegrityError` naming the party that sent it
        (``accused``). Needs at least 3 parties; used by ``backend="shamir"``
        (:mod:`~privet.learners.secure_sum_id3.verified`).
    prime : int or None, default=None
        The field Z_p of the summation; it must exceed twice the largest sum.
        By default the exact protocol uses 65,521 when its rows fit (shares
        travel as 2-byte words; the protocol releases the row count anyway),
        else 2^31 - 1 (else 2^61 - 1). The DP variant chooses and checks the
        field from public values only: the largest sum is ``max_rows`` plus
        the noise margin (60 times the largest noise scale), and p must exceed
        twice that (65,521 when it does, else 2^31 - 1, else 2^61 - 1).
    max_rows : int or None, default=None
        DP variant: a public upper bound on the total number of rows, which
        is private under add/remove neighbours. Only the field depends on it:
        a ``prime`` too small for ``max_rows`` plus the noise margin is
        refused before any data is read (nothing charged; the message holds
        public values only). None means 2^29 rows (``DEFAULT_MAX_ROWS``),
        which the default field holds; a smaller user ``prime`` needs a
        smaller ``max_rows``. The fit never compares the bound with the
        actual row count (that comparison would reveal it): with more rows a
        process run's sum may leave the field and wrap modulo p (the
        reference path has no field). The guarantee is unchanged
        (the opened value is the noisy sum mod p, a function of the noisy
        sum), but the tree may be wrong; a process run then warns when an
        opened (noisy, released) sum lies outside [-margin, max_rows + margin].
        Ignored by the exact protocol, which opens its row count and checks
        the field against it.
    timeout : float, default=120
        Seconds a party waits for a silent peer before the run fails.
    schema, ledger, public_domain, random_state
        As for the other learners; ``random_state`` deals rows to parties.

    Attributes
    ----------
    tree_ : Tree
        The public tree; leaf values are the (exact or noisy) class totals.
    n_parties_ : int
    rounds_ : int
        Summation rounds run (levels, or chunks of levels).
    prime_ : int
        The field Z_p the sums were computed in.
    run_stats_ : RunStats or None
        Time and bytes per party of a process run.
    opened_ : list of ndarray
        Process runs: the sums every party saw opened, level by level.
    release_transcript_ : list of ndarray
        Process runs: what party 0 knows, in the reference path's release order
        (with noise and two or more parties: its own noise share, then the sum less
        it, at each level). A white-box audit of the protocol replays it.
    calibrated_epsilon_ : float or None
        The epsilon the fit split over the levels: ``epsilon``, or less if the ledger
        proved more than ``epsilon`` for the plan at ``epsilon`` (it does not on either
        relation: each level is one histogram; on a budget with delta > 0 it proves
        less, about 0.43-0.83 of ``epsilon`` at delta 1e-5, see
        ``docs/secure_sum_id3.md``). None for the exact protocol.
    ledger_, privacy_spent_, privacy_claim_, classes_, schema_, n_features_in_

    Notes
    -----
    Claimed: input privacy of each party's rows (Lemmas 1-2), no DP. Proven
    by privet: nothing finite for ``epsilon=None`` (exact counts are
    released); ``epsilon`` for the DP variant against anyone who sees the
    tree or the sums, including any single party that subtracts its own noise
    share (the other n - 1 shares already make a full discrete Laplace). The
    shares are NB(1/(n-1)) differences, so a coalition of two or more curious
    parties that subtracts its shares sees less noise than the ledger assumes:
    the guarantee covers outsiders and single parties, not coalitions. The
    sharing polynomials' coefficients come from a ChaCha20 key stream keyed
    from the OS; the DP noise shares come from numpy's PCG64DXSM seeded from
    the OS, not a CSPRNG.

    Integrity: the Sec. 4.3 check detects a party that changes one of its two
    intermediate results, but not one that shifts both along the error
    polynomial of :meth:`~privet.learners.secure_sum_id3.sharing.SharingPlan.undetectable_shift`
    (the paper's probability bound for a lone cheater does not hold); with
    ``verify="two"`` or ``"all"`` the protocol is sound for honest-but-curious
    parties only. ``verify="malicious"`` holds against one malicious party
    (the others may be curious): it is detected and named whenever its results
    are not the sum of the shares dealt to it, whenever its published
    combination does not match what it dealt, and whenever it sends different
    values to different parties; it can still choose its own input (any
    protocol allows that) and make the run stop (abort with identification,
    no guaranteed output). Two or more colluding malicious parties can again
    shift a sum unseen. See ``docs/secure_sum_id3.md``.

    References
    ----------
    F. Emekci, O. D. Sahin, D. Agrawal, A. El Abbadi, "Privacy preserving
    decision tree learning over multiple parties", Data & Knowledge
    Engineering 63 (2007).
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "n_parties": [Interval(Integral, 1, MAX_PARTIES, closed="both")],
        "backend": [StrOptions({"reference", "shamir", "mpyc"})],
        "verify": [StrOptions({"two", "all", "malicious"})],
        "prime": [Interval(Integral, 2, None, closed="left"), None],
        "max_rows": [Interval(Integral, 1, None, closed="left"), None],
        "timeout": [Interval(Real, 0, None, closed="neither")],
        "ledger": "no_validation",
    }

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        max_depth: int | None = None,
        n_parties: int = 3,
        backend: str = "reference",
        verify: str = "two",
        prime: int | None = None,
        max_rows: int | None = None,
        timeout: float = 120.0,
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.n_parties = n_parties
        self.backend = backend
        self.verify = verify
        self.prime = prime
        self.max_rows = max_rows
        self.timeout = timeout
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.random_state = random_state

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.epsilon is not None
        return tags

    # -- plan ----------------------------------------------------------------
    def _depth(self, schema: Schema | None) -> int:
        d = schema.n_features if schema is not None else None
        if self.max_depth is not None:
            return int(self.max_depth) if d is None else min(int(self.max_depth), d)
        if self.epsilon is None:
            return d if d is not None else 0
        return DEFAULT_DP_DEPTH if d is None else min(DEFAULT_DP_DEPTH, d)

    def _relation(self) -> NeighbouringRelation:
        led = getattr(self.ledger, "ledger", self.ledger)
        return led.relation if led is not None else NeighbouringRelation.ADD_REMOVE

    def _level_entries(self, schema: Schema | None) -> list[Any]:
        """The entry charged at each level 0..h (public): in the DP variant one
        histogram over the cells of all nodes of the level, charged once in the fit's
        scope; in the exact protocol the ``NonPrivate`` release charged at each node of
        the level, in the node's scope (see :meth:`privacy_plan`).

        DP variant, level l with |R| = d - l candidate attributes per node (each split
        uses one attribute; the last level, h, sums class totals only, |R| = 0): a
        record adds 1 to its class total and 1 to one |T(a_i, c_j)| per attribute of
        R (:func:`~privet.learners.secure_sum_id3.grower.local_counts`), 1 + |R|
        distinct cells, each +1, all in the one node it reaches (or none once it sits
        in a leaf). So between neighbours every cell moves by at most 1, and at most
        k cells move: k = 1 + |R| under add/remove (one record's cells); under
        replace-one the old record's cells lose 1 and the new one's gain 1, k = 2 (1 +
        |R|) cells, and a cell both lose and gain only when both records share it (it
        then does not move), so never by 2 -- whether the two records sit in one node
        or in two. (Checked for random neighbours on both relations by
        ``test_a_level_histogram_has_the_sensitivity_its_entry_states``.) Each cell
        gets independent discrete Laplace noise of scale b = k (h + 1) / epsilon:
        every party adds NB(1/(n-1)) - NB(1/(n-1)) per cell
        (:func:`~privet.learners.secure_sum_id3.sharing.noise_shares`), and any n - 1
        parties' shares sum to exactly the discrete Laplace(b) (the rest is
        independent noise, a post-processing). That is
        :class:`~privet.ledger.DiscreteLaplaceCounts` (b, k): pure epsilon k / b =
        epsilon / (h + 1), as before, and the exact curve of k unit-shift discrete
        Laplace releases composed, which the ledger prices below basic composition on
        a budget with delta > 0."""
        h = self._depth(schema)
        if self.epsilon is None:
            return [NonPrivate(reason=EXACT_REASON)] * (h + 1)
        d = schema.n_features if schema is not None else h
        factor = 1 if self._relation() is NeighbouringRelation.ADD_REMOVE else 2
        eps = float(self.epsilon) / (h + 1)
        out = []
        for level in range(h + 1):
            # one record adds 1 to a class total and 1 to one |T(a_i, c_j)| per attribute
            cells = factor * (1 + (d - level) if level < h and d - level > 0 else 1)
            out.append(DiscreteLaplaceCounts(scale=cells / eps, sensitivity=cells))
        return out

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """What ``fit`` will charge, from the parameters and the public schema alone."""
        _validate_params(self)
        schema = schema if schema is not None else self.schema
        entries = self._level_entries(schema)
        h = len(entries) - 1
        if self.epsilon is None:
            how = f"exact sums at every node of up to {h + 1} levels (no DP guarantee)"
        else:
            how = (
                f"distributed discrete Laplace, epsilon/(h+1) = {float(self.epsilon) / (h + 1):.4g} "
                f"per level over {h + 1} levels; the counts of every node of a level are one "
                "histogram"
            )
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=how,
            claim=Claim(math.inf, source=CLAIM_SOURCE, note=CLAIM_NOTE),
        )
        if self.epsilon is not None:
            # One histogram per level over the cells of all its nodes, in the fit's scope: a
            # record sits in one node of a level, so its L1 sensitivity is the entry's under
            # add/remove; under replace-one a record replaced within a node, or moved from
            # node A to node B (1 + |R| cells each), changes at most 2 (1 + |R|) cells, the
            # entry's sensitivity either way. Charging each node in a partition instead
            # would make the ledger count a moved record in both nodes at the full replace-one
            # sensitivity: (2h + 1) / (h + 1) epsilon, 1.75 at depth 3 (issue 31).
            for level, entry in enumerate(entries):
                plan.charge(entry, mechanism=self._mechanism(), step=f"node counts, depth {level}")
            return plan
        width = schema.max_domain_size if schema is not None else 2
        node = plan
        for level, entry in enumerate(entries):
            node.charge(entry, mechanism=self._mechanism(), step=f"node counts, depth {level}")
            if level < h:
                node = node.partition(max(width, 2), label=f"depth {level + 1}")
        return plan

    def _mechanism(self) -> str:
        if self.epsilon is None:
            return "Shamir secure sum (exact)"
        return "distributed discrete Laplace + secure sum"

    def _check_mode(self, dealt: bool) -> None:
        if dealt and self.n_parties < 2:
            raise InvalidParameterError(
                f"{type(self).__name__} needs at least 2 parties (the paper: n > 2), got "
                f"n_parties={self.n_parties}: one party only has nothing to sum with; fit "
                "an ID3Classifier on its own data instead."
            )
        if self.epsilon is None and self.ledger is None:
            raise BudgetExceededError(
                f"{type(self).__name__}(epsilon=None) runs the paper's protocol, which "
                "releases the exact counts of every tree node to every party (seed 001, Alg. "
                "3): no DP guarantee (epsilon = infinity). A non-private fit needs an explicit "
                "unbounded ledger: pass ledger=Ledger(budget=Guarantee.unbounded()) to run it "
                "knowingly, or epsilon=... for the sound variant (distributed discrete-Laplace "
                "noise on the counts, proven). Nothing was charged."
            )
        if self.epsilon is None:
            refuse_non_private(
                self,
                what=(
                    "epsilon=None runs the paper's protocol, which releases the exact counts "
                    "of every tree node to every party (seed 001, Alg. 3), and with them the "
                    "entropies; the paper claims input privacy only (Lemmas 1-2)."
                ),
                fix=(
                    "Pass epsilon=... for the sound variant (distributed discrete-Laplace "
                    "noise on the counts, proven), or pass "
                    "ledger=Ledger(budget=Guarantee.unbounded()) to run the paper's protocol "
                    "knowingly."
                ),
            )

    def _open_scope(self) -> Scope:
        return self._scope(float(self.epsilon) if self.epsilon is not None else math.inf)

    # -- fit -------------------------------------------------------------------
    def fit(self, X: Any, y: Any, parties: Any = None) -> SecureSumID3Classifier:
        """Fit on rows dealt to parties.

        Parameters
        ----------
        X, y : training data (the union of the parties' rows).
        parties : array-like of shape (n_samples,) or None
            Which party holds each row (any labels; one party per distinct
            label). None deals the rows to ``n_parties`` parties at random
            (``random_state``), in nearly equal numbers.
        """
        return self._fit(X, y, parties, None)

    def fit_parties(self, datasets: Any) -> SecureSumID3Classifier:
        """Fit on one ``(X_i, y_i)`` per party; every X_i must follow the schema."""
        return self._fit(None, None, None, list(datasets))

    def _fit(self, X: Any, y: Any, parties: Any, datasets: list | None) -> Any:
        _validate_params(self)
        if datasets is not None and len(datasets) < 2:
            raise InvalidParameterError(
                f"fit_parties got {len(datasets)} dataset(s): the protocol needs at least 2 "
                "parties (one party only has nothing to sum with)."
            )
        self._check_mode(dealt=parties is None and datasets is None)
        self.schema_ = self._resolve_schema(X, y) if datasets is None else self._party_schema()
        scope = self._open_scope()
        with self._calibrated(scope) as plan:
            entries = self._level_entries(self.schema_)
            field = None if self.epsilon is None else self._public_field(entries, datasets)
            with self._reserve(plan, scope) as res:
                self._fit_reserved_run(X, y, parties, datasets, entries, field, scope)
        self._fitted_common(self.schema_)
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        self.privacy_claim_ = plan.claim
        return self

    def _margin(self, entries: list[Any]) -> int:
        """How far noise can move a sum (public): 60 times the largest scale, 0 if exact."""
        return 0 if self.epsilon is None else int(NOISE_TAIL * max(e.scale for e in entries))

    def _public_field(self, entries: list[Any], datasets: list | None) -> tuple[int, int]:
        """DP variant: choose and check the field from public values, before any data is
        read; returns the prime and the largest sum it must hold (``max_rows`` + margin).

        Under add/remove the row count is private: a check against it (as the exact
        protocol makes) would refuse or accept depending on it, and state it. Here the
        decision and the message depend on ``prime``, ``max_rows``, epsilon, the schema
        and the number of parties only; a refusal charges nothing.
        """
        rows = DEFAULT_MAX_ROWS if self.max_rows is None else int(self.max_rows)
        margin = self._margin(entries)
        bound = rows + margin
        k = len(datasets) if datasets is not None else int(self.n_parties)
        prime = choose_prime(self.prime, k, bound)
        check_prime(prime, 2, 0)  # a prime at all; the actual party count is checked at the run
        if prime <= 2 * bound:
            given = (
                f"max_rows={rows}"
                if self.max_rows is not None
                else f"max_rows=None (the public default bound of {rows} rows)"
            )
            raise InvalidParameterError(
                f"prime={prime} is too small for the counts: with {given} and a noise margin "
                f"of {margin} (60 times the largest noise scale at epsilon={self.epsilon}), a "
                f"noisy sum can reach {bound} in absolute value and the field must hold every "
                f"sum (p > {2 * bound}). Pass a public max_rows that bounds the number of rows "
                f"(p > 2 * (max_rows + {margin})), a larger prime, or prime=None (the default "
                "field is chosen to fit). Decided from public values only, before any data was "
                "read; nothing was charged."
            )
        return int(prime), bound

    def _fit_reserved_run(
        self,
        X: Any,
        y: Any,
        parties: Any,
        datasets: list | None,
        entries: list[Any],
        field: tuple[int, int] | None,
        scope: Scope,
    ) -> None:
        """The fit inside its reservation: read the data, run the protocol, charge."""
        codes, ys = self._party_data(X, y, parties, datasets)
        if self.verify == "malicious" and self.backend == "shamir" and len(ys) < 3:
            raise InvalidParameterError(
                f"verify='malicious' needs at least 3 parties, got {len(ys)}: with two, "
                "each party's shares determine the other's polynomial of degree 2n - 3 = 1 "
                "(and the sum tells it the other's value anyway). Use more parties or "
                "verify='two'. Nothing was charged."
            )
        if field is None:  # the exact protocol opens the row count: check against it
            n_rows = sum(len(v) for v in ys)
            prime = choose_prime(self.prime, len(ys), n_rows)
            check_prime(prime, len(ys), n_rows)
        else:  # the DP variant: the field was checked against public values only
            prime, bound = field
            check_prime(prime, len(ys), bound)  # the sums pass: only the party count can fail
        self.prime_ = prime = int(prime)
        tracker = _ScopeTracker(scope, self.schema_, entries, type(self).__name__)
        if self.backend == "reference":
            arrays = grow_reference(
                codes,
                ys,
                self.schema_.domain_sizes,
                self.schema_.n_classes,
                self._depth(self.schema_),
                scales=None if self.epsilon is None else [e.scale for e in entries],
                rng=np.random.default_rng(),
                before_release=lambda level, grower: tracker.charge_level(
                    [nd.node for nd in level.nodes], grower.tree
                ),
            )
            self.run_stats_ = None
        else:
            with self._charged_on_failure(scope):
                arrays = self._run_parties(codes, ys, entries, prime)
            tracker.replay(arrays)
            if field is not None:
                self._warn_if_wrapped(field[1], self._margin(entries))
        self.tree_ = _to_tree(arrays, self.schema_.n_classes)
        self.rounds_ = int(arrays.rounds)
        self.n_parties_ = len(ys)

    def _warn_if_wrapped(self, bound: int, margin: int) -> None:
        """Warn when an opened noisy sum lies outside [-margin, max_rows + margin].

        Within ``max_rows`` rows every sum lies there except with probability below
        e^-60 per count; outside it the data probably hold more rows than ``max_rows``
        and a sum may have wrapped modulo p. The test reads only the opened sums, which
        every party sees and the ledger has charged: post-processing, nothing to charge.
        """
        opened = [np.asarray(v, dtype=object) for v in getattr(self, "opened_", [])]
        outside = any(v.size and (v.min() < -margin or v.max() > bound) for v in opened)
        if outside:
            warnings.warn(
                f"{type(self).__name__}: an opened (noisy) sum lies outside [-{margin}, "
                f"{bound}], the range {bound - margin} = max_rows rows allow: the data "
                "probably hold more rows than max_rows, and a sum may have wrapped modulo "
                f"prime={self.prime_}, so the tree may be wrong. The privacy guarantee is "
                "unchanged (a wrapped sum is a function of the noisy sum). Refit with a "
                "larger public max_rows (and prime).",
                RuntimeWarning,
                stacklevel=4,
            )

    @contextlib.contextmanager
    def _calibrated(self, scope: Scope) -> Iterator[PrivacyPlan]:
        """The fit's plan, its epsilon scaled if need be so that the ledger proves at most
        ``epsilon`` (:func:`~privet.learners._base.calibrated_epsilon`; ``calibrated_epsilon_``).

        The plan charges each level as one histogram over its nodes (see
        :meth:`privacy_plan`), so on a pure budget it costs ``epsilon`` on both relations
        and nothing is scaled (the check guards the reservation should a ledger prove
        more). On a budget with delta > 0 the ledger proves less than ``epsilon`` for it
        (:meth:`_level_entries`) and charges that: the noise is not scaled up to spend
        the difference, so a plan priced before the fit (``privacy_plan``, ``privet
        train``'s report, :class:`~privet.model_selection.PrivateSearchCV`) is the plan
        the fit charges. The exact protocol (``epsilon=None``) has nothing to scale.
        """
        if self.epsilon is None:
            self.calibrated_epsilon_ = None
            yield self.privacy_plan(self.schema_)
            return
        with calibrated_epsilon(self, scope.ledger, self.schema_) as plan:
            yield plan

    @contextlib.contextmanager
    def _charged_on_failure(self, scope: Scope) -> Iterator[None]:
        """A run that fails after launch may have released sums: charge them first."""
        if self.epsilon is not None:
            with charged_in_full_on_failure(self, scope, self.schema_):
                yield
            return
        try:
            yield
        except Exception:
            scope.charge(
                NonPrivate(reason="aborted run: exact sums of unknown nodes may be released"),
                mechanism="aborted MPC run (charged in full)",
                caller=type(self).__name__,
                step="protocol failed after launch; released sums unknown",
            )
            raise

    def _party_schema(self) -> Schema:
        if self.schema is None:
            raise SchemaError(
                f"{type(self).__name__}.fit_parties needs schema=...: the parties must agree "
                "on one public schema before they start."
            )
        return self.schema

    def _party_data(
        self, X: Any, y: Any, parties: Any, datasets: list | None
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each party's codes and labels, validated against the schema (reads private data)."""
        schema = self.schema_
        if datasets is not None:
            codes, ys = [], []
            names = list(schema.feature_names)
            for i, pair in enumerate(datasets):
                try:
                    Xi, yi = pair
                except (TypeError, ValueError):
                    raise SchemaError(
                        f"party {i}: expected a pair (X_i, y_i), got {type(pair).__name__}."
                    ) from None
                if isinstance(Xi, pd.DataFrame):
                    cols = [str(c) for c in Xi.columns if str(c) != schema.target_name]
                    if cols != names:
                        raise SchemaError(
                            f"party {i}'s columns do not match the agreed schema: it has "
                            f"{cols[:8]}{'...' if len(cols) > 8 else ''}, the schema "
                            f"{names[:8]}{'...' if len(names) > 8 else ''}; every party must "
                            "use the schema's features in its order. Nothing was charged."
                        )
                try:
                    c_i = self._encode_X(schema, Xi)
                    y_i = self._encode_y(schema, yi)
                except SchemaError as exc:
                    raise SchemaError(f"party {i}: {exc} Nothing was charged.") from None
                if c_i.shape[0] != y_i.shape[0]:
                    raise SchemaError(
                        f"party {i}: X has {c_i.shape[0]} rows but y has {y_i.shape[0]}."
                    )
                codes.append(c_i)
                ys.append(y_i)
            self.n_features_in_ = schema.n_features
        else:
            all_codes, all_y = self._prepare(X, y)
            if parties is None:
                k = int(self.n_parties)
                rng = np.random.default_rng(
                    self.random_state
                    if not isinstance(self.random_state, np.random.RandomState)
                    else self.random_state.randint(2**31)
                )
                owner = np.empty(all_y.shape[0], dtype=np.int64)
                owner[rng.permutation(all_y.shape[0])] = np.arange(all_y.shape[0]) % k
                labels = np.arange(k)
            else:
                owner_raw = np.asarray(parties)
                if owner_raw.shape != (all_y.shape[0],):
                    raise SchemaError(
                        f"parties must give one party per row, shape ({all_y.shape[0]},), got "
                        f"{owner_raw.shape}."
                    )
                labels, owner = np.unique(owner_raw, return_inverse=True)
                if labels.size < 2:
                    raise InvalidParameterError(
                        "parties names only one party: the protocol needs at least 2 (one "
                        "party only has nothing to sum with). Nothing was charged."
                    )
            codes = [all_codes[owner == i] for i in range(len(labels))]
            ys = [all_y[owner == i] for i in range(len(labels))]
        empty = [i for i, v in enumerate(ys) if len(v) == 0]
        if empty:
            raise SchemaError(
                f"parties {empty} have no rows: every party must hold at least one row "
                "(a party without data would only learn the others' sums). Nothing was charged."
            )
        return codes, ys

    def _run_parties(
        self, codes: list[np.ndarray], ys: list[np.ndarray], entries: list[Any], prime: int
    ) -> TreeArrays:
        from privet.mpc import MPCPartyError, launch

        tamper = getattr(self, "_testing_tamper", None)
        k = len(ys)
        with tempfile.TemporaryDirectory(prefix="privet-seed001-") as tmp:
            party_args = []
            for i in range(k):
                path = Path(tmp) / f"party{i}.npz"
                np.savez(path, codes=codes[i], y=ys[i])
                party_args.append({"data": str(path)})
            args = {
                "sizes": list(self.schema_.domain_sizes),
                "n_classes": self.schema_.n_classes,
                "max_depth": self._depth(self.schema_),
                "backend": self.backend,
                "prime": prime,
                "verify": self.verify,
                "scales": None if self.epsilon is None else [e.scale for e in entries],
                "tamper": tamper,
            }
            try:
                run = launch(
                    f"{proto.__file__}:program",
                    args,
                    parties=k,
                    threshold=0 if self.backend == "shamir" else None,
                    party_args=party_args,
                    timeout=float(self.timeout),
                    mpyc_options=("--no-prss",),
                    # up to 128 processes on a few cores: one BLAS thread each
                    env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
                )
            except MPCPartyError as exc:
                accusations = _accusations(exc)
                if not accusations:
                    raise
                accused = tuple(sorted({a for named in accusations.values() for a in named}))
                raise SummationIntegrityError(
                    f"verify='malicious': the parties stopped the run and named party "
                    f"{', '.join(map(str, accused))} as the sender of a wrong value "
                    f"({'; '.join(f'party {i} names {list(v)}' for i, v in sorted(accusations.items()))}"
                    f"). {exc.descriptions[min(accusations)].splitlines()[0]}",
                    accused=accused,
                    accusations=accusations,
                ) from exc
        digests = {r["digest"] for r in run.results}
        if len(digests) != 1:
            raise MPCError(
                f"the {k} parties ended with {len(digests)} different trees; the run is void."
            )
        self.run_stats_ = run.stats
        self.party_results_ = [
            {key: r[key] for key in ("rounds", "counts_summed", "max_rss_kb") if key in r}
            for r in run.results
        ]
        # the sums every party saw opened, level by level: a white-box audit replays them
        # on the reference path (privet.audits.learners.whitebox.protocol_release_test)
        self.opened_ = [np.asarray(v) for v in run.results[0].get("opened_sums", [])]
        # what party 0 knows, in the reference path's release order: with noise and two
        # or more parties, its own share and the sum less it at each level (any single
        # party is the strongest adversary the proof covers; see reference._noisy_total)
        shares = [np.asarray(v) for v in run.results[0].get("own_noise_shares", [])]
        if shares and k >= 2:
            self.release_transcript_ = [
                x for s, o in zip(shares, self.opened_, strict=True) for x in (s, o - s)
            ]
        else:
            self.release_transcript_ = list(self.opened_)
        return TreeArrays(**run.results[0]["tree"])


class _ScopeTracker:
    """Maps tree nodes to ledger scopes: a split partitions its node's scope by value."""

    def __init__(self, root: Scope, schema: Schema, entries: list[Any], caller: str) -> None:
        self.scopes: dict[int, Scope] = {0: root}
        self.schema = schema
        self.entries = entries
        self.caller = caller
        self.mechanism = (
            "Shamir secure sum (exact)"
            if isinstance(entries[0], NonPrivate)
            else "distributed discrete Laplace + secure sum"
        )

    def scope(self, node: int, tree: TreeArrays) -> Scope:
        if node not in self.scopes:
            parent = tree.parent[node]
            sc = self.scope(parent, tree)
            attr = tree.feature[parent]
            start = tree.child_start[parent]
            kids = tree.children[start : start + self.schema.domain_sizes[attr]]
            name = self.schema.feature_names[attr]
            labels = [f"{name}={lab}" for lab in self.schema.attributes[attr].labels]
            for kid, part in zip(kids, sc.partition(labels), strict=True):
                self.scopes[kid] = part
        return self.scopes[node]

    def charge_level(self, nodes: list[int], tree: TreeArrays) -> None:
        """Charge the release of ``nodes``' counts: the DP variant once per level in the
        fit's scope (one noisy histogram over the level's nodes, see ``privacy_plan``),
        the exact protocol once per node in the node's scope."""
        if isinstance(self.entries[0], NonPrivate):
            for node in nodes:
                self._charge(self.scope(node, tree), int(tree.depth[node]), first=node == 0)
            return
        for depth in sorted({int(tree.depth[node]) for node in nodes}):
            self._charge(self.scopes[0], depth, first=depth == 0)

    def _charge(self, scope: Scope, depth: int, *, first: bool) -> None:
        scope.charge(
            self.entries[depth],
            mechanism=self.mechanism,
            caller=self.caller,
            step=f"node counts, depth {depth}",
            claim=Claim(math.inf, source=CLAIM_SOURCE, note=CLAIM_NOTE) if first else None,
        )

    def replay(self, tree: TreeArrays) -> None:
        self.charge_level(list(tree.opened), tree)


def _accusations(exc: Any) -> dict[int, tuple[int, ...]]:
    """Which parties each party named in a ``verify="malicious"`` stop (from its message)."""
    out = {}
    for party, text in exc.descriptions.items():
        found = re.search(re.escape(ACCUSES) + r" \[([0-9, ]*)\]", text or "")
        if found:
            out[party] = tuple(int(x) for x in found.group(1).split(",") if x.strip())
    return out


def _to_tree(arrays: TreeArrays, n_classes: int) -> Tree:
    value = np.asarray(arrays.value, dtype=float).reshape(-1, n_classes)
    return Tree(
        feature=np.asarray(arrays.feature, dtype=np.int64),
        child_start=np.asarray(arrays.child_start, dtype=np.int64),
        children=np.asarray(arrays.children, dtype=np.int64),
        value=value,
        depth=np.asarray(arrays.depth, dtype=np.int64),
    )
