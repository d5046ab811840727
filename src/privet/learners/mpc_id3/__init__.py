"""MPC-ID3 (seed 000, the no-DP MPC baseline): the max-operator ID3 on secret shares.

``estimator``  :class:`MPCID3Classifier`.
``protocol``   the MPyC coroutine ``mpc_id3`` (the tree is opened).
``program``    the party program (``python -m privet.mpc.party ...``).
``host``       running it from the host.
"""

from privet.learners.mpc_id3.estimator import MPCID3Classifier

__all__ = ["MPCID3Classifier"]
