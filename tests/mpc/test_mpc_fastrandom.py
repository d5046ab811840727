"""The bulk Shamir coefficients (privet.mpc.fastrandom): exactly uniform, the same shares."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privet.mpc import fastrandom, get_runtime


def test_installed_in_mpyc_when_the_runtime_loads() -> None:
    from mpyc import thresha

    get_runtime()
    assert thresha.np_random_split is fastrandom.np_random_split


def test_uniform_below_is_in_range_and_uniform_on_a_small_bound() -> None:
    # 101 cells, 101,000 draws: chi-square at 1 - 1e-6 confidence. With bits = 7
    # (128 strings) a rejection bug (e.g. taking values mod 101) would put 2x the
    # mass on 0..26 and fail by far.
    x = fastrandom.uniform_below(101, 101_000).astype(np.int64)
    assert x.min() >= 0 and x.max() < 101
    counts = np.bincount(x, minlength=101)
    assert stats.chisquare(counts).pvalue > 1e-6
    assert counts[:27].mean() < 1.1 * counts[27:].mean()


def test_uniform_below_covers_large_bounds_and_edge_cases() -> None:
    for bound in (2**64 + 13, 2**79 + 2**40 + 1, 2**127 - 1, 2**64, 2**63):
        x = fastrandom.uniform_below(bound, 4000)
        assert all(0 <= int(v) < bound for v in x)
        # the top bit of the range is set about as often as uniform predicts
        top = 1 << ((bound - 1).bit_length() - 1)
        share = np.mean([int(v) >= top for v in x])
        expected = (bound - top) / bound
        assert abs(share - expected) < 5 * np.sqrt(expected * (1 - expected) / 4000) + 1e-9
    assert list(fastrandom.uniform_below(1, 3)) == [0, 0, 0]
    assert fastrandom.uniform_below(7, 0).size == 0


def test_shares_recombine_to_the_secrets_for_every_pair_of_parties() -> None:
    from mpyc import thresha

    mpc = get_runtime()
    field = mpc.SecInt(32).field
    secrets_ = field.array(np.array([0, 1, 5, field.modulus - 1, 123456789], dtype=object))
    shares = fastrandom.np_random_split(field, secrets_, 1, 3)
    assert shares.shape == (3, 5)
    for pair in ((0, 1), (0, 2), (1, 2)):
        points = [(i + 1, shares[i]) for i in pair]
        value = thresha.np_recombine(field, points)
        assert np.array_equal(np.asarray(value.value, dtype=object), secrets_.value)
    # degree-1 polynomials with random slopes: one party's shares differ between two sharings
    again = fastrandom.np_random_split(field, secrets_, 1, 3)
    assert not np.array_equal(shares[0], again[0])


async def _bits_program(ctx, n: int = 20000) -> dict:
    """Party program: random bits of both secure types, opened for the test."""
    from privet.mpc import fixedpoint as fx

    mpc = ctx.runtime
    out = {}
    for name, sectype in (("fxp", fx.secfxp_type(32)), ("int", mpc.SecInt(32))):
        b = fx.random_bits(sectype, (n // 2, 2))
        both = b[:, 0] * b[:, 1]  # exact products of the 0/1 values
        opened = await mpc.output(mpc.np_concatenate((b[:, 0], b[:, 1], both)))
        out[name] = np.rint(np.asarray(opened, dtype=float)).astype(np.int64).tolist()
    return out


@pytest.mark.mpc
def test_party_random_bits_are_fair_independent_bits_that_multiply_exactly() -> None:
    # privet.mpc.fixedpoint.random_bits with 3 parties (t = 1), whose reshares use fastrandom.
    # 10,000 pairs per type: each mean and the pair-product mean within 5 sigma
    # (a false failure has probability below 1e-5 per check).
    from privet.mpc import launch

    n = 20000
    run = launch(f"{__file__}:_bits_program", {"n": n}, parties=3, timeout=120)
    results = list(run.results)
    assert results[0] == results[1] == results[2]
    for name in ("fxp", "int"):
        values = np.asarray(results[0][name])
        first, second, both = values[: n // 2], values[n // 2 : n], values[n:]
        assert set(np.unique(values)) <= {0, 1}, name
        assert np.array_equal(both, first * second), name
        sigma = np.sqrt(0.25 / (n // 2))
        assert abs(first.mean() - 0.5) < 5 * sigma and abs(second.mean() - 0.5) < 5 * sigma
        assert abs(both.mean() - 0.25) < 5 * np.sqrt(0.1875 / (n // 2)), name
