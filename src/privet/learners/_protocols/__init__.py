"""What the MPC programs of the tree systems share, above the :mod:`privet.mpc` runtime.

Below every system package of :mod:`privet.learners`; imports nothing from them.

``common``    secure-array helpers (one-hot blocks, contingency tables, range checks).
``noise``     the secure noise of a protocol run, and the public testing noise.
``switch``    the environment switch that allows public testing noise (no MPC imports).
``programs``  loading an owner's rows, sharing them, the reveal log of a party.
``host``      running a party program from the host and collecting its result.
``testing``   agreement of a protocol with its plaintext reference path (tests only).
"""
