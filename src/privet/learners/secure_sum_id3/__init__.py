"""Seed 001 (Emekci et al.): ID3 over many parties by Shamir secure summation.

- :mod:`.estimator` -- :class:`SecureSumID3Classifier` (scikit-learn API, ledger).
- :mod:`.reference` -- the in-process reference path (same counts as the protocol).
- :mod:`.protocol` -- the party side: Alg. 1-2 with the verification of Sec. 4.3,
  Alg. 3 level by level, the MPyC fast path, and the party program.
"""

from privet.learners.secure_sum_id3.estimator import SecureSumID3Classifier
from privet.learners.secure_sum_id3.protocol import SummationIntegrityError

__all__ = ["SecureSumID3Classifier", "SummationIntegrityError"]
