"""SecureSumID3Classifier with every party a real OS process (MPyC's TCP runtime)."""

from __future__ import annotations

import numpy as np
import pytest

from _processes import launch_killing
from privet.data import load_dataset
from privet.learners import ID3Classifier, SecureSumID3Classifier
from privet.learners.secure_sum_id3 import SummationIntegrityError
from privet.ledger import Guarantee, Ledger
from privet.mpc import MPCPartyError

pytestmark = pytest.mark.mpc


def _unbounded() -> Ledger:
    """The explicit unbounded ledger the paper's exact protocol needs."""
    return Ledger(budget=Guarantee.unbounded())


def canonical(tree, node=0):
    f = int(tree.feature[node])
    if f < 0:
        return ("leaf", tuple(float(v) for v in tree.value[node]))
    start = int(tree.child_start[node])
    later = [int(s) for s in tree.child_start if s > start]
    end = min(later) if later else len(tree.children)
    return (f, tuple(canonical(tree, int(k)) for k in tree.children[start:end]))


@pytest.fixture(scope="module")
def small():
    d = load_dataset("nursery")
    idx = np.random.default_rng(5).permutation(d.n_rows)[:400]
    return d.schema, d.X.iloc[idx].reset_index(drop=True), np.asarray(d.y)[idx]


def test_both_backends_and_plaintext_id3_give_identical_trees(small):
    schema, X, y = small
    plain = ID3Classifier(criterion="entropy", max_depth=100, schema=schema).fit(X, y)
    trees = {}
    for backend in ("reference", "shamir", "mpyc"):
        est = SecureSumID3Classifier(
            schema=schema, n_parties=4, backend=backend, random_state=2, ledger=_unbounded()
        )
        trees[backend] = canonical(est.fit(X, y).tree_)
        if backend != "reference":
            stats = est.run_stats_
            assert len(stats.parties) == 4 and all(p.bytes_sent > 0 for p in stats.parties)
    assert trees["shamir"] == trees["mpyc"] == trees["reference"] == canonical(plain.tree_)


def test_verify_all_subsets_with_three_parties(small):
    schema, X, y = small
    ref = SecureSumID3Classifier(
        schema=schema, max_depth=2, random_state=1, ledger=_unbounded()
    ).fit(X, y)
    est = SecureSumID3Classifier(
        schema=schema,
        max_depth=2,
        backend="shamir",
        verify="all",
        random_state=1,
        ledger=_unbounded(),
    ).fit(X, y)
    assert canonical(est.tree_) == canonical(ref.tree_)


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        ("result", r"the intermediate results are inconsistent \(Sec. 4.3\)"),
        ("reveal", "do not match its commitment"),
    ],
)
def test_tampering_party_is_detected(small, kind, match):
    schema, X, y = small
    est = SecureSumID3Classifier(
        schema=schema, max_depth=2, backend="shamir", n_parties=3, ledger=_unbounded()
    )
    est._testing_tamper = {"party": 1, "round": 1, "kind": kind}
    with pytest.raises(MPCPartyError, match=match) as info:
        est.fit(X, y)
    assert info.value.kind == "exception"
    if kind == "reveal":  # an honest party names the party that changed its result
        # (the first party to stop closes its connections; the others may see that first)
        assert any("party 1 revealed" in info.value.descriptions.get(i, "") for i in (0, 2))


def test_a_consistent_shift_goes_undetected_over_processes(small):
    """The paper's verification misses a cheater who shifts both of its results along
    the error polynomial (see test_secure_sum_id3): the run ends normally, with a wrong
    root total, even with verify="all"."""
    schema, X, y = small
    ref = SecureSumID3Classifier(schema=schema, max_depth=1, n_parties=3, ledger=_unbounded()).fit(
        X, y
    )
    est = SecureSumID3Classifier(
        schema=schema,
        max_depth=1,
        backend="shamir",
        n_parties=3,
        verify="all",
        ledger=_unbounded(),
    )
    # rounds: 0 the root's class totals, 1 its split counts, 2 the leaves' class totals
    est._testing_tamper = {"party": 1, "round": 2, "kind": "shift"}
    est.fit(X, y)  # no error: every subset agrees
    got, want = np.asarray(est.tree_.value), np.asarray(ref.tree_.value)
    assert list(est.tree_.feature) == list(ref.tree_.feature)
    assert got[1, 0] == want[1, 0] + 1  # the first leaf's first class total
    got[1, 0] -= 1
    assert np.array_equal(got, want)


def test_verify_malicious_gives_the_reference_tree(small):
    schema, X, y = small
    ref = SecureSumID3Classifier(
        schema=schema, n_parties=4, random_state=2, ledger=_unbounded()
    ).fit(X, y)
    est = SecureSumID3Classifier(
        schema=schema,
        n_parties=4,
        backend="shamir",
        verify="malicious",
        random_state=2,
        ledger=_unbounded(),
    ).fit(X, y)
    assert canonical(est.tree_) == canonical(ref.tree_)


@pytest.mark.parametrize(
    "kind", ["shift", "result", "equivocate", "block", "combination", "complain"]
)
def test_verify_malicious_names_the_cheating_party(small, kind):
    """The consistent shift that passes Sec. 4.3 (test above), a changed result, different
    results to different parties, a share dealt off the dealer's polynomial, a wrong
    published combination and a false complaint against an honest dealer: each stops the
    run, and every party that reports names party 1 (the cheater runs the same checks on
    the same public data and names itself too)."""
    schema, X, y = small
    est = SecureSumID3Classifier(
        schema=schema,
        max_depth=1,
        backend="shamir",
        n_parties=4,
        verify="malicious",
        ledger=_unbounded(),
    )
    est._testing_tamper = {"party": 1, "round": 2, "kind": kind}
    with pytest.raises(SummationIntegrityError, match="named party 1 as the sender") as info:
        est.fit(X, y)
    assert info.value.accused == (1,)
    honest = {i: named for i, named in info.value.accusations.items() if i != 1}
    assert honest and all(named == (1,) for named in honest.values())


def test_killed_party_is_named(small, monkeypatch):
    schema, X, y = small

    monkeypatch.setattr("privet.mpc.launch", launch_killing(1))
    led = Ledger(budget=Guarantee.unbounded())
    est = SecureSumID3Classifier(schema=schema, backend="shamir", ledger=led, timeout=20)
    est._testing_tamper = {"party": 1, "round": 1, "kind": "stall"}  # so the run cannot end first
    with pytest.raises(MPCPartyError, match="party 1 died") as info:
        est.fit(X, y)
    assert info.value.culprits == (1,)


def test_dp_variant_over_processes(small):
    schema, X, y = small
    led = Ledger(budget=Guarantee(1.0))
    est = SecureSumID3Classifier(
        schema=schema, epsilon=1.0, max_depth=2, backend="shamir", ledger=led
    ).fit(X, y)
    assert est.privacy_spent_.epsilon == pytest.approx(1.0)
    assert est.predict(X).shape == y.shape
    # party 0's view for the white-box audit, in the reference path's release order:
    # its own share, then the opened sum less it, at every level
    seen = est.release_transcript_
    assert len(seen) == 2 * len(est.opened_) > 0
    for share, rest, opened in zip(seen[::2], seen[1::2], est.opened_, strict=True):
        np.testing.assert_array_equal(share + rest, opened)


def test_verify_malicious_in_a_field_beyond_64_bits(small):
    """p = 2^61 - 1 (shares as Python integers): same tree, and the shift is named."""
    schema, X, y = small
    kw = dict(schema=schema, n_parties=3, max_depth=2, random_state=2)
    ref = SecureSumID3Classifier(**kw, ledger=_unbounded()).fit(X, y)
    est = SecureSumID3Classifier(
        **kw, backend="shamir", verify="malicious", prime=2**61 - 1, ledger=_unbounded()
    )
    assert canonical(est.fit(X, y).tree_) == canonical(ref.tree_)
    est._testing_tamper = {"party": 2, "round": 1, "kind": "shift"}
    with pytest.raises(SummationIntegrityError) as info:
        est.fit(X, y)
    assert info.value.accused == (2,)


def test_verify_malicious_with_dp_noise_and_a_stopped_run_charged_in_full(small):
    """The DP variant (p = 2^31 - 1, kappa = 3): a clean run spends epsilon; a run the
    parties stop may have opened sums of earlier rounds, so it is charged in full."""
    schema, X, y = small
    for tamper, spent in ((None, 1.0), ({"party": 0, "round": 1, "kind": "result"}, 1.0)):
        led = Ledger(budget=Guarantee(1.0))
        est = SecureSumID3Classifier(
            schema=schema,
            epsilon=1.0,
            max_depth=2,
            backend="shamir",
            verify="malicious",
            ledger=led,
        )
        est._testing_tamper = tamper
        if tamper is None:
            assert est.fit(X, y).predict(X).shape == y.shape
        else:
            with pytest.raises(SummationIntegrityError) as info:
                est.fit(X, y)
            assert info.value.accused == (0,)
        assert led.spent().epsilon == pytest.approx(spent)


def test_replace_one_budget_of_epsilon_over_processes_and_a_stopped_run(small):
    """Issue 31: on a replace-one ledger whose budget is epsilon the party processes run
    (the plan charged node by node used to cost 5/3 there); the replay charges one
    histogram per level, and a run the parties stop is charged in full: epsilon."""
    schema, X, y = small
    for tamper in (None, {"party": 0, "round": 1, "kind": "result"}):
        led = Ledger(budget=Guarantee(1.0), relation="replace_one")
        est = SecureSumID3Classifier(
            schema=schema,
            epsilon=1.0,
            max_depth=2,
            backend="shamir",
            verify="malicious",
            ledger=led,
        )
        est._testing_tamper = tamper
        if tamper is None:
            est.fit(X, y)
            assert 0 < est.privacy_spent_.epsilon <= 1.0 + 1e-9
        else:
            with pytest.raises(SummationIntegrityError):
                est.fit(X, y)
            assert led.spent().epsilon == pytest.approx(1.0)
        assert est.calibrated_epsilon_ == 1.0
        steps = [c.step for c in led.charges if c.step.startswith("node counts")]
        assert len(steps) == len(set(steps))  # one charge per level, not per node
        assert led.spent().epsilon <= 1.0 + 1e-9


def test_more_rows_than_the_public_max_rows_warns_from_the_opened_sums(small):
    """Review 3, finding 2: the DP variant checks its field against the public max_rows
    only. 400 rows in a field made for max_rows=10 (p = 67 > 2 (10 + margin 21)) wrap
    modulo p; the run still spends only epsilon (a wrapped sum is a function of the noisy
    sum) and warns from the opened sums. With max_rows=400 the same run does not warn."""
    import warnings

    schema, X, y = small
    kw = dict(schema=schema, epsilon=50.0, max_depth=1, backend="shamir", n_parties=3)
    led = Ledger(budget=Guarantee(50.0))
    with pytest.warns(RuntimeWarning, match="wrapped modulo prime=67"):
        est = SecureSumID3Classifier(**kw, prime=67, max_rows=10, ledger=led).fit(X, y)
    assert est.prime_ == 67 and 0 < led.spent().epsilon <= 50.0 * (1 + 1e-9)
    led = Ledger(budget=Guarantee(50.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = SecureSumID3Classifier(**kw, max_rows=len(y), ledger=led).fit(X, y)
    assert 0 < led.spent().epsilon <= 50.0 * (1 + 1e-9)
