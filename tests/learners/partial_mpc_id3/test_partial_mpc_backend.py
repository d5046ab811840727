"""PartialMPCID3Classifier with the MPC protocol backend (Alg. 7-10 in MPyC)."""

from __future__ import annotations

import numpy as np
import pytest

from privet.errors import MPCError
from privet.learners import PartialMPCID3Classifier
from privet.ledger import Guarantee, Ledger


def test_local_protocol_charges_the_plan(tennis):
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    m = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    assert set(m.predict(tennis.X)) <= set(tennis.schema.classes)
    assert all(c.caller == "PartialMPCID3Classifier" for c in led.charges)


@pytest.mark.mpc
def test_three_party_protocol_charges_the_plan(tennis):
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    m = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="mpc", parties=3
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert len(m.mpc_stats_.parties) == 3
    assert np.asarray(m.predict(tennis.X)).shape == (len(tennis.X),)


def test_failed_run_is_charged_in_full_and_raises(tennis, monkeypatch):
    """Parties may have seen opened values before a failure: charge the whole plan."""
    import privet.learners.partial_mpc_id3.host as protocols

    def dies(*args, **kwargs):
        raise MPCError("party 2 died")

    monkeypatch.setattr(protocols, "run_partial_mpc_id3", dies, raising=False)
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    )
    with pytest.raises(MPCError, match=r"(?s)died.*whole privacy plan.*was charged"):
        model.fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert led.charges[-1].mechanism.startswith("aborted MPC run")


def test_forest_of_protocol_trees(tennis):
    from privet.learners import DPRandomForestClassifier

    led = Ledger(budget=Guarantee(2.0, 1e-9))
    forest = DPRandomForestClassifier(
        n_estimators=2,
        tree="partial_mpc",
        backend="local",
        epsilon=1.0,
        max_depth=1,
        schema=tennis.schema,
        ledger=led,
        random_state=0,
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)  # disjoint subsets: parallel
    assert len(forest.trees_) == 2
    assert set(forest.predict(tennis.X)) <= set(tennis.schema.classes)


def test_mpc_default_noise_is_discrete_and_proven(tennis):
    """ledger=None: the learner's own ledger gets epsilon and the plan's tiny delta."""
    m = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=1, schema=tennis.schema, backend="local"
    ).fit(tennis.X, tennis.y)
    assert m.privacy_spent_.epsilon == pytest.approx(1.0)
    assert 0 < m.privacy_spent_.delta < 1e-10
    assert m.privacy_claim_.epsilon == 1.0
    assert {c.mechanism for c in m.ledger_.charges} == {
        "secure report-noisy-max (MPC, discrete Laplace)",
        "secure discrete laplace (MPC)",
    }


def test_paper_fixed_point_noise_in_mpc_is_refused_on_a_finite_budget(tennis):
    from privet.errors import BudgetExceededError

    led = Ledger(budget=Guarantee(5.0, 1e-6))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=1, schema=tennis.schema, backend="local", noise="paper", ledger=led
    )
    with pytest.raises(BudgetExceededError, match="no DP proof") as info:
        model.fit(tennis.X, tennis.y)
    assert "noise='discrete'" in str(info.value)
    assert led.charges == []
    unbounded = Ledger(budget=Guarantee.unbounded())
    model.set_params(ledger=unbounded).fit(tennis.X, tennis.y)
    assert model.privacy_spent_.epsilon == float("inf")
    assert model.privacy_claim_.epsilon == 1.0  # the paper's claim, shown next to it


def test_reference_discrete_noise_is_pure_and_reports_noisy_max(tennis):
    led = Ledger(budget=Guarantee(1.0))
    PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, noise="discrete", ledger=led
    ).fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0) and led.spent().delta == 0.0
    assert {c.mechanism for c in led.charges} == {"report_noisy_max", "noisy_histogram"}
    splits = [c.entry for c in led.charges if c.mechanism == "report_noisy_max"]
    assert splits and all(e.noise == "discrete_laplace" for e in splits)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupted_run_is_charged_in_full(tennis, monkeypatch, interrupt):
    """Ctrl-C during the MPC run (issue 11, item 2): the guard used to catch only Exception."""
    import privet.learners.partial_mpc_id3.host as protocols

    def interrupted(*args, **kwargs):
        raise interrupt()

    monkeypatch.setattr(protocols, "run_partial_mpc_id3", interrupted)
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    )
    with pytest.raises(interrupt):
        model.fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert led.charges[-1].mechanism.startswith("aborted MPC run")


def test_ctrl_c_during_the_replay_still_charges_every_opening(tennis, monkeypatch):
    """A real SIGINT while the openings are replayed into the ledger (issue 11, item 2).

    The run has already opened its values, so the replay finishes (every opening is
    charged exactly as planned) and the KeyboardInterrupt is raised afterwards.
    """
    import os
    import signal

    import privet.learners.partial_mpc_id3.replay as replay

    real_select = replay.ReplayOps.select
    calls = []

    def select(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return real_select(self, *args, **kwargs)

    monkeypatch.setattr(replay.ReplayOps, "select", select)
    led = Ledger(budget=Guarantee(3.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="local"
    )
    with pytest.raises(KeyboardInterrupt):
        model.fit(tennis.X, tennis.y)
    assert len(calls) > 1  # the replay went on after the signal
    assert led.spent().epsilon == pytest.approx(1.0)
    assert not any(c.mechanism.startswith("aborted") for c in led.charges)


def test_the_host_sizes_the_secure_integers_before_launch():
    """Issue 11, item 3: a fixed 32-bit length made Adult-sized runs fail inside the
    parties ("use a larger bit_length", no such parameter) after epsilon was charged."""
    from privet.learners._protocols.numbers import SecureNumbers
    from privet.learners._protocols.programs import check_run_sizes, choose_bit_length

    run = {"split_epsilon": 0.5, "leaf_epsilon": 0.5}
    discrete = SecureNumbers(mpc_noise="discrete")
    with pytest.raises(Exception, match="noisy-max keys"):
        check_run_sizes(32_561, discrete.replace(bit_length=32), **run)
    bits = choose_bit_length(32_561, discrete, **run)
    assert bits > 32
    check_run_sizes(32_561, discrete.replace(bit_length=bits), **run)  # fits
    assert choose_bit_length(14, discrete, **run) == 32  # small data keeps the fast length


def test_a_run_that_cannot_fit_is_refused_before_launch_and_charges_nothing(tennis, monkeypatch):
    import privet.learners.partial_mpc_id3.host as host
    from privet.errors import InvalidParameterError

    def no_launch(*args, **kwargs):
        raise AssertionError("the run was launched")

    monkeypatch.setattr(host, "run_partial_mpc_id3", no_launch)
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1e-30, max_depth=1, schema=tennis.schema, ledger=led, backend="local"
    )
    with pytest.raises(InvalidParameterError, match="Use a larger epsilon"):
        model.fit(tennis.X, tennis.y)
    assert led.spent().epsilon == 0
    assert led.charges == []


def test_a_timeout_below_one_second_is_refused_before_anything_runs(tennis):
    from privet.errors import InvalidParameterError

    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, schema=tennis.schema, ledger=led, backend="mpc", timeout=1e-3
    )
    with pytest.raises(InvalidParameterError, match=r"'timeout' parameter .* range \[1, inf\)"):
        model.fit(tennis.X, tennis.y)
    assert led.charges == []


def test_owner_files_the_host_wrote_are_deleted_once_read(tmp_path):
    """Issue 11: owners' rows stayed in temporary files after a crash. A party deletes the
    file the host wrote for the run (in a privet-owners-* folder) as soon as it has read
    it; a file an owner passed by hand is kept."""
    from privet.learners._protocols.host import OWNER_DIR_PREFIX
    from privet.learners._protocols.programs import load_rows

    run_dir = tmp_path / f"{OWNER_DIR_PREFIX}abc"
    run_dir.mkdir()
    mine = tmp_path / "mine.npz"
    for path in (run_dir / "owner0.npz", mine):
        np.savez(path, codes=np.zeros((3, 2), dtype=np.int64), y=np.ones(3, dtype=np.int64))
    codes, y = load_rows(str(run_dir / "owner0.npz"), 2)
    assert codes.shape == (3, 2) and y.tolist() == [1, 1, 1]
    assert not (run_dir / "owner0.npz").exists()
    load_rows(str(mine), 2)
    assert mine.exists()


@pytest.mark.mpc
def test_a_run_stopped_by_a_timeout_says_it_was_charged_in_full(tennis, monkeypatch):
    """Issue 37: a fit stopped by a timeout is charged its whole plan (its parties may
    have opened values), which is right, but the error the user saw did not say so."""
    import privet.learners._protocols.host as protocol_host
    from privet.mpc import spawn

    def launch_with_a_short_run_timeout(target, args, **kwargs):
        kwargs.pop("run_timeout", None)
        with spawn(target, args, **kwargs) as group:  # real parties, stopped after 0.2 s
            return group.wait(run_timeout=0.2)

    monkeypatch.setattr(protocol_host, "launch", launch_with_a_short_run_timeout)
    led = Ledger(budget=Guarantee(2.0, 1e-9))
    model = PartialMPCID3Classifier(
        epsilon=1.0, max_depth=2, schema=tennis.schema, ledger=led, backend="mpc", parties=3
    )
    with pytest.raises(MPCError, match=r"(?s)run_timeout.*whole privacy plan \(ε=1.*charged"):
        model.fit(tennis.X, tennis.y)
    assert led.spent().epsilon == pytest.approx(1.0)
    assert led.charges[-1].mechanism.startswith("aborted MPC run")
