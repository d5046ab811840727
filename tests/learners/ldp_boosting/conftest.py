import numpy as np
import pytest
from sklearn.datasets import make_classification

from privet.data import Categorical, Numeric, Schema


@pytest.fixture(scope="session")
def grid_data():
    """Two classes, 8 features on a public grid of 0.5 in [-4, 4] (thresholds between grid points)."""
    X, y = make_classification(
        n_samples=24000, n_features=8, n_informative=4, n_redundant=2, random_state=1
    )
    X = np.round(np.clip(X, -4, 4) * 2) / 2
    edges = list(np.arange(-3.75, 4, 0.5))
    schema = Schema(
        [Numeric(f"x{i}", -4, 4, bins=edges) for i in range(8)], Categorical("target", [0, 1])
    )
    return X[:20000], y[:20000], X[20000:], y[20000:], schema


@pytest.fixture(scope="session")
def small():
    """A small two-class problem in [0, 1]^3, 300 rows."""
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = (X[:, 0] + 0.2 * rng.standard_normal(300) > 0.5).astype(int)
    schema = Schema([Numeric(f"f{i}", 0, 1) for i in range(3)], Categorical("target", [0, 1]))
    return X, y, schema
