"""The public number format and noise samplers of a seed-000 tree run.

One :class:`SecureNumbers` value travels from the learner (which sizes it from
public counts before launch) through the host (which sends it to every party
as plain JSON keys) to the party programs and the agreement tests, which all
build their secure mechanisms from it. Nothing here loads MPyC until a
mechanism is asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from privet.errors import InvalidParameterError

#: The protocols' samplers: the paper's fixed point (Alg. 12-13) or exact discrete noise.
MPC_NOISES = ("fixed_point", "discrete")


@dataclass(frozen=True)
class SecureNumbers:
    """Secure number type and noise samplers of one MPC tree run (public).

    Parameters
    ----------
    bit_length : int, default=32
        Length of the secure integers (or fixed-point numbers); the learners
        pick the smallest that holds the run (``choose_bit_length``).
    frac_length : int or None, default=None
        Fractional bits of the fixed-point type (None: MPyC's default).
    clip_threshold : float or None, default=None
        Alg. 13's exponent clip (fixed-point exponential mechanism).
    laplace_method : str, default="difference"
        Alg. 12's Laplace sampler (fixed-point noise).
    laplace_sensitivity : float, default=1.0
        L1 sensitivity of a leaf's class counts under the ledger's
        neighbouring relation (1 for add/remove, 2 for replace-one).
    mpc_noise : {"fixed_point", "discrete"}, default="fixed_point"
        ``"fixed_point"``: the paper's Algorithms 12-13 (no proven DP);
        ``"discrete"``: exact discrete Laplace and report-noisy-max
        (:mod:`privet.mpc.discrete`), with a proven (epsilon, delta).
    security_bits : int, default=40
        The discrete samplers' noise is within total variation about
        2**-security_bits of exact discrete Laplace (8 to 43).
    monotone : bool, default=False
        Report-noisy-max for scores that are monotone between neighbours
        (max-operator scores and class counts under add/remove): discrete
        Laplace at scale ceil(Δ)/ε instead of ceil(2Δ)/ε, same ε
        (:class:`~privet.mpc.discrete.SecureReportNoisyMax`). Discrete noise
        only: the paper's fixed-point Algorithm 13 runs as written.
    """

    bit_length: int = 32
    frac_length: int | None = None
    clip_threshold: float | None = None
    laplace_method: str = "difference"
    laplace_sensitivity: float = 1.0
    mpc_noise: str = "fixed_point"
    security_bits: int = 40
    monotone: bool = False

    def __post_init__(self) -> None:
        if self.mpc_noise not in MPC_NOISES:
            raise InvalidParameterError(
                f"mpc_noise must be one of {MPC_NOISES}, got {self.mpc_noise!r}."
            )
        if self.monotone and self.mpc_noise != "discrete":
            raise InvalidParameterError(
                "monotone=True is the monotone report-noisy-max of the discrete samplers; the "
                "fixed-point exponential mechanism (mpc_noise='fixed_point', Alg. 13) runs as "
                "the paper writes it. Use mpc_noise='discrete' or drop monotone."
            )

    def args(self) -> dict[str, Any]:
        """The JSON keys a party program receives (flat, next to the run's own)."""
        return {
            "bit_length": int(self.bit_length),
            "frac_length": None if self.frac_length is None else int(self.frac_length),
            "clip_threshold": None if self.clip_threshold is None else float(self.clip_threshold),
            "laplace_method": str(self.laplace_method),
            "laplace_sensitivity": float(self.laplace_sensitivity),
            "mpc_noise": str(self.mpc_noise),
            "security_bits": int(self.security_bits),
            "monotone": bool(self.monotone),
        }

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> SecureNumbers:
        """The value a party program was sent; unknown keys are refused by name."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(args) - known)
        if unknown:
            raise InvalidParameterError(
                f"unknown argument(s) {unknown} for a tree run; the number format takes "
                f"{sorted(known)}."
            )
        return cls(**args)

    def replace(self, **changes: Any) -> SecureNumbers:
        return dataclasses.replace(self, **changes)

    # -- the mechanisms (load MPyC) --------------------------------------------------
    def selection(self, epsilon: float) -> Any:
        """A split (or EM leaf) selection at ``epsilon``: Alg. 13, or report-noisy-max."""
        if self.mpc_noise == "discrete":
            from privet.mpc.discrete import SecureReportNoisyMax

            return SecureReportNoisyMax(
                epsilon=epsilon, monotone=bool(self.monotone), **self._types(), **self._security()
            )
        from privet.mpc.mechanisms import SecureExponentialMechanism

        return SecureExponentialMechanism(
            epsilon=epsilon, clip_threshold=self.clip_threshold, **self._types()
        )

    def laplace(self, epsilon: float) -> Any:
        """A leaf's noisy class counts at ``epsilon``: Alg. 12, or discrete Laplace."""
        if self.mpc_noise == "discrete":
            from privet.mpc.discrete import SecureDiscreteLaplace

            return SecureDiscreteLaplace(
                epsilon=epsilon,
                sensitivity=round(self.laplace_sensitivity),
                **self._types(),
                **self._security(),
            )
        from privet.mpc.mechanisms import SecureLaplace

        return SecureLaplace(
            epsilon=epsilon,
            sensitivity=self.laplace_sensitivity,
            method=self.laplace_method,
            **self._types(),
        )

    def mechanisms(
        self, leaf: str, split_epsilon: float | None, leaf_epsilon: float
    ) -> tuple[Any, Any]:
        """(split mechanism or None, leaf mechanism) of a run."""
        split = None if split_epsilon is None else self.selection(split_epsilon)
        leaf_mech = (
            self.laplace(leaf_epsilon) if leaf == "laplace" else self.selection(leaf_epsilon)
        )
        return split, leaf_mech

    def _types(self) -> dict[str, Any]:
        return {"bit_length": self.bit_length, "frac_length": self.frac_length}

    def _security(self) -> dict[str, Any]:
        return {"security_bits": self.security_bits}
