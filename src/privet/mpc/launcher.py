"""Start MPC parties as separate processes on this machine, or one party in process.

:func:`launch` runs a party program (see :mod:`privet.mpc.party`) as m OS
processes that talk over TCP on localhost through MPyC's own runtime: each
process is ``python -m privet.mpc.party TARGET ... -P host:port (m times) -I i
-T t``, i.e. MPyC's standard command-line configuration, with free ports
chosen at launch so that parallel runs do not collide. The launcher collects
each party's pickled report (result and :class:`~privet.mpc.stats.PartyStats`)
and raises :class:`MPCPartyError`, naming the parties at fault, when a party
dies, raises, or stops answering. The same party command runs on separate
hosts without the launcher (see :mod:`privet.mpc.party`).

:func:`run_local` runs a party program in this process with MPyC's one-party
runtime (no secret sharing, no network): the unit-test path.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from privet.errors import InvalidParameterError, MPCError
from privet.mpc._runtime import get_runtime
from privet.mpc.party import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    HOST_PID_ENV,
    PartyContext,
    call_program,
    check_target,
    load_target,
)
from privet.mpc.progress import PROGRESS_EVERY, PROGRESS_FILE, Progress, ProgressReader
from privet.mpc.stats import PartyStats, RunResult, RunStats

_OWN_FAULT = ("exception", "bad_target", "result_not_picklable", "port_in_use")
_ACCUSING = ("peer_lost", "peer_unresponsive", "start_timeout", "shutdown_timeout")


class MPCPartyError(MPCError):
    """An MPC run failed in one or more parties.

    Attributes
    ----------
    culprits : tuple of int
        The parties at the origin of the failure (died, raised, stopped answering).
    descriptions : dict of int to str
        What happened in each party that did not succeed.
    reports : tuple
        Each party's report dict (``None`` if it wrote none).
    kind : str
        ``"died"`` (a process ended without a report), ``"exception"`` (the
        program raised), ``"bad_target"``, ``"result_not_picklable"``,
        ``"port_in_use"``, ``"unresponsive"`` (blamed by the others for
        silence), ``"timeout"`` (``run_timeout``) or ``"failed"``.
    """

    def __init__(
        self,
        message: str,
        *,
        culprits: tuple[int, ...],
        descriptions: dict[int, str],
        reports: tuple[Any, ...],
        kind: str,
    ) -> None:
        super().__init__(message)
        self.culprits = culprits
        self.descriptions = descriptions
        self.reports = reports
        self.kind = kind


def default_start_timeout(timeout: float) -> float:
    """Start-up limit that follows the run's ``timeout``: ``2 * timeout`` within [30, 120] s."""
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        return DEFAULT_START_TIMEOUT
    if t != t:  # NaN: let the parameter check report it
        return DEFAULT_START_TIMEOUT
    return max(30.0, min(DEFAULT_START_TIMEOUT, 2.0 * t))


def free_ports(count: int, host: str = "") -> list[int]:
    """Ask the OS for ``count`` distinct free TCP ports (released before returning).

    Another process may take a port between this call and the party binding
    it; :func:`launch` retries with new ports when a party reports that.
    """
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _check_json(value: Any, name: str) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"{name} must be JSON-serialisable (numbers, strings, lists, dicts), got an error: "
            f"{exc}; pass file paths or seeds instead of arrays."
        ) from exc


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class PartyGroup:
    """Running party processes of one launch; use :func:`spawn` to create it.

    Attributes
    ----------
    processes : list of subprocess.Popen
        One per party, in party order.
    ports : list of int
        The TCP port of each party.
    workdir : pathlib.Path
        Directory with each party's arguments, report and log (``party{i}.log``).
    """

    def __init__(
        self,
        target: str,
        processes: list[subprocess.Popen],
        ports: list[int],
        workdir: Path,
        *,
        remove_workdir: bool,
        grace: float,
    ) -> None:
        self.target = target
        self.processes = processes
        self.ports = ports
        self.workdir = workdir
        self._remove_workdir = remove_workdir
        self._grace = grace
        self._started = time.monotonic()
        self._killed: set[int] = set()

    @property
    def pids(self) -> list[int]:
        """OS process ids of the parties."""
        return [p.pid for p in self.processes]

    def kill(self, party: int, sig: int = signal.SIGKILL) -> None:
        """Send a signal to one party process (for failure tests and emergencies)."""
        self.processes[party].send_signal(sig)

    def _kill_remaining(self) -> None:
        for i, p in enumerate(self.processes):
            if p.poll() is None:
                self._killed.add(i)
                p.kill()
        for p in self.processes:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not block
                pass

    def wait(
        self,
        run_timeout: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> RunResult:
        """Wait for all parties and return their results and stats.

        Parameters
        ----------
        run_timeout : float or None, default=None
            Kill all parties and fail if the run takes longer (wall time since
            the processes started). Without it a run ends when the parties
            finish or fail; each party fails by itself within its ``timeout``
            when a peer stops answering.
        on_progress : callable or None, default=None
            Called with a :class:`~privet.mpc.progress.Progress` for each opening
            of party 0, about once a second while the run goes on (each is also
            an INFO record of the ``privet.mpc.progress`` logger).

        Raises
        ------
        MPCPartyError
            A party died, raised, or stopped answering; the message names it.
        """
        first_failure: float | None = None
        timed_out = False
        progress = ProgressReader(self.workdir / PROGRESS_FILE, self.target, on_progress)
        polled = time.monotonic()
        while True:
            codes = [p.poll() for p in self.processes]
            now = time.monotonic()
            if now - polled >= PROGRESS_EVERY:
                progress.poll()
                polled = now
            if all(c is not None for c in codes):
                break
            if first_failure is None and any(c not in (None, 0) for c in codes):
                first_failure = now
            if first_failure is not None and (
                now - first_failure > self._grace or self._only_accused_running(codes)
            ):
                self._kill_remaining()
                break
            if run_timeout is not None and now - self._started > run_timeout:
                timed_out = True
                self._kill_remaining()
                break
            time.sleep(0.02)
        elapsed = time.monotonic() - self._started
        progress.poll()
        codes = [p.poll() for p in self.processes]
        reports = tuple(self._read_report(i) for i in range(len(self.processes)))
        if not timed_out and all(r is not None and r["ok"] for r in reports):
            stats = RunStats(
                parties=tuple(PartyStats.from_dict(r["stats"]) for r in reports),
                elapsed_seconds=elapsed,
            )
            return RunResult(results=tuple(r["result"] for r in reports), stats=stats)
        raise self._diagnose(codes, reports, timed_out, run_timeout)

    def _only_accused_running(self, codes: list[int | None]) -> bool:
        """True if every party still running is blamed by a party that has exited."""
        running = {i for i, c in enumerate(codes) if c is None}
        accused = set()
        for i, c in enumerate(codes):
            if c not in (None, 0):
                report = self._read_report(i)
                if report is not None and report.get("failure"):
                    accused.add(report["failure"].get("peer"))
        return bool(running) and running <= accused

    def _read_report(self, i: int) -> dict | None:
        path = self.workdir / f"party{i}.pkl"
        if not path.exists():
            return None
        with open(path, "rb") as fh:
            return pickle.load(fh)

    def _diagnose(
        self,
        codes: list[int | None],
        reports: tuple[dict | None, ...],
        timed_out: bool,
        run_timeout: float | None,
    ) -> MPCPartyError:
        m = len(self.processes)
        descriptions: dict[int, str] = {}
        died: list[int] = []
        own_fault: list[int] = []
        accused: dict[int, list[int]] = {}
        stopped = [i for i in range(m) if i in self._killed and reports[i] is None]
        for i in range(m):
            report, code = reports[i], codes[i]
            if report is None:
                if i in self._killed:
                    descriptions[i] = "had not finished and was killed by the launcher"
                elif code is not None and code < 0:
                    descriptions[i] = f"died: killed by signal {signal.Signals(-code).name}"
                    died.append(i)
                else:
                    descriptions[i] = f"exited with status {code} without a report"
                    died.append(i)
                tail = _tail(self.workdir / f"party{i}.log")
                if tail and i not in self._killed:
                    descriptions[i] += "\n    end of its output:\n" + tail
            elif not report["ok"]:
                failure = report["failure"]
                descriptions[i] = failure["message"]
                if failure.get("traceback"):
                    descriptions[i] += "\n" + failure["traceback"]
                if failure["kind"] in _OWN_FAULT:
                    own_fault.append(i)
                elif failure["kind"] in _ACCUSING and failure.get("peer") is not None:
                    accused.setdefault(failure["peer"], []).append(i)
        if timed_out:
            kind, culprits = "timeout", tuple(stopped)
            headline = (
                f"the run exceeded run_timeout={run_timeout} s; parties {list(culprits)} "
                "were still running and were killed"
            )
        elif died:
            kind, culprits = "died", tuple(died)
            headline = "; ".join(f"party {i} {descriptions[i].splitlines()[0]}" for i in died)
        elif own_fault:
            kinds = {reports[i]["failure"]["kind"] for i in own_fault}  # type: ignore[index]
            kind = kinds.pop() if len(kinds) == 1 else "exception"
            culprits = tuple(own_fault)
            headline = "; ".join(descriptions[i].splitlines()[0] for i in own_fault)
        else:
            # Nobody died or raised: the others gave up waiting. A live party notices a
            # lost connection at once, so a party still running after the grace period
            # (killed by the launcher) stopped answering; of several, the one the others
            # blamed: a survivor that was still waiting when the launcher killed it (a
            # busy party notices a lost connection late) is a bystander, not the culprit
            # (a frozen party 0 was reported as party 2's failure, 1 of 4 runs).
            blamed = {p for p in stopped if p in accused}
            silent = sorted((blamed or set(stopped)) | {p for p in accused if reports[p] is None})
            if silent:
                kind, culprits = "unresponsive", tuple(silent)
                headline = "; ".join(
                    f"party {p} stopped answering"
                    + (f" (blamed by parties {accused[p]})" if p in accused else "")
                    for p in culprits
                )
            else:
                kind = "failed"
                culprits = tuple(sorted(descriptions))
                headline = "parties " + ", ".join(map(str, culprits)) + " failed"
        lines = [f"MPC run of {self.target!r} with {m} parties failed: {headline}."]
        for i in sorted(descriptions):
            lines.append(f"  party {i}: {descriptions[i]}")
        lines.append(f"  (party logs: {self.workdir})" if not self._remove_workdir else "")
        return MPCPartyError(
            "\n".join(line for line in lines if line),
            culprits=culprits,
            descriptions=descriptions,
            reports=reports,
            kind=kind,
        )

    def close(self) -> None:
        """Kill any party still running and remove the work directory (if temporary)."""
        self._kill_remaining()
        for p in self.processes:
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    stream.close()
        if self._remove_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> PartyGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def spawn(
    target: str,
    args: Mapping[str, Any] | None = None,
    *,
    parties: int = 3,
    threshold: int | None = None,
    party_args: Sequence[Mapping[str, Any]] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    start_timeout: float | None = None,
    grace: float = 1.0,
    host: str = "127.0.0.1",
    mpyc_options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    python: str | None = None,
) -> PartyGroup:
    """Start the party processes and return at once; see :func:`launch` for the parameters.

    Returns
    -------
    PartyGroup
        Call :meth:`PartyGroup.wait` for the results; use it as a context
        manager so that the processes are killed on errors.
    """
    if not isinstance(target, str):
        raise InvalidParameterError(
            f"target must be a string 'package.module:function' or 'file.py:function' that "
            f"the party processes can import, got {target!r}."
        )
    check_target(target)
    if isinstance(parties, bool) or not isinstance(parties, int) or parties < 1:
        raise InvalidParameterError(f"parties must be an int >= 1, got {parties!r}.")
    t = (parties - 1) // 2 if threshold is None else threshold
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= 2 * t < parties:
        raise InvalidParameterError(
            f"threshold must be an int with 0 <= threshold < parties / 2 = {parties / 2}, got "
            f"{threshold!r} (semi-honest Shamir sharing needs an honest majority)."
        )
    if start_timeout is None:
        start_timeout = default_start_timeout(timeout)
    for name, value in (("timeout", timeout), ("start_timeout", start_timeout)):
        if not isinstance(value, int | float) or not value > 0:
            raise InvalidParameterError(f"{name} must be a number of seconds > 0, got {value!r}.")
    base_args = dict(args or {})
    per_party = [dict(a) for a in party_args] if party_args is not None else [{}] * parties
    if len(per_party) != parties:
        raise InvalidParameterError(
            f"party_args has {len(per_party)} entries for {parties} parties; give one dict "
            "per party."
        )
    payloads = [_check_json({**base_args, **extra}, "args") for extra in per_party]
    if workdir is None:
        directory = Path(tempfile.mkdtemp(prefix="privet-mpc-"))
        remove = True
    else:
        directory = Path(workdir)
        directory.mkdir(parents=True, exist_ok=True)
        remove = False
    ports = free_ports(parties)
    child_env = dict(os.environ)
    child_env.update(env or {})
    child_env[HOST_PID_ENV] = str(os.getpid())  # parties stop if this process dies
    paths = [p for p in sys.path if p]
    if child_env.get("PYTHONPATH"):
        paths.extend(child_env["PYTHONPATH"].split(os.pathsep))
    child_env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    child_env["PYTHONUNBUFFERED"] = "1"
    addresses = [arg for port in ports for arg in ("-P", f"{host}:{port}")]
    processes: list[subprocess.Popen] = []
    try:
        for i in range(parties):
            args_file = directory / f"party{i}.json"
            args_file.write_text(payloads[i])
            (directory / f"party{i}.pkl").unlink(missing_ok=True)
            progress = ["--progress-file", str(directory / PROGRESS_FILE)] if i == 0 else []
            cmd = [
                python or sys.executable,
                "-m",
                "privet.mpc.party",
                target,
                *progress,
                "--args-file",
                str(args_file),
                "--result-file",
                str(directory / f"party{i}.pkl"),
                "--timeout",
                repr(float(timeout)),
                "--start-timeout",
                repr(float(start_timeout)),
                *addresses,
                "-I",
                str(i),
                "-T",
                str(t),
                *mpyc_options,
            ]
            log = open(directory / f"party{i}.log", "wb")
            try:
                processes.append(
                    subprocess.Popen(
                        cmd,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        env=child_env,
                    )
                )
            finally:
                log.close()
    except BaseException:
        for p in processes:
            p.kill()
        if remove:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    return PartyGroup(target, processes, ports, directory, remove_workdir=remove, grace=grace)


def launch(
    target: str,
    args: Mapping[str, Any] | None = None,
    *,
    parties: int = 3,
    threshold: int | None = None,
    party_args: Sequence[Mapping[str, Any]] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    start_timeout: float | None = None,
    run_timeout: float | None = None,
    grace: float = 1.0,
    host: str = "127.0.0.1",
    mpyc_options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    python: str | None = None,
    retries: int = 2,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunResult:
    """Run a party program with ``parties`` MPyC parties as local processes.

    Parameters
    ----------
    target : str
        ``"package.module:function"`` or ``"path/to/file.py:function"``, called
        as ``function(ctx, **args)`` in every party (see :mod:`privet.mpc.party`).
        The parties get this process's ``sys.path``.
    args : mapping, optional
        JSON-serialisable keyword arguments for every party.
    parties : int, default=3
        Number of parties m.
    threshold : int or None, default=None
        Shamir threshold t, default (m - 1) // 2 (semi-honest, honest majority).
    party_args : sequence of mappings, optional
        Per-party keyword arguments (e.g. each data owner's file), merged over ``args``.
    timeout : float, default=60
        Seconds a party waits for a silent peer before failing (a lost
        connection fails at once). Must exceed the longest local computation
        between two messages.
    start_timeout : float or None, default=None
        Seconds to wait for all parties to connect; by default twice ``timeout``,
        between 30 and 120 s, so a party that stalls while starting is caught on
        the same scale as one that stalls later.
    run_timeout : float or None, default=None
        Overall wall-time limit of the run.
    grace : float, default=1
        After the first party fails, seconds the others get to notice (a lost
        connection is noticed at once), report and exit before they are
        killed; a party still running then is blamed as unresponsive.
    host : str, default="127.0.0.1"
        Address the parties use to reach each other.
    mpyc_options : sequence of str, default=()
        Extra MPyC command-line options (``--no-prss``, ``--log-level``, ``-L``, ...).
    env : mapping, optional
        Extra environment variables for the parties.
    workdir : path, optional
        Keep arguments, reports and logs in this directory (default: a
        temporary directory, removed afterwards).
    python : str, optional
        Python interpreter for the parties (default: this one).
    retries : int, default=2
        New attempts with fresh ports if a chosen port was taken meanwhile.
    on_progress : callable or None, default=None
        Called with each opening of party 0 while the run goes on (see
        :meth:`PartyGroup.wait`); the openings are also logged at INFO.

    Returns
    -------
    RunResult
        ``results`` (each party's return value, in party order) and ``stats``.

    Raises
    ------
    MPCPartyError
        A party died, raised or stopped answering; the message names it and
        carries each party's report (tracebacks included).

    Examples
    --------
    >>> from privet.mpc import launch
    >>> run = launch("privet.mpc.programs:secure_sum", {"n": 1000}, parties=3)  # doctest: +SKIP
    >>> run.results[0]["sum"] == run.results[0]["expected"]  # doctest: +SKIP
    True
    """
    for attempt in range(retries + 1):
        with spawn(
            target,
            args,
            parties=parties,
            threshold=threshold,
            party_args=party_args,
            timeout=timeout,
            start_timeout=start_timeout,
            grace=grace,
            host=host,
            mpyc_options=mpyc_options,
            env=env,
            workdir=workdir,
            python=python,
        ) as group:
            try:
                return group.wait(run_timeout=run_timeout, on_progress=on_progress)
            except MPCPartyError as exc:
                if exc.kind != "port_in_use" or attempt == retries:
                    raise
    raise AssertionError("unreachable")  # pragma: no cover


def run_local(target: str | Callable[..., Any], args: Mapping[str, Any] | None = None) -> RunResult:
    """Run a party program in this process with MPyC's one-party runtime.

    No secret sharing and no network: every MPyC operation runs locally, so
    this is the fast path for unit tests (compare opened results with numpy)
    and gives the same output distribution as a multi-party run.

    Parameters
    ----------
    target : str or callable
        Import path (as in :func:`launch`) or the function itself.
    args : mapping, optional
        Keyword arguments (need not be JSON-serialisable here).

    Returns
    -------
    RunResult
        One result; stats with zero traffic.
    """
    program = load_target(target) if isinstance(target, str) else target
    mpc = get_runtime()
    if len(mpc.parties) != 1:
        raise MPCError(
            f"run_local needs MPyC's one-party runtime, but this process was set up for "
            f"{len(mpc.parties)} parties (from its command line); use launch() instead."
        )
    ctx = PartyContext(pid=0, n_parties=1, threshold=0, runtime=mpc)
    kwargs = dict(args or {})

    async def session() -> tuple[Any, float, float]:
        t0 = time.perf_counter()
        await mpc.start()
        t1 = time.perf_counter()
        result = await call_program(program, ctx, kwargs)
        t2 = time.perf_counter()
        await mpc.shutdown()
        return result, t1 - t0, t2 - t1

    started = time.perf_counter()
    result, connect, seconds = mpc.run(session())
    stats = RunStats(
        parties=(PartyStats(party=0, seconds=seconds, connect_seconds=connect),),
        elapsed_seconds=time.perf_counter() - started,
    )
    return RunResult(results=(result,), stats=stats)
