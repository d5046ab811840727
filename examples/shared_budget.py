"""Several training scripts share one privacy budget through one ledger file.

Three independent processes (as three analysts' scripts, or three cron jobs)
train on the same dataset and charge the same SQLite ledger file. The
dataset's lifetime budget is 1.0 and each script asks for 0.4: the ledger's
lock and reservations let exactly two of them train, whatever the order,
and refuse the third before it reads a single record. Nothing adds epsilons
up outside the ledger.

    python examples/shared_budget.py [--ledger budget.sqlite]

The same with the command line (each call a separate process):

    privet train --learner dpid3 --data car.csv --schema car --target class \\
        --epsilon 0.4 --ledger budget.sqlite --budget 1 --yes
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from privet.data import load_dataset
from privet.errors import BudgetExceededError
from privet.learners import DPID3Classifier
from privet.ledger import Guarantee, Ledger

BUDGET, EACH, SCRIPTS = 1.0, 0.4, 3


def one_script(ledger_path: str, name: str) -> int:
    """What each analyst's script does: open the shared ledger, train, report."""
    ds = load_dataset("car")
    ledger = Ledger.open(ledger_path, dataset="car", budget=Guarantee(BUDGET))
    try:
        DPID3Classifier(epsilon=EACH, max_depth=2, schema=ds.schema, ledger=ledger).fit(ds.X, ds.y)
    except BudgetExceededError as exc:
        print(f"{name}: refused before reading the data: {exc}")
        return 3
    finally:
        ledger.close()
    print(f"{name}: trained with epsilon={EACH}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", help="ledger file (default: a new temporary file)")
    parser.add_argument("--script", help=argparse.SUPPRESS)  # internal: run one script
    args = parser.parse_args()
    path = args.ledger or os.path.join(tempfile.mkdtemp(prefix="privet-shared-"), "budget.sqlite")
    if args.script:
        sys.exit(one_script(path, args.script))

    procs = [
        subprocess.Popen([sys.executable, __file__, "--ledger", path, "--script", f"script {i}"])
        for i in range(1, SCRIPTS + 1)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    ledger = Ledger.open(path, dataset="car")
    print(
        f"\nLedger {path}: budget {ledger.budget}, spent {ledger.spent()}, "
        f"remaining {ledger.remaining()}"
    )
    print(f"callers: {sorted({c.caller for c in ledger.charges})}")
    ledger.close()
    assert sorted(codes) == [0, 0, 3], codes  # two fit in 1.0, the third is refused
    print("Inspect it with: privet ledger history", path)


if __name__ == "__main__":
    main()
