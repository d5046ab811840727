"""Seed 001 (Emekci et al.): ID3 over many parties by Shamir secure summation.

- :mod:`.estimator` -- :class:`SecureSumID3Classifier` (scikit-learn API, ledger).
- :mod:`.reference` -- the in-process reference path (same counts as the protocol).
- :mod:`.protocol` -- the party program: Alg. 3 level by level over the parties.
- :mod:`.grower` -- Alg. 3 level by level (shared by the program and the reference path).
- :mod:`.sharing` -- Alg. 1-2 with the verification of Sec. 4.3, the MPyC fast path,
  and the DP noise shares.
- :mod:`.field` -- the prime field Z_p of the summation and its cryptographic sampler.
"""

from privet.learners.secure_sum_id3.estimator import SecureSumID3Classifier
from privet.learners.secure_sum_id3.sharing import SummationIntegrityError

__all__ = ["SecureSumID3Classifier", "SummationIntegrityError"]
