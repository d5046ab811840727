"""The release recorder: every noisy value a mechanism releases, as a white-box audit sees it.

Every privet mechanism draws its releases through :func:`release` (from
:meth:`Mechanism._release <privet.mechanisms.Mechanism>`, ``release_many``,
``release_disjoint``, the matrix mechanism's measurement, the noisy argmax),
and a learner that assembles a release from mechanism parts (the parties'
noise shares of a secure sum) passes the sum through it too. Outside an audit
this is one context-variable lookup before the draw.

Inside :func:`recording`, each release is appended to the :class:`Recorder` as a
:class:`Release`: the mechanism's law (:mod:`privet.mechanisms.laws`), the value
the mechanism was given and the output it drew. Inside :func:`replaying`, the
same learner runs again on *another* dataset while every release returns the
output recorded at the same position, without drawing: the auditor learns the
values that dataset gives for the same outputs. The log-likelihood ratio of the
whole transcript, ``sum_t log P_t(o_t | x'_t) - log P_t(o_t | x_t)``, is then
exact even when later releases depend on earlier ones (adaptive composition),
because the learner is a deterministic function of its data, its public
``random_state`` and the outputs it received. A replay that asks for a release
of another shape or law, or a different number of them, has *diverged*: the
transcript is impossible on the other dataset.

Privacy coins. Randomness a learner uses but does not release (which tree a row
is dealt to, how ties between equal noisy counts break) comes from
:func:`privacy_rng`: fresh OS entropy, as before, outside an audit; inside
:func:`recording` its seeds are recorded, and :func:`replaying` hands the same
seeds out again, so both runs see the same coins. This conditions the audit on
coins the ledger's proofs never rely on keeping secret (a partition's
parallel composition holds for any dealing). Coins whose secrecy a proof
*does* use, the Poisson subsamples that the ledger amplifies, are drawn by
:func:`poisson_sample`: its coins are recorded too, except that an audit may
force the coins of one row (the canary) to compute the likelihood of both of
its inclusions.
"""

from __future__ import annotations

import contextlib
import contextvars
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privet.errors import PrivetError
from privet.mechanisms.laws import Law

__all__ = [
    "Recorder",
    "Release",
    "ReplayDiverged",
    "active",
    "poisson_sample",
    "privacy_rng",
    "recording",
    "release",
    "release_many",
    "replaying",
]


class ReplayDiverged(PrivetError):
    """A replay asked for a release the recorded run did not make (shape, law or count)."""


@dataclass(frozen=True, slots=True)
class Release:
    """One recorded release: the law, the value it was given and what it released.

    ``label`` names where it happened (the mechanism and the learner's step).
    """

    law: Law | None
    value: Any = field(repr=False)
    output: Any = field(repr=False)
    label: str = ""


@dataclass(eq=False)
class Recorder:
    """The releases and coins of one run (``mode="record"``) or of its replay (``"replay"``).

    A replay recorder holds the recorded run (``source``) and appends, for each
    of its releases, the value this run gave with the recorded output.
    """

    mode: str = "record"
    source: Recorder | None = None
    releases: list[Release] = field(default_factory=list)
    coins: list[int] = field(default_factory=list)
    samples: list[NDArray[np.bool_]] = field(default_factory=list)
    sample_rates: list[float] = field(default_factory=list)
    force_last: bool | Mapping[int, bool] | None = None
    """Replay only: the inclusion forced on the last row (the canary) of every Poisson
    sample, or of sample ``j`` for each key ``j`` of a mapping."""
    diverged: str = ""
    """Why the replay diverged ('' if it did not)."""
    label: str = ""

    # -- releases -------------------------------------------------------------------
    def _next(self, law: Law | None, value: Any, label: str) -> Any:
        """The recorded output of the next release; appends it with this run's value."""
        assert self.source is not None
        t = len(self.releases)
        if t >= len(self.source.releases):
            self._diverge(f"release {t + 1} was not made by the recorded run")
        rec = self.source.releases[t]
        if rec.law is not None and (
            law is None or type(law) is not type(rec.law)
        ):  # a source without laws is an opaque transcript (what MPC parties opened)
            self._diverge(f"release {t + 1} has another law ({law} against {rec.law})")
        expected = np.shape(rec.output)
        if law is not None and law.output_shape(np.shape(value)) != expected:
            self._diverge(
                f"release {t + 1} ({rec.label}) has output shape "
                f"{law.output_shape(np.shape(value))} against {expected} in the recorded run"
            )
        self.releases.append(Release(law, _copy(value), rec.output, label))
        return rec.output

    def _diverge(self, why: str) -> None:
        if not self.diverged:
            self.diverged = why
        raise ReplayDiverged(f"The replay diverged from the recorded run: {why}.")

    def finish(self) -> None:
        """Check that a replay made every release of its source."""
        if self.mode == "replay" and self.source is not None and not self.diverged:
            if len(self.releases) != len(self.source.releases):
                self.diverged = (
                    f"{len(self.releases)} releases against {len(self.source.releases)} in the "
                    "recorded run"
                )

    # -- coins ----------------------------------------------------------------------
    def _coin_seed(self) -> int:
        if self.mode == "replay":
            assert self.source is not None
            t = len(self.coins)
            if t >= len(self.source.coins):
                self._diverge(f"privacy coin draw {t + 1} was not made by the recorded run")
            seed = self.source.coins[t]
        else:
            seed = secrets.randbits(128)
        self.coins.append(seed)
        return seed

    def _sample(self, n: int, rate: float) -> NDArray[np.bool_]:
        if self.mode == "replay":
            assert self.source is not None
            t = len(self.samples)
            if t >= len(self.source.samples):
                self._diverge(f"Poisson sample {t + 1} was not drawn by the recorded run")
            src = self.source.samples[t]
            mask = np.zeros(n, dtype=bool)
            k = min(n, src.size)
            mask[:k] = src[:k]
            if n > src.size:  # rows the recorded run did not have: fresh coins
                mask[k:] = _fresh_rng().random(n - k) < rate
            force = self.force_last
            if isinstance(force, Mapping):
                force = force.get(t)
            if force is not None and n > 0:
                mask[-1] = bool(force)
        else:
            mask = _fresh_rng().random(n) < rate
        self.samples.append(mask.copy())
        self.sample_rates.append(rate)
        return mask


_ACTIVE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar(
    "privet_release_recorder", default=None
)


def active() -> Recorder | None:
    """The recorder of the current context (None outside an audit)."""
    return _ACTIVE.get()


def _fresh_rng() -> np.random.Generator:
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(256)))


@contextlib.contextmanager
def recording(label: str = "") -> Iterator[Recorder]:
    """Record every release and privacy coin drawn inside the block."""
    rec = Recorder(mode="record", label=label)
    token = _ACTIVE.set(rec)
    try:
        yield rec
    finally:
        _ACTIVE.reset(token)


@contextlib.contextmanager
def replaying(
    source: Recorder, *, force_last: bool | Mapping[int, bool] | None = None, label: str = ""
) -> Iterator[Recorder]:
    """Run again with ``source``'s outputs forced, recording the values this run gives.

    ``force_last``: the inclusion forced on the last row of every
    :func:`poisson_sample` (None: the recorded coins). The returned recorder's
    ``diverged`` says whether (and why) the replay left the recorded run.
    """
    rec = Recorder(mode="replay", source=source, force_last=force_last, label=label)
    token = _ACTIVE.set(rec)
    try:
        yield rec
    except ReplayDiverged:
        pass  # recorded in rec.diverged; the learner's fit stopped there
    finally:
        _ACTIVE.reset(token)
        rec.finish()


def _copy(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, list | tuple):
        return [_copy(v) for v in x]
    return x


def release(law: Law | None, value: Any, draw: Callable[[], Any], *, label: str = "") -> Any:
    """The one hook every release passes: draw (or replay) the output for ``value``.

    ``law`` is the output law (None: not stated, the audit cannot compute a
    likelihood for it); ``draw()`` samples the output and is called only when
    not replaying.
    """
    rec = _ACTIVE.get()
    if rec is None:
        return draw()
    if rec.mode == "replay":
        return _copy(rec._next(law, value, label))
    out = draw()
    rec.releases.append(Release(law, _copy(value), _copy(out), label))
    return out


def release_many(
    law: Law | None,
    values: Sequence[Any],
    draw: Callable[[], list[Any]],
    *,
    label: str = "",
) -> list[Any]:
    """:func:`release` for a batch drawn together (one :class:`Release` per value)."""
    rec = _ACTIVE.get()
    if rec is None:
        return draw()
    if rec.mode == "replay":
        return [_copy(rec._next(law, v, label)) for v in values]
    outs = list(draw())
    for v, o in zip(values, outs, strict=True):
        rec.releases.append(Release(law, _copy(v), _copy(o), label))
    return outs


def privacy_rng() -> np.random.Generator:
    """A generator for privacy randomness that is not released (dealing, tie-breaking).

    Seeded with OS entropy, never from ``random_state``. Inside an audit the
    seeds are recorded and replayed (see the module docstring).
    """
    rec = _ACTIVE.get()
    if rec is None:
        return _fresh_rng()
    return np.random.Generator(np.random.PCG64DXSM(rec._coin_seed()))


def poisson_sample(n: int, rate: float) -> NDArray[np.bool_]:
    """Secret Poisson coins: row ``i`` is in the sample with probability ``rate``.

    The sample's secrecy is what amplification by subsampling uses; outside an
    audit the coins come from OS entropy. Inside an audit they are recorded and
    replayed, and a replay may force the last row's coin (the canary's).
    """
    rec = _ACTIVE.get()
    if rec is None:
        return _fresh_rng().random(int(n)) < float(rate)
    return rec._sample(int(n), float(rate))
