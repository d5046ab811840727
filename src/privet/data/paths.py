"""Where the real datasets live.

The shared data files (see ``shared/data/README.md`` of the project) are not
part of the package. A file is looked up, in this order, in:

1. the ``data_dir`` argument, when given;
2. else the directory named by the environment variable ``PRIVET_DATA_DIR``;
3. else a ``shared/data`` directory found by walking up from this package's
   location and from the current working directory (a checkout of the
   project keeps its data in ``../shared/data``).

The first rule that applies is the only one used: an explicit ``data_dir`` or
``PRIVET_DATA_DIR`` that lacks the file is an error, never a silent fallback
to some other copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from privet.errors import DataNotFoundError

__all__ = ["ENV_VAR", "candidate_data_dirs", "find_data_file"]

#: Environment variable naming the data directory.
ENV_VAR = "PRIVET_DATA_DIR"


def _walk_up(start: Path) -> list[Path]:
    return [p / "shared" / "data" for p in (start, *start.parents)]


def candidate_data_dirs(data_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Directories that will be searched, in order (see the module docstring)."""
    if data_dir is not None:
        return [Path(data_dir).expanduser()]
    env = os.environ.get(ENV_VAR)
    if env:
        return [Path(env).expanduser()]
    out: list[Path] = []
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for cand in _walk_up(start):
            if cand not in out:
                out.append(cand)
    return out


def find_data_file(relpath: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Absolute path of ``relpath`` inside the data directory.

    Raises
    ------
    DataNotFoundError
        Naming every path tried and how to point privet at the data.
    """
    tried = [d / relpath for d in candidate_data_dirs(data_dir)]
    for path in tried:
        if path.is_file():
            return path
    if data_dir is not None:
        source = f"data_dir={os.fspath(data_dir)!r}"
    elif os.environ.get(ENV_VAR):
        source = f"{ENV_VAR}={os.environ[ENV_VAR]!r}"
    else:
        source = f"no data_dir and no {ENV_VAR}, so shared/data was searched upwards"
    shown = ", ".join(str(p) for p in tried)
    raise DataNotFoundError(
        f"Dataset file {relpath!r} not found ({source}); tried: {shown}. Set the environment "
        f"variable {ENV_VAR} to the directory holding the shared data, or pass data_dir=..."
    )
