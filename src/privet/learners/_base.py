"""Shared machinery of privet's tree classifiers.

``fit`` always runs in this order (DESIGN.md, "Budget checks happen before data
is touched"): validate parameters → build the privacy plan from parameters and
the public schema → reserve it on the ledger → validate the data → read private
values. A rejected call therefore charges nothing.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import warnings
from collections.abc import Iterator
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_array, check_is_fitted

from privet.data import Categorical, Numeric, Schema
from privet.errors import (
    BudgetExceededError,
    InvalidParameterError,
    NotFittedError,
    PrivetError,
    SchemaError,
)
from privet.learners._params import Interval, StrOptions, validate_params
from privet.ledger import Guarantee, Ledger, NeighbouringRelation, PrivacyPlan, Scope
from privet.mechanisms import check_plan


class PrivacyWarning(UserWarning):
    """Something weakens the privacy guarantee (e.g. a domain read from the data)."""


def infer_schema(X: Any, y: Any, *, max_categories: int = 16, n_bins: int = 8) -> Schema:
    """A schema read from the data itself: NOT private. Only behind an explicit opt-in.

    Columns with at most ``max_categories`` distinct values become categorical,
    others numeric with equal-width bins between the observed min and max. The
    domain (which values occur, the extremes) is a function of the private data
    and is released by the fitted model.
    """
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    frame = frame.rename(columns=str)
    attrs: list[Categorical | Numeric] = []
    for name in frame.columns:
        col = frame[name]
        values = pd.unique(col.dropna())
        is_float = pd.api.types.is_float_dtype(col)
        if is_float and len(values) > 0:
            lo, hi = float(np.min(values)), float(np.max(values))
            if not lo < hi:
                hi = lo + 1.0
            attrs.append(Numeric.equal_width(name, lo, hi, min(n_bins, max(len(values), 1))))
        elif len(values) <= max_categories or not pd.api.types.is_numeric_dtype(col):
            cats = sorted({_plain(v) for v in values.tolist()}, key=lambda v: (str(type(v)), v))
            attrs.append(Categorical(name, cats if cats else ["none"]))
        else:
            lo, hi = float(np.min(values)), float(np.max(values))
            attrs.append(Numeric.equal_width(name, lo, hi, n_bins))
    classes = sorted(
        {_plain(v) for v in pd.unique(np.asarray(y)).tolist()}, key=lambda v: (str(type(v)), v)
    )
    return Schema(attrs, Categorical("target", classes), "inferred from the data (not private)")


def _plain(v: Any) -> Any:
    """Native Python value for a category (numpy scalars become int/str/bool)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        return int(v) if v.is_integer() else str(v)
    return v


def _validate_params(estimator: BaseEstimator) -> None:
    validate_params(estimator)
    led = getattr(estimator, "ledger", None)
    if led is not None and not isinstance(led, Ledger | Scope):
        raise InvalidParameterError(
            f"The 'ledger' parameter of {type(estimator).__name__} must be a privet Ledger, "
            f"a Scope of one, or None; got {led!r} of type {type(led).__name__}. Open a "
            "file ledger with privet.ledger.Ledger.open(path, dataset=..., budget=...)."
        )


class BaseTreeClassifier(ClassifierMixin, BaseEstimator):
    """Schema handling, data validation and prediction shared by the tree learners."""

    _parameter_constraints: dict[str, list[Any]] = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "schema": [Schema, None],
        "public_domain": [StrOptions({"schema", "infer"})],
        "random_state": ["random_state"],
    }

    # -- schema ----------------------------------------------------------------
    def _resolve_schema(self, X: Any = None, y: Any = None) -> Schema:
        if self.schema is not None:
            return self.schema
        if self.public_domain == "infer" and X is not None:
            warnings.warn(
                f"{type(self).__name__}: no schema given, so the attribute domains and "
                "numeric bounds are read from the training data. They are not public: the "
                "fitted model reveals them and the privacy guarantee does not cover them. "
                "Pass schema=... with public domains to avoid this.",
                PrivacyWarning,
                stacklevel=3,
            )
            X, y = self._check_raw(X, y)
            return infer_schema(X, y)
        raise SchemaError(
            f"{type(self).__name__} needs the public schema of the data (attribute "
            "domains, numeric bounds and bins that do not depend on the private data): "
            "pass schema=privet.data.Schema(...) or use a bundled dataset's schema "
            "(privet.data.load_dataset(name).schema). To read the domains from the data "
            "instead, which is not private, set public_domain='infer'."
        )

    def _check_raw(self, X: Any, y: Any) -> tuple[Any, Any]:
        """Basic checks before domains are inferred from raw data."""
        if y is None:
            raise SchemaError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                "pass the class labels."
            )
        try:
            if not isinstance(X, pd.DataFrame):
                X = check_array(X, dtype=None, ensure_min_samples=1)
            y_arr = check_array(y, ensure_2d=False, dtype=None, ensure_min_samples=1)
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"{exc}") from None
        if y_arr.ndim != 1:
            y_arr = y_arr.ravel()
        if len(pd.unique(y_arr)) < 2:
            raise SchemaError(
                f"{type(self).__name__} needs at least 2 classes in an inferred domain, got "
                f"only one class {pd.unique(y_arr).tolist()}; pass a schema whose target lists "
                "every public class."
            )
        return X, y_arr

    def _encode_X(self, schema: Schema, X: Any) -> np.ndarray:
        if isinstance(X, pd.DataFrame):
            if not all(isinstance(c, str) for c in X.columns):
                X = X.rename(columns=str)
            cols = [c for c in X.columns if c != schema.target_name]
            return schema.encode(X[cols] if len(cols) != X.shape[1] else X)
        if isinstance(X, str | bytes) or np.isscalar(X):
            raise SchemaError(
                f"X must be a table of {schema.n_features} feature columns (a DataFrame or a "
                f"2-D array), got {type(X).__name__}; pass one row per record."
            )
        arr = check_table(X, schema)
        frame = pd.DataFrame(arr, columns=list(schema.feature_names))
        frame = frame.infer_objects()
        return schema.encode(frame)

    def _encode_y(self, schema: Schema, y: Any) -> np.ndarray:
        if y is None:
            raise SchemaError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                "pass the class labels."
            )
        if isinstance(y, str | bytes) or np.isscalar(y):
            raise SchemaError(
                f"y must hold one class label per row, got the single value {y!r}; pass an "
                "array or Series of labels."
            )
        if isinstance(y, np.ndarray) and y.dtype.kind == "f":
            y = np.asarray([_plain(v) for v in y], dtype=object)
        y_arr = y if isinstance(y, pd.Series) else np.asarray(y)
        if getattr(y_arr, "ndim", 1) != 1:
            y_arr = np.asarray(y_arr).ravel() if np.asarray(y_arr).shape[-1] == 1 else y_arr
            if np.asarray(y_arr).ndim != 1:
                raise SchemaError(f"y must be 1-D (n_samples,), got shape {np.asarray(y).shape}.")
        return schema.encode_target(y_arr)

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Validate and encode the training data (reads private values)."""
        schema = self.schema_
        codes = self._encode_X(schema, X)
        y_codes = self._encode_y(schema, y)
        if codes.shape[0] != y_codes.shape[0]:
            raise SchemaError(
                f"X has {codes.shape[0]} rows but y has {y_codes.shape[0]}; pass one label per row."
            )
        if codes.shape[0] == 0:
            raise SchemaError("Cannot fit on 0 samples; pass a non-empty training set.")
        self._check_table(schema, X, y)
        self.n_features_in_ = schema.n_features
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(schema.feature_names, dtype=object)
        return codes, y_codes

    def _check_table(self, schema: Schema, X: Any, y: Any) -> None:
        """Refuse rows already charged to another dataset of the given ledger's file
        (:meth:`Ledger.check_table`); a ledger made for ``ledger=None`` has nothing to
        compare with."""
        led = getattr(self, "ledger_", None)
        if getattr(self, "ledger", None) is None or led is None:
            return
        if isinstance(X, pd.DataFrame):
            X = X.rename(columns=str)
            names = list(schema.feature_names)
            if set(names) <= set(X.columns):
                X = X[names]
        led.check_table(X, y)

    # -- ledger ----------------------------------------------------------------
    def _scope(self, epsilon: float) -> Scope:
        """The scope this fit charges: the given ledger's root, a given scope, or a new ledger.

        A new ledger gets the budget ``epsilon`` and, if the plan has one, the
        plan's delta (the MPC discrete samplers' ~1e-12 per step).
        """
        led = self.ledger
        if led is None:
            budget = Guarantee(epsilon, self._planned_delta())
            self.ledger_ = Ledger(budget=budget, dataset="training data")
            return self.ledger_.root
        if isinstance(led, Scope | Ledger):
            scope = led if isinstance(led, Scope) else led.root
            self.ledger_ = scope.ledger
            if self.schema is not None:
                # rows of one dataset cannot be charged to another's budget (a schema
                # inferred from the data is not public and changes between fits: skipped)
                scope.check_schema(self.schema)
            return scope
        raise InvalidParameterError(
            f"ledger must be a privet Ledger, a Scope of one, or None; got {type(led).__name__}."
        )

    def _planned_delta(self) -> float:
        """The delta that the privacy plan proves (0 for pure plans or without a plan)."""
        plan_of = getattr(self, "privacy_plan", None)
        if plan_of is None:
            return 0.0
        cost = Ledger(budget=Guarantee.unbounded()).plan_cost(
            plan_of(getattr(self, "schema_", None))
        )
        return float(cost.delta) if cost.is_finite else 0.0

    # -- prediction --------------------------------------------------------------
    def _codes_for_predict(self, X: Any) -> np.ndarray:
        require_fitted(self, "tree_")
        codes = self._encode_X(self.schema_, X)
        return codes

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from the released leaf scores (post-processing only)."""
        codes = self._codes_for_predict(X)
        values = self.tree_.leaf_values(codes)
        values = np.clip(values, 0.0, None)
        total = values.sum(axis=1, keepdims=True)
        uniform = np.full_like(values, 1.0 / values.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = np.where(total > 0, values / np.where(total > 0, total, 1.0), uniform)
        return proba

    def predict(self, X: Any) -> np.ndarray:
        codes = self._codes_for_predict(X)
        return self.classes_[np.argmax(self.tree_.leaf_values(codes), axis=1)]

    def export_text(self, *, max_lines: int = 60) -> str:
        check_is_fitted(self, "tree_")
        s = self.schema_
        cats = [a.labels for a in s.attributes]
        return self.tree_.to_text(s.feature_names, cats, s.classes, max_lines=max_lines)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = True
        return tags

    #: True where the protocol backends give the parties each owner's exact row count.
    _protocol_discloses_row_counts = False

    def _reserve(self, plan: PrivacyPlan, scope: Scope) -> Any:
        """Reserve ``plan`` in ``scope`` for this fit (a context manager).

        A fit through a protocol (``backend`` other than ``"reference"``) has parties
        that open values before this process charges them; its reservation asks to
        be charged in full if this process dies with it open (issue 11, item 2). A
        protocol that discloses the owners' row counts warns on an add/remove ledger.
        """
        backend = getattr(self, "backend", "reference")
        if (
            self._protocol_discloses_row_counts
            and backend != "reference"
            and self.ledger_.relation is NeighbouringRelation.ADD_REMOVE
        ):
            warnings.warn(
                f"{type(self).__name__}(backend={backend!r}) tells the parties each data "
                "owner's number of rows, and the secure type's bit length and the traffic in "
                "mpc_stats_ follow it; under add/remove neighbours that count is private and "
                "this is not covered by the ledger. Use a ledger with relation='replace_one' "
                "(the number of rows is then public by definition) or backend='reference'.",
                PrivacyWarning,
                stacklevel=4,
            )
        return self.ledger_.reserve(
            plan,
            scope=scope,
            caller=type(self).__name__,
            on_abandon="release" if backend == "reference" else "charge",
        )

    # -- fit -------------------------------------------------------------------
    def _fit_reserved(self, X: Any, y: Any) -> Self:
        """``fit`` after the parameter checks, in the order of the module docstring.

        Resolves the schema, builds the plan, picks the scope (:meth:`_fit_scope`)
        and reserves the plan there; only then reads the data and trains
        (:meth:`_train`) inside the reservation. Sets ``classes_``,
        ``privacy_spent_`` (what the reservation used) and ``privacy_claim_``.
        """
        self.schema_ = self._resolve_schema(X, y)
        plan = self.privacy_plan(self.schema_)
        check_plan(plan, type(self).__name__)  # a release no sampler draws: refused now
        scope = self._fit_scope(plan)
        with calibrated_epsilon(self, scope.ledger, self.schema_) as plan:
            with self._reserve(plan, scope) as res:
                codes, y_codes = self._prepare(X, y)
                self._train(scope, codes, y_codes)
        self._fitted_common(self.schema_)
        self.privacy_spent_ = res.used()
        self.privacy_plan_ = plan
        self.privacy_claim_ = plan.claim
        return self

    def _fit_scope(self, plan: PrivacyPlan) -> Scope:
        """The scope that ``fit`` charges: by default :meth:`_scope` with budget ``epsilon``."""
        return self._scope(float(self.epsilon))

    def _train(self, scope: Scope, codes: np.ndarray, y_codes: np.ndarray) -> None:
        """Train on the encoded data, charging ``scope``, inside the fit's reservation."""
        raise NotImplementedError

    def _fitted_common(self, schema: Schema) -> None:
        self.classes_ = np.asarray(schema.classes, dtype=object)
        if all(isinstance(c, int | np.integer) and not isinstance(c, bool) for c in schema.classes):
            self.classes_ = np.asarray(schema.classes)


def check_table(X: Any, schema: Schema, *, numeric: bool = False, owner: str = "") -> np.ndarray:
    """``X`` as a 2-D array with the schema's number of columns, or ``SchemaError``.

    ``numeric=True`` also requires finite numbers (a float array); ``owner``
    prefixes the message of a malformed array. Text (str or bytes) is never parsed
    into numbers: a numeric table of strings is refused.
    """
    if numeric:
        kinds = _dtype_kinds(X)
        if kinds & set("SUc"):
            what = "complex numbers" if "c" in kinds else "text (str or bytes)"
            raise SchemaError(
                f"{owner + ': ' if owner else ''}X holds {what} where the schema's features are "
                "numbers; convert the columns to real numbers explicitly (e.g. "
                "pandas.to_numeric), privet does not parse text into numbers."
            )
    try:
        arr = check_array(
            X,
            dtype=float if numeric else None,
            ensure_all_finite=numeric,
            ensure_min_samples=1,
        )
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{owner}: {exc}" if owner else f"{exc}") from None
    if arr.shape[1] != schema.n_features:
        raise SchemaError(
            f"X has {arr.shape[1]} columns but the schema has {schema.n_features} "
            f"features {list(schema.feature_names)}; pass the columns in schema order."
        )
    return arr


def _dtype_kinds(X: Any) -> set[str]:
    """The numpy dtype kinds of a table's values ("S"/"U" for text held as objects);
    empty when it is not array-like (check_array says why)."""
    if isinstance(X, pd.DataFrame):
        columns = [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    else:
        try:
            columns = [X if isinstance(X, np.ndarray) else np.asarray(X)]
        except (TypeError, ValueError):
            return set()
    kinds = set()
    for col in columns:
        if col.dtype.kind == "O":  # Python objects: look at what they are
            kinds |= {
                "S" if isinstance(v, bytes) else "U"
                for v in col.ravel()
                if isinstance(v, str | bytes)
            }
        else:
            kinds.add(col.dtype.kind)
    return kinds


def require_fitted(estimator: Any, attribute: str) -> None:
    """Raise privet's ``NotFittedError`` unless ``estimator`` has the fitted ``attribute``."""
    try:
        check_is_fitted(estimator, attribute)
    except Exception:
        raise NotFittedError(
            f"This {type(estimator).__name__} is not fitted yet; call fit(X, y) first."
        ) from None


def refuse_non_private(estimator: Any, *, what: str, fix: str) -> None:
    """Refuse a fit with a non-private step on a finite budget, before anything happens.

    Parameters
    ----------
    estimator : the learner (its ``ledger`` and ``epsilon`` parameters).
    what : str
        Which step has no proven guarantee and why (a sentence).
    fix : str
        What the user can do instead (a sentence).

    Raises
    ------
    BudgetExceededError
        If the ledger that ``fit`` would charge has a finite budget. Nothing
        is charged.
    """
    led = getattr(estimator.ledger, "ledger", estimator.ledger)
    budget = led.budget if led is not None else Guarantee(float(estimator.epsilon))
    if not budget.is_finite:
        return
    where = (
        f"the finite budget {budget} of dataset {led.dataset!r}"
        if led is not None
        else f"the finite budget {budget} of the ledger made for ledger=None"
    )
    raise BudgetExceededError(
        f"{type(estimator).__name__}: {what} It is a release with no DP guarantee that privet can prove "
        f"(epsilon = infinity) and cannot be charged to {where}; nothing was charged. {fix}"
    )


@contextlib.contextmanager
def charged_in_full_on_failure(estimator: Any, scope: Scope, schema: Schema) -> Iterator[None]:
    """Around an MPC run and its replay: if anything stops it after launch, charge the plan.

    The parties may already have seen opened DP values, and which ones is not
    known, so the estimator's whole plan is spent (conservative) before the
    error goes on. This covers every way out, including ``KeyboardInterrupt``
    (Ctrl-C), ``SystemExit`` and a failure part-way through the replay of the
    run's openings; charges the replay already made are kept, so a failure
    in the replay may charge more than the run spent, never less.
    """
    try:
        yield
    except BaseException as exc:
        cost = scope.ledger.plan_cost(estimator.privacy_plan(schema))
        scope.charge(
            cost,
            mechanism="aborted MPC run (charged in full)",
            caller=type(estimator).__name__,
            step="protocol stopped after launch; opened values unknown",
        )
        _say_charged(exc, cost)
        raise


def _say_charged(exc: BaseException, cost: Guarantee) -> None:
    """Add to the error the user sees that the run was charged its whole plan."""
    note = (
        f"The fit's whole privacy plan ({cost}) was charged: the parties may have opened "
        "values before the run stopped, and which ones is not known (see the ledger's "
        "history, 'aborted MPC run'). Retrying charges again."
    )
    if isinstance(exc, PrivetError) and exc.args and isinstance(exc.args[0], str):
        exc.args = (f"{exc.args[0]}\n{note}", *exc.args[1:])  # str(exc): what the CLI prints
    else:
        exc.add_note(note)  # Ctrl-C, SystemExit: shown with the traceback


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Finish the block before a Ctrl-C takes effect (main thread only).

    Used around the replay of an MPC run's openings into the ledger: the values
    are already open, so stopping half-way would leave them part-charged. A
    SIGINT received inside the block is recorded and raised as
    ``KeyboardInterrupt`` when the block ends; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def plan_depth(max_depth: int, schema: Schema | None) -> int:
    """Split levels actually possible: ID3 uses each attribute at most once on a path."""
    if schema is None:
        return max_depth
    return min(max_depth, schema.n_features)


def fitted_plan(model: Any) -> PrivacyPlan | None:
    """The privacy plan a fitted ``model`` reserved (``privacy_plan_``, kept by ``fit``
    as it reserved it: at the calibrated epsilon, with the noise the fit drew at), or
    None for a model that reserved none.

    Read from the fit, never rebuilt from the parameters: ``set_params`` after ``fit``
    changes what ``privacy_plan`` would return, not what the fit was."""
    return getattr(model, "privacy_plan_", None)


def proven_guarantee(model: Any) -> Guarantee | None:
    """What the ledger proves for a fitted ``model`` as a mechanism, or None if it has no
    ledger (a non-private model).

    ``privacy_spent_`` is what this one fit charged. A learner whose later steps depend on
    earlier noisy outputs charges less on some runs (secure-sum ID3 stops at the root when
    its noisy counts say so, and never charges the next level), but the learner, as a
    randomised algorithm, is only as private as its plan: what ``fit`` reserved before it
    read the data. This is the larger of the two (:func:`planned_guarantee`).
    """
    if not hasattr(model, "fit"):
        raise InvalidParameterError(
            f"proven_guarantee takes a fitted estimator (a privet learner after fit), got "
            f"{type(model).__name__}."
        )
    if not hasattr(model, "privacy_spent_"):
        require_fitted(model, "classes_")  # unfitted: say so; fitted: a non-private model
    ledger = getattr(model, "ledger_", None)
    plan = None if ledger is None else fitted_plan(model)
    return planned_guarantee(getattr(model, "privacy_spent_", None), ledger, plan)


def planned_guarantee(spent: Guarantee | None, ledger: Any, plan: Any) -> Guarantee | None:
    """The larger of what a fit charged (``spent``) and its ``plan``'s cost on ``ledger``,
    the plan's at the delta of the charges (its smallest epsilon within that delta)."""
    if spent is None or plan is None or ledger is None:
        return spent
    cost = ledger.plan_cost(plan, delta=spent.delta)
    if cost.epsilon > spent.epsilon:
        return Guarantee(cost.epsilon, max(spent.delta, cost.delta))
    return spent


__all__ = [
    "BaseTreeClassifier",
    "PrivacyPlan",
    "PrivacyWarning",
    "PrivetError",
    "check_table",
    "fitted_plan",
    "infer_schema",
    "plan_depth",
    "planned_guarantee",
    "proven_guarantee",
    "require_fitted",
]
_ = Real


@contextlib.contextmanager
def calibrated_epsilon(
    estimator: Any, ledger: Ledger, schema: Schema | None
) -> Iterator[PrivacyPlan]:
    """Within the block, ``estimator.epsilon`` is the largest value, at most the one the
    user gave, whose privacy plan the ledger proves within the user's epsilon; the block
    gets that plan, and ``estimator.calibrated_epsilon_`` keeps the value.

    A learner splits its epsilon over its steps by basic composition along a path. The
    ledger composes its plan on its own relation and accountants: under replace-one, a
    record that leaves one part of a partition and enters another is seen by two
    paths, so a plan can cost more than its epsilon (DPID3 at depth 3 on Car: 1.25);
    scaling every step down, by bisection on epsilon (every plan's cost grows with
    it), makes the fit cost at most what the user asked for. Where the plan already
    fits, nothing changes; nor where it has a non-private step (infinite cost, the
    paper-faithful modes on an unbounded ledger), which no scaling makes finite.
    ``estimator.epsilon`` is restored on exit.

    A learner whose epsilon budgets a part of its plan, not the whole (a forest's
    epsilon is each tree's), defines ``_calibration_plan(schema)``: the plan of that
    part, which is then what must cost at most epsilon. A plan with an infinite cost
    (a non-private step, allowed only on an unbounded budget) is not scaled.
    """
    target = float(estimator.epsilon)
    plan = estimator.privacy_plan(schema)
    # What must cost at most epsilon: the whole plan, or the part the learner's
    # epsilon is the budget of (a forest's epsilon is each tree's).
    measured = getattr(estimator, "_calibration_plan", estimator.privacy_plan)
    cost = ledger.plan_cost(measured(schema)).epsilon
    # An infinite cost (a non-private step, run knowingly on an unbounded budget) is
    # infinite at every epsilon: there is nothing to scale.
    if cost <= target * (1 + 1e-12) or math.isinf(cost):
        estimator.calibrated_epsilon_ = target
        yield plan
        return

    def plan_at(eps: float) -> PrivacyPlan:
        estimator.epsilon = eps
        return measured(schema)

    try:
        lo, hi = 0.0, target
        for _ in range(60):
            mid = (lo + hi) / 2
            if ledger.plan_cost(plan_at(mid)).epsilon <= target * (1 + 1e-12):
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-9 * target:
                break
        if lo <= 0.0:
            # no epsilon fits: a step the ledger proves nothing for (the paper-faithful
            # hidden split costs infinity at any epsilon). Scaling cannot help; the plan
            # goes to the ledger as given, which records what it proves (or refuses it).
            estimator.epsilon = target
            estimator.calibrated_epsilon_ = target
            yield estimator.privacy_plan(schema)
            return
        estimator.epsilon = lo
        plan = estimator.privacy_plan(schema)
        plan.description = (
            f"{plan.description}; every step scaled by {lo / target:.4g} so that the "
            f"ledger ({ledger.relation.label}) proves at most epsilon = {target:g}"
        )
        estimator.calibrated_epsilon_ = lo
        yield plan
    finally:
        estimator.epsilon = target
