"""The number format of a seed-000 tree run: what the host sends, what the parties accept."""

from __future__ import annotations

import json

import pytest

from privet.errors import InvalidParameterError
from privet.learners._protocols.numbers import SecureNumbers


def test_the_format_travels_as_json_and_comes_back_equal():
    fmt = SecureNumbers(bit_length=48, mpc_noise="discrete", laplace_sensitivity=2.0)
    sent = json.loads(json.dumps(fmt.args()))
    assert SecureNumbers.from_args(sent) == fmt


def test_a_party_refuses_an_unknown_key_by_name():
    with pytest.raises(InvalidParameterError, match=r"\['bitlength'\]"):
        SecureNumbers.from_args({"bitlength": 32})


def test_an_unknown_sampler_is_refused():
    with pytest.raises(InvalidParameterError, match="mpc_noise"):
        SecureNumbers(mpc_noise="gaussian")


@pytest.mark.parametrize(
    ("noise", "selection", "laplace"),
    [
        ("fixed_point", "SecureExponentialMechanism", "SecureLaplace"),
        ("discrete", "SecureReportNoisyMax", "SecureDiscreteLaplace"),
    ],
)
def test_the_mechanisms_follow_the_sampler_and_the_type(noise, selection, laplace):
    fmt = SecureNumbers(bit_length=40, mpc_noise=noise, laplace_sensitivity=2.0)
    split, leaf = fmt.mechanisms("laplace", 0.5, 1.0)
    assert type(split).__name__ == selection and type(leaf).__name__ == laplace
    assert split.sectype.bit_length == leaf.sectype.bit_length == 40
    assert leaf.sensitivity == 2
    none, em_leaf = fmt.mechanisms("exponential", None, 1.0)
    assert none is None and type(em_leaf).__name__ == selection
