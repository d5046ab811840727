"""The papers' preprocessing of Adult, Titanic and Heart (seed 000, Sec. 4, Table 1).

Seed 000 treats every attribute as discrete with a public domain and reports
(Table 1, App. C.4)::

    Dataset   rows    # of attributes   domain size
    Titanic    887           6               5
    Heart      297          14               5
    Adult    32651          13               7

"# of attributes" counts the class attribute (Heart's 13 features plus its
label make 14; the paper writes the class as A_0 among the attributes) and
"domain size" is the largest domain, the one-hot width ``w``. The paper does
not list its bins, so the choices below are privet's, made from public
knowledge only and hard-coded in the shipped schemas
(``privet/data/schemas/{adult,titanic,heart}.json``); nothing is computed
from the data at load time. Where the authors' public schemas exist
(arisa77/mrf-public, same research group) they were followed.

Adult (``adult``, ``adult_test``): 12 features + ``income`` = 13 attributes,
largest domain 7 -- as Table 1.

- Dropped: ``fnlwgt`` (a census sampling weight, not a property of the person)
  and ``education-num`` (a one-to-one recoding of ``education``), as in
  mrf-public's ``adult_schema.json``.
- ``age`` in [17, 90] (adult.names: AAGE > 16; 90 is the census top code),
  bins 17-24 / 25-44 / 45-64 / 65-90 (mrf-public's cut-offs 25, 45, 65).
- ``capital-gain``, ``capital-loss`` in [0, 99999] (the census field's top
  code): gain 0 / 1-4999 / 5000-9999 / 10000+, loss 0 / 1-1999 / 2000+.
- ``hours-per-week`` in [1, 99] (HRSWK > 0; two-digit field): 1-34 (part
  time, US BLS definition), 35-40, 41-49, 50-59, 60-99.
- ``workclass`` 5, ``education`` 7, ``marital-status`` 5, ``occupation`` 7,
  ``native-country`` 6 groups (mapping in :data:`ADULT_GROUPS`; UCI's
  ambiguous ``South`` is read as South Korea, in Asia); ``relationship`` 6,
  ``race`` 5, ``sex`` 2 as in UCI.
- Missing values (``?`` in workclass, occupation, native-country) become an
  explicit public category ``Unknown``; no row is dropped, so ``adult`` has
  32,561 rows (Table 1's 32,651 transposes two digits) and ``adult_test``
  16,281 (banner line skipped, trailing ``.`` of the labels removed).

Titanic (``titanic``): 5 features + ``Survived`` = 6 attributes, largest
domain 5 -- as Table 1. 890 rows, not 887.

- The paper's 887 rows are the Stanford CS109 re-release, whose six features
  are Pclass, Sex, Age, SibSp, Parch and Fare. Six attributes including the
  class leaves five features; privet drops ``Fare`` (strongly tied to
  ``Pclass``, no public bins). We only have Kaggle's ``train.csv`` (891 rows);
  which four rows CS109 removed is not documented, so none are removed except
  the one row (PassengerId 6) whose ``SibSp`` is blank in this copy: an
  unknown count cannot be binned, so that row is dropped.
- ``Pclass`` {1, 2, 3}; ``Sex`` {female, male}.
- ``Age`` (177 missing) becomes a categorical age group: 0-12 / 13-29 / 30-49
  / 50+ for ages in [0, 120] (public edges 13, 30, 50), and ``Unknown`` when
  missing -- five categories, the domain size 5 of Table 1.
- ``SibSp``, ``Parch`` in [0, 10]: 0 / 1 / 2 / 3+.

Heart (``heart``, UCI processed Cleveland): 13 features + ``disease`` = 14
attributes, largest domain 5, 297 rows -- as Table 1.

- The 6 rows with a missing value (``ca`` 4, ``thal`` 2) are dropped, which
  gives the paper's 297 rows; ``disease = 1`` iff ``num > 0``.
- Integer-coded attributes keep UCI's codes: ``sex`` {0, 1}, ``cp`` {1..4},
  ``fbs`` {0, 1}, ``restecg`` {0, 1, 2}, ``exang`` {0, 1}, ``slope``
  {1, 2, 3}, ``ca`` {0..3}, ``thal`` {3, 6, 7}.
- ``age`` in [0, 120], decades <40 / 40-49 / 50-59 / 60-69 / 70+ (5 bins:
  the domain size 5 of Table 1); ``trestbps`` in [50, 250] mmHg: <120 /
  120-139 / 140+ (AHA blood-pressure categories); ``chol`` in [0, 1000]
  mg/dl: <200 / 200-239 / 240+ (NCEP); ``thalach`` in [50, 250] bpm:
  <130 / 130-159 / 160+ and ``oldpeak`` in [0, 10]: <1 / 1-2 / 2+ (the
  cut-offs of mrf-public's ``heart_schema.json``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privet.data.schema import Schema
from privet.errors import SchemaError

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_GROUPS",
    "HEART_COLUMNS",
    "TITANIC_AGE_EDGES",
    "read_adult",
    "read_heart",
    "read_titanic",
]

#: UCI column order of adult.data / adult.test.
ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)

_ADULT_NUMERIC = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)

#: Public grouping of Adult's large categorical domains: group -> UCI values.
ADULT_GROUPS: dict[str, dict[str, tuple[str, ...]]] = {
    "workclass": {
        "Private": ("Private",),
        "Self-employed": ("Self-emp-not-inc", "Self-emp-inc"),
        "Government": ("Federal-gov", "Local-gov", "State-gov"),
        "Unpaid": ("Without-pay", "Never-worked"),
    },
    "education": {
        "Dropout": ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th"),
        "HS-grad": ("HS-grad",),
        "Some-college": ("Some-college",),
        "Associate": ("Assoc-acdm", "Assoc-voc"),
        "Bachelors": ("Bachelors",),
        "Masters": ("Masters",),
        "Doctorate-or-Prof": ("Doctorate", "Prof-school"),
    },
    "marital-status": {
        "Married": ("Married-civ-spouse", "Married-spouse-absent", "Married-AF-spouse"),
        "Never-married": ("Never-married",),
        "Divorced": ("Divorced",),
        "Separated": ("Separated",),
        "Widowed": ("Widowed",),
    },
    "occupation": {
        "Blue-collar": (
            "Craft-repair",
            "Handlers-cleaners",
            "Machine-op-inspct",
            "Farming-fishing",
            "Transport-moving",
        ),
        "White-collar": ("Exec-managerial", "Adm-clerical"),
        "Professional": ("Prof-specialty",),
        "Sales": ("Sales",),
        "Service": ("Tech-support", "Other-service", "Priv-house-serv", "Protective-serv"),
        "Armed-Forces": ("Armed-Forces",),
    },
    "native-country": {
        "North-America": ("United-States", "Canada", "Outlying-US(Guam-USVI-etc)"),
        "Central-America-Caribbean": (
            "Mexico",
            "Cuba",
            "Jamaica",
            "Puerto-Rico",
            "Honduras",
            "Dominican-Republic",
            "Haiti",
            "Guatemala",
            "Nicaragua",
            "El-Salvador",
            "Trinadad&Tobago",
        ),
        "South-America": ("Ecuador", "Columbia", "Peru"),
        "Europe": (
            "England",
            "Germany",
            "Greece",
            "Italy",
            "Poland",
            "Portugal",
            "Ireland",
            "France",
            "Hungary",
            "Scotland",
            "Yugoslavia",
            "Holand-Netherlands",
        ),
        "Asia": (
            "Cambodia",
            "India",
            "Japan",
            "China",
            "Iran",
            "Philippines",
            "Vietnam",
            "Laos",
            "Taiwan",
            "Thailand",
            "Hong",
            "South",
        ),
    },
}

#: Category given to Adult's ``?`` and Titanic's missing ages.
UNKNOWN = "Unknown"

#: Cleveland column order (processed.cleveland.data).
HEART_COLUMNS = (
    "age",
    "sex",
    "cp",
    "trestbps",
    "chol",
    "fbs",
    "restecg",
    "thalach",
    "exang",
    "oldpeak",
    "slope",
    "ca",
    "thal",
    "num",
)
_HEART_INT = ("sex", "cp", "fbs", "restecg", "exang", "slope", "ca", "thal")

#: Public age-group edges for Titanic: [0, 13), [13, 30), [30, 50), [50, 120].
TITANIC_AGE_EDGES = (13.0, 30.0, 50.0)
_TITANIC_AGE_RANGE = (0.0, 120.0)
_TITANIC_AGE_LABELS = ("0-12", "13-29", "30-49", "50+")


def _regroup(col: pd.Series, groups: dict[str, tuple[str, ...]]) -> pd.Series:
    """Map raw values to their public group; missing -> ``Unknown``.

    A raw value in no group is kept as it is, so that validation reports it
    instead of it turning silently into a missing value.
    """
    lookup = {raw: group for group, raws in groups.items() for raw in raws}
    mapped = col.map(lookup)
    unmapped = mapped.isna() & col.notna()
    mapped = mapped.astype(object)
    mapped[unmapped] = col[unmapped]
    mapped[col.isna()] = UNKNOWN
    return mapped


def _check_width(frame: pd.DataFrame, path: Path, expected: int) -> None:
    if frame.shape[1] != expected:
        raise SchemaError(
            f"{path} has {frame.shape[1]} columns, expected {expected}; is it the right file?"
        )


def read_adult(path: Path, schema: Schema, *, test: bool = False) -> pd.DataFrame:
    """Read adult.data (or adult.test) and apply the preprocessing above."""
    raw = pd.read_csv(
        path,
        header=None,
        names=list(ADULT_COLUMNS),
        skipinitialspace=True,
        na_values=["?"],
        keep_default_na=False,
        skiprows=1 if test else 0,  # adult.test starts with the banner "|1x3 Cross validator"
        skip_blank_lines=True,
        dtype={c: str for c in ADULT_COLUMNS if c not in _ADULT_NUMERIC},
    )
    _check_width(raw, path, len(ADULT_COLUMNS))
    out = raw.drop(columns=["fnlwgt", "education-num"])
    for column, groups in ADULT_GROUPS.items():
        out[column] = _regroup(out[column], groups)
    if test:
        # adult.test writes the labels "<=50K." and ">50K."
        out["income"] = out["income"].str.removesuffix(".")
    return out[list(schema.columns)]


def read_heart(path: Path, schema: Schema) -> pd.DataFrame:
    """Read processed.cleveland.data: drop the 6 incomplete rows, binarise ``num``."""
    raw = pd.read_csv(
        path, header=None, names=list(HEART_COLUMNS), na_values=["?"], keep_default_na=False
    )
    _check_width(raw, path, len(HEART_COLUMNS))
    out = raw.dropna(axis=0, how="any").copy()  # the paper's 297 complete rows
    for c in _HEART_INT:
        values = out[c].to_numpy(dtype=np.float64)
        if not np.array_equal(values, np.round(values)):
            raise SchemaError(f"{path}: column {c!r} holds non-integer codes; is the file intact?")
        out[c] = values.astype(np.int64)
    out["disease"] = (out["num"] > 0).astype(np.int64)
    return out.drop(columns=["num"])[list(schema.columns)].reset_index(drop=True)


def read_titanic(path: Path, schema: Schema) -> pd.DataFrame:
    """Read Kaggle's train.csv and apply the preprocessing above."""
    raw = pd.read_csv(path, dtype={"SibSp": str}, keep_default_na=True)
    needed = ["Survived", "Pclass", "Sex", "Age", "SibSp", "Parch"]
    absent = [c for c in needed if c not in raw.columns]
    if absent:
        raise SchemaError(f"{path} lacks the columns {absent}; is it Kaggle's train.csv?")
    sibsp = raw["SibSp"].str.strip()
    blank = sibsp.isna() | (sibsp == "")
    out = raw.loc[~blank, needed].copy()  # PassengerId 6 has a blank SibSp in this copy
    out["SibSp"] = pd.to_numeric(sibsp[~blank], errors="raise").astype(np.int64)

    age = out["Age"].to_numpy(dtype=np.float64)
    known = ~np.isnan(age)
    lo, hi = _TITANIC_AGE_RANGE
    if ((age[known] < lo) | (age[known] > hi)).any():
        raise SchemaError(f"{path}: an Age is outside the public range [{lo:g}, {hi:g}].")
    group = np.full(len(age), UNKNOWN, dtype=object)
    idx = np.searchsorted(np.asarray(TITANIC_AGE_EDGES), age[known], side="right")
    group[known] = np.asarray(_TITANIC_AGE_LABELS, dtype=object)[idx]
    out["Age"] = group
    return out[list(schema.columns)].reset_index(drop=True)
