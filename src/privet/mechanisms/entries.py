"""Ledger entries added by the mechanisms package.

The ledger's own entries cover most releases (``Laplace``, ``Gaussian``,
``Exponential``, ``LocalRandomiser``). Two releases need more than those say:

* report-noisy-max with *exponential* noise, which is the permute-and-flip
  distribution and not the exponential mechanism's (so it is not an
  ``Exponential`` entry, whose docstring covers Gumbel noise only);
* the distributed Laplace of Gubler (seed 003), whose guarantee against a
  coalition of colluding parties is weaker than the Laplace guarantee the sum
  gives an outsider.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from privet.errors import InvalidParameterError
from privet.ledger import Entry, register_entry
from privet.ledger.guarantee import check_delta, check_epsilon
from privet.ledger.pld import BoundedRangeCurve, Curve, RandomisedResponse


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class NoisyMax(Entry):
    """Report-noisy-max: return argmax_i u_i + Z_i for a utility of sensitivity
    ``sensitivity``, with Z_i i.i.d. Exponential(scale) (``noise="exponential"``)
    or Gumbel(scale) (``noise="gumbel"``), scale = 2 sensitivity / epsilon, or
    sensitivity / epsilon when the utility is ``monotone``: epsilon-DP either way.

    With Gumbel noise the selection has the exponential mechanism's distribution
    (McSherry & Talwar 2007; the Gumbel-max trick). With exponential noise it is
    the permute-and-flip mechanism (McKenna & Sheldon 2020; Ding et al. 2021,
    "The permute-and-flip mechanism is identical to report-noisy-max with
    exponential noise"), whose selection distribution differs from the
    exponential mechanism's. With discrete Laplace noise of scale
    ceil(2 sensitivity) / epsilon, or ceil(sensitivity) / epsilon when the
    utility is ``monotone``, and the first maximum reported it is epsilon-DP as
    well (Dwork & Roth, Claim 3.9, with integer thresholds; the proof is in
    :mod:`privet.mpc.discrete`). ``monotone`` never changes the charge.
    """

    epsilon: float
    sensitivity: float
    noise: str = "exponential"
    monotone: bool = False

    def __post_init__(self) -> None:
        self._positive_fields("epsilon", "sensitivity")
        if self.noise not in ("exponential", "gumbel", "discrete_laplace"):
            raise InvalidParameterError(
                "NoisyMax: noise must be 'exponential', 'gumbel' or 'discrete_laplace', got "
                f"{self.noise!r}."
            )

    def privacy_curve(self) -> Curve:
        """Gumbel noise is the exponential mechanism, epsilon-bounded range; the other
        noises are charged as any epsilon-DP release (randomised response)."""
        if self.noise == "gumbel":
            return BoundedRangeCurve(self.epsilon)
        return RandomisedResponse(self.epsilon)


@register_entry
@dataclass(frozen=True, slots=True, kw_only=True)
class DistributedLaplace(Entry):
    """Gamma distributed Laplace (gamma DLPA; Gubler, seed 003, eq. (1)): each of
    ``parties`` parties adds G_k - G'_k with G_k, G'_k ~ Gamma(1/K, scale) to its
    share of a sum of L1 sensitivity ``sensitivity``; the released sum carries
    Laplace(scale) noise, so it is (sensitivity/scale)-DP for anyone who knows
    none of the shares.

    A coalition of ``colluders`` = t parties that subtracts its own shares is left
    with the difference of two Gamma((K-t)/K, scale) variables, which is not a
    Laplace variable. ``colluder_epsilon``/``colluder_delta`` is the guarantee that
    residual gives (see :func:`privet.mechanisms.distributed.collusion_guarantee`):
    pure DP for t < K/2, only (epsilon, delta)-DP for t >= K/2, where the
    residual's density is unbounded at 0. Any single party knows its own share,
    so t = 1 is what each participant of the protocol gets.

    The ledger composes ``epsilon``/``delta``: the outsider guarantee by default,
    the colluders' guarantee when ``charge_colluders`` is true.

    ``discrete`` (optional, default false, added later): the shares are integer
    Polya shares N_k - N'_k, N ~ NB(1/K, 1 - e^{-1/scale}), summing to the
    discrete Laplace(scale) on an integer query; the colluders' residual is the
    difference of two NB((K-t)/K) variables and ``colluder_epsilon`` its pure
    epsilon (see :mod:`privet.mechanisms.polya`).
    """

    scale: float
    sensitivity: float
    parties: int
    colluders: int = 0
    colluder_epsilon: float = math.inf
    colluder_delta: float = 0.0
    charge_colluders: bool = False
    discrete: bool = False

    def __post_init__(self) -> None:
        self._positive_fields("scale", "sensitivity")
        if int(self.parties) != self.parties or self.parties < 1:
            raise InvalidParameterError(
                f"DistributedLaplace: parties must be an int >= 1, got {self.parties!r}."
            )
        if not (0 <= int(self.colluders) < int(self.parties)):
            raise InvalidParameterError(
                "DistributedLaplace: colluders must lie in [0, parties - 1], got "
                f"{self.colluders!r} with parties={self.parties!r}."
            )
        object.__setattr__(self, "parties", int(self.parties))
        object.__setattr__(self, "colluders", int(self.colluders))
        object.__setattr__(
            self,
            "colluder_epsilon",
            check_epsilon(self.colluder_epsilon, "colluder_epsilon", allow_inf=True),
        )
        object.__setattr__(
            self, "colluder_delta", check_delta(self.colluder_delta, "colluder_delta")
        )
        object.__setattr__(self, "charge_colluders", bool(self.charge_colluders))
        object.__setattr__(self, "discrete", bool(self.discrete))

    @property
    def outsider_epsilon(self) -> float:
        return self.sensitivity / self.scale

    @property
    def epsilon(self) -> float:
        return self.colluder_epsilon if self.charge_colluders else self.outsider_epsilon

    @property
    def delta(self) -> float:
        return self.colluder_delta if self.charge_colluders else 0.0
