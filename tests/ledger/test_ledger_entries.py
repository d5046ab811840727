"""Entries: immutable, validated, stored by class name, never changing meaning."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from privet.errors import InvalidParameterError, UnsupportedEntryError
from privet.ledger import (
    ZCDP,
    ApproxDP,
    Claim,
    DiscreteGaussian,
    DiscreteLaplaceCounts,
    Entry,
    Exponential,
    Gaussian,
    Guarantee,
    Laplace,
    LocalRandomiser,
    NonPrivate,
    PureDP,
)
from privet.ledger.entries import as_entry

ENTRIES = [
    PureDP(epsilon=0.5),
    ApproxDP(epsilon=0.5, delta=1e-6),
    Laplace(scale=2.0, sensitivity=1.0),
    DiscreteLaplaceCounts(scale=4.0, sensitivity=3),
    Gaussian(sigma=3.0, sensitivity=2.0),
    Gaussian(sigma=3.0, sensitivity=1.0, epsilon=1.2, delta=1e-6),
    DiscreteGaussian(sigma=3.0, sensitivity=2.0),
    ZCDP(rho=0.25),
    Exponential(epsilon=0.3, sensitivity=1.0, monotone=True),
    LocalRandomiser(epsilon=1.0, randomiser="piecewise"),
    NonPrivate(reason="exact counts of the leaves"),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: type(e).__name__)
def test_entries_round_trip_through_dicts(entry):
    back = Entry.from_dict(entry.to_dict())
    assert back == entry and type(back) is type(entry)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: type(e).__name__)
def test_entries_are_frozen(entry):
    field = dataclasses.fields(entry)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(entry, field, 1.0)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan"])
def test_string_fields_that_look_like_numbers_survive_storage(text):
    for entry in (NonPrivate(reason=text), LocalRandomiser(epsilon=1.0, randomiser=text)):
        back = Entry.from_dict(entry.to_dict())
        assert back == entry


def test_entry_math():
    assert Laplace(scale=4.0, sensitivity=2.0).guarantee() == Guarantee(0.5)
    assert Gaussian(sigma=2.0, sensitivity=1.0).rho == pytest.approx(1 / 8)
    assert math.isinf(Gaussian(sigma=2.0, sensitivity=1.0).epsilon)
    assert PureDP(epsilon=0.5).rho == pytest.approx(0.125)
    assert ApproxDP(epsilon=0.5, delta=1e-6).rho is None
    assert math.isinf(ZCDP(rho=0.1).epsilon)
    assert math.isinf(NonPrivate(reason="x").epsilon)
    assert Exponential(epsilon=0.4, sensitivity=1.0).epsilon == 0.4
    counts = DiscreteLaplaceCounts(scale=4.0, sensitivity=3)
    assert counts.guarantee() == Guarantee(0.75)  # k / b, as Laplace(4, 3)
    assert counts.rho == pytest.approx(3 / 32)  # k (1/b)^2 / 2, not (k/b)^2 / 2


@pytest.mark.parametrize("k", [0, 2.5, -1, True, "3"])
def test_discrete_laplace_counts_take_a_whole_number_of_counts(k):
    with pytest.raises(InvalidParameterError, match="number of counts"):
        DiscreteLaplaceCounts(scale=4.0, sensitivity=k)


def test_unknown_entry_type_is_refused():
    with pytest.raises(UnsupportedEntryError, match="Unknown ledger entry type 'Quantum'"):
        Entry.from_dict({"type": "Quantum", "epsilon": 1.0})


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: PureDP(epsilon=-0.1), ">= 0"),
        (lambda: PureDP(epsilon=math.inf), "finite"),
        (lambda: ApproxDP(epsilon=0.1, delta=1.0), r"\[0, 1\)"),
        (lambda: Laplace(scale=-1.0, sensitivity=1.0), "scale"),
        (lambda: Laplace(scale=1.0, sensitivity=0.0), "sensitivity"),
        (lambda: Gaussian(sigma=0.0, sensitivity=1.0), "sigma"),
        (lambda: Gaussian(sigma=1.0, sensitivity=math.inf), "sensitivity"),
        (lambda: ZCDP(rho=-1.0), "rho"),
        (lambda: ZCDP(rho=math.nan), "rho"),
        (lambda: Exponential(epsilon=0.0, sensitivity=1.0), "epsilon"),
        (lambda: Exponential(epsilon=0.1, sensitivity=0.0), "sensitivity"),
        (lambda: Exponential(epsilon=0.1, sensitivity=math.nan), "sensitivity"),
        (lambda: LocalRandomiser(epsilon=0.0), "epsilon"),
        (lambda: DiscreteLaplaceCounts(scale=2.0, sensitivity=math.nan), "integer in"),
        (lambda: DiscreteLaplaceCounts(scale=2.0, sensitivity=math.inf), "integer in"),
        (lambda: DiscreteLaplaceCounts(scale=2.0, sensitivity=10**20), "integer in"),
        (lambda: DiscreteLaplaceCounts(scale=2.0, sensitivity=2.5), "integer in"),
        (lambda: Claim(epsilon=-1.0), ">= 0"),
        (lambda: as_entry("0.1"), "Expected a ledger Entry"),
        (lambda: as_entry(True), "Expected a ledger Entry"),
    ],
)
def test_invalid_entries_are_rejected_at_construction(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make()


def test_discrete_laplace_counts_takes_numpy_integers():
    assert DiscreteLaplaceCounts(scale=2.0, sensitivity=np.int64(3)).sensitivity == 3


def test_as_entry():
    assert as_entry(0.5) == PureDP(epsilon=0.5)
    assert as_entry(Guarantee(0.5)) == PureDP(epsilon=0.5)
    assert as_entry(Guarantee(0.5, 1e-6)) == ApproxDP(epsilon=0.5, delta=1e-6)
    e = Laplace(scale=1.0, sensitivity=1.0)
    assert as_entry(e) is e


def test_claim_round_trip():
    c = Claim(math.inf, 0.0, source="paper", note="exact counts")
    assert Claim.from_dict(c.to_dict()) == c
