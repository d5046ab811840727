"""The vector engine: GF(2**61 - 1) arithmetic (privet.mpc.field61) and its protocols (privet.mpc.vector)."""

from __future__ import annotations

import itertools
import signal
import time

import numpy as np
import pytest
from _mpc_helpers import program
from scipy import stats

from privet.mpc import MPCPartyError, launch, spawn
from privet.mpc import field61 as F
from privet.mpc.vector import random_permutation

P = F.P


def test_field_operations_agree_with_python_integers():
    a, b = F.random(20_000), F.random(20_000)
    edge = np.array([0, 1, 2, P - 1, P - 2, 2**31, 2**32 - 1, 2**60, 2**61 - 2], dtype=np.uint64)
    a = np.concatenate([a, np.repeat(edge, edge.size)])
    b = np.concatenate([b, np.tile(edge, edge.size)])
    ai, bi = [int(x) for x in a], [int(x) for x in b]
    assert [int(x) for x in F.mul(a, b)] == [x * y % P for x, y in zip(ai, bi, strict=True)]
    assert [int(x) for x in F.add(a, b)] == [(x + y) % P for x, y in zip(ai, bi, strict=True)]
    assert [int(x) for x in F.sub(a, b)] == [(x - y) % P for x, y in zip(ai, bi, strict=True)]
    assert [int(x) for x in F.cumsum(a)] == [v % P for v in itertools.accumulate(ai)]
    assert int(F.sum(a)) == sum(ai) % P
    signed = np.array([-5, 0, 7, -(2**40)])
    assert F.decode(F.encode(signed)).tolist() == signed.tolist()


def test_shamir_shares_recombine_from_any_two_of_three_and_look_uniform():
    secret = F.encode(np.arange(-50, 50))
    shares = F.share(secret, 3, 1)
    for pair in itertools.combinations(range(3), 2):
        w = F.lagrange_at_zero([i + 1 for i in pair])
        assert np.array_equal(F.combine([shares[i] for i in pair], w), secret)
    # one share alone is uniform: its top 4 bits (of 61) over 100 x 400 draws
    one = np.concatenate([F.share(secret, 3, 1)[0] for _ in range(400)])
    counts = np.bincount((one >> np.uint64(57)).astype(np.int64), minlength=16)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_random_permutations_are_uniform():
    firsts = np.array([int(np.flatnonzero(random_permutation(4) == 0)[0]) for _ in range(4000)])
    assert stats.chisquare(np.bincount(firsts, minlength=4)).pvalue > 1e-4
    assert sorted(random_permutation(1000).tolist()) == list(range(1000))


def _expected(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return rng.integers(-1000, 1000, size=n), rng.integers(-1000, 1000, size=n)


def _check_results(r: dict, n: int, trials: int, *, shuffles_random: bool) -> None:
    a, b = _expected(n)
    assert r["sum"] == (a + b).tolist()
    assert r["prod"] == (a * b).tolist()
    assert r["cumsum"] == np.cumsum(a).tolist()
    shuffled = np.array(r["shuffled"])
    assert sorted(map(tuple, shuffled.tolist())) == sorted(zip(a.tolist(), b.tolist(), strict=True))
    assert r["unshuffled"] == np.stack([a, b], axis=1).tolist()
    if shuffles_random:
        assert not np.array_equal(shuffled[:, 0], a)
        # where 0 lands after independent shuffles of 0..4: uniform
        assert stats.chisquare(np.bincount(r["small"], minlength=5)).pvalue > 1e-4
    assert r["ge"] == (a - b >= 0).astype(int).tolist()
    assert r["edge"] == [1, 0, 1, 1, 0]
    grid = a[: n - n % 5].reshape(-1, 5) + 1000
    assert r["max"] == grid.max(axis=1).tolist()
    assert np.array_equal(np.array(r["argmax"]), np.eye(5, dtype=int)[np.argmax(grid, axis=1)])
    assert r["to_mpyc"] == (3 * a).tolist()
    assert r["from_mpyc"] == (2 * a).tolist()
    # the engine's discrete Laplace (scale 2): chi-square against the exact pmf
    z = np.asarray(r["laplace"])
    q = np.exp(-0.5)
    support = np.arange(-6, 7)
    pmf = (1 - q) / (1 + q) * q ** np.abs(support)
    observed = np.array([np.sum(z == s) for s in support] + [np.sum(np.abs(z) > 6)])
    expected = np.append(pmf, 1 - pmf.sum()) * z.size
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_engine_operations_in_one_process():
    from privet.mpc.launcher import run_local

    run = run_local(program("vector_engine_checks"), {"n": 500, "trials": 20})
    _check_results(run.results[0], 500, 20, shuffles_random=False)


@pytest.mark.mpc
def test_engine_operations_with_three_parties():
    run = launch(
        program("vector_engine_checks"), {"n": 2000, "trials": 200}, parties=3, timeout=120
    )
    for r in run.results:
        _check_results(r, 2000, 200, shuffles_random=True)
    assert run.results[0] == run.results[1] == run.results[2]


def _check_masked_openings(result: dict, n: int) -> None:
    # Each opened c = y + r + 2**bits R must show fair coins in bits 0 .. bits whatever x
    # (the mask is uniform on a contiguous range of >= 2**(bits + 40) values). 51 binomial
    # checks at |z| <= 5.5 (two-sided 3.8e-8 each): a false failure < 2e-6 per run. The
    # shipped mask (R shifted by 2**(bits + 1)) gave bit 16 = 1 always at x = 0.
    half, tol = n / 2, 5.5 * np.sqrt(n / 4)
    for x, r in result.items():
        assert r["correct"], f"wrong comparisons at x = {x}"
        for j, ones in enumerate(r["ones"]):
            assert abs(ones - half) <= tol, f"bit {j} of the opened value leaks x = {x}: {ones}/{n}"


def test_masked_comparison_openings_are_fair_coins_whatever_the_value():
    """Review of issue 35, F1: a comparison's opened value must not depend on |x|."""
    from privet.mpc.launcher import run_local

    run = run_local(program("masked_comparison_openings"), {"n": 4000})
    _check_masked_openings(run.results[0], 4000)


@pytest.mark.mpc
def test_masked_comparison_openings_are_fair_coins_with_three_parties():
    run = launch(program("masked_comparison_openings"), {"n": 2000}, parties=3, timeout=120)
    _check_masked_openings(run.results[0], 2000)
    assert run.results[0] == run.results[1] == run.results[2]


def _engine_party_2(tmp_path, timeout: float, sig: signal.Signals, match: str) -> MPCPartyError:
    tmp_path.mkdir()
    marker = tmp_path / "started"
    with spawn(program("engine_rounds"), {"marker": str(marker)}, timeout=timeout) as group:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started.2").exists():
            assert time.monotonic() < deadline, "party 2 never started its loop"
            time.sleep(0.02)
        sent = time.monotonic()
        group.kill(2, sig)
        with pytest.raises(MPCPartyError, match=match) as info:
            group.wait()
        assert time.monotonic() - sent < timeout + 10.0  # slack: shared CI cores
    return info.value


@pytest.mark.mpc
def test_a_party_that_dies_or_stalls_in_the_engine_is_named(tmp_path):
    """The engine's messages go through MPyC's channels, so the party supervisor sees them."""
    died = _engine_party_2(tmp_path / "a", 5.0, signal.SIGKILL, "party 2 died")
    assert died.kind == "died" and died.culprits == (2,)
    stalled = _engine_party_2(tmp_path / "b", 2.0, signal.SIGSTOP, "party 2 stopped answering")
    assert stalled.kind == "unresponsive" and stalled.culprits == (2,)
