"""CDP+PMPC-ID3 (seed 000, App. B, Algorithms 7-10): DP splits and leaves opened from MPC.

``estimator``  :class:`PartialMPCID3Classifier`.
``reference``  the plan and the public control flow of Algorithm 7 (plaintext reference path).
``protocol``   the MPyC coroutine ``partial_mpc_id3`` (Algorithms 7-10 on shares).
``program``    the party program; ``host`` runs it; ``replay`` charges a run's openings.
``testing``    agreement of protocol and reference under public testing noise.
"""

from privet.learners.partial_mpc_id3.estimator import PartialMPCID3Classifier

__all__ = ["PartialMPCID3Classifier"]
