"""A trained model on disk: ``model.json``, ``estimator.pkl`` and one share file per party.

``model.json`` and ``schema.json`` are public: the learner, its public parameters, the schema, the
ledger and dataset it was charged to, what was spent and claimed.
``estimator.pkl`` is the fitted estimator without its ledger. A secret-shared
model (an ``ObliviousID3Classifier`` or an oblivious forest trained through
MPC, whose ``model_``/``models_`` hold a
:class:`~privet.learners.oblivious_id3.host.SharedModel`) is never
reconstructed: each party's shares go to ``party-<i>.pkl`` (the file that
party's server keeps) and ``estimator.pkl`` holds only a reference and the
public shape. The files are pickles: load only model directories you wrote.
"""

from __future__ import annotations

import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

from privet.cli._output import DataInvalid, UsageError

__all__ = ["FORMAT", "load_model", "read_meta", "save_model"]

FORMAT = "privet-model"
META, SCHEMA, ESTIMATOR = "model.json", "schema.json", "estimator.pkl"


def _shared_type() -> type:
    from privet.learners.oblivious_id3.host import SharedModel

    return SharedModel


class _Pickler(pickle.Pickler):
    """Drops ledgers and scopes; puts each SharedModel's shares aside, one list per party."""

    def __init__(self, fh: Any) -> None:
        super().__init__(fh, protocol=pickle.HIGHEST_PROTOCOL)
        from privet.ledger import Ledger, Scope

        self._ledger_types = (Ledger, Scope)
        self._shared = _shared_type()
        self.shares: list[tuple[Any, ...]] = []

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, self._ledger_types):
            return ("ledger",)
        if isinstance(obj, self._shared):
            self.shares.append(obj.shares)
            public = {
                "reveals": obj.reveals,
                "stats": obj.stats,
                "testing_noise": obj.testing_noise,
                "params": obj.params,
            }
            return ("shared", len(self.shares) - 1, public)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh: Any, parties: list[list[Any]]) -> None:
        super().__init__(fh)
        self._parties = parties

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "ledger":
            return None
        if pid[0] == "shared":
            _, k, public = pid
            shares = tuple(party[k] for party in self._parties)
            return _shared_type()(shares=shares, **public)
        raise pickle.UnpicklingError(f"unknown reference {pid!r} in {ESTIMATOR}")


def _public_params(est: Any) -> dict[str, Any]:
    out = {}
    for k, v in est.get_params(deep=False).items():
        if k in ("ledger", "schema"):
            continue
        out[k] = v if isinstance(v, str | int | float | bool | type(None)) else repr(v)
    return out


def check_out_dir(out: str) -> None:
    """Refuse before anything is charged: ``out`` must be new, empty or a model directory."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out!r} is a file; give a directory for the model.")
    if path.is_dir() and any(path.iterdir()) and not (path / META).is_file():
        raise UsageError(
            f"--out {out!r} is a directory that holds other files; give a new or empty "
            "directory (a previous model directory is replaced)."
        )


def save_model(est: Any, out: str, meta: dict[str, Any]) -> list[str]:
    """Write the fitted ``est`` to directory ``out``; returns the files written."""
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("party-*.pkl"):
        old.unlink()
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(est)
    n_parties = len(pickler.shares[0]) if pickler.shares else 0
    files = [META, SCHEMA, ESTIMATOR]
    for i in range(n_parties):
        name = f"party-{i}.pkl"
        with open(path / name, "wb") as fh:
            pickle.dump([s[i] for s in pickler.shares], fh, protocol=pickle.HIGHEST_PROTOCOL)
        files.append(name)
    (path / ESTIMATOR).write_bytes(buf.getvalue())
    schema = getattr(est, "schema_", None) or est.schema
    (path / SCHEMA).write_text(schema.to_json() + "\n", encoding="utf-8")
    meta = {
        "format": FORMAT,
        "version": 1,
        "learner": type(est).__name__,
        "module": type(est).__module__,
        "params": _public_params(est),
        "schema": schema.to_dict(),
        "secret_shared": bool(n_parties),
        "holds_private_data": bool(getattr(est, "holds_private_data_", False)),
        "parties": n_parties,
        "files": files,
        **meta,
    }
    (path / META).write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    return [str(path / f) for f in files]


def read_meta(model: str) -> dict[str, Any]:
    """The public ``model.json`` of a model directory."""
    path = Path(model) / META
    if not path.is_file():
        raise DataInvalid(
            f"No privet model at {model!r} (no {META}); train one with `privet train ... "
            f"--out {model}`."
        )
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataInvalid(f"{path} is damaged ({exc}); train the model again.") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DataInvalid(f"{path} is not a privet model description; train the model again.")
    return meta


def load_model(model: str) -> tuple[Any, dict[str, Any]]:
    """The fitted estimator (its shares read back from the party files) and its metadata."""
    meta = read_meta(model)
    path = Path(model)
    parties = []
    for i in range(int(meta.get("parties", 0))):
        share = path / f"party-{i}.pkl"
        if not share.is_file():
            raise DataInvalid(
                f"{share} is missing: a secret-shared model needs every party's share file."
            )
        with open(share, "rb") as fh:
            parties.append(pickle.load(fh))
    try:
        with open(path / ESTIMATOR, "rb") as fh:
            est = _Unpickler(fh, parties).load()
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise DataInvalid(
            f"Cannot load {os.path.join(model, ESTIMATOR)} ({exc}); train the model again "
            "with this privet version."
        ) from None
    return est, meta
