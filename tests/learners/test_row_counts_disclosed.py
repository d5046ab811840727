"""The protocol backends of seed 000 give the parties each owner's exact number of rows.

Under add/remove neighbours that count is private and the ledger does not charge it, so
a fit through a protocol on such a ledger warns and names the fix; on a replace-one
ledger the number of rows is public by definition, and the reference path discloses
nothing of the kind.
"""

from __future__ import annotations

import warnings

import pytest

from privet.learners import (
    DPRandomForestClassifier,
    ObliviousID3Classifier,
    PartialMPCID3Classifier,
    PrivacyWarning,
)
from privet.ledger import Guarantee, Ledger

LEARNERS = {
    "pmpc": lambda **kw: PartialMPCID3Classifier(epsilon=1.0, max_depth=1, **kw),
    "odp": lambda **kw: ObliviousID3Classifier(epsilon=1.0, max_depth=1, split="exponential", **kw),
    "forest": lambda **kw: DPRandomForestClassifier(
        epsilon=1.0, max_depth=1, n_estimators=2, tree="oblivious", **kw
    ),
}


def _fit(tennis, name, relation, backend):
    led = Ledger(budget=Guarantee(10.0, 1e-6), relation=relation)
    est = LEARNERS[name](backend=backend, schema=tennis.schema, ledger=led)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(tennis.X, tennis.y)
    return [w for w in caught if issubclass(w.category, PrivacyWarning)]


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_a_protocol_fit_on_an_add_remove_ledger_warns_that_row_counts_are_disclosed(tennis, name):
    (warning,) = _fit(tennis, name, "add_remove", "local")
    text = str(warning.message)
    assert "number of rows" in text and "relation='replace_one'" in text
    assert warning.filename == __file__  # points at the caller's fit


@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize(
    ("relation", "backend"), [("replace_one", "local"), ("add_remove", "reference")]
)
def test_no_warning_where_the_row_count_is_public_or_not_disclosed(tennis, name, relation, backend):
    assert _fit(tennis, name, relation, backend) == []
