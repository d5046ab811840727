"""Worst-case neighbouring datasets for the white-box audit, built from the public schema.

An audit measures what one record can change in the releases, so the record
(the *canary*) must move every release at the sensitivity the learner charged.
These pairs are built from the public schema alone (codes of its attributes and
classes, no private row): an audit on them states no fact about anyone's data.

* :func:`count_pair` — ``D`` holds ``rows`` copies of one record of class ``c0``;
  the canary is the same record with class ``c1``. It adds 1 to one class
  count of every histogram it falls in (a leaf, a node's counts, every
  attribute's table) and, in boosting, its gradient is near the clipping bound
  (it is the only record of its class in a cell its trees push the other way).
* :func:`split_pair` — four blocks of ``per_block`` records on two attributes
  ``a`` and ``b`` such that the canary raises the max-operator score (seed 000,
  Eq. 1) of every attribute but ``b``, the one a split picks most often: the
  exponential mechanism's loss on a split is then as large as a monotone score
  allows, and the canary still adds 1 to its leaf's class count.
* :func:`deep_split_pair` — the same structure at *every* level of a tree of
  depth ``h``: dominant attributes ``d_0, ..., d_{h-1}`` such that the node the
  canary reaches at level ``l`` (records with ``d_0 = ... = d_{l-1} = 0``) has
  ``d_l`` leading every other candidate by ``gap`` and the canary raises the
  score of every candidate but ``d_l``. :func:`split_pair` has it at the root
  only (below it the canary's node holds one class and no score moves).

:func:`worst_case_pair` picks the pair of a learner: the one its package
declares (a function ``worst_case_pair(schema, **params)`` in
``privet.learners.<package>.audit``, returning codes), else one derived from its
privacy plan (:func:`~privet.audits.learners.pairs.near_tie_pair` when it holds a
non-private release such as an exact argmax, :func:`split_pair` when it holds a
selection by the exponential mechanism or noisy max; :func:`count_pair` otherwise).
:func:`deep_split_pair` is the pair on which a deep tree's selections can lose their whole
charge (it shows the ledger's epsilon is reached), but only on rare transcripts, so
tests on it measure less; it is used when asked for (``pairs=["deep_split"]``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from privet.audits.learners.pairs import LearnerPair, frame_from_codes
from privet.errors import InvalidParameterError

__all__ = [
    "count_pair",
    "deep_split_levels",
    "deep_split_pair",
    "pair_from_codes",
    "plan_entries",
    "split_block",
    "split_pair",
    "worst_case_pair",
]


def pair_from_codes(
    schema: Any,
    *,
    kind: str,
    description: str,
    rows: Any,
    labels: Any,
    canary: Any,
    canary_label: int,
    probes: Any | None = None,
    fit_params0: Mapping[str, Any] | None = None,
    fit_params1: Mapping[str, Any] | None = None,
    replaced: tuple[Any, int] | None = None,
) -> LearnerPair:
    """A :class:`LearnerPair` ``D`` = ``rows`` (codes) with ``labels``, ``D' = D + canary``.

    The canary is the *last* row of ``D'`` (the release recorder forces the
    last row's Poisson coins). With ``replaced=(codes, label)`` the pair is
    replace-one neighbours: ``D`` ends with that record instead of having one
    row fewer. ``probes`` defaults to the distinct records.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=np.int64))
    canary = np.asarray(canary, dtype=np.int64).ravel()
    if rows.shape[1] != schema.n_features or canary.size != schema.n_features:
        raise InvalidParameterError(
            f"A pair for this schema needs {schema.n_features} attribute codes per record; got "
            f"{rows.shape[1]} (rows) and {canary.size} (canary)."
        )
    labels0 = [int(v) for v in np.asarray(labels).ravel()]
    if replaced is not None:
        old = np.asarray(replaced[0], dtype=np.int64).ravel()
        X0, y0 = frame_from_codes(schema, np.vstack([rows, old]), [*labels0, int(replaced[1])])
    else:
        X0, y0 = frame_from_codes(schema, rows, labels0)
    X1, y1 = frame_from_codes(
        schema, np.vstack([rows, canary]), [*np.asarray(labels).ravel(), int(canary_label)]
    )
    if probes is None:
        probes = np.unique(np.vstack([rows, canary]), axis=0)
    P, _ = frame_from_codes(schema, probes)
    return LearnerPair(
        kind=kind,
        description=description,
        X0=X0,
        y0=y0,  # type: ignore[arg-type]
        X1=X1,
        y1=y1,  # type: ignore[arg-type]
        probes=P,
        schema=schema,
        fit_params0=dict(fit_params0 or {}),
        fit_params1=dict(fit_params1 or {}),
    )


def _classes(schema: Any) -> tuple[int, int]:
    if schema.n_classes < 2:
        raise InvalidParameterError(
            "A neighbouring pair needs a target with at least two classes; the schema's "
            f"target {schema.target_name!r} has {schema.n_classes}."
        )
    return 0, 1


def count_pair(schema: Any, *, rows: int = 200) -> LearnerPair:
    """``rows`` copies of the all-first-codes record in class 0; the canary in class 1."""
    c0, c1 = _classes(schema)
    if int(rows) < 1:
        raise InvalidParameterError(f"count_pair needs rows >= 1; got {rows!r}.")
    base = np.zeros((int(rows), schema.n_features), dtype=np.int64)
    cls = schema.classes
    return pair_from_codes(
        schema,
        kind="count",
        description=(
            f"{rows} identical records of class {cls[c0]!r}; the canary is the same record of "
            f"class {cls[c1]!r}: +1 to one class count of every histogram it is in"
        ),
        rows=base,
        labels=[c0] * int(rows),
        canary=np.zeros(schema.n_features, dtype=np.int64),
        canary_label=c1,
    )


def split_pair(
    schema: Any, *, per_block: int = 5, attributes: tuple[int, int] = (0, 1)
) -> LearnerPair:
    """Two attributes ``a, b``: the canary raises every max-operator score but ``b``'s.

    ``D``: ``per_block`` records each of ``(a=0, b=0, c0)``, ``(a=0, b=1, c1)``,
    ``(a=1, b=0, c0)`` and ``(a=1, b=1, c1)``, every other attribute at code 0.
    ``b`` predicts the class, so its score is ``4 per_block`` against ``2 per_block``
    for the others, and a split picks it most often. The canary ``(a=0, b=0, c1)``
    breaks the class tie of ``a=0`` and of the constant attributes (their scores
    rise by 1) but not of ``b=0`` (class ``c0`` leads by ``2 per_block``).
    """
    c0, c1 = _classes(schema)
    a, b = attributes
    if schema.n_features < 2:
        return count_pair(schema)
    sizes = schema.domain_sizes
    if a == b or min(sizes[a], sizes[b]) < 2:
        raise InvalidParameterError(
            f"split_pair needs two different attributes with at least two values; got "
            f"{attributes} with {sizes[a]} and {sizes[b]} values."
        )
    k = int(per_block)
    if k < 1:
        raise InvalidParameterError(f"split_pair needs per_block >= 1; got {per_block!r}.")
    rows, labels = [], []
    for (va, vb), c in (((0, 0), c0), ((0, 1), c1), ((1, 0), c0), ((1, 1), c1)):
        r = np.zeros(schema.n_features, dtype=np.int64)
        r[a], r[b] = va, vb
        rows += [r] * k
        labels += [c] * k
    canary = np.zeros(schema.n_features, dtype=np.int64)
    fa, fb = schema.feature_names[a], schema.feature_names[b]
    cls = schema.classes
    return pair_from_codes(
        schema,
        kind="split",
        description=(
            f"{4 * k} records on {fa!r} and {fb!r} ({fb!r} predicts the class); the canary "
            f"({fa}=first, {fb}=first, class {cls[c1]!r}) raises every split score but "
            f"{fb!r}'s and adds 1 to its leaf's count"
        ),
        rows=np.array(rows),
        labels=labels,
        canary=canary,
        canary_label=c1,
    )


def deep_split_levels(schema: Any, depth: int) -> int:
    """Levels :func:`deep_split_pair` can build for a tree of ``depth`` split levels.

    Each level needs its own dominant attribute with at least three values
    (one value for the canary's branch, two pure ones for the other records)
    and the last needs one more candidate beside it; a level of a single
    candidate is a deterministic selection that no pair can make lose privacy.
    """
    wide = sum(1 for s in schema.domain_sizes if s >= 3)
    return max(0, min(int(depth), wide, schema.n_features - 1))


def deep_split_pair(schema: Any, depth: int, *, gap: int = 40) -> LearnerPair:
    """A split pair that is worst case at every level of the canary's path.

    The canary is the all-first-codes record of class ``c1``. The dominant
    attributes ``d_0, ..., d_{L-1}`` (``L = depth``) are the first ``L``
    attributes with at least three values; the node the canary reaches at
    level ``l`` is ``N_l`` (``d_0 = ... = d_{l-1} = 0``), whose candidates are
    every attribute but ``d_0, ..., d_{l-1}``. In ``N_l``, for the max-operator
    score (seed 000, Eq. 1):

    * ``d_l`` leads every other candidate by at least ``gap``, and the canary
      does not change its score (class ``c0`` strictly leads in ``d_l = 0``);
    * the canary raises every other candidate's score by 1 (``c1`` ties or
      leads in its value-0 cell).

    So when the selections follow the dominant attributes (all but a share of
    about ``k e^(-eps' gap)`` of the trainings, ``k`` candidates), every
    selection on the canary's path can lose ``eps'`` (the candidates holding
    the mass do not move, the others rise by 1: ``log Z'/Z`` near 0), and the
    canary adds 1 to its leaf's count of ``c1``.

    Built bottom up from the leaf ``N_L`` (one record of ``c0``, all codes 0):
    level ``l`` adds to ``N_{l+1}`` records with ``d_0 .. d_{l-1} = 0`` and

    * ``x_l`` of class ``c1`` at ``d_l = 1``, every later candidate at 0 (they
      let ``c1`` tie ``c0`` in every other candidate's value-0 cell);
    * ``y_l`` of class ``c0`` at ``d_l = 2``, later candidates at 0 (they mix
      the classes in those cells: each other candidate trails ``d_l`` by
      ``gap`` or more);
    * ``w_l`` of class ``c0`` at ``d_l = 2``, later candidates at 1 (ballast:
      ``c0`` strictly leads in ``N_l``, the parent's ``d_{l-1} = 0`` cell).

    ``d_l``'s values 1 and 2 are pure, so its score in ``N_l`` falls short of
    ``|N_l|`` only by ``N_{l+1}``'s count of ``c1``. Public codes only.

    Parameters
    ----------
    schema : Schema
    depth : int
        Levels to build (at most :func:`deep_split_levels`).
    gap : int, default=40
        The least lead of each level's dominant attribute (score units). At
        ``eps' = 0.25`` per selection and 6 candidates, 40 leaves the others
        ``5 e^-10`` of the mass.
    """
    c0, c1 = _classes(schema)
    depth, gap = int(depth), int(gap)
    if gap < 1:
        raise InvalidParameterError(f"deep_split_pair needs gap >= 1; got {gap!r}.")
    if depth < 1:
        raise InvalidParameterError(f"deep_split_pair needs depth >= 1; got {depth!r}.")
    levels = deep_split_levels(schema, depth)
    if levels < depth:
        raise InvalidParameterError(
            f"deep_split_pair cannot build {depth} levels on this schema: each level needs an "
            f"attribute with at least three values and the last level one more attribute; "
            f"{schema.n_features} attributes with domain sizes {tuple(schema.domain_sizes)} "
            f"allow {levels}. Use a smaller depth (or split_pair)."
        )
    n = schema.n_features
    dominant = [j for j in range(n) if schema.domain_sizes[j] >= 3][:depth]
    rows: list[np.ndarray] = [np.zeros(n, dtype=np.int64)]  # N_L: one record of c0
    labels: list[int] = [c0]
    sizes = []
    for level in range(depth - 1, -1, -1):
        d = dominant[level]
        others = [j for j in range(n) if j not in dominant[: level + 1]]
        R, y = np.array(rows), np.array(labels)
        P, Q = int(np.sum(y == c0)), int(np.sum(y == c1))
        zero0 = {a: int(np.sum((R[:, a] == 0) & (y == c0))) for a in others}
        zero1 = {a: int(np.sum((R[:, a] == 0) & (y == c1))) for a in others}
        n_y = max(0, Q + gap - min(zero0.values()))
        n_x = max(0, max(zero0[a] + n_y - zero1[a] for a in others))
        n_w = max(0, Q + n_x - P - n_y + 1) if level > 0 else 0
        for count, value, rest, label in ((n_x, 1, 0, c1), (n_y, 2, 0, c0), (n_w, 2, 1, c0)):
            r = np.zeros(n, dtype=np.int64)
            r[d] = value
            r[others] = rest
            rows += [r] * count
            labels += [label] * count
        sizes.append((n_x, n_y, n_w))
    names = [schema.feature_names[j] for j in dominant]
    cls = schema.classes
    return pair_from_codes(
        schema,
        kind="deep_split",
        description=(
            f"{len(rows)} records; at each of {depth} levels the canary's node has "
            f"{', '.join(map(repr, names))} in turn leading by >= {gap}, and the canary "
            f"(first codes, class {cls[c1]!r}) raises every other split score and adds 1 to "
            "its leaf's count"
        ),
        rows=np.array(rows),
        labels=labels,
        canary=np.zeros(n, dtype=np.int64),
        canary_label=c1,
    )


def plan_entries(plan: Any) -> list[Any]:
    """Every entry a privacy plan will charge (charges of every node, depth first)."""
    out = [c.entry for c in getattr(plan, "charges", ())]
    for child, *_ in getattr(plan, "groups", ()):
        out += plan_entries(child)
    for child, *_ in getattr(plan, "subsamples", ()):
        out += plan_entries(child)
    return out


def _declared(estimator: Any) -> Any:
    """``worst_case_pair`` of the learner's package (``<package>.audit``), if it declares one."""
    module = type(estimator).__module__
    package = module.rsplit(".", 1)[0] if "." in module else module
    try:
        mod = importlib.import_module(f"{package}.audit")
    except ImportError:
        return None
    return getattr(mod, "worst_case_pair", None)


def worst_case_pair(estimator: Any, schema: Any) -> LearnerPair:
    """The learner's own pair (its ``audit_pair(schema)`` method, or ``worst_case_pair`` in
    its package's ``audit`` module), else the one its privacy plan suggests."""
    method = getattr(estimator, "audit_pair", None)
    if callable(method):
        spec = method(schema)
        return spec if isinstance(spec, LearnerPair) else pair_from_codes(schema, **spec)
    declared = _declared(estimator)
    if declared is not None:
        params = {k: v for k, v in estimator.get_params(deep=False).items() if k != "schema"}
        spec = declared(schema, **params)
        if isinstance(spec, LearnerPair):
            return spec
        return pair_from_codes(schema, **spec)
    try:
        entries = plan_entries(estimator.privacy_plan(schema))
    except Exception:  # a learner without a plan: the generic pair
        entries = []
    names = {type(e).__name__ for e in entries}
    if "NonPrivate" in names and schema.n_features >= 2:
        # an exact release (an argmax on exact scores): a record that flips an exact tie
        from privet.audits.learners.pairs import near_tie_pair

        return near_tie_pair(schema)
    if names & {"Exponential", "NoisyMax"} and schema.n_features >= 2:
        # Not deep_split_pair, though it allows the whole proven epsilon at every depth: the
        # transcripts that reach it are rare, so tests on it measure less (DPID3 at depth 3
        # on Car, 2,000 trainings a side: >= 0 and an estimate of 0.21 on it, >= 0.18 and
        # 0.76 on split_pair). Ask for it with pairs=["deep_split"].
        return split_pair(schema, per_block=split_block(entries, schema, estimator))
    return count_pair(schema)


#: Share of the trainings in which :func:`split_pair`'s selection should leave the
#: dominant attribute (see :func:`split_block`).
SPLIT_TARGET_SHARE = 0.1


def split_block(entries: list[Any], schema: Any, estimator: Any = None) -> int:
    """``per_block`` of :func:`split_pair` for the selections a plan charges.

    On :func:`split_pair` the canary loses the selection's whole charge only when
    the selection leaves the dominant attribute ``b`` (every other candidate's
    score rises by 1, ``b``'s does not); the loss on that outcome is
    ``eps' - log(1 + p (e^(eps') - 1))`` with ``p`` the share of trainings that
    leave ``b``. A test needs both: a large loss (``p`` small) on outcomes frequent
    enough to count (``p`` not too small). The exponential mechanism leaves ``b``
    with probability about ``m exp(-r g)``: ``m`` other candidates, ``g = 2
    per_block`` the score gap, ``r = eps' / Delta`` for the monotone form and
    ``eps' / (2 Delta)`` for the paper's (report-noisy-max with Laplace or Gumbel
    noise at the same scale behaves alike). ``per_block`` is chosen so that
    ``m exp(-r g)`` is about :data:`SPLIT_TARGET_SHARE`: with 20,000 trainings a
    side, the Clopper-Pearson bound on the outcome "leaves ``b`` and the leaf count
    is high" is largest near that share (0.80 of a proven 1 for DPID3 at depth 1,
    against 0.75 at the former fixed ``per_block = 5`` and 0.47 for the leaf alone).
    A forest deals the records to its trees, so its blocks are multiplied by its
    number of trees. No selection entry: the former default, 5.
    """
    rates = []
    for e in entries:
        if type(e).__name__ not in ("Exponential", "NoisyMax"):
            continue
        eps, sens = getattr(e, "epsilon", None), getattr(e, "sensitivity", None)
        if not eps or not sens or not np.isfinite(eps):
            continue
        rates.append(float(eps) / float(sens) / (1.0 if getattr(e, "monotone", False) else 2.0))
    if not rates:
        return 5
    m = max(1, schema.n_features - 1)
    gap = np.log(m / SPLIT_TARGET_SHARE) / min(rates)
    block = max(1, round(gap / 2))
    trees = getattr(estimator, "n_estimators", None) if estimator is not None else None
    if isinstance(trees, int) and trees > 1:
        block *= trees
    return int(block)
