"""A schema file checked as a whole: against its JSON Schema first, then for its meaning.

privet ships the JSON Schema of its schema files (``privet/data/schema.schema.json``,
:data:`SCHEMA_FORMAT`; reference in docs/schema.md): editors that read JSON Schema
complete and check a file that names it. :func:`schema_file_problems` lists *every*
problem of a file, each with its place (``attributes[2].bins[1]``): the JSON syntax,
then what the JSON Schema says (keys, types, required fields), then what it cannot
say (bin cut points increasing and strictly inside ``(lower, upper)``, ``lower <
upper``, one label per bin, unique column names, two classes), which
:class:`~privet.data.Schema` checks. ``privet schema check`` prints them all before
it reads any data; :meth:`Schema.load` raises them in one :class:`SchemaError`.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from typing import Any

from privet.errors import DataNotFoundError, SchemaError

__all__ = ["SCHEMA_FORMAT_FILE", "check_schema_text", "schema_file_problems", "schema_format"]

#: The shipped JSON Schema's file name, inside the ``privet.data`` package.
SCHEMA_FORMAT_FILE = "schema.schema.json"


@cache
def schema_format() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of privet schema files, as a dict."""
    text = resources.files("privet.data").joinpath(SCHEMA_FORMAT_FILE).read_text("utf-8")
    return json.loads(text)


def _place(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the file"


def _message(error: Any) -> str:
    """A jsonschema error in a user's words."""
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"unexpected key(s) {extra}; allowed keys are {allowed}"
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"no {missing[:1]} key (required: {error.validator_value})"
    if error.validator == "anyOf" and error.path and error.path[-1] == "categories":
        return "categories must be all strings, all integers or all booleans"
    if error.validator == "minItems":
        what = "classes" if error.path and error.path[0] == "target" else "categories"
        return f"needs at least {error.validator_value} {what}, got {error.instance!r}"
    if error.validator == "uniqueItems":
        return f"{error.instance!r} lists a value twice; list each once"
    if error.validator == "const":
        return f"must be {error.validator_value!r}, got {error.instance!r}"
    if error.validator == "enum" and error.path and error.path[-1] == "type":
        return f"type must be 'categorical' or 'numeric', got {error.instance!r}"
    return error.message


def _json_problems(doc: Any) -> list[tuple[tuple[Any, ...], str]]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema_format())
    return [(tuple(e.absolute_path), _message(e)) for e in validator.iter_errors(doc)]


def _meaning_problems(
    doc: dict[str, Any], skip: set[Any], *, whole: bool
) -> list[tuple[tuple[Any, ...], str]]:
    """What the JSON Schema cannot say, for each attribute it found no fault with, then
    (when nothing else is wrong) for the whole schema: unique column names."""
    from privet.data.attributes import attribute_from_dict

    found = []
    for k, attr in enumerate(doc.get("attributes", [])):
        if ("attributes", k) not in skip:
            try:
                attribute_from_dict(attr)
            except SchemaError as exc:
                found.append((("attributes", k), str(exc)))
    if ("target",) not in skip:
        try:
            attribute_from_dict(doc["target"])
        except SchemaError as exc:
            found.append((("target",), str(exc)))
    if not found and whole:
        names = [a["name"] for a in doc["attributes"]] + [doc["target"]["name"]]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            found.append(
                (
                    (),
                    f"the column names {twice} appear more than once (features and class "
                    "together); every column needs a unique name",
                )
            )
    return found


def schema_file_problems(text: str | bytes) -> list[str]:
    """Every problem of a schema file's text, each with its place; empty if it is valid.

    The JSON Schema's findings, and the meaning of every attribute it found no fault
    with (cut points in order and inside the range, ...), in the order of the file.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"the file: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"]
    except UnicodeDecodeError as exc:
        return [f"the file: not UTF-8 text ({exc})"]
    found = _json_problems(doc)
    if isinstance(doc, dict) and "target" in doc:
        skip = {path[:2] if path[:1] == ("attributes",) else path[:1] for path, _ in found}
        skip.discard(())
        found += _meaning_problems(doc, skip, whole=not found)
    found.sort(key=lambda pm: tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in pm[0]))
    return [f"{_place(path)}: {message}" for path, message in found]


def check_schema_text(text: str | bytes, where: str = "the schema") -> None:
    """Raise one :class:`SchemaError` listing every problem of a schema file's text."""
    found = schema_file_problems(text)
    if found:
        plural = "" if len(found) == 1 else "s"
        raise SchemaError(
            f"{where} is not a valid privet schema ({len(found)} problem{plural}): "
            + "; ".join(found)
            + ". The format: docs/schema.md (JSON Schema: privet/data/schema.schema.json)."
        )


def read_schema_text(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise DataNotFoundError(f"No schema file at {os.fspath(path)!r}; check the path.") from None
