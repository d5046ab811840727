"""Access to MPyC's runtime without letting a foreign command line configure it.

MPyC builds its runtime (``mpyc.runtime.mpc``) once per process, when
``mpyc.runtime`` is first imported, from ``sys.argv``: ``-M``/``-P``/``-I``
choose the parties, ``--no-log`` the logging and so on. That is right for an
MPyC program started from the command line, and wrong for a process whose
command line belongs to someone else (``pytest -k ...``, a notebook, a web
application): MPyC would read their flags as its own.

This module imports MPyC exactly once and decides which command line it sees:

* in a party process started by :mod:`privet.mpc.party` (or any program whose
  command line carries MPyC's party options ``-M``, ``-P``, ``-I``, ``-C``),
  MPyC reads the real command line, as MPyC programs always do;
* anywhere else it sees ``--no-log --no-prss`` only, which gives the one-party
  in-process runtime used by unit tests and plaintext-equivalent runs. PRSS
  (pseudorandom secret sharing) saves communication between several parties
  and costs a modular square root per random bit, so with one party it only
  costs time; ``--no-log`` keeps MPyC from configuring the root logger at INFO.

If ``mpyc.runtime`` was imported before privet, its runtime is used as it is.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: privet.data.validation.REDACT_ENV, spelled out so that a party does not import pandas
#: just to start (the seed-001 parties stay small); a test checks they agree.
REDACT_ENV = "PRIVET_REDACT_PRIVATE_VALUES"

_PARTY_PROCESS = False
_TOPOLOGY_FLAGS = ("-M", "-P", "-I", "-C", "--config", "--index")
_IN_PROCESS_ARGV = ("--no-log", "--no-prss")


def mark_party_process() -> None:
    """Declare that this process is an MPC party configured by its command line.

    A party's errors reach the other parties and the host's logs, so from here on
    privet's data validation names columns and counts but withholds private values
    and row numbers (:data:`privet.data.validation.REDACT_ENV`).
    """
    global _PARTY_PROCESS
    _PARTY_PROCESS = True
    os.environ[REDACT_ENV] = "1"


def _argv_configures_parties(argv: list[str]) -> bool:
    for token in argv[1:]:
        for flag in _TOPOLOGY_FLAGS:
            if token == flag or token.startswith(flag + "="):
                return True
            if len(flag) == 2 and token.startswith(flag) and token[2:].isdigit():
                return True  # -M3, -I1
    return False


def get_runtime() -> Any:
    """Return MPyC's runtime object (``mpyc.runtime.mpc``), importing MPyC if needed.

    Returns
    -------
    mpyc.runtime.Runtime
        The process-wide runtime.
    """
    module = sys.modules.get("mpyc.runtime")
    if module is None or not hasattr(module, "mpc"):
        use_own_argv = _PARTY_PROCESS or _argv_configures_parties(sys.argv)
        saved = sys.argv
        if not use_own_argv:
            sys.argv = [saved[0] if saved else "privet", *_IN_PROCESS_ARGV]
        try:
            import mpyc.runtime as module
        finally:
            if not use_own_argv:
                sys.argv = saved
        if not hasattr(module, "mpc"):  # MPyC swallows setup errors and prints them
            from privet.errors import MPCError

            raise MPCError(
                "MPyC could not set up its runtime from the command line "
                f"{sys.argv!r}; check the MPyC options (-P host:port, -I index, -T threshold)."
            )
    from privet.mpc.fastrandom import install

    install()  # bulk uniform coefficients for MPyC's Shamir sharing (same distribution)
    return module.mpc


def ensure_mpyc() -> None:
    """Import MPyC (and build its runtime) under the rules of this module."""
    get_runtime()
