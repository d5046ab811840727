"""Tree structures, split scores, noise accounting and the ops objects shared by the tree systems.

Below every system package of :mod:`privet.learners`; imports nothing from them.

``tree``        :class:`Tree`, :class:`TreeBuilder`, oblivious evaluation.
``scores``      contingency tables and split scores (max operator, gain, Gini).
``noise``       the DP draws of the plaintext learners (exponential mechanism, noisy counts).
``accounting``  what each step of a seed-000 grower is charged, and the paper's claims.
``ops``         :class:`ReferenceOps`, the plaintext data operations of the growers.
"""
