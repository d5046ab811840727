"""``PrivateSearchCV``: hyperparameter selection whose whole cost the ledger proves.

The procedure is Papernot & Steinke (2022, "Hyperparameter tuning with Rényi
differential privacy", ICLR, Alg. 1 with Thm. 2), built on Liu & Talwar (2019,
"Private selection from private candidates", STOC):

1. Before any data is read: every candidate of ``param_grid`` gets its privacy
   plan at a common per-run budget ``epsilon_run``; the ledger composes each plan
   and the validation score's release into the RDP curve of one *base run*
   (:func:`privet.ledger.selection.base_run_curve`); the selection's guarantee
   (:class:`privet.ledger.selection.PrivateSelection`) follows from that curve and
   the distribution of the number of runs. ``epsilon_run`` is the largest value
   (bisection) whose selection entry the ledger proves within ``(epsilon, delta)``.
   The entry is reserved on the caller's ledger: an exhausted budget, a grid too
   large for it, or a candidate whose plan cannot be computed is refused here,
   with nothing charged.
2. Each record goes to the validation part with probability
   ``validation_fraction``, by a secret coin (OS entropy, never ``random_state``),
   so training and validation parts are a partition of the records.
3. ``K`` is drawn from the truncated negative binomial ``D_{eta, gamma}`` whose
   mean is ``n_runs``, with secret coins. ``K`` times: draw a candidate uniformly
   (secret coins), fit it with ``epsilon_run`` on the training part, score it on the
   validation part (a count released with Gaussian noise: correct predictions for
   ``scoring="accuracy"``, sensitivity 1; clipped log-likelihood for
   ``"neg_log_loss"``, sensitivity ``log(1/LOG_LOSS_FLOOR)``). Every run charges
   its own in-memory ledger (a partition of training and validation), and each run's
   charges are checked against the base run the selection was priced for.
4. Only the best run is released: its parameters, its fitted model and its noisy
   score. ``K``, the other candidates tried and their scores stay hidden (the
   theorem covers the best run only). The score is released as the noisy sum it is;
   it is divided by a size only when the user gives a public one
   (``public_n_samples``): the row count is private under add/remove, and a score
   divided by it would be a release the entry does not cover (review 3, finding 4).

The caller's ledger records one charge, the :class:`PrivateSelection` entry, whose
docstring has the math. The best model is trained on the training part only (a
refit on all rows would be a further release, not covered by the entry).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from privet.errors import InvalidParameterError, PrivetError, RelationMismatchError
from privet.ledger import Guarantee, Ledger, NeighbouringRelation, PlanNode, PrivacyPlan, Scope
from privet.ledger.renyi import RDP_ORDERS, rdp_to_epsilon
from privet.ledger.selection import (
    PrivateSelection,
    base_run_curve,
    gamma_for_mean,
    sample_runs,
)
from privet.mechanisms import GaussianMechanism

SCORINGS = ("accuracy", "neg_log_loss")
LOG_LOSS_FLOOR = 0.01
"""Probabilities are floored here for ``neg_log_loss``: a row's loss is at most log(100)."""

_RESERVED = ("epsilon", "delta", "ledger")


def _secret_rng() -> np.random.Generator:
    """Coins of the split, of ``K`` and of the candidates: OS entropy, never seeded.

    The selection theorem is a statement about ``K`` and the runs being random and
    unseen; coins an adversary could reproduce from ``random_state`` would void it.
    """
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))


class PrivateSearchCV(ClassifierMixin, BaseEstimator):
    """Choose a privet learner's hyperparameters with a DP selection the ledger charges.

    Parameters
    ----------
    estimator : privet learner
        Any privet estimator with an ``epsilon`` parameter, a ``ledger`` parameter
        and ``privacy_plan()`` (e.g. ``DPGradientBoostingClassifier``,
        ``DPID3Classifier``, ``DPRandomForestClassifier``); its public schema must
        be set. ``delta`` is set too when it has one.
    param_grid : dict or list of dicts
        Candidate settings, as for scikit-learn's ``GridSearchCV``; they may not set
        ``epsilon``, ``delta`` or ``ledger`` (the search sets them).
    epsilon, delta : float
        The guarantee of the whole search (all runs and the selection).
    n_runs : float or None, default=None
        Expected number of runs (the mean of ``K``); ``None`` is the number of
        candidates. More runs try more settings and leave each one less budget.
    eta : float, default=0.0
        Shape of ``K``'s truncated negative binomial distribution: 0 is the
        logarithmic distribution (the cheapest tail term of Papernot & Steinke's
        bound), 1 the geometric one of Liu & Talwar (2019).
    scoring : {"accuracy", "neg_log_loss"}, default="accuracy"
    validation_fraction : float, default=0.2
        Probability that a record is in the validation part.
    public_n_samples : int or None, default=None
        A public number of rows (known without reading the data, e.g. from a
        published total), used only to turn the released noisy score into a mean:
        ``best_score_ = best_score_sum_ / (validation_fraction * public_n_samples)``.
        None: ``best_score_`` is the noisy sum itself. The data's own row count is
        never used: it is private under add/remove neighbours.
    ledger : Ledger, Scope or None
        Where the search is charged; ``None`` makes a ledger with budget
        ``(epsilon, delta)``.
    random_state : int or None
        Passed to the candidates (their public randomness, e.g. tree shapes). The
        search's own coins are secret.

    Attributes
    ----------
    best_params_ : dict
        The released candidate.
    best_estimator_ : estimator
        Its model, fitted on the training part with ``epsilon=epsilon_run_``.
    best_score_sum_ : float
        Its noisy validation score as released by the selection: the number of
        correct validation predictions (``"accuracy"``) or the sum of clipped
        log-likelihoods (``"neg_log_loss"``), plus Gaussian noise.
    best_score_ : float
        ``best_score_sum_ / (validation_fraction * public_n_samples)`` when
        ``public_n_samples`` is given (a mean over the expected validation size);
        else ``best_score_sum_`` (a noisy sum, not a mean). Both are post-processing
        of the released score and of public values: nothing more is charged.
    epsilon_run_ : float
        The per-run budget given to every candidate.
    entry_ : PrivateSelection
        What the ledger was charged.
    privacy_spent_ : Guarantee
        What the ledger proves for the search.
    classes_ : ndarray

    Notes
    -----
    The selection's cost does not grow with the number of candidates but with the
    expected number of runs (through ``log E[K]``) and with one run's cost about
    ``2 + eta`` times (Papernot & Steinke 2022, Thm. 2), so at a given ``epsilon``
    each run gets noticeably less than a single untuned fit would. Tuning pays
    when settings differ a lot between datasets.

    References
    ----------
    Papernot & Steinke, "Hyperparameter tuning with Rényi differential privacy",
    ICLR 2022. Liu & Talwar, "Private selection from private candidates", STOC 2019.
    """

    def __init__(
        self,
        estimator: Any,
        param_grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]],
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        n_runs: float | None = None,
        eta: float = 0.0,
        scoring: str = "accuracy",
        validation_fraction: float = 0.2,
        public_n_samples: int | None = None,
        ledger: Any = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.n_runs = n_runs
        self.eta = eta
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.public_n_samples = public_n_samples
        self.ledger = ledger
        self.random_state = random_state

    # -- checks, before any data ------------------------------------------------------
    def _check(self) -> list[dict[str, Any]]:
        name = type(self).__name__
        if self._relation() is not NeighbouringRelation.ADD_REMOVE:
            # each run's learner calibrates its plan to its own replace-one ledger, which
            # is not the plan priced here (an independent review measured DPID3 runs at
            # up to 1.26x their price): refused until the price is the run's own plan
            raise RelationMismatchError(
                f"{name} prices its runs under add/remove neighbours only; this ledger "
                "uses replace-one. Open the ledger with relation='add_remove' for the "
                "search (or tune on public data). Nothing was charged."
            )
        est = self.estimator
        params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
        if not hasattr(est, "privacy_plan") or "epsilon" not in params or "ledger" not in params:
            raise InvalidParameterError(
                f"{name}: the estimator must be a privet learner (with 'epsilon' and "
                f"'ledger' parameters and privacy_plan()), got {type(est).__name__}."
            )
        if params.get("schema") is None:
            raise InvalidParameterError(
                f"{name}: give the estimator its public schema (schema=...); the plans of "
                "the candidates are computed from it before any data is read."
            )
        for pname, value, ok in (
            ("epsilon", self.epsilon, isinstance(self.epsilon, Real) and 0 < self.epsilon),
            ("delta", self.delta, isinstance(self.delta, Real) and 0 < self.delta < 1),
            ("eta", self.eta, isinstance(self.eta, Real) and 0 <= self.eta <= 10),
            (
                "validation_fraction",
                self.validation_fraction,
                isinstance(self.validation_fraction, Real) and 0 < self.validation_fraction < 1,
            ),
            (
                "n_runs",
                self.n_runs,
                self.n_runs is None or (isinstance(self.n_runs, Real) and self.n_runs > 1),
            ),
            (
                "public_n_samples",
                self.public_n_samples,
                self.public_n_samples is None
                or (isinstance(self.public_n_samples, Integral) and self.public_n_samples >= 1),
            ),
        ):
            if not ok or isinstance(value, bool):
                raise InvalidParameterError(
                    f"The {pname!r} parameter of {name} is out of range, got {value!r}: "
                    "epsilon > 0, 0 < delta < 1, 0 <= eta <= 10, 0 < validation_fraction < 1, "
                    "n_runs > 1 or None, public_n_samples an int >= 1 or None."
                )
        if self.scoring not in SCORINGS:
            raise InvalidParameterError(
                f"The 'scoring' parameter of {name} must be one of {SCORINGS}, got "
                f"{self.scoring!r}."
            )
        led = self.ledger
        if led is not None and not isinstance(led, Ledger | Scope):
            raise InvalidParameterError(
                f"The 'ledger' parameter of {name} must be a privet Ledger or Scope, got "
                f"{type(led).__name__}."
            )
        try:
            candidates = [dict(c) for c in ParameterGrid(self.param_grid)]
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"{name}: param_grid is malformed ({exc}).") from None
        if not candidates:
            raise InvalidParameterError(f"{name}: param_grid has no candidate.")
        for cand in candidates:
            bad = sorted(set(cand) & set(_RESERVED)) + sorted(set(cand) - set(params))
            if bad:
                raise InvalidParameterError(
                    f"{name}: candidate {cand} sets {bad}; a candidate may set the "
                    f"estimator's parameters except {_RESERVED} (the search sets those)."
                )
        return candidates

    def _relation(self) -> NeighbouringRelation:
        led = getattr(self.ledger, "ledger", self.ledger)
        return led.relation if led is not None else NeighbouringRelation.ADD_REMOVE

    def _candidate(self, cand: Mapping[str, Any], eps_run: float, ledger: Any = None) -> Any:
        est = clone(self.estimator)
        extra: dict[str, Any] = {"epsilon": eps_run, "ledger": ledger}
        if "delta" in est.get_params(deep=False):
            extra["delta"] = float(self.delta)
        if "random_state" in est.get_params(deep=False) and self.random_state is not None:
            extra["random_state"] = self.random_state
        return est.set_params(**{**dict(cand), **extra})

    def _score_sensitivity(self) -> float:
        return 1.0 if self.scoring == "accuracy" else math.log(1.0 / LOG_LOSS_FLOOR)

    def _plans(self, candidates: list[dict[str, Any]], eps_run: float) -> list[PrivacyPlan]:
        plans = []
        for cand in candidates:
            try:
                plans.append(self._candidate(cand, eps_run).privacy_plan())
            except PrivetError as exc:
                raise InvalidParameterError(
                    f"{type(self).__name__}: the privacy plan of candidate {cand} at "
                    f"epsilon={eps_run:.4g} cannot be computed ({exc}). Remove it from "
                    "param_grid."
                ) from None
        return plans

    def _score_sigma(self, plans: list[PrivacyPlan], relation: NeighbouringRelation) -> float:
        """Noise of the score: a Gaussian whose RDP curve stays below every candidate's
        training curve (so under add/remove the score adds nothing to a run's cost)."""
        curves = [np.array(p.cost_pair(relation, delta=float(self.delta))[1].rdp) for p in plans]
        floor = np.min(np.vstack(curves), axis=0)  # the cheapest candidate, order by order
        rho = float(np.min(floor / np.array(RDP_ORDERS)))  # largest rho with alpha rho <= floor
        if not rho > 0:
            raise InvalidParameterError(
                f"{type(self).__name__}: a candidate's plan has no Rényi-DP cost (nothing "
                "charged?); the selection needs one."
            )
        # 1e-6 above: the mechanism charges its sensitivity with a float-rounding slack
        return self._score_sensitivity() / math.sqrt(2.0 * rho) * (1.0 + 1e-6)

    def _selection(
        self, candidates: list[dict[str, Any]], eps_run: float, gamma: float
    ) -> tuple[PrivateSelection, float]:
        relation = self._relation()
        plans = self._plans(candidates, eps_run)
        sigma = self._score_sigma(plans, relation)
        score = PlanNode("validation score")
        score.charge(self._score_mechanism(sigma).entry(), mechanism="gaussian")
        curve = base_run_curve(plans, score, relation, float(self.delta))
        entry = PrivateSelection(
            base_rdp=curve, eta=float(self.eta), gamma=gamma, delta=float(self.delta)
        )
        return entry, sigma

    def _score_mechanism(self, sigma: float) -> GaussianMechanism:
        return GaussianMechanism(
            sigma=sigma, sensitivity=self._score_sensitivity(), relation=self._relation()
        )

    def _calibrate(self, candidates: list[dict[str, Any]]) -> tuple[float, PrivateSelection, float]:
        """Largest per-run epsilon whose selection fits ``(epsilon, delta)`` (bisection)."""
        target = float(self.epsilon)
        mean = float(self.n_runs) if self.n_runs is not None else max(2.0, len(candidates))
        gamma = gamma_for_mean(float(self.eta), mean)

        def spent(eps_run: float) -> tuple[float, PrivateSelection, float]:
            entry, sigma = self._selection(candidates, eps_run, gamma)
            return entry.epsilon, entry, sigma

        lo, hi = target * 1e-4, target
        eps_lo, entry_lo, sigma_lo = spent(lo)
        if eps_lo > target:
            raise InvalidParameterError(
                f"{type(self).__name__}: the selection among about {mean:g} runs costs more "
                f"than epsilon={target:g} even with epsilon={lo:.2g} per run (its fixed terms "
                "grow with log n_runs and 1/delta). Give fewer candidates or n_runs, or a "
                "larger epsilon."
            )
        best = (lo, entry_lo, sigma_lo)
        for _ in range(30):
            mid = math.sqrt(lo * hi)
            eps_mid, entry_mid, sigma_mid = spent(mid)
            if eps_mid <= target:
                lo, best = mid, (mid, entry_mid, sigma_mid)
            else:
                hi = mid
            if hi / lo < 1.01:
                break
        eps_run, entry, sigma = best
        even = target / len(candidates)
        if len(candidates) > 1 and eps_run < even:
            raise InvalidParameterError(
                f"{type(self).__name__}: with {len(candidates)} candidates and about "
                f"{mean:g} runs, each run would get epsilon={eps_run:.3g}, less than the "
                f"{even:.3g} of splitting epsilon={target:g} evenly over the candidates: "
                "the grid (or n_runs) is too large for this budget. Give fewer candidates "
                "or a smaller n_runs, or a larger epsilon."
            )
        return eps_run, entry, sigma

    def privacy_plan(self) -> PrivacyPlan:
        """What ``fit`` will charge: one :class:`PrivateSelection` entry (no data read)."""
        candidates = self._check()
        eps_run, entry, _ = self._calibrate(candidates)
        plan = PrivacyPlan(
            caller=type(self).__name__,
            delta=float(self.delta),
            description=(
                f"private selection (Papernot & Steinke 2022) over {len(candidates)} "
                f"candidates, about {entry.expected_runs:.3g} runs at epsilon={eps_run:.4g} "
                "each; one charge"
            ),
        )
        plan.charge(entry, mechanism="private_selection", step="best of K runs")
        return plan

    # -- fit ---------------------------------------------------------------------------
    def _scope_for_fit(self) -> Scope:
        led = self.ledger
        if led is None:
            self.ledger_ = Ledger(budget=Guarantee(float(self.epsilon), float(self.delta)))
            return self.ledger_.root
        if isinstance(led, Scope):
            self.ledger_ = led.ledger
            return led
        self.ledger_ = led
        return led.root

    def _score(self, model: Any, X: Any, y: np.ndarray) -> float:
        if len(y) == 0:
            return 0.0
        if self.scoring == "accuracy":
            return float(np.sum(np.asarray(model.predict(X)) == y))
        proba = np.asarray(model.predict_proba(X))
        col = {c: j for j, c in enumerate(model.classes_)}
        idx = np.array([col.get(v, -1) for v in y])
        p = np.where(idx >= 0, proba[np.arange(len(y)), np.maximum(idx, 0)], 0.0)
        return float(np.sum(np.log(np.maximum(p, LOG_LOSS_FLOOR))))

    def fit(self, X: Any, y: Any) -> PrivateSearchCV:
        """Run the selection; the ledger is charged before any data is read."""
        candidates = self._check()
        eps_run, entry, sigma = self._calibrate(candidates)
        plan = PrivacyPlan(caller=type(self).__name__, delta=float(self.delta))
        plan.charge(entry, mechanism="private_selection", step="best of K runs")
        scope = self._scope_for_fit()
        with self.ledger_.reserve(plan, scope=scope, caller=type(self).__name__) as res:
            Xf = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
            ys = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
            if len(Xf) != len(ys):
                raise InvalidParameterError(
                    f"X has {len(Xf)} rows but y has {len(ys)}; pass one label per row."
                )
            scope.charge(
                entry,
                mechanism="private_selection",
                caller=type(self).__name__,
                step="best of K runs",
            )
            rng = _secret_rng()
            val = rng.random(len(ys)) < float(self.validation_fraction)
            X_tr, y_tr = Xf.iloc[~val], ys.iloc[~val]
            X_va, y_va = Xf.iloc[val], ys.iloc[val].to_numpy()
            k = sample_runs(float(self.eta), entry.gamma, rng)
            score_mech = self._score_mechanism(sigma)
            run_budget = Guarantee(
                rdp_to_epsilon(entry.base_rdp, float(self.delta)) * (1 + 1e-9), float(self.delta)
            )
            best: tuple[float, dict[str, Any], Any] | None = None
            for _ in range(k):
                cand = candidates[int(rng.integers(len(candidates)))]
                run_score, model = self._run(
                    cand, eps_run, score_mech, run_budget, (X_tr, y_tr, X_va, y_va)
                )
                if best is None or run_score > best[0]:
                    best = (run_score, cand, model)
        assert best is not None  # K >= 1
        # the released noisy sum; a mean only over a public size (the row count is private)
        self.best_score_sum_ = best[0]
        self.best_score_ = (
            best[0]
            if self.public_n_samples is None
            else best[0] / (float(self.validation_fraction) * int(self.public_n_samples))
        )
        self.best_params_ = dict(best[1])
        self.best_estimator_ = best[2]
        self.classes_ = best[2].classes_
        self.epsilon_run_ = eps_run
        self.entry_ = entry
        self.privacy_spent_ = res.used()
        return self

    def _run(
        self,
        cand: dict[str, Any],
        eps_run: float,
        score_mech: GaussianMechanism,
        run_budget: Guarantee,
        data: tuple[Any, Any, Any, np.ndarray],
    ) -> tuple[float, Any]:
        """One base run on its own ledger (a partition: training part, validation part).

        The run's ledger has the base run's cost (the RDP curve the selection was priced
        with, converted at ``delta``) as its budget, so a run that charged more than that
        would be refused by the ledger.
        """
        X_tr, y_tr, X_va, y_va = data
        sandbox = Ledger(budget=run_budget, relation=self._relation())
        train_part, val_part = sandbox.root.partition(2)
        model = self._candidate(cand, eps_run, ledger=train_part).fit(X_tr, y_tr)
        raw = self._score(model, X_va, y_va)
        noisy = float(
            score_mech(np.array([raw]), scope=val_part, caller=type(self).__name__, step="score")[0]
        )
        return noisy, model

    # -- the released model ------------------------------------------------------------
    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)


__all__ = ["LOG_LOSS_FLOOR", "SCORINGS", "PrivateSearchCV"]
