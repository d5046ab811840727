"""Audit a mechanism you wrote with ``privet.testing.assert_dp``.

Two versions of a "noisy mean age" query that its author claims is 1-DP:
``noisy_mean`` clips every age to the public range [0, 100] and adds Laplace
noise of scale 100 / (n * epsilon); ``unclipped_mean`` forgets the clipping,
so one very old (or mistyped) record moves the mean by more than the noise
was calibrated for. ``assert_dp`` runs each thousands of times on a pair of
neighbouring datasets (one record added) and bounds epsilon from below with
Clopper-Pearson intervals: a failure is evidence at the stated confidence,
a pass is not a proof.

    python examples/audit_my_mechanism.py [--trials 4000]
"""

from __future__ import annotations

import argparse

import numpy as np

from privet.ledger import Guarantee, Ledger
from privet.mechanisms import make_laplace
from privet.testing import assert_dp

UPPER = 100.0  # public bound on an age
EPSILON = 1.0


def _laplace(value: float, scale: float, size: int) -> np.ndarray:
    scope = Ledger(budget=Guarantee.unbounded()).root  # an audit samples, it does not account
    return make_laplace(scale=scale)(np.full(size, value), scope=scope)


def noisy_mean(ages: list[float], size: int) -> np.ndarray:
    """Sound: clip to [0, UPPER]; the mean of n (public) records moves by <= UPPER / n."""
    clipped = np.clip(np.asarray(ages, dtype=float), 0.0, UPPER)
    n = len(ages)
    return _laplace(float(clipped.sum()) / n, UPPER / (n * EPSILON), size)


def unclipped_mean(ages: list[float], size: int) -> np.ndarray:
    """The bug: no clipping, so a record of 1000 moves the sum by 10x the calibrated amount."""
    n = len(ages)
    return _laplace(float(np.sum(ages)) / n, UPPER / (n * EPSILON), size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    args = parser.parse_args()
    # Neighbours under replace-one (n is public): one patient's age replaced by an outlier.
    ages = [30.0, 45.0, 50.0, 61.0, 72.0]
    pair = (ages, [*ages[:-1], 1000.0])

    result = assert_dp(
        noisy_mean, EPSILON, neighbours=pair, trials=args.trials, confidence=0.999, random_state=0
    )
    print(f"noisy_mean: no violation found; epsilon lower bound {result.epsilon_lower:.3f}")
    try:
        assert_dp(
            unclipped_mean,
            EPSILON,
            neighbours=pair,
            trials=args.trials,
            confidence=0.999,
            random_state=0,
        )
    except AssertionError as exc:
        print("unclipped_mean FAILED its claim, as it should:")
        print("  " + str(exc).replace("\n", "\n  "))
    else:
        raise SystemExit("unclipped_mean passed: the audit missed the bug")


if __name__ == "__main__":
    main()
