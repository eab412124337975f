"""Inherited test methods: the same method names under several classes."""

from base_checks import CalcChecks


class TestFast(CalcChecks):
    mode = "fast"


class TestSlow(CalcChecks):
    mode = "slow"  # test_mode_is_fast fails here only


class SameModuleBase:
    def test_shared(self):
        assert self.value > 0


class TestPositive(SameModuleBase):
    value = 1


class TestNegative(SameModuleBase):
    value = -1


class TestCollectedBase:
    """A base that is itself collected (Test prefix): its test runs once per class."""

    def test_inherited_twice(self):
        assert True


class TestCollectedChild(TestCollectedBase):
    pass
