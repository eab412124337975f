"""See pkg_a/test_calc.py."""


class TestCalc:
    def test_add(self):
        assert 1 + 2 == 4  # fails here, passes in pkg_a

    def test_divide(self):
        assert 7 // 2 == 3


def test_add():
    assert True
