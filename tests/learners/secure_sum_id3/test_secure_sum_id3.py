"""SecureSumID3Classifier (seed 001): reference path, field arithmetic, ledger, errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from privet.data import Categorical, Schema, load_dataset
from privet.errors import BudgetExceededError, InvalidParameterError, SchemaError
from privet.learners import ID3Classifier, SecureSumID3Classifier
from privet.learners.secure_sum_id3.field import (
    DEFAULT_PRIME,
    LARGE_PRIME,
    SMALL_PRIME,
    FieldSampler,
    choose_prime,
    decode_centred,
    derive_points,
    is_prime,
    lagrange_weights,
    wire_dtype,
)
from privet.learners.secure_sum_id3.sharing import SharingPlan, noise_shares, pooled_noise
from privet.ledger import Guarantee, Ledger, NonPrivate


def _unbounded() -> Ledger:
    """The explicit unbounded ledger the paper's exact protocol needs."""
    return Ledger(budget=Guarantee.unbounded())


def canonical(tree, node=0):
    """A tree as nested tuples, independent of node numbering (BFS vs DFS)."""
    f = int(tree.feature[node])
    if f < 0:
        return ("leaf", tuple(float(v) for v in tree.value[node]))
    start = int(tree.child_start[node])
    kids = tree.children[start : start + _width(tree, node)]
    return (f, tuple(canonical(tree, int(k)) for k in kids))


def _width(tree, node):
    """Children of a node are contiguous, up to the next internal node's first child."""
    start = int(tree.child_start[node])
    later = [int(s) for s in tree.child_start if s > start]
    return (min(later) if later else len(tree.children)) - start


@pytest.fixture(scope="module")
def nursery():
    d = load_dataset("nursery")
    rng = np.random.default_rng(1)
    idx = rng.permutation(d.n_rows)[:1500]
    return d.schema, d.X.iloc[idx].reset_index(drop=True), np.asarray(d.y)[idx]


# ---------------------------------------------------------------- the field


def test_paper_example_1_sum():
    """Sec. 4.2, Example 1: the parties' values 2, 4, 6, 8 sum to 20.

    The paper prints S(x) = 5x^3 - 7x^2 - 7x + 20; its own q_1..q_4 give x^2
    coefficients -2 + 1 - 4 - 1 = -6, so S(x) = 5x^3 - 6x^2 - 7x + 20 (a typo in
    the paper that does not affect the sum).
    """
    p = 10007
    polys = [[2, 3, -2, 1], [4, -6, 1, 1], [6, -3, -4, 1], [8, -1, -1, 2]]  # v, x, x^2, x^3
    xs = [3, 5, 7, 8]
    inter = [sum(sum(c * x**k for k, c in enumerate(q)) for q in polys) % p for x in xs]
    assert inter[0] == (5 * 27 - 6 * 9 - 7 * 3 + 20) % p
    w = lagrange_weights(xs, [0], p)
    assert sum(wi[0] * y for wi, y in zip(w, inter, strict=True)) % p == 20


@pytest.mark.parametrize("p", [65521, DEFAULT_PRIME, 2**61 - 1])
def test_shares_reconstruct_from_both_subsets(p):
    plan = SharingPlan(5, derive_points(b"seed", 10, p), p)
    values = np.array([0, 1, 17, -3, 1000])
    shares = plan.share(values, FieldSampler(p, key=bytes(32)))
    assert shares.shape == (10, 5)  # point-major: 2n points x 5 values
    sums, problems = plan.interpolate(shares, "all")
    assert problems == []
    assert decode_centred(sums, p).tolist() == values.tolist()
    # one wrong intermediate value is caught by the two subsets
    shares[3, 2] = (int(shares[3, 2]) + 1) % p
    _, problems = plan.interpolate(shares, "two")
    assert problems and "different sums for 1 of 5 counts (first at count 2" in problems[0]


@pytest.mark.parametrize("p", [11, 65521, 2**31 - 1])
def test_field_sampler_is_uniform_on_z_p(p):
    """Chi-square over 16 equal-width classes of Z_p (p = 11: every value), 160,000 draws.

    p = 11 rejects 5 of every 16 raw values, so the redraw path is exercised.
    The test fails with probability 1e-6 when the sampler is uniform.
    """
    draws = FieldSampler(p).uniform((2, 80_000))
    assert draws.dtype == wire_dtype(p) and draws.shape == (2, 80_000)
    assert int(draws.max()) < p
    k = min(p, 16)
    edges = np.linspace(0, p, k + 1).round().astype(np.int64)
    observed = np.histogram(draws.astype(np.int64), bins=edges)[0]
    expected = draws.size * np.diff(edges) / p
    stat = float(((observed - expected) ** 2 / expected).sum())
    assert stat < scipy.stats.chi2.ppf(1 - 1e-6, df=k - 1)


def test_field_sampler_streams_differ_per_key_and_draw():
    a, b = FieldSampler(65521, key=bytes(32)), FieldSampler(65521, key=bytes(32))
    first = a.uniform((1000,))
    assert np.array_equal(first, b.uniform((1000,)))  # same key, same first draw
    assert not np.array_equal(first, a.uniform((1000,)))  # a fresh nonce per draw
    assert not np.array_equal(first, FieldSampler(65521).uniform((1000,)))


def test_sum_of_shares_is_share_of_sum():
    p, n = DEFAULT_PRIME, 4
    plan = SharingPlan(n, derive_points(b"x", 2 * n, p), p)
    rng = np.random.default_rng(3)
    sampler = FieldSampler(p)
    vals = rng.integers(0, 500, size=(n, 50))
    total = sum(plan.share(v, sampler).astype(np.int64) for v in vals) % p
    sums, problems = plan.interpolate(total, "all")
    assert not problems
    assert np.array_equal(decode_centred(sums, p), vals.sum(axis=0))


@pytest.mark.parametrize("verify", ["two", "all"])
def test_a_consistent_shift_of_both_results_passes_every_check(verify):
    """The weakness of Sec. 4.3: the paper says a lone cheater passes with probability
    1/|domain|^(2n-2). A party that adds E(x) = c * prod over the other parties' points
    of (x - x_k) to its two results (degree 2n - 2, zero at every other point) moves the
    sum by E(0) and every subset agrees, whatever the others' results are."""
    p, n = DEFAULT_PRIME, 4
    plan = SharingPlan(n, derive_points(b"shift", 2 * n, p), p)
    sampler = FieldSampler(p)
    vals = np.random.default_rng(4).integers(0, 500, size=(n, 20))
    inter = sum(plan.share(v, sampler).astype(np.int64) for v in vals) % p
    cheater, delta = 2, 1000
    e = plan.undetectable_shift(cheater, delta)
    inter[2 * cheater : 2 * cheater + 2, 7] = (inter[2 * cheater : 2 * cheater + 2, 7] + e) % p
    sums, problems = plan.interpolate(inter, verify)
    assert problems == []  # no subset disagrees
    expected = vals.sum(axis=0)
    expected[7] += delta
    assert np.array_equal(decode_centred(sums, p), expected)
    # a change of one of the two results alone is still caught
    inter[2 * cheater, 3] = (inter[2 * cheater, 3] + 1) % p
    assert plan.interpolate(inter, verify)[1]


def test_is_prime_and_points():
    assert is_prime(2**31 - 1) and is_prime(2**61 - 1)
    assert not is_prime(2**31 + 1) and not is_prime(1)
    pts = derive_points(b"abc", 256, 1009)
    assert len(set(pts)) == 256 and 0 not in pts


def test_noise_shares_sum_to_discrete_laplace():
    """n - 1 shares already make a discrete Laplace(b): variance 2a / (1 - a)^2, a = e^(-1/b).

    Sample variance of 40,000 draws is within 5 standard errors (kurtosis of the
    discrete Laplace is 6 + small), i.e. a false failure rate far below 1e-6.
    """
    rng = np.random.default_rng(7)
    b, n, m = 3.0, 5, 40_000
    z = sum(noise_shares(m, b, n, rng) for _ in range(n - 1))
    a = math.exp(-1 / b)
    var = 2 * a / (1 - a) ** 2
    se = var * math.sqrt((9 - 1) / m)
    assert abs(z.var() - var) < 5 * se
    assert abs(z.mean()) < 5 * math.sqrt(var / m)
    pooled = pooled_noise(m, b, n, rng)  # all n shares: more noise than n - 1
    assert pooled.var() > var


# ------------------------------------------------------------ reference ID3


@pytest.mark.parametrize("name", ["nursery", "car"])
def test_exact_tree_equals_plaintext_id3_on_pooled_data(name, nursery):
    if name == "nursery":
        schema, X, y = nursery
    else:
        d = load_dataset(name)
        schema, X, y = d.schema, d.X, np.asarray(d.y)
    plain = ID3Classifier(criterion="entropy", max_depth=100, schema=schema).fit(X, y)
    ours = SecureSumID3Classifier(
        schema=schema, n_parties=7, random_state=0, ledger=_unbounded()
    ).fit(X, y)
    assert canonical(ours.tree_) == canonical(plain.tree_)
    assert np.array_equal(ours.predict(X), plain.predict(X))
    assert ours.n_parties_ == 7


def test_max_depth_and_api(nursery):
    schema, X, y = nursery
    est = SecureSumID3Classifier(schema=schema, max_depth=2, random_state=0, ledger=_unbounded())
    est.fit(X, y)
    assert est.tree_.max_depth <= 2
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), schema.n_classes)
    assert np.allclose(proba.sum(axis=1), 1)
    assert est.get_params()["max_depth"] == 2
    assert set(est.classes_) == set(schema.classes)


# -------------------------------------------------------------------- ledger


def test_exact_protocol_charges_non_private_with_claim(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    est = SecureSumID3Classifier(schema=schema, ledger=led, max_depth=2).fit(X, y)
    charges = led.charges
    assert charges and all(isinstance(c.entry, NonPrivate) for c in charges)
    assert math.isinf(est.privacy_spent_.epsilon)
    assert led.claims() and "Lemmas 1-2" in led.claims()[0].claim.source
    # one charge per node and round: the root's class totals, then its split counts
    assert len(charges) >= 2 * int(np.sum(est.tree_.feature >= 0))
    assert sum(1 for c in charges if c.step.endswith("depth 0")) == 2


def test_exact_protocol_refused_on_finite_budget(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee(1.0))
    with pytest.raises(
        BudgetExceededError, match=r"epsilon=None runs the paper's protocol.*Pass epsilon="
    ):
        SecureSumID3Classifier(schema=schema, ledger=led).fit(X, y)
    assert led.charges == [] and led.spent().epsilon == 0


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_dp_variant_spends_at_most_epsilon(eps, nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee(eps))
    est = SecureSumID3Classifier(schema=schema, epsilon=eps, max_depth=3, ledger=led).fit(X, y)
    assert est.privacy_spent_.epsilon <= eps + 1e-9
    plan_cost = led.plan_cost(est.privacy_plan(schema))
    assert plan_cost.epsilon == pytest.approx(eps)
    assert est.privacy_spent_.epsilon == pytest.approx(eps)  # the deepest path uses every level


def test_plan_without_data():
    schema = load_dataset("nursery").schema
    plan = SecureSumID3Classifier(epsilon=1.0, max_depth=2).privacy_plan(schema)
    cost = Ledger(budget=Guarantee(1.0)).plan_cost(plan)
    assert cost.epsilon == pytest.approx(1.0)
    exact = SecureSumID3Classifier().privacy_plan(schema)
    assert math.isinf(Ledger(budget=Guarantee.unbounded()).plan_cost(exact).epsilon)


def test_dp_variant_accuracy_above_majority(nursery):
    """At eps=2 on 1,500 Nursery rows the DP tree beats the majority rate (0.33)."""
    schema, X, y = nursery
    accs = [
        (
            SecureSumID3Classifier(schema=schema, epsilon=2.0, max_depth=3).fit(X, y).predict(X)
            == y
        ).mean()
        for _ in range(3)
    ]
    majority = pd.Series(y).value_counts(normalize=True).max()
    assert np.median(accs) > majority + 0.1


# -------------------------------------------------------------------- errors


def _nothing_charged(led):
    return led.charges == [] and led.spent().epsilon == 0


def test_one_party_only(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    with pytest.raises(InvalidParameterError, match="at least 2 parties"):
        SecureSumID3Classifier(schema=schema, n_parties=1, ledger=led).fit(X, y)
    with pytest.raises(InvalidParameterError, match="only one party"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit(X, y, parties=np.zeros(len(y)))
    with pytest.raises(InvalidParameterError, match="at least 2"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit_parties([(X, y)])
    assert _nothing_charged(led)


def test_party_with_no_rows(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    with pytest.raises(SchemaError, match=r"parties \[1\] have no rows"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit_parties(
            [(X[:10], y[:10]), (X[:0], y[:0]), (X[10:], y[10:])]
        )
    assert _nothing_charged(led)


def test_mismatched_schemas(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    other = X[X.columns[::-1]]
    with pytest.raises(SchemaError, match="party 1's columns do not match"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit_parties(
            [(X[:100], y[:100]), (other[100:], y[100:])]
        )
    with pytest.raises(SchemaError, match="party 0:"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit_parties(
            [(X.to_numpy()[:100, :5], y[:100]), (X[100:], y[100:])]
        )
    assert _nothing_charged(led)


def test_labels_outside_schema(nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    bad = y.copy().astype(object)
    bad[3] = "no_such_class"
    with pytest.raises(SchemaError, match="no_such_class"):
        SecureSumID3Classifier(schema=schema, ledger=led).fit(X, bad)
    assert _nothing_charged(led)


@pytest.mark.parametrize(
    ("prime", "match"),
    [(101, "too small for the counts"), (1000, "not a prime"), (7, "too small for 3 parties")],
)
def test_field_too_small(prime, match, nursery):
    schema, X, y = nursery
    led = Ledger(budget=Guarantee.unbounded())
    with pytest.raises(InvalidParameterError, match=match):
        SecureSumID3Classifier(schema=schema, prime=prime, ledger=led).fit(X, y)
    assert _nothing_charged(led)


def test_default_field_is_small_only_for_the_exact_protocol(nursery):
    schema, X, y = nursery
    exact = SecureSumID3Classifier(schema=schema, max_depth=1, ledger=_unbounded()).fit(X, y)
    assert exact.prime_ == SMALL_PRIME  # its row count is opened anyway
    dp = SecureSumID3Classifier(schema=schema, max_depth=1, epsilon=1.0).fit(X, y)
    assert dp.prime_ == DEFAULT_PRIME  # never chosen from the private row count
    assert choose_prime(None, 3, 40_000) == DEFAULT_PRIME
    assert choose_prime(None, 3, 2**30) == LARGE_PRIME
    # a public max_rows that fits the small field lets the DP variant use it
    small = SecureSumID3Classifier(schema=schema, max_depth=1, epsilon=1.0, max_rows=len(y)).fit(
        X, y
    )
    assert small.prime_ == SMALL_PRIME


def test_dp_field_margin(nursery):
    """The DP variant needs room for negative noisy sums: a field just above N is refused."""
    schema, X, y = nursery
    with pytest.raises(InvalidParameterError, match="too small for the counts"):
        SecureSumID3Classifier(schema=schema, epsilon=1.0, prime=3001).fit(X, y)


def _two_attribute_data(n):
    schema = Schema(
        [Categorical("a", ["x", "y"]), Categorical("b", ["x", "y"])], Categorical("cls", ["n", "p"])
    )
    rng = np.random.default_rng(n)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], n), "b": rng.choice(["x", "y"], n)})
    return schema, X, rng.choice(["n", "p"], n)


# review 3, finding 2: prime 65521 at epsilon 0.0165 (noise margin 32,727) fitted 20 rows
# and refused 40 and 60 rows, stating n + margin, and charged nothing.
PRIME, EPS, MARGIN = 65521, 0.0165, 32727


def test_dp_user_prime_is_refused_alike_for_every_row_count():
    """The DP variant's accept/refuse decision and its message do not depend on the
    private row count: without a public max_rows, a prime too small for the default
    bound is refused for 20, 40 and 60 rows alike, before any data is read."""
    messages = set()
    for n in (20, 40, 60):
        schema, X, y = _two_attribute_data(n)
        led = Ledger(budget=Guarantee(1.0))
        est = SecureSumID3Classifier(
            epsilon=EPS, max_depth=2, prime=PRIME, schema=schema, ledger=led
        )
        with pytest.raises(InvalidParameterError, match="too small for the counts") as err:
            est.fit(X, y)
        assert _nothing_charged(led)
        assert str(n + MARGIN) not in str(err.value)
        messages.add(str(err.value))
        # refused before the data is read: a label outside the schema is not seen
        bad = y.copy().astype(object)
        bad[0] = "no_such_class"
        with pytest.raises(InvalidParameterError, match="too small for the counts"):
            est.fit(X, bad)
        assert _nothing_charged(led)
    assert len(messages) == 1
    assert "max_rows=None" in messages.pop()


def test_dp_user_prime_with_public_max_rows_fits_every_row_count():
    """With a public max_rows the prime is checked against max_rows + margin; the fit then
    never compares max_rows with the row count: 40 and 60 rows fit like 20."""
    for n in (20, 40, 60):
        schema, X, y = _two_attribute_data(n)
        led = Ledger(budget=Guarantee(1.0))
        est = SecureSumID3Classifier(
            epsilon=EPS, max_depth=2, prime=PRIME, max_rows=20, schema=schema, ledger=led
        ).fit(X, y)
        assert est.prime_ == PRIME
        assert 0 < led.spent().epsilon <= EPS * (1 + 1e-9)  # one charge per level reached
    # a max_rows too large for the prime is refused, the message naming public values only
    led = Ledger(budget=Guarantee(1.0))
    with pytest.raises(InvalidParameterError, match=r"max_rows=100 .* 32827 .*\(p > 65654\)"):
        SecureSumID3Classifier(
            epsilon=EPS, max_depth=2, prime=PRIME, max_rows=100, schema=schema, ledger=led
        ).fit(X, y)
    assert _nothing_charged(led)


def test_max_rows_must_be_positive(nursery):
    schema, X, y = nursery
    with pytest.raises(InvalidParameterError, match="max_rows"):
        SecureSumID3Classifier(schema=schema, epsilon=1.0, max_rows=0).fit(X, y)


def test_explicit_owners_override_n_parties(nursery):
    schema, X, y = nursery
    owners = np.arange(len(y)) % 5
    est = SecureSumID3Classifier(schema=schema, n_parties=1, max_depth=1, ledger=_unbounded()).fit(
        X, y, parties=owners
    )
    assert est.n_parties_ == 5


def test_party_program_loads_by_path_without_the_learners():
    """A party loads protocol.py by file path; it and its siblings import no scikit-learn."""
    import subprocess
    import sys

    import privet.learners.secure_sum_id3.protocol as protocol

    code = (
        "import sys\n"
        "from privet.mpc.party import load_target\n"
        f"load_target({protocol.__file__ + ':program'!r})\n"
        "bad = [m for m in ('sklearn', 'pandas', 'privet.learners') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_exact_protocol_is_never_implicit(nursery):
    """epsilon=None without a ledger would train a non-private model: refused (issue 33)."""
    schema, X, y = nursery
    est = SecureSumID3Classifier(schema=schema, max_depth=1)
    with pytest.raises(
        BudgetExceededError, match=r"explicit unbounded ledger.*Nothing was charged"
    ):
        est.fit(X, y)
    assert not hasattr(est, "tree_") and not hasattr(est, "ledger_")
    with pytest.raises(BudgetExceededError, match=r"Guarantee\.unbounded"):
        est.fit_parties([(X[:100], y[:100]), (X[100:200], y[100:200])])


def test_the_reference_records_each_level_as_party_0_sees_it():
    """The white-box view is the strongest adversary the proof covers, one party: its own
    share (no data: the same value on both datasets) and the sum less it, a discrete
    Laplace(scale) whose loss reaches the level's epsilon. The output is their sum, whose
    law is the pooled one: 40,000 draws match its variance within 5 standard errors
    (false alarm far below 1e-6), and the n - 1 others' part matches a discrete Laplace."""
    from privet.learners.secure_sum_id3.reference import _noisy_total
    from privet.mechanisms import recorder
    from privet.mechanisms.laws import AdditiveLaw, NegativeBinomialDifferenceLaw

    b, n, m = 2.0, 3, 40_000
    total = np.zeros(m, dtype=np.int64)
    with recorder.recording() as run:
        out = _noisy_total(total, b, n, np.random.default_rng(11))
    own, seen = run.releases
    assert isinstance(own.law, NegativeBinomialDifferenceLaw) and not np.any(own.value)
    assert own.law == NegativeBinomialDifferenceLaw.share(n, b)
    assert isinstance(seen.law, AdditiveLaw) and seen.law.discrete and seen.law.scale == b
    np.testing.assert_array_equal(out, own.output + seen.output)
    # the canary's +1 on one count: the view's loss is 1/b, the pooled sum's is less
    assert seen.law.max_loss(np.zeros(1), np.ones(1)) == pytest.approx(1 / b)
    assert NegativeBinomialDifferenceLaw.pooled(n, b).max_loss(np.zeros(1), np.ones(1)) < 1 / b
    a = math.exp(-1 / b)
    var_dlap = 2 * a / (1 - a) ** 2
    var_pooled = var_dlap * n / (n - 1)  # NB(r) differences: variance linear in r
    for z, var in ((seen.output - total, var_dlap), (out, var_pooled)):
        se = var * math.sqrt((9 - 1) / m)
        assert abs(z.var() - var) < 5 * se
        assert abs(z.mean()) < 5 * math.sqrt(var / m)
    # one party alone: one release, the outsider's view of the whole noise
    with recorder.recording() as run1:
        _noisy_total(total[:10], b, 1, np.random.default_rng(12))
    assert len(run1.releases) == 1
