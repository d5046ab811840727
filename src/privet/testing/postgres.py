"""A throw-away PostgreSQL server for tests and benchmarks of a shared ledger.

:class:`TemporaryPostgres` runs ``initdb`` and ``pg_ctl`` from an installed
PostgreSQL (``/usr/lib/postgresql/<version>/bin`` on Debian, or ``PG_BIN``) to
start a real server on a free local TCP port, with its data folder in a
temporary directory (by default on ``/dev/shm`` when there is one, so that a
test suite is not slowed by disk syncs; ``ram_disk=False`` puts it on the disk,
as a benchmark should; the server runs with ``fsync`` and synchronous commits on
either way). It can be stopped, killed and restarted on the same port and data,
which is how the fault tests take the budget server away in the middle of
charging. Nothing here mocks PostgreSQL: it is the server a team would run.

PostgreSQL refuses to run as root; as root, the server runs as the ``postgres``
system user (``runuser``), which owns the data folder.

Example::

    with TemporaryPostgres() as pg:
        led = Ledger.open(pg.url("ledger"), dataset="adult", budget=1.0)
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from privet.errors import DataNotFoundError, PrivetError

__all__ = ["TemporaryPostgres", "find_postgres_bin"]


def find_postgres_bin() -> str | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (``PG_BIN``, PATH or Debian's), or None."""
    env = os.environ.get("PG_BIN")
    if env and os.path.isfile(os.path.join(env, "pg_ctl")):
        return env
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0,
    )
    if versions:
        return os.path.dirname(versions[-1])
    found = shutil.which("initdb") and shutil.which("pg_ctl")
    return os.path.dirname(found) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TemporaryPostgres:
    """A PostgreSQL server in a temporary folder, on a free port (see module docstring)."""

    def __init__(
        self,
        *,
        bin_dir: str | None = None,
        settings: dict[str, str] | None = None,
        ram_disk: bool = True,
    ):
        bin_dir = bin_dir or find_postgres_bin()
        if bin_dir is None:
            raise DataNotFoundError(
                "No PostgreSQL server binaries found (initdb, pg_ctl); install PostgreSQL "
                "(Debian: apt-get install postgresql) or set PG_BIN to their folder."
            )
        self.bin_dir = bin_dir
        self.port = _free_port()
        base = "/dev/shm" if ram_disk and os.access("/dev/shm", os.W_OK) else None
        self.root = Path(tempfile.mkdtemp(prefix="privet-pg-", dir=base))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.settings = {"max_connections": "200", "shared_buffers": "32MB", **(settings or {})}
        self._user = "postgres" if os.geteuid() == 0 else None
        self._databases: set[str] = set()

    # ------------------------------------------------------------------ commands
    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [os.path.join(self.bin_dir, args[0]), *args[1:]]
        if self._user is not None:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def _own(self) -> None:
        if self._user is not None:
            pw = pwd.getpwnam(self._user)
            for p in [self.root, *self.root.rglob("*")]:
                os.chown(p, pw.pw_uid, pw.pw_gid)

    def start(self) -> TemporaryPostgres:
        """initdb (the first time) and start the server; wait until it accepts connections."""
        if not self.data.exists():
            self._own()
            out = self._run(
                "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                "--encoding=UTF8", "--no-instructions", check=False,
            )  # fmt: skip
            if out.returncode != 0:
                raise PrivetError(f"initdb failed: {out.stderr.strip() or out.stdout.strip()}")
        opts = " ".join(
            [f"-p {self.port}", "-c listen_addresses=127.0.0.1", f"-k {self.root}"]
            + [f"-c {k}={v}" for k, v in self.settings.items()]
        )
        out = self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60",
            "start", check=False,
        )  # fmt: skip
        if out.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PrivetError(f"PostgreSQL did not start: {out.stderr.strip()} {log}")
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: smart, fast or immediate, as pg_ctl takes it)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self, *, down_for: float = 0.0, mode: str = "fast") -> None:
        """Stop, wait ``down_for`` seconds, start again on the same port and data."""
        self.stop(mode)
        time.sleep(down_for)
        self.start()

    def create_database(self, name: str) -> None:
        """CREATE DATABASE ``name`` (once)."""
        if name in self._databases:
            return
        out = self._run(
            "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name,
            check=False,
        )  # fmt: skip
        if out.returncode != 0 and "already exists" not in out.stderr:
            raise PrivetError(f"createdb {name} failed: {out.stderr.strip()}")
        self._databases.add(name)

    def url(self, database: str = "privet", *, search_path: str | None = None) -> str:
        """A ``postgresql://`` URL of ``database`` (created if needed) on this server.

        ``search_path`` puts the ledger's tables in that PostgreSQL schema instead of
        the default ``privet`` (one isolated ledger per test, in one database).
        """
        self.create_database(database)
        url = f"postgresql://postgres@127.0.0.1:{self.port}/{database}"
        if search_path is not None:
            url += f"?options=-csearch_path%3D{search_path}"
        return url

    def close(self) -> None:
        """Stop the server at once and delete its folder."""
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
