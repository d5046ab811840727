"""Two hospitals train one federated DP tree without pooling their patients.

Seed 003's federated CART (:class:`privet.learners.FederatedDPTreeClassifier`):
each hospital keeps its rows and answers only Laplace-noised histograms of
its own patients at every node; the tree is grown from the sum. The public
schema (Cleveland heart disease, shipped with privet) fixes every domain
without looking at the data. Both hospitals' patients are charged to one
ledger: each row is in one hospital, so the ledger proves epsilon per path
of the tree (parallel composition over nodes, sequential along a path).

    python examples/two_hospitals_federated_tree.py [--epsilon 1] [--rows 300]

Reads ``processed.cleveland.data`` from ``../shared/data`` (or ``$PRIVET_DATA_DIR``).
"""

from __future__ import annotations

import argparse

import numpy as np

from privet.data import load_dataset
from privet.learners import FederatedDPTreeClassifier
from privet.ledger import Guarantee, Ledger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    heart = load_dataset("heart")
    X, y, schema = heart.X, heart.y, heart.schema
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(X))
    cut = int(0.8 * len(X))
    train, test = order[:cut], order[cut:]
    print(f"Data: {heart.source}, {len(X)} patients; {len(train)} train, {len(test)} test")

    ledger = Ledger(budget=Guarantee(args.epsilon), dataset="two hospitals")
    tree = FederatedDPTreeClassifier(
        epsilon=args.epsilon,
        max_depth=3,
        min_samples_leaf=5,
        n_parties=2,  # hospital A and hospital B: rows split horizontally
        schema=schema,
        ledger=ledger,
        random_state=args.seed,
    )
    print("Plan (no patient read yet):", tree.privacy_plan().description)
    print("The ledger proves:", ledger.plan_cost(tree.privacy_plan()))
    tree.fit(X.iloc[train], y.iloc[train])
    accuracy = float(np.mean(tree.predict(X.iloc[test]) == y.iloc[test].to_numpy()))
    print(f"Held-out accuracy: {accuracy:.3f}")
    print("Spent:", tree.privacy_spent_, "| remaining:", ledger.remaining())
    print(tree.export_text(max_lines=12))
    assert ledger.spent().epsilon <= args.epsilon + 1e-9


if __name__ == "__main__":
    main()
