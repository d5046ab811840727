"""The ``privet`` command: one small module per command group.

========================  ====================================================
``privet demo``           the whole story on a bundled dataset (:mod:`.demo`)
``privet learners``       names, protection and proofs (:mod:`.learners`)
``privet datasets``       datasets and shipped schemas (:mod:`.datasets`)
``privet schema``         ``infer`` a draft, ``check`` a CSV (:mod:`.schema`)
``privet train``          CSV to saved, budget-checked model (:mod:`.train`)
``privet predict``        labels from a saved model (:mod:`.predict`)
``privet ledger``         ``show``, ``history``, ``export``, ``init``... (:mod:`.ledger`)
``privet audit``          ``list``, ``dp``, ``mia``, ``model`` (:mod:`.audit`)
========================  ====================================================

Exit codes (0 ok, 2 usage, 3 budget refused, 4 data invalid, 1 other) and the
output conventions are in :mod:`privet.cli._output`.
"""

from privet.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
