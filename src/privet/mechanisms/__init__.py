"""Mechanisms: every learner draws its noise from here.

Each mechanism is a small object that declares its neighbouring ``relation``,
its ``sensitivity`` and its guarantee (``privacy_map``, ``check``, ``entry``),
validates its parameters when built and its input before charging, and draws
noise only in ``__call__(values, *, scope, caller="", step="")`` after charging
the ledger scope. One call perturbs a whole array.

>>> from privet.ledger import Ledger
>>> from privet.mechanisms import make_laplace
>>> led = Ledger(budget=1.0)
>>> lap = make_laplace(0.5, sensitivity=1.0)
>>> noisy = lap([10.0, 20.0], scope=led.root)
>>> led.spent()
Guarantee(epsilon=0.5, delta=0.0)

Central: :func:`make_laplace`, :func:`make_discrete_laplace`,
:func:`make_gaussian`, :func:`make_exponential`, :func:`make_report_noisy_max`,
:func:`make_noisy_histogram` (all sampled by OpenDP). Local (seed 004):
:class:`PiecewiseMechanism`, :class:`PiecewiseMultiMechanism`,
:class:`DuchiMechanism`, :class:`DuchiMultiMechanism`, :class:`LocalLaplace`,
:class:`RandomisedResponse`. Distributed (seed 003): :class:`GammaDLPA` and
:func:`collusion_guarantee`. Matrix mechanism (seed 002):
:class:`MatrixMechanism`, :func:`optimize_strategy`,
:func:`decision_path_workload`.

Threat model of the randomness. Central noise comes from OpenDP's exact
samplers over the OS CSPRNG. Local randomisers release elements of public
finite sets with exact integer coins (no float output that one input can
produce and another cannot; :mod:`privet.mechanisms._exact`), drawn from numpy's
PCG64DXSM reseeded from the OS CSPRNG on every call: a statistical generator,
chosen because a CSPRNG for every draw costs 2.5-3.6x a whole call (measured in
``benchmarks/results/mechanisms_csprng.md``); see
:mod:`privet.mechanisms._random` for what this does and does not protect
against. The gamma shares of :class:`GammaDLPA` are floats (their sum is not
yet hardened against floating-point attacks; see its module docstring).
"""

from privet.mechanisms._opendp import ROUNDING_SLACK, laplace_noise
from privet.mechanisms._random import seed_for_tests, use_csprng
from privet.mechanisms._validate import check_entry, check_plan
from privet.mechanisms.base import Mechanism, calibrate
from privet.mechanisms.central import (
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    NoisyHistogram,
    ReportNoisyMax,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    discrete_noisy_max_probabilities,
    exponential_mechanism_probabilities,
    make_discrete_laplace,
    make_exponential,
    make_gaussian,
    make_laplace,
    make_noisy_histogram,
    make_report_noisy_max,
    permute_and_flip_probabilities,
)
from privet.mechanisms.distributed import (
    CollusionGuarantee,
    GammaDLPA,
    collusion_guarantee,
    make_gamma_dlpa,
    residual_delta,
    residual_epsilon,
    residual_pure_epsilon,
)
from privet.mechanisms.entries import DistributedLaplace, NoisyMax
from privet.mechanisms.local import (
    MAX_CATEGORIES,
    PIECEWISE_GRID,
    DuchiMechanism,
    DuchiMultiMechanism,
    LocalLaplace,
    LocalMechanism,
    PiecewiseMechanism,
    PiecewiseMultiMechanism,
    RandomisedResponse,
    duchi_multi_bound,
    piecewise_sample_count,
)
from privet.mechanisms.matrix import (
    DenseWorkload,
    IdentityStrategy,
    KroneckerStrategy,
    KroneckerWorkload,
    MatrixMechanism,
    MatrixStrategy,
    OptimisationResult,
    PIdentityStrategy,
    ProductQueries,
    Strategy,
    UnionWorkload,
    Workload,
    decision_path_workload,
    expected_error,
    make_matrix_mechanism,
    optimize_kronecker,
    optimize_p_identity,
    optimize_strategy,
    squared_error,
)

__all__ = [
    "MAX_CATEGORIES",
    "PIECEWISE_GRID",
    "ROUNDING_SLACK",
    "CollusionGuarantee",
    "DenseWorkload",
    "DiscreteLaplaceMechanism",
    "DistributedLaplace",
    "DuchiMechanism",
    "DuchiMultiMechanism",
    "ExponentialMechanism",
    "GammaDLPA",
    "GaussianMechanism",
    "IdentityStrategy",
    "KroneckerStrategy",
    "KroneckerWorkload",
    "LaplaceMechanism",
    "LocalLaplace",
    "LocalMechanism",
    "MatrixMechanism",
    "MatrixStrategy",
    "Mechanism",
    "NoisyHistogram",
    "NoisyMax",
    "OptimisationResult",
    "PIdentityStrategy",
    "PiecewiseMechanism",
    "PiecewiseMultiMechanism",
    "ProductQueries",
    "RandomisedResponse",
    "ReportNoisyMax",
    "Strategy",
    "UnionWorkload",
    "Workload",
    "calibrate",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "check_entry",
    "check_plan",
    "collusion_guarantee",
    "decision_path_workload",
    "discrete_noisy_max_probabilities",
    "duchi_multi_bound",
    "expected_error",
    "exponential_mechanism_probabilities",
    "laplace_noise",
    "make_discrete_laplace",
    "make_exponential",
    "make_gamma_dlpa",
    "make_gaussian",
    "make_laplace",
    "make_matrix_mechanism",
    "make_noisy_histogram",
    "make_report_noisy_max",
    "optimize_kronecker",
    "optimize_p_identity",
    "optimize_strategy",
    "permute_and_flip_probabilities",
    "piecewise_sample_count",
    "residual_delta",
    "residual_epsilon",
    "residual_pure_epsilon",
    "seed_for_tests",
    "squared_error",
    "use_csprng",
]
