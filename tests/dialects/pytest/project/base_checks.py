"""A base class with test methods, in a module pytest does not collect (no test_ prefix).

test_inherit.py subclasses it twice: in xunit1 the <testcase file=...> of every inherited
test points here, not at test_inherit.py.
"""


class CalcChecks:
    mode = "base"

    def test_add(self):
        assert 1 + 2 == 3

    def test_mode_is_fast(self):
        assert self.mode == "fast"
