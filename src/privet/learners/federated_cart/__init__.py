"""Federated differentially private CART over K data owners (seed 003, Gubler).

Modules: :mod:`.binning` (public bins from the schema), :mod:`.reference`
(local statistics, Alg. 4, the single-process private sum), :mod:`.grower`
(Alg. 5 and Alg. 6), :mod:`.masking` (Alg. 1: X25519 pairwise keys and
ChaCha20 masks), :mod:`.party` (the party program), :mod:`.protocol` (the
host side of a protocol run), :mod:`.estimator` (the scikit-learn estimator).
"""

from privet.learners.federated_cart.estimator import FederatedDPTreeClassifier, collusion_table

__all__ = ["FederatedDPTreeClassifier", "collusion_table"]
