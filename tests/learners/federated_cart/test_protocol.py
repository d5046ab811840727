"""Seed 003 protocol path: K = 3 owners as real processes (privet.mpc launcher, MPyC channels).

* Under the same public testing noise the protocol releases exactly the
  reference path's sums and grows the same tree (plain and budget-saving).
* With real noise, the released root histograms minus the true counts follow
  Laplace(scale) (KS test at alpha = 1e-4): the reference's distribution.
* The aggregator's received words are uniform on Z_{2^64} (chi-square on the
  top 4 bits, alpha = 1e-4) and have the same distribution for two very
  different datasets (two-sample KS, alpha = 1e-4).
* An owner that drops out mid-protocol ends the run with an error naming it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privet.data import Categorical, Numeric, Schema
from privet.learners import FederatedDPTreeClassifier
from privet.learners.federated_cart.grower import CartParams, PartyRows, grow
from privet.learners.federated_cart.protocol import run_protocol
from privet.learners.federated_cart.reference import ReferenceOps, local_histograms
from privet.ledger import Ledger
from privet.mpc import MPCPartyError

pytestmark = pytest.mark.mpc

K = 3


@contextlib.contextmanager
def _testing_noise_allowed() -> Iterator[None]:
    old = os.environ.get("PRIVET_TESTING_NOISE")
    os.environ["PRIVET_TESTING_NOISE"] = "fixed-noise-breaks-privacy"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PRIVET_TESTING_NOISE", None)
        else:
            os.environ["PRIVET_TESTING_NOISE"] = old


def _owners(seed: int, constant: bool = False) -> PartyRows:
    rng = np.random.default_rng(seed)
    Zs, ys = [], []
    for _ in range(K):
        Z = np.zeros((40, 4), dtype=np.int64) if constant else rng.integers(0, 10, size=(40, 4))
        Zs.append(Z)
        ys.append((Z[:, 0] + Z[:, 1] > 8).astype(np.int64))
    return PartyRows(Zs, ys)


def _params(budget_saving: bool, noise: str = "discrete") -> CartParams:
    return CartParams(
        noise=noise,
        parties=K,
        n_classes=2,
        n_bins=(10, 10, 10, 10),
        epsilon=5.0,
        max_depth=3,
        min_samples_leaf=5,
        leaf_prop=0.5,
        budget_saving=budget_saving,
        bounds_prop=0.25,
    )


@pytest.fixture(scope="module")
def fixed_runs() -> dict[str, object]:
    out: dict[str, object] = {}
    with _testing_noise_allowed():
        for bs in (False, True):
            out[f"protocol{bs}"] = run_protocol(
                _params(bs), _owners(0), _testing_noise=11, _record_view=True
            )
            ops = ReferenceOps(K, testing_seed=11)
            out[f"tree{bs}"] = grow(_params(bs), _owners(0), ops)
            out[f"releases{bs}"] = ops.releases
        # the paper's float shares (testing shares: multiples of 1/8)
        out["protocol_paper"] = run_protocol(_params(True, "paper"), _owners(0), _testing_noise=11)
        ops = ReferenceOps(K, testing_seed=11, discrete=False)
        out["tree_paper"] = grow(_params(True, "paper"), _owners(0), ops)
        out["releases_paper"] = ops.releases
        out["constant"] = run_protocol(
            _params(False), _owners(0, constant=True), _testing_noise=11, _record_view=True
        )
    return out


@pytest.mark.parametrize("budget_saving", [False, True, "_paper"])
def test_protocol_equals_reference_under_fixed_testing_noise(
    fixed_runs: dict, budget_saving: bool | str
) -> None:
    """Both noises: the default integer shares (budget saving off and on), and the
    paper's float shares ("_paper", budget saving on)."""
    run = fixed_runs[f"protocol{budget_saving}"]
    ref_releases = fixed_runs[f"releases{budget_saving}"]
    assert set(run.releases) == set(ref_releases)
    for key, value in ref_releases.items():
        np.testing.assert_array_equal(run.releases[key], value)  # bit for bit
    signature = fixed_runs[f"tree{budget_saving}"].signature()
    assert all(s == signature for s in run.signatures)
    assert len(signature) > 1  # the tree split at least once


def test_aggregator_view_is_uniform_and_independent_of_the_data(fixed_runs: dict) -> None:
    def words(run: object) -> np.ndarray:
        return np.concatenate([np.frombuffer(b, dtype=np.uint64) for b in run.view])

    a = words(fixed_runs["protocolFalse"])
    b = words(fixed_runs["constant"])
    assert len(a) > 200 and len(b) >= 16 * 10  # at least 10 expected per top-4-bit bin
    for w in (a, b):
        top = (w >> np.uint64(60)).astype(np.int64)
        counts = np.bincount(top, minlength=16)
        assert stats.chisquare(counts).pvalue > 1e-4
    ua, ub = a / 2.0**64, b / 2.0**64
    assert stats.ks_2samp(ua, ub).pvalue > 1e-4
    # the unmasked encodings would be tiny counts: nowhere near uniform
    assert np.mean(ua > 0.5) > 0.3


def test_protocol_backend_fits_charges_and_has_the_reference_noise() -> None:
    rng = np.random.default_rng(5)
    n = 300
    schema = Schema([Numeric(f"x{j}", 0, 1) for j in range(12)], Categorical("y", [0, 1]))
    X = pd.DataFrame(rng.uniform(0, 1, size=(n, 12)), columns=[f"x{j}" for j in range(12)])
    y = (X["x0"] > 0.5).astype(int).to_numpy()
    owners = np.arange(n) % K
    eps = 2.0
    led = Ledger(budget=eps)
    clf = FederatedDPTreeClassifier(
        epsilon=eps,
        max_depth=2,
        schema=schema,
        budget_saving=False,
        backend="protocol",
        ledger=led,
        protocol_timeout=180,
    ).fit(X, y, owners=owners)
    assert clf.privacy_spent_.epsilon == pytest.approx(eps)
    assert all(p.bytes_sent > 0 for p in clf.protocol_stats_.parties)
    # root histograms: release - true counts ~ Laplace(p / eps_node), 2*12*10 values
    Z = np.floor(X.to_numpy() * 10).clip(0, 9).astype(np.int64)
    true = local_histograms(Z, y, np.arange(12), 2, 10)
    resid = (clf.releases_["r/hist"] - true).ravel()
    scale = 12 / (0.5 * eps / 2)
    assert stats.kstest(resid, stats.laplace(scale=scale).cdf).pvalue > 1e-4


def test_a_dropped_owner_ends_the_round_with_an_error_naming_it() -> None:
    with pytest.raises(MPCPartyError, match=r"[Pp]arty 2") as info:
        run_protocol(_params(False), _owners(0), _fail_party=2, _fail_round=2, timeout=20)
    assert 2 in info.value.culprits
