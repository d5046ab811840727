"""Bad input to every learner: a privet error that says what to fix, or a correct fit.

Issue 11 ("Bad input"): ``fit(X, y="unacc")`` gave IndexError in every learner. For each
learner that ``privet.learners`` exports, hypothesis draws malformed training data and
parameters; every call must either succeed or raise a :class:`~privet.errors.PrivetError`
with a message, and a call that raised must have charged nothing.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privet.learners as learners
from _alarm import time_limit
from privet.data import Categorical, Numeric, Schema
from privet.errors import PrivetError
from privet.ledger import Guarantee, Ledger, NeighbouringRelation

SCHEMA = Schema(
    [Categorical("a", ["x", "y"]), Numeric.equal_width("b", -1.0, 1.0, 4)],
    Categorical("label", ["no", "yes"]),
)
CLASSES = [c for c in learners.__all__ if c.endswith("Classifier")]
LDP = {"LDPBoostingClassifier"}
NUMERIC = Schema(
    [Numeric.equal_width("a", -1.0, 1.0, 4), Numeric.equal_width("b", -1.0, 1.0, 4)],
    Categorical("label", ["no", "yes"]),
)


def _good(n: int = 12, numeric: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, n) if numeric else rng.choice(["x", "y"], n)
    return pd.DataFrame({"a": a, "b": rng.uniform(-1, 1, n)}), rng.choice(["no", "yes"], n)


#: Issue 37: byte strings (numpy "S" and bytes objects), ragged rows, complex numbers,
#: numbers as text, a dict of columns.
ISSUE_37_X = [
    np.array([[b"x", b"0.5"]] * 12),
    pd.DataFrame({"a": np.array([b"x"] * 12), "b": [0.5] * 12}),
    [[0.5, 0.5]] * 11 + [[0.5]],
    pd.DataFrame({"a": ["x"] * 12, "b": [0.5 + 1j] * 12}),
    pd.DataFrame({"a": [0.5] * 12, "b": ["0.5"] * 12}),
    {"a": ["x"] * 12, "b": [0.5] * 12},
]

bad_y = st.one_of(
    st.just("unacc"),
    st.just(None),
    st.just(3),
    st.just(np.array([["no", "yes"]] * 12)),
    st.just(["no"] * 5),
    st.just(["maybe"] * 12),
    st.just([float("nan")] * 12),
    st.just(np.array(["no", "yes"] * 6, dtype="S")),  # issue 37: byte-string labels
    st.lists(st.sampled_from(["no", "yes", 1, None]), min_size=0, max_size=14),
)
bad_X = st.one_of(
    st.just("table"),
    st.just(None),
    st.just(np.zeros((12, 5))),
    st.just(np.zeros((0, 2))),
    st.just(pd.DataFrame({"a": ["z"] * 12, "b": [0.0] * 12})),
    st.just(pd.DataFrame({"a": ["x"] * 12, "b": [5.0] * 12})),
    st.just(pd.DataFrame({"a": ["x"] * 12, "b": ["text"] * 12})),
    st.just(pd.DataFrame({"a": ["x"] * 12, "b": [np.inf] * 12})),
    *(st.just(x) for x in ISSUE_37_X),
)


def _ledger(name: str) -> Ledger:
    relation = NeighbouringRelation.REPLACE_ONE if name in LDP else NeighbouringRelation.ADD_REMOVE
    return Ledger(budget=Guarantee(50.0, 1e-3), relation=relation)


def _model(name: str, led: Ledger):  # type: ignore[no-untyped-def]
    cls = getattr(learners, name)
    kwargs = {"schema": NUMERIC if name in LDP else SCHEMA, "ledger": led}
    if "epsilon" in cls().get_params():
        kwargs["epsilon"] = 1.0
    if name == "ObliviousID3Classifier":
        kwargs["split"] = "exponential"
    if "ledger" not in cls().get_params():
        del kwargs["ledger"]  # non-private, no ledger
    elif name == "MPCID3Classifier":
        kwargs["ledger"] = Ledger(budget=Guarantee.unbounded())
    if name == "MPCID3Classifier":
        kwargs["backend"] = "local"
    return cls(**kwargs)


def _call(name: str, X, y) -> None:  # type: ignore[no-untyped-def]
    led = _ledger(name)
    model = _model(name, led)
    used = getattr(model, "ledger", None) or led
    before = used.spent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y)
        except PrivetError as exc:
            assert str(exc), f"{name}: an error without a message"
            assert used.spent() == before, f"{name} charged on a refused call: {exc}"
            return
    assert not _never_valid(X, y), f"{name} accepted {X!r}, {y!r}"


def _never_valid(X, y) -> bool:  # type: ignore[no-untyped-def]
    """Inputs no learner may accept: byte strings, complex numbers or text numbers as
    features, byte-string labels (issue 37: they were parsed or dropped silently)."""
    frame = X if isinstance(X, pd.DataFrame) else None
    if frame is not None:
        kinds = {frame[c].dtype.kind for c in frame.columns}
        values = [v for c in frame.columns for v in frame[c]]
        if kinds & set("Sc") or any(isinstance(v, bytes) for v in values):
            return True
        if any(isinstance(v, str) for v in frame["b"]):
            return True  # 'b' is numeric in every schema here
    elif isinstance(X, np.ndarray) and X.dtype.kind in "Sc":
        return True
    return isinstance(y, np.ndarray) and y.dtype.kind == "S"


@pytest.mark.parametrize("name", CLASSES)
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(y=bad_y)
def test_bad_labels_get_a_privet_error_and_charge_nothing(name, y):
    X, _ = _good(numeric=name in LDP)
    _call(name, X, y)


@pytest.mark.parametrize("name", CLASSES)
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(X=bad_X)
def test_bad_features_get_a_privet_error_and_charge_nothing(name, X):
    _, y = _good()
    _call(name, X, y)


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize(
    "case", range(len(ISSUE_37_X) + 1), ids=[*(f"X{i}" for i in range(len(ISSUE_37_X))), "y-bytes"]
)
def test_byte_strings_ragged_rows_and_complex_numbers_are_refused_by_every_learner(name, case):
    """Issue 37: car.X.to_numpy().astype("S") gave NotImplementedError: |S5 in every
    learner; text and byte numbers were parsed, complex numbers lost their imaginary part."""
    X, y = _good(numeric=name in LDP)
    if case < len(ISSUE_37_X):
        X = ISSUE_37_X[case]
        if name in LDP and isinstance(X, pd.DataFrame) and (X["a"] == "x").all():
            X = X.assign(a=0.5)  # a numeric schema: only 'b' is wrong
    else:
        y = np.asarray(y).astype("S")
    led = _ledger(name)
    model = _model(name, led)
    used = getattr(model, "ledger", None) or led
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PrivetError):
            model.fit(X, y)
    assert used.spent() == Guarantee(0.0)


# Issue 37: wrong types for every numeric parameter of every learner. Each value is
# refused with a privet error before anything is charged, or is a valid number.
WRONG_NUMBERS = ["1", None, math.nan, math.inf, -math.inf, True, [1], 1 + 1j, 2**70, -1]


def _numeric_params(name: str) -> list[str]:
    params = getattr(learners, name)().get_params()
    return [k for k, v in params.items() if isinstance(v, numbers.Real) and not isinstance(v, bool)]


NUMERIC_PARAMS = [
    pytest.param(name, p, id=f"{name}-{p}") for name in CLASSES for p in _numeric_params(name)
]


@pytest.mark.parametrize(("name", "param"), NUMERIC_PARAMS)
def test_wrong_types_for_every_numeric_parameter(name, param):
    X, y = _good(n=40, numeric=name in LDP)
    for value in WRONG_NUMBERS:
        led = _ledger(name)
        model = _model(name, led)
        small = {"max_depth": 2, "n_estimators": 2, "n_trees": 2}
        model.set_params(**{k: v for k, v in small.items() if k in model.get_params()})
        model.set_params(**{param: value})
        used = getattr(model, "ledger", None) or led
        with warnings.catch_warnings(), time_limit(60):
            warnings.simplefilter("ignore")
            try:
                model.fit(X, y)
            except PrivetError as exc:
                assert str(exc)
                assert used.spent() == Guarantee(0.0), f"{name}({param}={value!r}) charged"
                continue
            except Exception as exc:  # the bug this test hunts
                pytest.fail(f"{name}({param}={value!r}): raw {type(exc).__name__}: {exc}")
        accepted = isinstance(value, numbers.Real) and not isinstance(value, bool)
        assert accepted and math.isfinite(value), f"{name}({param}={value!r}) was accepted"
