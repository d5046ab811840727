"""The host sizes ODP+FMPC's secure type with every range check the parties make."""

from __future__ import annotations

import pytest

from privet.errors import InvalidParameterError
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.programs import check_run_sizes, choose_bit_length
from privet.mpc.fixedpoint import secfxp_type

DISCRETE = SecureNumbers(mpc_noise="discrete")


def test_exact_split_keys_are_sized_from_the_attributes():
    # Adult: 12 attributes; 4,000 rows give keys up to 48,024, beyond 32-bit fixed point
    # (integer part below 2**15): the parties refuse such a run, so the host must not pick it.
    run = {"split_epsilon": None, "leaf_epsilon": 0.75, "oblivious": True}
    with pytest.raises(InvalidParameterError, match="split keys"):
        check_run_sizes(4000, DISCRETE.replace(bit_length=32), n_attributes=12, **run)
    bits = choose_bit_length(4000, DISCRETE, n_attributes=12, **run)
    f = secfxp_type(bits).frac_length
    assert (4000 + 1) * 12 + 12 < 2 ** (bits - f - 1)
    assert bits > 32


def test_dp_splits_do_not_need_the_exact_keys_range():
    run = {"split_epsilon": 0.05, "leaf_epsilon": 0.75, "oblivious": True}
    # the noisy-max keys (n + 2 bound + 2) decide; the exact keys' range is not required
    with_attributes = choose_bit_length(4000, DISCRETE, n_attributes=12, **run)
    assert with_attributes == choose_bit_length(4000, DISCRETE, **run)
