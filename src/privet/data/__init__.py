"""Public schemas, discretisation, one-hot encoding, partitioning and dataset loaders.

A :class:`Schema` holds the public domain of every attribute (``Categorical``
categories, or ``Numeric`` bounds and bins), never read from the private
data. It validates data (:meth:`Schema.validate`) and turns it into the
integer codes every learner consumes (:meth:`Schema.encode`,
:func:`to_codes`); :func:`one_hot` pads those codes to the MPC learners'
common width with dummy zero columns (seed 000, App. C.1).
:func:`horizontal_partition` and :func:`vertical_partition` share data out
among parties. :func:`load_dataset` loads the papers' datasets with their
shipped schemas; :func:`read_csv` reads a user's CSV with its schema file
(``Schema.load``, checked against the shipped JSON Schema, :mod:`privet.data.schema_file`).

Examples
--------
>>> from privet.data import load_dataset, one_hot
>>> ds = load_dataset("tennis")
>>> X, y = ds.codes()
>>> one_hot(X, ds.schema).shape
(14, 4, 3)
"""

from privet.data.attributes import Attribute, Categorical, CategoryValue, Numeric
from privet.data.csvfile import Violation, read_csv, typed, violations
from privet.data.discretise import bin_index, from_codes, to_codes
from privet.data.encoding import codes_from_one_hot, dummy_mask, one_hot, one_hot_target
from privet.data.loaders import Dataset, list_datasets, load_dataset, load_schema
from privet.data.partition import (
    horizontal_partition,
    split_columns,
    split_rows,
    vertical_partition,
)
from privet.data.paths import ENV_VAR, candidate_data_dirs, find_data_file
from privet.data.schema import Schema
from privet.data.schema_file import schema_file_problems, schema_format
from privet.data.validation import MissingPolicy, TargetPolicy

__all__ = [
    "ENV_VAR",
    "Attribute",
    "Categorical",
    "CategoryValue",
    "Dataset",
    "MissingPolicy",
    "Numeric",
    "Schema",
    "TargetPolicy",
    "Violation",
    "bin_index",
    "candidate_data_dirs",
    "codes_from_one_hot",
    "dummy_mask",
    "find_data_file",
    "from_codes",
    "horizontal_partition",
    "list_datasets",
    "load_dataset",
    "load_schema",
    "one_hot",
    "one_hot_target",
    "read_csv",
    "schema_file_problems",
    "schema_format",
    "split_columns",
    "split_rows",
    "to_codes",
    "typed",
    "vertical_partition",
    "violations",
]
