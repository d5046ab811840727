from __future__ import annotations

import numpy as np
import pytest

from privet.data import load_dataset
from privet.learners import ID3Classifier


def test_id3_fits_tennis_perfectly_with_entropy(tennis):
    # Quinlan's textbook example: ID3 with information gain separates the 14 days.
    m = ID3Classifier(max_depth=4, criterion="entropy", schema=tennis.schema)
    m.fit(tennis.X, tennis.y)
    assert np.mean(m.predict(tennis.X) == tennis.y.to_numpy()) == 1.0
    assert tennis.schema.feature_names[m.tree_.feature[0]].lower() == "outlook"


@pytest.mark.parametrize("criterion", ["max", "entropy", "gini"])
def test_id3_on_car_beats_majority(criterion):
    car = load_dataset("car")
    m = ID3Classifier(max_depth=4, criterion=criterion, schema=car.schema).fit(car.X, car.y)
    acc = np.mean(m.predict(car.X) == car.y.to_numpy())
    majority = car.y.value_counts(normalize=True).max()
    assert acc > majority + 0.1
