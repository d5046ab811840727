"""FederatedDPTreeClassifier: federated DP CART over K data owners (seed 003, Gubler)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array, check_is_fitted

from privet.data import Schema
from privet.data.attributes import MAX_BINS
from privet.errors import InvalidParameterError, SchemaError
from privet.learners._base import (
    BaseTreeClassifier,
    _validate_params,
    charged_in_full_on_failure,
    refuse_non_private,
    require_fitted,
)
from privet.learners._params import Interval, StrOptions
from privet.learners.federated_cart.binning import CATEGORICAL, FeatureMap, bin_frame, feature_map
from privet.learners.federated_cart.grower import (
    CLAIM_SOURCE,
    FLOAT_NOISE_REASON,
    NOISES,
    Accounting,
    CartParams,
    FederatedTree,
    PartyRows,
    grow,
    largest_sums,
)
from privet.learners.federated_cart.reference import ReferenceOps, ReplayOps
from privet.ledger import ADD_REMOVE, Claim, Guarantee, Ledger, NonPrivate, PrivacyPlan
from privet.mechanisms import DistributedLaplace, GammaDLPA, check_entry, collusion_guarantee
from privet.mechanisms.distributed import MAX_PARTIES


class FederatedDPTreeClassifier(BaseTreeClassifier):
    """Federated differentially private CART over K horizontally split data owners.

    Seed 003 (Gubler): every statistic the tree uses is a private sum over the
    K owners (Alg. 1, pairwise masks) of locally computed values to which each
    owner has added its share of Laplace noise (gamma DLPA,
    Sec. 2.4.1): per-class histograms over public bins (Alg. 3), split
    impurities from the noisy histograms (Alg. 4, post-processing), CART with
    Gini impurity (Alg. 5) and, with ``budget_saving=True``, the budget-saving
    node splitting of Alg. 6: a noisy lower bound (Thm. 7, sensitivity 5/4 by
    Lemma 3.2) on every feature's best impurity prunes features whose bound
    exceeds the best impurity found, and the histogram budget they would have
    used is passed down to both children.

    Parameters
    ----------
    epsilon : float, default=1.0
        Budget of one ``fit``: every root-to-leaf path spends at most this.
    max_depth : int, default=5
    min_samples_leaf : int, default=10
        A node whose noisy count is at most this on every feature becomes a leaf.
    num_bins : int, default=10
        Equal-width bins over each numeric attribute's public bounds (at most 1,000,000).
    categorical : {"onehot", "ordinal"}, default="onehot"
        "onehot": one tree feature with 2 bins per category (privet's first
        encoding). "ordinal": one tree feature per categorical attribute, one
        bin per category in the schema's order, splits "first l categories
        left". Same accounting (one record is in one bin of every feature);
        fewer features p, so more budget per feature histogram. The paper has
        numeric features only.
    leaf_prop : float, default=0.5
        Share of ``epsilon`` for the leaves; the rest is split evenly over the
        ``max_depth`` levels of nodes (Alg. 5).
    budget_saving : bool, default=True
        Alg. 6 node splitting (False: plain Alg. 5).
    bounds_prop : float, default=0.25
        Share of a node's budget for Alg. 6's impurity bounds.
    bounds_accounting : {"sound", "paper"}, default="sound"
        "sound": the p bounds are one vector of L1 sensitivity 5p/4, noised at
        scale 5p / (4 eps_bounds), which costs eps_bounds. "paper": the paper's
        code adds Laplace(5/4 / eps_bounds) to each bound, which costs
        p * eps_bounds; the ledger charges that and records the paper's claim.
    noise : {"discrete", "paper"}, default="discrete"
        "discrete" (sound): every owner's share is an integer Polya difference,
        and the K shares add up to the discrete Laplace noise of the sum, so every
        release is an integer and its guarantee is proven for what is sampled;
        Alg. 6's bound summands are rounded by each owner to multiples of 1/16
        first (5 % more noise on them). "paper": float Gamma differences
        (Sec. 2.4.1) rounded to 32 fractional bits. No guarantee is proven for
        floating-point noise, so the ledger charges every release as
        ``NonPrivate`` with the ideal Laplace epsilon as the paper's claim, and
        the fit needs ``Ledger(budget=Guarantee.unbounded())``.
    n_parties : int, default=5
        K (at most 10,000, the gamma DLPA's ``MAX_PARTIES``), when ``fit`` gets one
        dataset and no ``owners``: its rows are dealt to K owners at random, from
        OS entropy (a secret deal: the impurity bounds of Alg. 6 depend on which
        owner holds which row).
    backend : {"reference", "protocol"}, default="reference"
        "reference": all owners in this process (same output distribution).
        "protocol": each owner is its own OS process (privet.mpc launcher,
        MPyC channels, X25519 pairwise masks); the host replays the released
        values to charge the ledger.
    schema : privet.data.Schema
        Public domains: numeric bounds and categories (required).
    ledger : Ledger, Scope or None
    protocol_timeout : float, default=120
        Seconds a party waits for a silent peer (protocol backend).
    random_state : int, RandomState or None
        Unused (kept for the estimator API): the deal of rows to owners is
        secret and privacy noise is never seeded.

    Attributes
    ----------
    tree_ : FederatedTree
    feature_map_ : FeatureMap
        The tree features (numeric bins and one-hot categories).
    releases_ : dict
        Every released noisy sum by key (the protocol's public transcript).
    ledger_ : Ledger
    privacy_spent_ : Guarantee
        What the ledger proves for this fit.
    privacy_plan_ : PrivacyPlan
        The plan ``fit`` reserved before it read the data; the model's
        guarantee as a mechanism is its cost (:func:`privet.learners.proven_guarantee`).
    privacy_claim_ : Claim
    n_owners_ : int
    classes_, schema_, n_features_in_

    Notes
    -----
    Claimed guarantee: epsilon-DP for the released tree (Thm. 6; Sec. 3.5 for
    Alg. 6), against anyone who knows none of the owners' noise shares. The
    ledger proves it from its scopes (class partitions, split partitions, one
    reservation). A coalition of t owners that pools its shares keeps less;
    :meth:`collusion_report` gives it for t = 0 .. K-1 (the paper does not
    analyse this). The noise shares are numpy floats encoded in fixed point
    (32 fractional bits) before masking. By default (``noise="discrete"``) the
    shares are integers and the ledger records the guarantee of the discrete
    Laplace noise they add up to; with the paper's float shares it records no
    guarantee, only the paper's claim (see ``noise``).

    References
    ----------
    Gubler, "Federated differentially private decision trees" (seed 003),
    Algorithms 1, 3, 4, 5, 6; Thm. 6, Thm. 7, Lemma 3.1, Lemma 3.2.
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 0, None, closed="left")],
        "num_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
        "categorical": [StrOptions(set(CATEGORICAL))],
        "leaf_prop": [Interval(Real, 0, 1, closed="right")],
        "budget_saving": ["boolean"],
        "bounds_prop": [Interval(Real, 0, 1, closed="neither")],
        "bounds_accounting": [StrOptions({"sound", "paper"})],
        "noise": [StrOptions(set(NOISES))],
        "n_parties": [Interval(Integral, 2, MAX_PARTIES, closed="both")],
        "backend": [StrOptions({"reference", "protocol"})],
        "public_domain": [StrOptions({"schema", "infer"})],
        "protocol_timeout": [Interval(Real, 0, None, closed="neither")],
        "ledger": "no_validation",
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int = 5,
        min_samples_leaf: int = 10,
        num_bins: int = 10,
        categorical: str = "onehot",
        leaf_prop: float = 0.5,
        budget_saving: bool = True,
        bounds_prop: float = 0.25,
        bounds_accounting: str = "sound",
        noise: str = "discrete",
        n_parties: int = 5,
        backend: str = "reference",
        schema: Any = None,
        ledger: Any = None,
        public_domain: str = "schema",
        protocol_timeout: float = 120.0,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.num_bins = num_bins
        self.categorical = categorical
        self.leaf_prop = leaf_prop
        self.budget_saving = budget_saving
        self.bounds_prop = bounds_prop
        self.bounds_accounting = bounds_accounting
        self.noise = noise
        self.n_parties = n_parties
        self.backend = backend
        self.schema = schema
        self.ledger = ledger
        self.public_domain = public_domain
        self.protocol_timeout = protocol_timeout
        self.random_state = random_state

    # ------------------------------------------------------------------ plan
    def _params(self, schema: Schema, parties: int) -> CartParams:
        fmap = feature_map(schema, int(self.num_bins), self.categorical)
        return CartParams(
            parties=int(parties),
            n_classes=schema.n_classes,
            n_bins=tuple(int(b) for b in fmap.n_bins),
            epsilon=float(self.epsilon),
            max_depth=int(self.max_depth),
            min_samples_leaf=int(self.min_samples_leaf),
            leaf_prop=float(self.leaf_prop),
            budget_saving=bool(self.budget_saving),
            bounds_prop=float(self.bounds_prop),
            bounds_accounting=str(self.bounds_accounting),
            noise=str(self.noise),
        )

    def _check_drawable(self, params: CartParams) -> None:
        """Refuse, before anything is charged, a fit whose noisiest sum cannot be drawn
        (integer shares of a scale too large for 64-bit integers, from a tiny epsilon)."""
        if params.noise != "discrete":
            return
        for step, scale, sens in largest_sums(params):
            try:
                check_entry(
                    DistributedLaplace(
                        scale=scale, sensitivity=sens, parties=params.parties, discrete=True
                    ),
                    "GammaDLPA",
                )
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"{type(self).__name__}: the {step} of this fit would need integer noise "
                    f"that cannot be drawn: {exc} Raise epsilon or lower max_depth; nothing "
                    "was charged."
                ) from None

    def privacy_plan(self, schema: Schema | None = None) -> PrivacyPlan:
        """Worst-case root-to-leaf path of ``fit``, from the parameters and the public schema.

        Every level of nodes spends at most ``(1 - leaf_prop) epsilon / max_depth``
        (Alg. 6 moves unspent budget down a path, never adds to it) and the leaf
        ``leaf_prop * epsilon``: epsilon in all (Thm. 6). With
        ``bounds_accounting="paper"`` a level can spend more (see the class notes).
        """
        _validate_params(self)
        self._check_budget_split()
        schema = schema if schema is not None else self.schema
        if schema is None:
            raise SchemaError(
                f"{type(self).__name__} needs the public schema (numeric bounds and "
                "categories) for its bins and its plan; pass schema=privet.data.Schema(...)"
                " (public_domain='infer' reads them from the data, which is not private)."
            )
        params = self._params(schema, int(self.n_parties))
        claim = Claim(float(self.epsilon), source=CLAIM_SOURCE)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            description=(
                f"{params.max_depth} node levels at <= {params.eps_node:.4g} + leaf "
                f"{params.eps_leaf:.4g}; classes and children are partitions"
                + ("; Alg. 6 passes unspent budget down" if params.budget_saving else "")
            ),
            claim=claim,
        )
        node = plan
        C = schema.n_classes

        def planned(eps: float) -> dict[str, Any]:  # the paper's float shares prove nothing
            if params.noise == "discrete":
                return {"entry": eps}
            return {"entry": NonPrivate(reason=FLOAT_NOISE_REASON), "claim": Claim(eps)}

        for d, eps_d in enumerate(self._level_costs(params)):
            node.partition(C, label="class").charge(
                **planned(eps_d), mechanism="gamma_dlpa", step=f"node level {d}"
            )
            node = node.partition(2, label=f"depth {d + 1}")
        node.partition(C, label="class").charge(
            **planned(params.eps_leaf), mechanism="gamma_dlpa", step="leaf counts"
        )
        return plan

    def _level_costs(self, params: CartParams) -> list[float]:
        """Per-level worst case of the proven cost (see ``privacy_plan``)."""
        D, e = params.max_depth, params.eps_node
        if not (params.budget_saving and params.bounds_accounting == "paper"):
            return [e] * D
        # paper accounting: level d spends p*bp*B_d + hists with B_d = e + s_d and
        # s_d <= e * sum_{i=1..d} (1 - bp)^i; the whole path is at most
        # D (p bp + 1 - bp) e + (p - 1) bp sum_d s_d (hist + passed-down = (1-bp) B_d).
        p, bp = params.n_features, params.bounds_prop
        out = []
        for d in range(D):
            s_d = e * sum((1 - bp) ** i for i in range(1, d + 1))
            out.append((p * bp + 1 - bp) * e + (p - 1) * bp * s_d)
        return out

    # ------------------------------------------------------------------ data
    def _owner_frames(self, X: Any, y: Any, owners: Any) -> list[tuple[Any, Any]]:
        """Split the input into K owners' (X_k, y_k); errors name the owner."""
        if isinstance(X, list | tuple):
            if not isinstance(y, list | tuple) or len(y) != len(X):
                raise InvalidParameterError(
                    f"{type(self).__name__}.fit got {len(X)} owners' X but y is not a list of "
                    "the same length; pass y as one label array per owner."
                )
            if owners is not None:
                raise InvalidParameterError(
                    "Pass either a list of owners' datasets or one dataset with owners=..., "
                    "not both."
                )
            parts = list(zip(X, y, strict=True))
        else:
            if (
                isinstance(X, str | bytes)
                or np.isscalar(X)
                or X is None
                or not hasattr(X, "__len__")
            ):
                raise SchemaError(
                    f"X must be a table of feature columns (a DataFrame or a 2-D array), or a "
                    f"list of the owners' tables; got {type(X).__name__}."
                )
            if (
                isinstance(y, str | bytes)
                or np.isscalar(y)
                or y is None
                or not hasattr(y, "__len__")
            ):
                raise SchemaError(
                    f"y must hold one class label per row, got {y!r}; pass an array of labels."
                )
            n = len(X)
            if len(y) != n:
                raise SchemaError(f"X has {n} rows but y has {len(y)}; pass one label per row.")
            if owners is not None:
                ids = np.asarray(owners)
                if ids.shape != (n,):
                    raise InvalidParameterError(
                        f"owners must give one owner id per row ({n}), got shape {ids.shape}."
                    )
                labels = list(dict.fromkeys(ids.tolist()))
                groups = [np.flatnonzero(ids == lab) for lab in labels]
            else:
                # A secret deal (OS entropy), never random_state: Alg. 6's bounds are a sum of
                # per-owner minima, and with a public seed removing one record re-deals every
                # row, which moves that sum far beyond its sensitivity 5/4 per feature.
                groups = np.array_split(np.random.default_rng().permutation(n), int(self.n_parties))
            frame = X if isinstance(X, pd.DataFrame) else None
            y_arr = y if isinstance(y, pd.Series) else np.asarray(y)
            parts = []
            for g in groups:
                xs = frame.iloc[g] if frame is not None else np.asarray(X)[g]
                ys = y_arr.iloc[g] if isinstance(y_arr, pd.Series) else y_arr[g]
                parts.append((xs, ys))
        if len(parts) < 2:
            raise InvalidParameterError(
                f"{type(self).__name__} is federated learning over K >= 2 data owners; got "
                f"K = {len(parts)}. With one owner use a central DP learner (e.g. "
                "DPID3Classifier)."
            )
        return parts

    def _validate_owners(self, parts: list[tuple[Any, Any]]) -> PartyRows:
        schema, fmap = self.schema_, self.feature_map_
        Zs, ys = [], []
        ref_cols: list[str] | None = None
        for k, (Xk, yk) in enumerate(parts):
            if isinstance(Xk, pd.DataFrame):
                cols = [str(c) for c in Xk.columns]
                if ref_cols is None:
                    ref_cols = cols
                if cols != ref_cols or sorted(cols) != sorted(schema.feature_names):
                    raise SchemaError(
                        f"Owner {k}'s columns {cols} do not match "
                        f"{'owner 0' if cols != ref_cols else 'the public schema'}'s "
                        f"{ref_cols if cols != ref_cols else list(schema.feature_names)}; "
                        "every owner must hold the schema's features "
                        f"{list(schema.feature_names)}."
                    )
            else:
                arr = np.asarray(Xk, dtype=object)
                if arr.ndim != 2 or arr.shape[1] != schema.n_features:
                    raise SchemaError(
                        f"Owner {k}'s X has shape {arr.shape}, but the public schema has "
                        f"{schema.n_features} features {list(schema.feature_names)}; every "
                        "owner must hold the same columns in schema order."
                    )
            n_k = len(Xk)
            if n_k == 0:
                raise SchemaError(
                    f"Owner {k} has no rows; drop it from the federation or give it data "
                    "(an owner with no rows would still have to take part in every sum)."
                )
            if len(yk) != n_k:
                raise SchemaError(f"Owner {k}: X has {n_k} rows but y has {len(yk)}.")
            try:
                frame = schema.validate(Xk, target="absent")
                y_codes = self._encode_y(schema, yk)
            except SchemaError as exc:
                raise SchemaError(f"Owner {k}: {exc}") from None
            Zs.append(bin_frame(schema, fmap, frame))
            ys.append(np.asarray(y_codes, dtype=np.int64))
        return PartyRows(Zs, ys)

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, *, owners: Any = None) -> FederatedDPTreeClassifier:
        """Fit under the ledger's budget.

        Parameters
        ----------
        X : DataFrame/array, or a list of K owners' DataFrames/arrays
        y : labels, or a list of K owners' label arrays
        owners : array of owner ids per row, optional
            With one dataset: which owner holds each row (default: ``n_parties``
            owners drawn at random from OS entropy).
        """
        _validate_params(self)
        self._check_budget_split()
        self._check_ledger_relation()
        if self.noise == "paper":
            refuse_non_private(
                self,
                what=(
                    "noise='paper' adds the paper's float Gamma shares (seed 003, Sec. 2.4.1): "
                    "no DP guarantee is proven for floating-point noise (Mironov 2012), "
                    "although the paper claims epsilon-DP (Thm. 6)."
                ),
                fix=(
                    "Use noise='discrete', the sound default (integer Polya shares, proven), "
                    "or pass ledger=Ledger(budget=Guarantee.unbounded()) to run the paper's "
                    "noise knowingly."
                ),
            )
        schema = self._resolve_schema(X, y)
        parts = self._owner_frames(X, y, owners)
        self.schema_ = schema
        self.feature_map_ = feature_map(schema, int(self.num_bins), self.categorical)
        params = self._params(schema, len(parts))
        self.params_ = params
        self._check_drawable(params)
        plan = self.privacy_plan(schema)
        scope = self._scope(float(self.epsilon))
        caller = type(self).__name__
        with self.ledger_.reserve(plan, scope=scope, caller=caller) as res:
            data = self._validate_owners(parts)  # reads private values; charges nothing
            labels = [str(c) for c in schema.classes]
            if self.backend == "reference":
                ops = ReferenceOps(params.parties, discrete=params.noise == "discrete")
                self.tree_ = grow(
                    params,
                    data,
                    ops,
                    scope,
                    accounting=Accounting(caller=caller),
                    class_labels=labels,
                    feature_names=self.feature_map_.names,
                )
                self.releases_ = ops.releases
            else:
                from privet.learners.federated_cart.protocol import run_protocol

                with charged_in_full_on_failure(self, scope, schema):
                    run = run_protocol(params, data, timeout=float(self.protocol_timeout))
                    self.tree_ = grow(
                        params,
                        PartyRows([], []),
                        ReplayOps(run.releases),
                        scope,
                        accounting=Accounting(caller=caller),
                        class_labels=labels,
                        feature_names=self.feature_map_.names,
                    )
                self.releases_ = run.releases
                self.protocol_stats_ = run.stats
        self._fitted_common(schema)
        self.n_features_in_ = schema.n_features
        self.n_owners_ = params.parties
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        self.privacy_claim_ = plan.claim
        return self

    def _check_budget_split(self) -> None:
        if float(self.leaf_prop) == 1.0 and int(self.max_depth) > 0:
            raise InvalidParameterError(
                f"{type(self).__name__}(leaf_prop=1.0) gives the whole epsilon to the leaves "
                f"and none to the max_depth={self.max_depth} levels of nodes (Alg. 5); use "
                "leaf_prop < 1, or max_depth=0 for a single leaf."
            )

    def _check_ledger_relation(self) -> None:
        led = getattr(self.ledger, "ledger", self.ledger)
        if led is not None and led.relation is not ADD_REMOVE:
            raise InvalidParameterError(
                f"{type(self).__name__} is analysed under add/remove neighbours (Lemma 3.1, "
                f"Lemma 3.2); the ledger uses {led.relation.value}. Use a ledger with "
                "relation='add_remove'."
            )

    # ------------------------------------------------------------------ predict
    def _binned(self, X: Any) -> np.ndarray:
        require_fitted(self, "tree_")
        if not isinstance(X, pd.DataFrame):
            try:
                X = check_array(X, dtype=None, ensure_all_finite=False, ensure_min_samples=1)
            except (TypeError, ValueError) as exc:
                raise SchemaError(f"{exc}") from None
        frame = self.schema_.validate(X, target="absent")
        return bin_frame(self.schema_, self.feature_map_, frame)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from the leaves' noisy counts (clipped at 0; post-processing)."""
        Z = self._binned(X)
        values = np.clip(self.tree_.leaf_values(Z), 0.0, None)
        total = values.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(
                total > 0, values / np.where(total > 0, total, 1.0), 1.0 / values.shape[1]
            )

    def predict(self, X: Any) -> np.ndarray:
        Z = self._binned(X)
        return self.classes_[np.argmax(self.tree_.leaf_values(Z), axis=1)]

    def export_text(self, *, max_lines: int = 60) -> str:
        check_is_fitted(self, "tree_")
        t, names, fm = self.tree_, self.feature_map_.names, self.feature_map_
        lines: list[str] = []

        def walk(i: int, indent: str) -> None:
            if len(lines) >= max_lines:
                return
            if t.feature[i] < 0:
                counts = ", ".join(
                    f"{c}: {v:.1f}" for c, v in zip(self.classes_, t.value[i], strict=True)
                )
                lines.append(f"{indent}leaf [{counts}]")
                return
            j, b = t.feature[i], t.border[i]
            if int(fm.category[j]) == -2:  # ordinal categorical: name the categories
                labels = self.schema_.attributes[int(fm.attribute[j])].labels
                left = "in {" + ", ".join(map(str, labels[:b])) + "}"
                right = "in {" + ", ".join(map(str, labels[b:])) + "}"
            else:
                left, right = f"< {fm.edges[j][b]:g}", f">= {fm.edges[j][b]:g}"
            lines.append(f"{indent}{names[j]} {left}")
            walk(t.left[i], indent + "  ")
            lines.append(f"{indent}{names[j]} {right}")
            walk(t.right[i], indent + "  ")

        walk(0, "")
        return "\n".join(lines)

    # ------------------------------------------------------------------ collusion
    def collusion_report(self, *, delta: float = 1e-6) -> list[dict[str, Any]]:
        """The guarantee of the fitted tree against t colluding owners, t = 0 .. K-1.

        t owners that pool their noise shares can subtract them from every
        released sum; what is left per release is the difference of two
        Gamma((K-t)/K, scale) variables (:func:`privet.mechanisms.collusion_guarantee`):
        pure DP while t < K/2, only (epsilon, delta)-DP from t >= K/2. The
        released values of this fit are replayed into a fresh ledger whose
        entries carry the colluders' guarantee, so the tree's composition
        (partitions, paths) is the ledger's, as for the outsider guarantee.
        """
        check_is_fitted(self, "tree_")
        out = []
        labels = [str(c) for c in self.schema_.classes]
        for t in range(self.n_owners_):
            led = Ledger(budget=Guarantee.unbounded(), dataset=f"collusion t={t}")
            acc = Accounting(
                colluders=t, charge_colluders=t > 0, caller="collusion_report", delta=delta
            )
            grow(
                self.params_,
                PartyRows([], []),
                ReplayOps(self.releases_),
                led.root,
                accounting=acc,
                class_labels=labels,
                feature_names=self.feature_map_.names,
            )
            g = led.spent()
            out.append(
                {
                    "colluders": t,
                    "epsilon": g.epsilon,
                    "delta": g.delta,
                    "pure": g.delta == 0.0,
                }
            )
        return out


def collusion_table(
    parties: int, *, scale: float = 1.0, delta: float = 1e-6, discrete: bool = False
) -> list[dict[str, Any]]:
    """Per-release guarantee of one gamma DLPA sum (sensitivity 1) against t colluders.

    ``discrete=False``: the paper's Gamma(1/K) shares (their ideal continuous
    analysis, :func:`privet.mechanisms.collusion_guarantee`). ``discrete=True``: the
    default integer Polya shares, whose residual keeps a pure epsilon for every t < K.
    """
    rows = []
    for t in range(parties):
        if discrete:
            eps = GammaDLPA(
                parties=parties, scale=scale, colluders=t, charge_colluders=t > 0,
                discrete=True,
            ).privacy_map(1.0).epsilon  # fmt: skip
            rows.append({"colluders": t, "pure_epsilon": eps, "epsilon": eps, "delta": 0.0})
            continue
        g = collusion_guarantee(parties, t, scale=scale, delta=delta)
        rows.append(
            {"colluders": t, "pure_epsilon": g.pure_epsilon, "epsilon": g.epsilon, "delta": g.delta}
        )
    return rows


__all__ = ["FeatureMap", "FederatedDPTreeClassifier", "FederatedTree", "collusion_table"]
