"""Where the protocols draw their privacy noise, and the testing hook that fixes it.

Production
    :class:`SecureNoise`: every noisy step calls the MPC mechanism itself
    (:class:`~privet.mpc.SecureLaplace`, Algorithm 12;
    :class:`~privet.mpc.SecureExponentialMechanism`, Algorithm 13). Nobody
    learns the noise. This is what the protocols use when no noise source is
    given, and the only source a learner ever passes.

Testing hook
    :class:`FixedNoise` replaces the *random inputs* of the two mechanisms by
    public values derived from a seed and the node's position in the tree
    (its path of branch indices), so that a protocol run and the plaintext
    reference path (:mod:`privet.learners._protocols.testing`) see exactly the same
    noise and must produce the same tree. Everything else, the secure
    arithmetic included, runs unchanged:

    * Laplace: the secret noise of Algorithm 12 is replaced by the public value
      ``scale * L`` with ``L`` a standard Laplace draw (an addition of a public
      constant, instead of ``SecureLaplace.noise``);
    * exponential mechanism: the secret uniform ``u`` of Algorithm 13 (the only
      randomness of the linear scan) is replaced by a public uniform; the
      mechanism's own code (``SecureExponentialMechanism.select``) computes the
      weights, the cumulative sums and the scan on the secret scores;
    * discrete noise (:mod:`privet.mpc.discrete`): the secret integer noise is
      replaced by public discrete Laplace draws of the mechanism's scale, added
      to the secret counts or scores; report-noisy-max then takes the secret
      first maximum with the mechanism's own :func:`~privet.mpc.discrete.argmax_first`.

    Public noise is no noise: a run with it has no privacy at all. It cannot be
    switched on by accident: :class:`FixedNoise` refuses to exist unless the
    environment variable ``PRIVET_TESTING_NOISE`` is set to
    ``"fixed-noise-breaks-privacy"`` in the process that builds it (the party
    processes inherit the launcher's environment), the party programs take it
    only through an argument named ``_testing_noise``, no learner has such a
    parameter, and every value opened under it is labelled ``[TESTING NOISE]``.
    Use :func:`privet.learners._protocols.testing.allow_testing_noise` in tests.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from privet.errors import PrivetError
from privet.learners._protocols.switch import testing_seed
from privet.mpc import fixedpoint as fx
from privet.mpc._runtime import get_runtime
from privet.mpc.discrete import SecureDiscreteLaplace, SecureReportNoisyMax, argmax_first
from privet.mpc.sharing import to_fixed_point

mpc = get_runtime()

#: Grid of the public uniforms: representable exactly by any type with f >= 12.
UNIFORM_BITS = 12

Path = tuple[int, ...]


class FixedNoiseRefused(PrivetError):
    """Public testing noise was requested outside a test."""


class SecureNoise:
    """Noise from the MPC mechanisms themselves (the production source)."""

    testing = False
    label_suffix = ""

    async def draw(self, mechanism: Any, shape: tuple[int, ...]) -> Any:
        """Noise for ``mechanism`` drawn ahead (None: the mechanism draws its own in MPyC)."""
        return None

    async def engine_values(
        self, engine: Any, mechanism: Any, paths: Sequence[Path], kind: str, size: int
    ) -> Any:
        """Shares in the vector engine of the discrete noise of ``mechanism``, ``(len(paths), size)``.

        ``kind``: ``"laplace"`` (leaf counts), ``"split"`` or ``"leaf"`` (noisy-max
        choices). Only the discrete samplers; drawn with :func:`privet.mpc.vector.discrete_laplace`.
        """
        from privet.mpc.vector import discrete_laplace

        if not _is_discrete(mechanism):
            raise FixedNoiseRefused(
                "the sorted-table protocols draw the discrete samplers' noise only; use "
                "mpc_noise='discrete' (the paper's fixed-point samplers run in MPyC)."
            )
        lap = mechanism.laplace if isinstance(mechanism, SecureReportNoisyMax) else mechanism
        return await discrete_laplace(engine, (len(paths), int(size)), lap.coins)

    def laplace(self, mechanism: Any, x: Any, paths: Sequence[Path], drawn: Any = None) -> Any:
        """Secret ``x + Laplace(mechanism.scale)`` per entry (Algorithm 12).

        ``drawn``: noise from :meth:`draw` (discrete samplers only).
        """
        if drawn is not None:
            return mechanism.add_noise(x, noise=drawn)
        return mechanism.add_noise(x)

    def select(
        self,
        mechanism: Any,
        scores: Any,
        paths: Sequence[Path],
        *,
        kind: str,
        mask: Any = None,
        drawn: Any = None,
    ) -> Any:
        """Secret one-hot choice per row of ``scores`` (Algorithm 13, or noisy max).

        ``mask`` (report-noisy-max only): candidates with mask 0 are never chosen.
        ``drawn``: noise from :meth:`draw` (report-noisy-max only).
        """
        extra = {} if drawn is None else {"noise": drawn}
        if mask is not None:
            return mechanism.select(scores, mask=mask, **extra)
        return mechanism.select(scores, **extra)


class VectorNoise(SecureNoise):
    """The discrete samplers' noise drawn in the vector engine, then moved into MPyC.

    The same coins as :class:`~privet.mpc.discrete.SecureDiscreteLaplace` (hence the
    same distribution, proof and delta), drawn with :func:`privet.mpc.vector.discrete_laplace`:
    secret random bits as XORs of the parties' own bits and the coins' comparison
    chains as products of ``uint64`` shares, instead of MPyC's PRSS bits and object
    arithmetic. The noise reaches MPyC by :meth:`~privet.mpc.vector.Engine.to_mpyc`
    (a masked opening: data-independent). The fixed-point mechanisms (Alg. 12-13)
    keep drawing in MPyC.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    async def draw(self, mechanism: Any, shape: tuple[int, ...]) -> Any:
        from privet.mpc.vector import discrete_laplace

        if not _is_discrete(mechanism):
            return None
        lap = mechanism.laplace if isinstance(mechanism, SecureReportNoisyMax) else mechanism
        bound = int(lap.noise_bound)
        z = await discrete_laplace(self.engine, tuple(shape), lap.coins)
        out = await self.engine.to_mpyc(
            z, lap.sectype, lower=-bound, upper=bound, label="discrete Laplace noise"
        )
        return out.reshape(tuple(shape))


class FixedNoise(SecureNoise):
    """Public, seeded noise keyed by node path: for agreement tests only.

    Parameters
    ----------
    seed : int
        Seed of all draws. The draw of a node depends only on ``seed``, its
        kind (``"laplace"``, ``"split"``, ``"leaf"``) and its path, never on the
        order in which nodes are processed, so a level-by-level protocol and a
        depth-first reference path consume the same values.

    Raises
    ------
    FixedNoiseRefused
        If ``PRIVET_TESTING_NOISE`` is not set to ``"fixed-noise-breaks-privacy"``.
    """

    testing = True
    label_suffix = " [TESTING NOISE]"

    def __init__(self, seed: int) -> None:
        self.seed = testing_seed(
            seed,
            FixedNoiseRefused,
            "(privet.learners._protocols.testing.allow_testing_noise()) or drop the "
            "_testing_noise argument.",
        )

    def _rng(self, kind: str, path: Path) -> np.random.Generator:
        key = [self.seed, zlib.crc32(kind.encode()), len(path), *(int(v) for v in path)]
        return np.random.default_rng(key)

    def laplace_values(self, path: Path, size: int) -> np.ndarray:
        """Standard Laplace(0, 1) draws of the leaf at ``path`` (one per class)."""
        return self._rng("laplace", path).laplace(0.0, 1.0, size=size)

    def uniform_value(self, kind: str, path: Path) -> float:
        """The uniform of Algorithm 13 for the choice ``kind`` at ``path``.

        A midpoint of the 2**-12 grid, so that it is exact in fixed point.
        """
        cells = 2**UNIFORM_BITS
        return (math.floor(self._rng(kind, path).random() * cells) + 0.5) / cells

    def discrete_laplace_values(
        self, kind: str, path: Path, size: int, scale: float, bound: int
    ) -> np.ndarray:
        """Integer discrete Laplace(scale) draws (G1 - G2), each clipped to ±bound.

        ``kind`` is ``"laplace"`` for leaf counts, ``"split"``/``"leaf"`` for
        report-noisy-max choices. The clip is the sampler's support (the
        secure sampler never exceeds it); a clipped draw has probability
        below 2**-40.
        """
        p = -math.expm1(-1.0 / scale)  # success probability of the geometric
        rng = self._rng("discrete " + kind, path)
        g = rng.geometric(p, size=(2, size)) - 1
        return np.clip(g[0] - g[1], -bound, bound).astype(np.int64)

    async def engine_values(
        self, engine: Any, mechanism: Any, paths: Sequence[Path], kind: str, size: int
    ) -> Any:
        """The public testing draws of :meth:`laplace`/:meth:`select`, as constant shares."""
        from privet.mpc import field61

        lap = mechanism.laplace if isinstance(mechanism, SecureReportNoisyMax) else mechanism
        values = np.stack(
            [
                self.discrete_laplace_values(kind, p, int(size), lap.scale, lap.noise_bound)
                for p in paths
            ]
        ).reshape(len(paths), int(size))
        return field61.encode(values)

    def laplace(self, mechanism: Any, x: Any, paths: Sequence[Path], drawn: Any = None) -> Any:
        x = to_fixed_point(x, mechanism.sectype)
        size = x.shape[-1]
        if _is_discrete(mechanism):
            noise = np.stack(
                [
                    self.discrete_laplace_values(
                        "laplace", p, size, mechanism.scale, mechanism.noise_bound
                    )
                    for p in paths
                ]
            )
            return x + mechanism.sectype.array(noise.reshape(x.shape))
        noise = np.stack([self.laplace_values(p, size) for p in paths]) * mechanism.scale
        return x + mechanism.sectype.array(noise.reshape(x.shape))

    def select(
        self,
        mechanism: Any,
        scores: Any,
        paths: Sequence[Path],
        *,
        kind: str,
        mask: Any = None,
        drawn: Any = None,
    ) -> Any:
        if _is_discrete(mechanism):
            q = to_fixed_point(scores, mechanism.sectype)
            d = q.shape[-1]
            noise = np.stack(
                [
                    self.discrete_laplace_values(kind, p, d, mechanism.scale, mechanism.noise_bound)
                    for p in paths
                ]
            )
            noisy = q + mechanism.sectype.array(noise.reshape(q.shape))
            return argmax_first(noisy, mechanism.noise_bound, mask)
        u = np.array([self.uniform_value(kind, p) for p in paths], dtype=float)
        uniforms = mechanism.sectype.array(u.reshape(len(paths), 1))
        with _fixed_uniforms(uniforms):
            return mechanism.select(scores)


def _is_discrete(mechanism: Any) -> bool:
    return isinstance(mechanism, SecureDiscreteLaplace | SecureReportNoisyMax)


# ------------------------------------------------------------ uniform override

_FIXED_UNIFORMS: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "privet_testing_uniforms", default=None
)
_ORIGINAL_RANDOM_UNIFORM = fx.random_uniform


def _random_uniform_or_fixed(sectype: type, shape: tuple[int, ...]) -> Any:
    """``fixedpoint.random_uniform``, except inside :func:`_fixed_uniforms`."""
    fixed = _FIXED_UNIFORMS.get()
    if fixed is None:
        return _ORIGINAL_RANDOM_UNIFORM(sectype, shape)
    if tuple(fixed.shape) != tuple(shape):
        raise FixedNoiseRefused(
            f"testing uniforms of shape {fixed.shape} given for a draw of shape {shape}."
        )
    return fixed


@contextlib.contextmanager
def _fixed_uniforms(uniforms: Any) -> Iterator[None]:
    """Make the exponential mechanisms *started* in this block use ``uniforms``.

    MPyC runs a coroutine as an asyncio task, which copies the current context
    when it is created, i.e. inside this block; the context variable therefore
    reaches exactly the mechanism calls made here, whenever their tasks run.
    The module attribute is replaced once (only ever by a :class:`FixedNoise`)
    and is inert outside such a block.
    """
    if fx.random_uniform is not _random_uniform_or_fixed:
        fx.random_uniform = _random_uniform_or_fixed
    token = _FIXED_UNIFORMS.set(uniforms)
    try:
        yield
    finally:
        _FIXED_UNIFORMS.reset(token)


def make_noise(seed: int | None) -> SecureNoise:
    """The noise source of a party program: secure unless a testing seed is given."""
    return SecureNoise() if seed is None else FixedNoise(seed)
