"""Import calc and check mean/median."""
import pytest

from calc import mean, median

CASES = [([3, 1, 4, 1, 5, 9, 2, 6], 3.875, 3.5), ([1, 2], 1.5, 1.5), ([5], 5, 5), ([10, 20, 25, 40], 23.75, 22.5)]


@pytest.mark.parametrize("xs,m,d", CASES)
def test_mean_median(xs, m, d):
    assert mean(xs) == pytest.approx(m) and median(xs) == pytest.approx(d)
