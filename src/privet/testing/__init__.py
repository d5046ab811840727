"""Tools for your own privacy test suites: hypothesis strategies and assertions.

>>> from privet.testing import schemas, datasets, neighbouring_pairs
"""

from privet.testing.strategies import canaries, datasets, entries, neighbouring_pairs, schemas

__all__ = ["canaries", "datasets", "entries", "neighbouring_pairs", "schemas"]
