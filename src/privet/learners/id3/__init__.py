"""ID3 without privacy (the non-private baseline of seed 000): plaintext only."""

from privet.learners.id3.estimator import ID3Classifier

__all__ = ["ID3Classifier"]
