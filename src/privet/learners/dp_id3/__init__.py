"""DP ID3 (seed 000, Algorithm 6): the centralised DP baseline, plaintext only."""

from privet.learners.dp_id3.estimator import DPID3Classifier

__all__ = ["DPID3Classifier"]
