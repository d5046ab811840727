"""Drive ``privet`` as a subprocess (``python -m privet``), as a user's shell would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self):  # type: ignore[no-untyped-def]
        return json.loads(self.out)


def run_privet(*args: str, cwd: Path, timeout: float = 120, stdin: str | None = None) -> Run:
    env = {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-m", "privet", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin if stdin is not None else "",
        env=env,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def privet(tmp_path):  # type: ignore[no-untyped-def]
    """``privet(*args)`` in a fresh directory holding the bundled car.csv and tennis.csv."""
    for name in ("car.csv", "tennis.csv"):
        data = resources.files("privet.data").joinpath("bundled", name).read_bytes()
        (tmp_path / name).write_bytes(data)

    def call(*args: str, **kw):  # type: ignore[no-untyped-def]
        return run_privet(*args, cwd=tmp_path, **kw)

    call.dir = tmp_path  # type: ignore[attr-defined]
    return call
