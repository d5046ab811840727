"""LDPBoostingClassifier plans at most its ``epsilon`` on the ledger it charges (issue 31).

Unlike the central-DP trees it needs no calibration: each owner perturbs its own
record once, in the one owner group it belongs to, and the groups are drawn from the
owners' identities and public randomness, not from their values. A replaced record
therefore stays in its group (the plan's partition is stable), and the ledger charges
each randomiser once at its local epsilon on a replace-one ledger. The fit keeps the
user's epsilon; these tests would catch a plan that came to cost more.
"""

from __future__ import annotations

import pytest

from privet.errors import RelationMismatchError
from privet.learners import LDPBoostingClassifier
from privet.ledger import Guarantee, Ledger

EPS = 1.0


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize("n_rounds", [1, 2, 3, 10])
@pytest.mark.parametrize("base", ["stump", "centroid", "logistic"])
@pytest.mark.parametrize("mechanism", ["piecewise", "duchi", "laplace"])
def test_plan_costs_at_most_epsilon(small, relation, n_rounds, base, mechanism):
    _, _, schema = small
    led = Ledger(budget=Guarantee(EPS), relation=relation)
    est = LDPBoostingClassifier(
        base=base, mechanism=mechanism, n_rounds=n_rounds, epsilon=EPS, schema=schema, ledger=led
    )
    cost = led.plan_cost(est.privacy_plan(schema))
    # every owner's share and error report add up to epsilon, and nothing else is charged
    assert cost.epsilon == pytest.approx(EPS)
    assert cost.epsilon <= EPS * (1 + 1e-9) and cost.delta == 0


@pytest.mark.parametrize("n_rounds", [1, 2, 3])
@pytest.mark.parametrize("base", ["stump", "centroid", "logistic"])
def test_a_fit_on_a_budget_of_epsilon_succeeds_and_spends_at_most_it(small, n_rounds, base):
    X, y, schema = small
    led = Ledger(budget=Guarantee(EPS), relation="replace_one")
    est = LDPBoostingClassifier(
        base=base, n_rounds=n_rounds, epsilon=EPS, schema=schema, ledger=led, random_state=0
    ).fit(X, y)
    assert est.epsilon == EPS
    # every owner group is charged in full: the spend is epsilon, not less, not more
    assert est.privacy_spent_.epsilon == pytest.approx(EPS)
    assert led.spent().epsilon <= EPS * (1 + 1e-9)
    assert est.predict(X).shape == y.shape


def test_an_add_remove_ledger_is_refused_before_anything_is_charged(small):
    """Local randomisers are accounted under replace-one: an add/remove ledger is refused,
    so the plan's add/remove figure above is never charged."""
    X, y, schema = small
    led = Ledger(budget=Guarantee(EPS), relation="add_remove")
    with pytest.raises(RelationMismatchError, match="replace_one"):
        LDPBoostingClassifier(n_rounds=2, epsilon=EPS, schema=schema, ledger=led).fit(X, y)
    assert led.charges == [] and led.spent().epsilon == 0
