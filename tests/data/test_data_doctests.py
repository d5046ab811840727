"""The examples in the privet.data docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "privet.data",
    "privet.data.attributes",
    "privet.data.schema",
    "privet.data.partition",
    "privet.data.loaders",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
