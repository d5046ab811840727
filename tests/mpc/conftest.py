"""Fixtures for the privet.mpc tests.

Unit tests run MPyC's one-party runtime in this process (no secret sharing,
no network): every secure result is opened and compared with numpy on the
plaintext. Tests that start real party processes are marked ``mpc``.
"""

from __future__ import annotations

from typing import Any

import pytest

from privet.mpc import get_runtime


@pytest.fixture(scope="session")
def mpc() -> Any:
    runtime = get_runtime()
    assert len(runtime.parties) == 1, "unit tests need MPyC's one-party runtime"
    runtime.run(runtime.start())
    return runtime
