"""One-hot encoding padded to the common width w with dummy zero columns (seed 000 App. C.1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privet.data import (
    Categorical,
    Numeric,
    Schema,
    codes_from_one_hot,
    dummy_mask,
    one_hot,
    one_hot_target,
)
from privet.errors import InvalidParameterError, SchemaError


@pytest.fixture
def uneven() -> Schema:
    # domain sizes 2, 4, 3 -> w = 4
    return Schema(
        (
            Categorical("a", ["x", "y"]),
            Categorical("b", ["p", "q", "r", "s"]),
            Numeric("c", 0, 3, (1, 2)),
        ),
        Categorical("t", [0, 1, 2]),
    )


def test_shape_and_layout(uneven):
    X = np.array([[1, 3, 0], [0, 0, 2]])
    H = one_hot(X, uneven)
    assert H.shape == (2, 3, 4) and H.dtype == np.uint8
    assert H[0].tolist() == [[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]]
    assert H[1].tolist() == [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]
    flat = one_hot(X, uneven, flat=True)
    assert flat.shape == (2, 12)
    np.testing.assert_array_equal(flat, H.reshape(2, 12))
    # the paper's D[attribute][value][record]
    D = H.transpose(1, 2, 0)
    assert D[1, 3].tolist() == [1, 0]


def test_dummy_columns_are_zero(uneven):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, s, 50) for s in uneven.domain_sizes])
    H = one_hot(X, uneven)
    mask = dummy_mask(uneven)
    assert mask.tolist() == [
        [False, False, True, True],
        [False, False, False, False],
        [False, False, False, True],
    ]
    assert (H[:, mask] == 0).all()
    assert (H.sum(axis=2) == 1).all()


def test_wider_width_adds_dummies(uneven):
    H = one_hot(np.array([[1, 3, 2]]), uneven, width=6)
    assert H.shape == (1, 3, 6)
    assert (H[:, dummy_mask(uneven, width=6)] == 0).all()
    assert dummy_mask([2, 4], width=5).sum() == 3 + 1


def test_domain_sizes_as_a_list():
    assert one_hot(np.array([[0, 1]]), [1, 2]).tolist() == [[[1, 0], [0, 1]]]


@pytest.mark.parametrize(
    ("X", "kwargs", "exc", "match"),
    [
        (
            np.array([[2, 0, 0]]),
            {},
            SchemaError,
            r"X_codes\[0, 0\] = 2 is outside the domain 0\.\.1",
        ),
        (np.array([[0, 0, -1]]), {}, SchemaError, "of feature 2"),
        (np.array([[0, 0]]), {}, SchemaError, r"shape \(n, 3\)"),
        (np.array([[0.0, 0.0, 0.0]]), {}, SchemaError, "integer codes"),
        (np.array([[0, 0, 0]]), {"width": 3}, InvalidParameterError, "width=3 is smaller than"),
    ],
)
def test_one_hot_errors(uneven, X, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        one_hot(X, uneven, **kwargs)


def test_bad_domain_sizes():
    with pytest.raises(InvalidParameterError, match="positive integers"):
        one_hot(np.array([[0]]), [0])


def test_target_one_hot(uneven):
    C = one_hot_target(np.array([2, 0, 1, 2]), uneven)
    assert C.shape == (4, 3)
    assert C.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert one_hot_target(np.array([1]), 2).tolist() == [[0, 1]]
    with pytest.raises(SchemaError, match=r"y_codes\[0\] = 3 is outside 0\.\.2"):
        one_hot_target(np.array([3]), 3)
    with pytest.raises(SchemaError, match="must be 1-D"):
        one_hot_target(np.array([[0]]), 3)


@given(st.data())
def test_codes_from_one_hot_inverts(data):
    sizes = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=5))
    n = data.draw(st.integers(0, 20))
    X = np.array(
        [[data.draw(st.integers(0, s - 1)) for s in sizes] for _ in range(n)], dtype=np.int64
    ).reshape(n, len(sizes))
    H = one_hot(X, sizes)
    np.testing.assert_array_equal(codes_from_one_hot(H, sizes), X)
    np.testing.assert_array_equal(codes_from_one_hot(one_hot(X, sizes, flat=True), sizes), X)


def test_codes_from_one_hot_errors(uneven):
    H = one_hot(np.array([[0, 0, 0]]), uneven)
    H[0, 0, 3] = 1  # a dummy column set
    with pytest.raises(SchemaError, match="Record 0, feature 0 is not a valid one-hot block"):
        codes_from_one_hot(H, uneven)
    with pytest.raises(SchemaError, match="Expected a one-hot array"):
        codes_from_one_hot(np.zeros((2, 5)), uneven)
