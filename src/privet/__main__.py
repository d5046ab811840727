"""``python -m privet``: the ``privet`` command."""

import sys

from privet.cli import main

if __name__ == "__main__":
    sys.exit(main())
