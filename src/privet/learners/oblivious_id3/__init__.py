"""ODP+FMPC-ID3 (seed 000, Sec. 3, Algorithms 1-4): a secret-shared tree, oblivious prediction.

``estimator``  :class:`ObliviousID3Classifier`.
``reference``  the plan and the control flow of Algorithm 1 on plaintext one-hot data.
``protocol``   the MPyC coroutines: training (Alg. 1-3) and oblivious prediction (Alg. 4).
``program``    the party programs; ``host`` runs them; ``replay`` charges a run.
``testing``    agreement of protocol and reference under public testing noise.
"""

from privet.learners.oblivious_id3.estimator import ObliviousID3Classifier

__all__ = ["ObliviousID3Classifier"]
