"""Input and opening helpers in the one-party runtime."""

from __future__ import annotations

import numpy as np
import pytest
from _mpc_helpers import opened

from privet.errors import InvalidParameterError
from privet.mpc import (
    add_reveal_hook,
    reveal,
    secfxp_type,
    share_array,
    share_horizontal,
    share_vertical,
)
from privet.mpc._runtime import _argv_configures_parties


def test_share_array_integer_bool_and_fixed_point(mpc):
    secint = mpc.SecInt(32)
    x = np.array([[1, -2], [3, 4]])
    assert np.array_equal(opened(mpc, share_array(x, secint)), x)
    b = np.array([True, False, True])
    assert np.array_equal(opened(mpc, share_array(b, secint)), [1, 0, 1])
    sectype = secfxp_type(32)
    y = np.array([0.5, -1.25])
    assert np.allclose(opened(mpc, share_array(y, sectype)), y)


def test_share_horizontal_and_vertical_with_one_owner(mpc):
    secint = mpc.SecInt(16)
    x = np.arange(12).reshape(4, 3)
    h = mpc.run(share_horizontal(x, secint))
    v = mpc.run(share_vertical(x, secint, shapes=[(4, 3)]))
    assert np.array_equal(opened(mpc, h), x) and np.array_equal(opened(mpc, v), x)


def test_share_rejects_bad_inputs_with_advice(mpc):
    secint = mpc.SecInt(8)
    with pytest.raises(InvalidParameterError, match="outside the range"):
        share_array(np.array([300]), secint)
    with pytest.raises(InvalidParameterError, match="encode categories as integers"):
        share_array(np.array(["a"]), secint)
    with pytest.raises(InvalidParameterError, match="sectype must be an MPyC secure"):
        share_array(np.array([1]), int)
    with pytest.raises(InvalidParameterError, match="one public shape per owner"):
        mpc.run(share_horizontal(np.array([1]), secint, shapes=[(1,), (1,)]))
    with pytest.raises(InvalidParameterError, match="owners must be distinct"):
        mpc.run(share_horizontal(np.array([1]), secint, owners=[0, 0]))


def test_reveal_calls_hooks_first_and_a_refusing_hook_opens_nothing(mpc):
    x = mpc.SecInt(32)(41) + 1
    events = []
    remove = add_reveal_hook(events.append)
    try:
        assert mpc.run(reveal(x, label="answer", entry="entry")) == 42
    finally:
        remove()
    assert events[0].label == "answer" and events[0].entry == "entry" and events[0].party == 0

    def refuse(event):
        raise RuntimeError(f"budget exhausted for {event.label}")

    remove = add_reveal_hook(refuse)
    try:
        with pytest.raises(RuntimeError, match="budget exhausted for secret"):
            mpc.run(reveal(x, label="secret"))
    finally:
        remove()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["pytest", "-m", "mpc", "-k", "x"], False),
        (["prog.py", "-M3"], True),
        (["prog.py", "-P", "a:1", "-P", "b:2"], True),
        (["prog.py", "--index=1"], True),
        (["prog.py", "--no-log"], False),
    ],
)
def test_mpyc_reads_the_command_line_only_of_party_programs(argv, expected):
    assert _argv_configures_parties(argv) is expected
