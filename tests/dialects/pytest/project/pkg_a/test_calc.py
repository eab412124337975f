"""Same module basename, class and test names as pkg_b/test_calc.py, other outcomes."""


class TestCalc:
    def test_add(self):
        assert 1 + 2 == 3

    def test_divide(self):
        assert 7 // 2 == 4  # fails here, passes in pkg_b


def test_add():
    """A module-level function with the same name as the method above."""
    assert True
