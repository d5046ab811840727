"""Run one MPC party: ``python -m privet.mpc.party TARGET [options] [MPyC options]``.

TARGET is a party program, ``package.module:function`` or
``path/to/file.py:function``: a function (plain or ``async``) called as
``function(ctx, **args)`` in every party once all parties are connected,
with ``ctx`` a :class:`PartyContext` (party index, number of parties, MPyC
runtime). Its return value is the party's result; it must pickle. A program
file may import the modules beside it relatively (``from .x import y``): its
directory is loaded as a package whose ``__init__.py`` is not run.

Options (privet's; everything else on the command line is MPyC's own):

``--args JSON`` / ``--args-file PATH``
    Keyword arguments for the program, a JSON object.
``--result-file PATH``
    Write a pickled report (result, :class:`~privet.mpc.stats.PartyStats`,
    or the failure) there; without it the result is printed as JSON.
``--timeout SECONDS`` (default 60)
    A peer that sends nothing for this long while this party waits for it is
    declared unresponsive, and this party exits with an error. A lost
    connection is reported at once. Must exceed the longest local
    computation of any party between two messages.
``--start-timeout SECONDS`` (default 120)
    How long to wait for all parties to connect.
``--progress-file PATH``
    Append one JSON line there before every opening (:mod:`privet.mpc.progress`);
    the launcher gives it to party 0 and logs the lines as the run goes on.

Running on separate hosts
-------------------------
The launcher (:func:`privet.mpc.launch`) is a convenience for one machine.
On real hosts, start the same command on every host with MPyC's own options,
one ``-P host:port`` per party in the same order everywhere, and ``-I`` the
index of the local party::

    # on host a.example (party 0), b.example (party 1), c.example (party 2):
    python -m privet.mpc.party mypkg.programs:train --args-file args.json \\
        --result-file out.pkl \\
        -P a.example:11365 -P b.example:11365 -P c.example:11365 -I 0   # -I 1, -I 2

Each party listens on its own port (all interfaces) for the parties with a
lower index and connects to those with a higher index, so the ports must be
reachable between the hosts; add ``--ssl`` (MPyC's option, with its
``.config`` key files) on untrusted networks. ``-T t`` sets the threshold
(default (m - 1) // 2), ``-M 3`` alone runs three local parties on MPyC's
default ports (MPyC starts the other two itself). Nothing here goes beyond
MPyC's runtime: privet adds the failure detection and the traffic counters.

Exit status: 0 on success, 1 if the program raised or a peer failed, 2 on bad
arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import logging
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privet.errors import InvalidParameterError, MPCError
from privet.mpc._runtime import get_runtime, mark_party_process
from privet.mpc.stats import LivenessProxy, PartyStats, TrafficMeter

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0
DEFAULT_START_TIMEOUT = 120.0
#: Environment variable through which the launcher tells a party its host's pid.
HOST_PID_ENV = "PRIVET_HOST_PID"


@dataclass(frozen=True, slots=True)
class PartyContext:
    """What a party program gets as its first argument.

    Attributes
    ----------
    pid : int
        This party's index, 0 <= pid < n_parties.
    n_parties : int
        Number of parties m.
    threshold : int
        Shamir threshold t (semi-honest security against t colluding parties).
    runtime : mpyc.runtime.Runtime
        MPyC's runtime (the ``mpc`` object of MPyC programs).
    """

    pid: int
    n_parties: int
    threshold: int
    runtime: Any


class PartyFailure(MPCError):
    """A party could not complete the protocol (raised inside a party process).

    Attributes
    ----------
    kind : str
        ``"peer_lost"``, ``"peer_unresponsive"``, ``"start_timeout"``,
        ``"port_in_use"``, ``"shutdown_timeout"``, ``"bad_target"``, ``"host_lost"``,
        ``"result_not_picklable"``.
    peer : int or None
        The party blamed, if any.
    """

    def __init__(self, kind: str, message: str, peer: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.peer = peer


# ------------------------------------------------------------------ targets


def split_target(spec: str) -> tuple[str, str, bool]:
    """Split a target into (module or file, attribute, is_file), checking its shape."""
    module_part, sep, attr = str(spec).rpartition(":")
    if not sep or not module_part or not attr:
        raise InvalidParameterError(
            f"target must look like 'package.module:function' or 'path/to/file.py:function', "
            f"got {spec!r}."
        )
    return module_part, attr, module_part.endswith(".py") or os.sep in module_part


def check_target(spec: str) -> None:
    """Check that a target's module or file exists, without importing the module itself."""
    module_part, _, is_file = split_target(spec)
    if is_file:
        if not Path(module_part).is_file():
            raise InvalidParameterError(f"party program file {module_part!r} does not exist.")
        return
    try:
        found = importlib.util.find_spec(module_part)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise InvalidParameterError(
            f"cannot import the party program module {module_part!r}: no such module; check "
            "the import path (the launcher passes its sys.path to the parties)."
        )


def load_target(spec: str) -> Callable[..., Any]:
    """Import a party program from ``"package.module:function"`` or ``"file.py:function"``."""
    module_part, attr, is_file = split_target(spec)
    try:
        if is_file:
            path = Path(module_part).resolve()
            # the file's directory as a package of its own whose __init__ is never run: the
            # program may import its sibling modules relatively (``from .x import y``)
            # without importing the package it lives in, nor what that package imports
            package = "_privet_party_program_" + hashlib.sha256(bytes(path.parent)).hexdigest()[:12]
            if package not in sys.modules:
                package_spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
                package_spec.submodule_search_locations = [str(path.parent)]
                sys.modules[package] = importlib.util.module_from_spec(package_spec)
            name = f"{package}.{path.stem}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_part)
    except (ImportError, OSError) as exc:
        raise InvalidParameterError(
            f"cannot import the party program module {module_part!r}: {exc}; check the "
            "import path (the launcher passes its sys.path to the parties)."
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise InvalidParameterError(f"{module_part!r} has no attribute {attr!r}.")
    if not callable(obj):
        raise InvalidParameterError(f"{spec!r} is not callable.")
    return obj


async def call_program(program: Callable[..., Any], ctx: PartyContext, kwargs: dict) -> Any:
    """Call ``program(ctx, **kwargs)``, awaiting it if it is a coroutine."""
    result = program(ctx, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


# --------------------------------------------------------------- supervision


class _Supervisor:
    """Watches the peer connections of a running party and meters its traffic.

    A lost connection fails the party at once unless the party is shutting
    down and no message from that peer is still awaited; a peer from which a
    message is awaited but nothing arrives for ``timeout`` seconds fails it
    too.
    """

    def __init__(self, mpc: Any, timeout: float) -> None:
        self.mpc = mpc
        self.timeout = timeout
        self.loop = asyncio.get_running_loop()
        self.failure: asyncio.Future = self.loop.create_future()
        self.closing = False
        self.traffic = TrafficMeter(mpc)
        self.exchangers: dict[int, Any] = {}
        self.nbytes_at_start: dict[int, int] = {}
        self.waiting_since: dict[int, float] = {}
        # Set by privet's launcher: the host whose ledger pays for what this run opens.
        host = os.environ.get(HOST_PID_ENV, "")
        self.host_pid = int(host) if host.isdigit() else None

    def host_gone(self) -> bool:
        """Whether the launching host process has exited (parties started by hand: never)."""
        if self.host_pid is None:
            return False
        if os.getppid() != self.host_pid:  # re-parented: the host died
            return True
        try:
            os.kill(self.host_pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False

    def install(self) -> None:
        for peer in self.mpc.parties:
            if peer.pid == self.mpc.pid:
                continue
            exchanger = peer.protocol
            exchanger.transport.set_protocol(
                LivenessProxy(exchanger, self.traffic.peers[peer.pid], self._on_lost)
            )
            self.exchangers[peer.pid] = exchanger
            self.nbytes_at_start[peer.pid] = exchanger.nbytes_sent
        self.traffic.install()
        if self.host_pid is not None:
            self._guard_openings()

    def _guard_openings(self) -> None:
        """Check the host before every opening: a value opened after the host died could
        not be charged to its ledger. The watcher notices between its ticks; a program
        whose event loop is busy would open values until it does (3 of 10 runs
        finished after a SIGTERM of their host)."""
        mpc = self.mpc
        for name in ("output", "is_zero_public"):
            opening = getattr(mpc, name, None)
            if opening is None:
                continue

            def guarded(*args: Any, _opening: Any = opening, **kwargs: Any) -> Any:
                self.check_host()
                return _opening(*args, **kwargs)

            setattr(mpc, name, guarded)

    def check_host(self) -> None:
        """Fail (and raise) if the launching host process is gone."""
        if self.host_gone():
            failure = PartyFailure(
                "host_lost",
                f"party {self.mpc.pid} stops: the host process {self.host_pid} that "
                "launched this run is gone, so nothing this run opens could be "
                "charged to its ledger (its reservation is charged in full instead).",
                None,
            )
            self.fail(failure)
            raise failure

    def fail(self, failure: PartyFailure) -> None:
        if not self.failure.done():
            self.failure.set_exception(failure)

    @staticmethod
    def _awaiting(exchanger: Any) -> bool:
        return any(
            isinstance(v, asyncio.Future) and not v.done() for v in exchanger.buffers.values()
        )

    def _on_lost(self, peer: int, exc: BaseException | None, exchanger: Any) -> None:
        if self.closing and not self._awaiting(exchanger):
            exchanger.connection_lost(None)  # ordinary close during MPyC's shutdown
            return
        reason = f"{type(exc).__name__}: {exc}" if exc else "closed by the peer"
        self.fail(
            PartyFailure(
                "peer_lost",
                f"party {self.mpc.pid} lost its connection to party {peer} ({reason}) while "
                f"the protocol was running: party {peer} crashed, was killed, or gave up.",
                peer,
            )
        )

    async def watch(self) -> None:
        """Fail the party when the host is gone or a peer it awaits stays silent.

        A peer is silent from the latest of: when this party was first seen waiting
        for it (at the earliest, the previous tick: the wait may have begun while
        this party's own event loop was blocked), the last message it sent, and the
        last message this party sent it (it may need that to answer). After this
        party's loop was blocked (local computation), one tick is skipped, so that
        what the peers sent meanwhile is read first; the window is not restarted,
        which made a stall take up to twice the timeout to be noticed.
        """
        interval = max(0.02, min(0.25, self.timeout / 8))
        last_tick = time.monotonic()
        sent = {peer: ex.nbytes_sent for peer, ex in self.exchangers.items()}
        last_sent = dict.fromkeys(self.exchangers, last_tick)
        skipped = False
        while not self.failure.done():
            await asyncio.sleep(interval)
            now = time.monotonic()
            previous, last_tick = last_tick, now
            blocked = now - previous > 2 * interval + 0.25
            try:
                self.check_host()
            except PartyFailure:
                return
            skip = blocked and not skipped
            skipped = skip
            for peer, exchanger in self.exchangers.items():
                if exchanger.nbytes_sent != sent[peer]:
                    sent[peer], last_sent[peer] = exchanger.nbytes_sent, now
                if not self._awaiting(exchanger):
                    self.waiting_since.pop(peer, None)
                    continue
                since = self.waiting_since.setdefault(peer, previous)
                if skip:
                    continue
                heard = max(since, self.traffic.peers[peer].last_received, last_sent[peer])
                silent = now - heard
                if silent > self.timeout:
                    self.fail(
                        PartyFailure(
                            "peer_unresponsive",
                            f"party {self.mpc.pid} waited {silent:.1f} s for a message from "
                            f"party {peer} and got nothing: party {peer} stopped answering "
                            "(stopped, hung, overloaded or cut off). If a party legitimately "
                            "computes longer between messages, raise timeout.",
                            peer,
                        )
                    )
                    return

    def mpyc_bytes_sent(self) -> int:
        """Bytes sent since :meth:`install` by MPyC's own counters (cross-check)."""
        return sum(
            self.exchangers[j].nbytes_sent - self.nbytes_at_start[j] for j in self.exchangers
        )


async def _session(
    mpc: Any,
    program: Callable[..., Any],
    kwargs: dict,
    timeout: float,
    start_timeout: float,
) -> tuple[Any, PartyStats]:
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(mpc.start(), start_timeout)
    except TimeoutError:
        missing = [p.pid for p in mpc.parties if p.pid != mpc.pid and not _connected(p.protocol)]
        raise PartyFailure(
            "start_timeout",
            f"party {mpc.pid} could not connect to parties {missing} within {start_timeout} s; "
            "check that they were started with the same -P list and that the ports are "
            "reachable.",
            missing[0] if missing else None,
        ) from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            port = mpc.parties[mpc.pid].port
            raise PartyFailure(
                "port_in_use",
                f"party {mpc.pid} cannot listen on port {port}: already in use; choose "
                "another port for this party.",
            ) from exc
        raise
    connected = time.perf_counter()
    supervisor = _Supervisor(mpc, timeout)
    supervisor.install()
    watcher = asyncio.ensure_future(supervisor.watch())
    ctx = PartyContext(
        pid=mpc.pid, n_parties=len(mpc.parties), threshold=mpc.threshold, runtime=mpc
    )
    task = asyncio.ensure_future(call_program(program, ctx, kwargs))
    await asyncio.wait({task, supervisor.failure}, return_when=asyncio.FIRST_COMPLETED)
    if supervisor.failure.done():
        task.cancel()
        raise supervisor.failure.exception()  # type: ignore[misc]
    result = task.result()
    supervisor.check_host()  # finished, but its host is gone: nobody charges what it opened
    seconds = time.perf_counter() - connected
    supervisor.traffic.stop()
    stats = supervisor.traffic.party_stats(seconds, connected - t0)
    if stats.bytes_sent != supervisor.mpyc_bytes_sent():  # pragma: no cover - consistency
        logger.warning(
            "party %s: privet counted %d bytes sent, MPyC's nbytes_sent %d",
            mpc.pid,
            stats.bytes_sent,
            supervisor.mpyc_bytes_sent(),
        )
    supervisor.closing = True
    shutdown = asyncio.ensure_future(mpc.shutdown())
    await asyncio.wait(
        {shutdown, supervisor.failure}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
    )
    if supervisor.failure.done():
        raise supervisor.failure.exception()  # type: ignore[misc]
    if not shutdown.done():
        raise PartyFailure(
            "shutdown_timeout",
            f"party {mpc.pid} finished its program but MPyC's shutdown did not complete "
            f"within {timeout} s.",
        )
    shutdown.result()
    watcher.cancel()
    return result, stats


def _connected(protocol: Any) -> bool:
    return protocol is not None and not isinstance(protocol, asyncio.Future)


def _failure_record(pid: int, exc: BaseException, captured: list[BaseException]) -> dict:
    if isinstance(exc, PartyFailure):
        return {
            "kind": exc.kind,
            "peer": exc.peer,
            "message": str(exc),
            "traceback": None,
        }
    if isinstance(exc, RuntimeError) and "Event loop stopped" in str(exc) and captured:
        exc = captured[0]  # raised inside an MPyC coroutine, which stops the loop
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "kind": "exception",
        "peer": None,
        "message": f"party {pid}: the program raised {type(exc).__name__}: {exc}",
        "traceback": text,
        "exception_type": type(exc).__name__,
    }


def run_party(
    mpc: Any,
    program: Callable[..., Any],
    kwargs: dict,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    start_timeout: float = DEFAULT_START_TIMEOUT,
) -> dict:
    """Run a party program in this (multi-party) MPyC process and return its report.

    Returns
    -------
    dict
        ``{"party", "ok", "result", "stats", "failure"}``; ``stats`` is a
        :meth:`PartyStats.to_dict` dict, ``failure`` ``None`` or a dict with
        ``kind``, ``peer``, ``message`` and ``traceback``.
    """
    captured: list[BaseException] = []
    loop = mpc._loop
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        exc = context.get("exception")
        if exc is not None and not isinstance(exc, asyncio.CancelledError | ConnectionError):
            captured.append(exc)
        if previous is not None:
            previous(loop, context)
        else:  # pragma: no cover - MPyC always installs one
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    record: dict[str, Any] = {"party": mpc.pid, "ok": False, "result": None, "stats": None}
    try:
        result, stats = mpc.run(_session(mpc, program, kwargs, timeout, start_timeout))
    except BaseException as exc:
        record["failure"] = _failure_record(mpc.pid, exc, captured)
        return record
    try:
        pickle.dumps(result)
    except Exception as exc:
        record["failure"] = {
            "kind": "result_not_picklable",
            "peer": None,
            "message": f"party {mpc.pid}: the program's result cannot be pickled ({exc}); "
            "return numbers, strings, lists, dicts or numpy arrays.",
            "traceback": None,
        }
        return record
    record.update(ok=True, result=result, stats=stats.to_dict(), failure=None)
    return record


# ----------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m privet.mpc.party",
        description="Run one MPC party of a privet party program (MPyC options are accepted "
        "too: -P host:port per party, -I index, -T threshold, --ssl, ...).",
        allow_abbrev=False,
    )
    parser.add_argument("target", help="package.module:function or path/to/file.py:function")
    parser.add_argument("--args", default=None, help="JSON object of keyword arguments")
    parser.add_argument("--args-file", default=None, help="file with the JSON arguments")
    parser.add_argument("--result-file", default=None, help="write the pickled report here")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--start-timeout", type=float, default=DEFAULT_START_TIMEOUT)
    parser.add_argument(
        "--progress-file", default=None, help="append one JSON line per opening here"
    )
    return parser


def _write_record(record: dict, path: str | None) -> None:
    if path is None:
        if record["ok"]:
            print(json.dumps({"party": record["party"], "result": record["result"]}, default=repr))
        else:
            print(record["failure"]["message"], file=sys.stderr)
            if record["failure"].get("traceback"):
                print(record["failure"]["traceback"], file=sys.stderr)
        return
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(record, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _die_with_host() -> bool:
    """Ask Linux to SIGKILL this party the moment its host process dies (prctl
    PR_SET_PDEATHSIG), so that no party of a dead host opens another value; whether
    the host is still there. Parties started by hand (no host) are not affected;
    elsewhere than Linux the supervisor's checks remain (each opening, each tick)."""
    host = os.environ.get(HOST_PID_ENV, "")
    if not host.isdigit():
        return True
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    return os.getppid() == int(host)  # the host may have died before the prctl


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    mark_party_process()
    if not _die_with_host():
        print("privet party: the host process that launched it is already gone.", file=sys.stderr)
        return 1
    mpc = get_runtime()  # MPyC consumes its own options from sys.argv here
    ns = _parser().parse_args(sys.argv[1:])
    if mpc.pid is None:
        print(
            "this party's index is unknown: pass -I <index> (or give its own address with an "
            "empty host, -P :port).",
            file=sys.stderr,
        )
        return 2
    try:
        if ns.args_file is not None:
            kwargs = json.loads(Path(ns.args_file).read_text())
        else:
            kwargs = json.loads(ns.args) if ns.args else {}
        if not isinstance(kwargs, dict):
            raise InvalidParameterError(f"the arguments must be a JSON object, got {kwargs!r}.")
        program = load_target(ns.target)
    except (InvalidParameterError, ValueError, OSError) as exc:
        record = {
            "party": mpc.pid,
            "ok": False,
            "result": None,
            "stats": None,
            "failure": {
                "kind": "bad_target",
                "peer": None,
                "message": f"party {mpc.pid}: {exc}",
                "traceback": None,
            },
        }
        _write_record(record, ns.result_file)
        return 2
    if ns.progress_file is not None:
        from privet.mpc.progress import record_openings  # imports the secure types' module

        record_openings(ns.progress_file)
    record = run_party(mpc, program, kwargs, timeout=ns.timeout, start_timeout=ns.start_timeout)
    _write_record(record, ns.result_file)
    sys.stdout.flush()
    sys.stderr.flush()
    if not record["ok"]:
        os._exit(1)  # MPyC tasks of the aborted protocol may still be pending: do not wait
    return 0


if __name__ == "__main__":
    sys.exit(main())
