"""The bug zoos: broken mechanisms and broken learners, each with its correct twin.

* :mod:`~privet.audits.zoo.mechanisms` — deliberately broken randomisers from
  the literature, their claims and the neighbours that expose them
  (:data:`ZOO`, :func:`run_zoo`); their samplers are in
  :mod:`~privet.audits.zoo.samplers`.
* :mod:`~privet.audits.zoo.learners` — small learners on privet's mechanisms
  with planted accounting bugs (:data:`LEARNER_ZOO`, :func:`run_learner_zoo`),
  which the white-box learner audit must catch.
"""

from privet.audits.zoo import samplers as _samplers
from privet.audits.zoo.learners import (
    LEARNER_ZOO,
    LearnerZooEntry,
    LearnerZooResult,
    learner_zoo_names,
    run_learner_zoo,
)
from privet.audits.zoo.mechanisms import (
    ZOO,
    ZooEntry,
    ZooResult,
    get_entry,
    run_zoo,
    zoo_names,
)
from privet.audits.zoo.samplers import *  # noqa: F403  (the zoo's mechanisms, re-exported)

__all__ = [
    *_samplers.__all__,
    "LEARNER_ZOO",
    "ZOO",
    "LearnerZooEntry",
    "LearnerZooResult",
    "ZooEntry",
    "ZooResult",
    "get_entry",
    "learner_zoo_names",
    "run_learner_zoo",
    "run_zoo",
    "zoo_names",
]
