"""Property-based fuzz of every public mechanism constructor and call (issue 11, bad input).

For any parameters and any input, a mechanism either raises a
:class:`~privet.errors.PrivetError` whose message says what to do, or returns a
correct result (finite, of the input's shape); it never raises another
exception, never hangs (each example runs under a wall-clock alarm) and never
charges the ledger on a refused call.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privet.mechanisms as pm
from _alarm import time_limit
from privet.errors import PrivetError
from privet.ledger import Guarantee, Ledger

SECONDS = 10  # per example: generous for a shared 2-core machine, far below a hang
FUZZ = settings(
    max_examples=int(os.environ.get("PRIVET_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def bounded(seconds: int = SECONDS) -> contextlib.AbstractContextManager[None]:
    """Fail the example (``TimeoutError``) if the call runs for more than ``seconds``."""
    return time_limit(seconds)


# ------------------------------------------------------------------ strategies
reals = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -1.0, 1e-308, 5e-324, 1e-12, 0.5, 1.0, 3.0, 1e6, 1e300, 1e308]),
    st.integers(min_value=-(2**70), max_value=2**70),
)
junk = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.just([1.0]), st.just(object()))
param = st.one_of(reals, reals, junk)
counts = st.one_of(st.integers(-3, 10**12), st.sampled_from([0, 1, 2, 10**9]), junk)


def arrays() -> st.SearchStrategy[Any]:
    """Inputs: small arrays of many dtypes, extreme values, and non-arrays."""
    extreme = st.sampled_from(
        [
            np.array([2**63, 5], dtype=np.uint64),
            np.array([2**64 - 1], dtype=np.uint64),
            np.array([-(2**63), 2**63 - 1], dtype=np.int64),
            np.array([1e308, -1e308]),
            np.array([np.nan, 1.0]),
            np.array([np.inf]),
            np.array([], dtype=float),
            np.zeros((2, 0)),
            np.array(["a", "b"]),
            np.array([True, False]),
            np.array([0.5, 0.25]),
            np.array([0, 1, 2]),
            np.zeros((3, 3)),
            np.zeros((5, 2)),
            # issue 37: ragged, byte-string, text, complex and unordered inputs
            [[1, 2], [3]],
            [[[1]], [2]],
            np.array([b"1", b"2"]),
            np.array([b"1", b"2"]).astype(object),
            ["1", "2"],
            np.array([1 + 1j, 2]),
            np.array([1, None], dtype=object),
            {"a": 1},
            {1, 2},
        ]
    )
    floats = st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=6).map(np.array)
    ints = st.lists(st.integers(-5, 5), min_size=1, max_size=6).map(np.array)
    return st.one_of(extreme, floats, ints, junk, st.floats(allow_nan=True))


def _builders() -> dict[str, Callable[[st.DataObject], Any]]:
    def kw(data: st.DataObject, **names: st.SearchStrategy[Any]) -> dict[str, Any]:
        return {k: data.draw(s, label=k) for k, s in names.items()}

    rel = st.sampled_from(["add_remove", "replace_one", "bogus", 3])
    return {
        "make_laplace": lambda d: pm.make_laplace(**kw(d, epsilon=param, sensitivity=param)),
        "LaplaceMechanism": lambda d: pm.LaplaceMechanism(
            **kw(d, scale=param, sensitivity=param, relation=rel)
        ),
        "make_discrete_laplace": lambda d: pm.make_discrete_laplace(
            **kw(d, epsilon=param, sensitivity=param)
        ),
        "make_gaussian": lambda d: pm.make_gaussian(
            **kw(d, epsilon=param, delta=param, sensitivity=param, discrete=st.booleans())
        ),
        "make_gaussian_rho": lambda d: pm.make_gaussian(
            **kw(d, rho=param, sensitivity=param, discrete=st.booleans())
        ),
        "make_exponential": lambda d: pm.make_exponential(
            **kw(d, epsilon=param, sensitivity=param, monotone=st.booleans())
        ),
        "make_report_noisy_max": lambda d: pm.make_report_noisy_max(
            **kw(
                d,
                epsilon=param,
                sensitivity=param,
                noise=st.sampled_from(["gumbel", "exponential", "discrete_laplace", "x"]),
            )
        ),
        "make_noisy_histogram": lambda d: pm.make_noisy_histogram(
            **kw(d, epsilon=param, contributions=counts, discrete=st.booleans(), relation=rel)
        ),
        "PiecewiseMechanism": lambda d: pm.PiecewiseMechanism(
            **kw(d, epsilon=param, lower=param, upper=param)
        ),
        "PiecewiseMultiMechanism": lambda d: pm.PiecewiseMultiMechanism(
            **kw(d, epsilon=param, dimension=counts)
        ),
        "DuchiMechanism": lambda d: pm.DuchiMechanism(**kw(d, epsilon=param, upper=param)),
        "DuchiMultiMechanism": lambda d: pm.DuchiMultiMechanism(
            **kw(d, epsilon=param, dimension=counts)
        ),
        "LocalLaplace": lambda d: pm.LocalLaplace(**kw(d, epsilon=param, lower=param, upper=param)),
        "RandomisedResponse": lambda d: pm.RandomisedResponse(
            **kw(d, epsilon=param, categories=st.one_of(counts, st.just(["a", "b", "a"])))
        ),
        "make_gamma_dlpa": lambda d: pm.make_gamma_dlpa(
            **kw(d, epsilon=param, parties=counts, sensitivity=param)
        ),
        "make_matrix_mechanism": lambda d: pm.make_matrix_mechanism(
            d.draw(st.one_of(arrays(), st.just(np.eye(3)))),
            d.draw(param),
            strategy=d.draw(st.sampled_from(["identity", "workload", "nope"])),
        ),
    }


BUILDERS = _builders()
MAX_PARTIES = 10**5  # GammaDLPA's validated limit is checked in the call below


def _call(mech: Any, data: st.DataObject, ledger: Ledger, values: Any) -> Any:
    if isinstance(mech, pm.GammaDLPA) and isinstance(values, np.ndarray) and values.ndim:
        with contextlib.suppress(ValueError):  # keep a shape that cannot broadcast: refused
            values = np.broadcast_to(values, (mech.parties, *values.shape[1:]))
    if isinstance(mech, pm.NoisyHistogram) and data.draw(st.booleans(), label="argmax"):
        return mech.argmax(values, scope=ledger)
    return mech(values, scope=ledger)


def _actionable(exc: PrivetError) -> None:
    msg = str(exc)
    assert len(msg) > 20, msg  # says what was wrong, not just a value
    assert "Traceback" not in msg


def _not_real_numbers(values: Any) -> bool:
    """Inputs no numeric mechanism may accept: ragged, text, bytes, complex, dict, set."""
    if isinstance(values, dict | set | str | bytes):
        return True
    try:
        arr = np.asarray(values)
    except ValueError:
        return True  # ragged
    if arr.dtype.kind in "SUc":
        return True
    return arr.dtype.kind == "O" and any(isinstance(v, str | bytes | complex) for v in arr.ravel())


def _check_result(out: Any) -> None:
    arr = np.asarray(out)
    if arr.dtype.kind in "fiu":
        assert np.all(np.isfinite(arr.astype(float))), arr


@pytest.mark.parametrize("name", sorted(BUILDERS))
@FUZZ
@given(data=st.data())
def test_mechanism_fuzz(name: str, data: st.DataObject) -> None:
    ledger = Ledger(Guarantee(1e9, 0.5), relation="replace_one", dataset="fuzz")
    with bounded():
        try:
            mech = BUILDERS[name](data)
        except PrivetError as exc:
            _actionable(exc)
            return
        before = ledger.spent()
        values = data.draw(arrays(), label="values")
        try:
            out = _call(mech, data, ledger, values)
        except PrivetError as exc:
            _actionable(exc)
            assert ledger.spent() == before, "a refused call charged the ledger"
            return
    assert not _not_real_numbers(values), f"accepted {values!r}: {out!r}"
    _check_result(out)


@pytest.mark.parametrize(
    "build",
    [
        lambda: pm.LaplaceMechanism(scale=1.7e308),
        lambda: pm.LaplaceMechanism(scale=1.0, sensitivity=5e-324),
        lambda: pm.LaplaceMechanism(scale=1.0, sensitivity=1.3e154),
        lambda: pm.GaussianMechanism(sigma=1e-200, sensitivity=1e200),
        lambda: pm.NoisyHistogram(scale=1e-7),
    ],
)
def test_extreme_scales_are_refused_before_any_charge(build: Callable[[], Any]) -> None:
    """Found by the fuzz: -inf noise, math domain error, OverflowError in the accounting."""
    with pytest.raises(PrivetError, match=r"finite|protects nothing"):
        build()


def test_uint64_counts_at_2_63_are_refused_not_wrapped() -> None:
    """NoisyHistogram.argmax([2^63, 5]) returned 1: the count wrapped to -2^63."""
    ledger = Ledger(Guarantee(10.0), dataset="fuzz")
    big = np.array([2**63, 5], dtype=np.uint64)
    for call in (
        lambda: pm.make_noisy_histogram(1.0).argmax(big, scope=ledger),
        lambda: pm.make_noisy_histogram(1.0)(big, scope=ledger),
        lambda: pm.make_discrete_laplace(1.0)(big, scope=ledger),
        lambda: pm.make_gaussian(rho=1.0, discrete=True)(big, scope=ledger),
    ):
        with pytest.raises(PrivetError, match="2\\^62"):
            call()
    assert ledger.spent() == Guarantee(0.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda e: pm.PiecewiseMechanism(epsilon=e),
        lambda e: pm.DuchiMechanism(epsilon=e),
        lambda e: pm.DuchiMultiMechanism(epsilon=e, dimension=3),
        lambda e: pm.RandomisedResponse(epsilon=e, categories=3),
        lambda e: pm.PiecewiseMultiMechanism(epsilon=e, dimension=2),
        lambda e: pm.make_laplace(e),
        lambda e: pm.make_noisy_histogram(e),
        lambda e: pm.make_gamma_dlpa(e, parties=3),
    ],
)
def test_huge_epsilon_is_a_result_or_a_privet_error(build: Callable[[float], Any]) -> None:
    """epsilon=1e308 raised OverflowError; up to MAX_EPSILON it is a result."""
    with pytest.raises(PrivetError, match="at most"):
        build(1e308)
    ledger = Ledger(Guarantee.unbounded(), relation="replace_one", dataset="fuzz")
    mech = build(1e6)
    if True:
        dim = getattr(mech, "dimension", 1)
        x = np.zeros((getattr(mech, "parties", 4), dim), dtype=int)
        x = x[:, 0] if dim == 1 and not isinstance(mech, pm.GammaDLPA) else x
        if not isinstance(mech, pm.LocalMechanism):
            ledger = Ledger(Guarantee.unbounded(), dataset="fuzz")
        out = np.asarray(mech(x, scope=ledger), dtype=float)
        assert np.all(np.isfinite(out))


def test_local_laplace_with_an_overflowing_range_charges_nothing() -> None:
    """LocalLaplace(epsilon=1, lower=-1e308, upper=1e308) charged, then overflowed."""
    with pytest.raises(PrivetError, match="too wide"):
        pm.LocalLaplace(epsilon=1.0, lower=-1e308, upper=1e308)


def test_randomised_response_with_a_billion_categories_is_refused_at_once() -> None:
    with bounded(5), pytest.raises(PrivetError, match="at most"):
        pm.RandomisedResponse(epsilon=1.0, categories=10**9)
    assert math.isfinite(pm.MAX_CATEGORIES)


@pytest.mark.filterwarnings("error")  # the refusal is the message, not numpy's overflow warning
def test_gamma_dlpa_refuses_sums_that_would_overflow() -> None:
    """Party values of 1e308 summed to inf after the charge."""
    ledger = Ledger(Guarantee(10.0), dataset="fuzz")
    with pytest.raises(PrivetError, match="overflow"):
        pm.make_gamma_dlpa(1.0, parties=3)(np.full((3, 2), 1e308), scope=ledger)
    with pytest.raises(PrivetError, match="finite"):
        pm.make_gamma_dlpa(1e-6, parties=3, sensitivity=1e300)
    # review findings: a Python int past the float range raised a bare OverflowError, and
    # integer parties just below 2^62 each wrapped their int64 sum around, charged
    with pytest.raises(PrivetError, match="real numbers"):
        pm.make_gamma_dlpa(1.0, parties=3)([[10**400], [1], [1]], scope=ledger)
    with pytest.raises(PrivetError, match="wrap around int64"):
        pm.make_gamma_dlpa(1.0, parties=3, discrete=True)(np.full((3, 1), 2**62 - 1), scope=ledger)
    assert ledger.spent() == Guarantee(0.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda: pm.make_gaussian(sigma=1e300),
        lambda: pm.make_gaussian(sigma=1e300, discrete=True),
        lambda: pm.make_gaussian(sigma=1e151),
        lambda: pm.make_gaussian(rho=1e-310),
        lambda: pm.LaplaceMechanism(scale=1e300, sensitivity=1e-300),
        lambda: pm.make_gamma_dlpa(1e-20, parties=3, discrete=True),
    ],
)
def test_noise_the_accounting_or_the_sampler_cannot_handle_is_refused_before_any_charge(build):
    """Issue 37: make_gaussian(sigma=1e300) charged, then raised OverflowError (sigma**2 in
    its privacy map); a Laplace loss of 1e-600 was charged as 0; integer gamma shares at
    scale 1e20 charged, then numpy's negative binomial raised ValueError."""
    ledger = Ledger(Guarantee.unbounded(), dataset="fuzz")
    with pytest.raises(PrivetError, match=r"accounting can state|64-bit"):
        mech = build()
        mech(
            np.array([1.0, 2.0] if not isinstance(mech, pm.GammaDLPA) else [[1, 2]] * 3),
            scope=ledger,
        )
    assert ledger.charges == []


@pytest.mark.parametrize(
    "make",
    [
        lambda: pm.make_discrete_laplace(1.0),
        lambda: pm.make_gaussian(rho=1.0, discrete=True),
        lambda: pm.make_noisy_histogram(1.0),
        lambda: pm.RandomisedResponse(epsilon=1.0, categories=3),
        lambda: pm.make_laplace(1.0),
        lambda: pm.make_gamma_dlpa(1.0, parties=2, discrete=True),
    ],
)
@pytest.mark.parametrize(
    "values",
    [[[1, 2], [3]], {"a": 1}, {1, 2}, np.array([b"1", b"2"]), np.array([1 + 1j, 2])],
    ids=["ragged", "dict", "set", "bytes", "complex"],
)
def test_ragged_byte_complex_and_unordered_inputs_are_refused_uncharged(make, values):
    """Issue 37: [[1, 2], [3]] gave numpy's "inhomogeneous shape" ValueError in the discrete
    Laplace, discrete Gaussian, histogram and randomised response; RandomisedResponse({"a":
    1}) gave "unhashable type"; b"1" was parsed into 1.0 and 1+1j lost its imaginary part."""
    relation = "replace_one" if make().__class__ is pm.RandomisedResponse else "add_remove"
    ledger = Ledger(Guarantee(10.0), relation=relation, dataset="fuzz")
    with pytest.raises(PrivetError, match=r"values|data|argument"):
        make()(values, scope=ledger)
    assert ledger.charges == []


def test_a_matrix_mechanism_over_an_all_zero_workload_is_refused():
    """Issue 37: MatrixMechanism(workload=np.zeros((3, 3))) was accepted (asks nothing)."""
    with pytest.raises(PrivetError, match="all zeros"):
        pm.MatrixMechanism(workload=np.zeros((3, 3)), epsilon=1.0)
    pm.MatrixMechanism(workload=np.array([[0.0, 0.0, 1.0]]), epsilon=1.0)  # one query: fine
