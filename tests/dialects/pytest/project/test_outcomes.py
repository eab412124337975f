"""Every outcome pytest distinguishes, plus pytest-rerunfailures reruns."""

import sys
import unittest

import pytest


def test_passes():
    assert True


def test_fails():
    assert [1, 2, 3] == [1, 2, 4]


def test_setup_error(broken_setup):
    pass


def test_passes_then_teardown_error(broken_teardown):
    assert broken_teardown == "resource"


def test_fails_then_teardown_error(broken_teardown):
    assert broken_teardown == "something else"


@pytest.mark.skip(reason="skip marker")
def test_skip_marker():
    pass


@pytest.mark.skipif(sys.platform != "nonexistent", reason="skipif condition true")
def test_skipif():
    pass


def test_skip_inside():
    pytest.skip("skipped at run time")


@pytest.mark.xfail(reason="known bug 123")
def test_xfail():
    assert 0.1 + 0.2 == 0.3


@pytest.mark.xfail(reason="fixed upstream?", strict=False)
def test_xpass_non_strict():
    assert True


@pytest.mark.xfail(reason="must fail", strict=True)
def test_xpass_strict():
    assert True


def test_xfail_imperative():
    pytest.xfail("imperative xfail")


@pytest.mark.flaky(reruns=2)
def test_rerun_fails_twice_then_passes(attempt):
    assert attempt >= 3, f"attempt {attempt}"


@pytest.mark.flaky(reruns=2)
def test_rerun_always_fails(attempt):
    assert attempt == 0, f"attempt {attempt}"


@pytest.mark.flaky(reruns=1)
def test_rerun_marker_but_passes():
    assert True


@pytest.mark.slow
def test_with_property(record_property):
    record_property("owner", "team | <b>core</b>")
    assert True


@pytest.mark.parametrize(
    "text",
    [
        "a|b",
        "`tick`",
        "<script>alert(1)</script>",
        "ünïcödé ✓ 日本語",
        "with space",
        "a::b",
        "dup",
        "dup",
    ],
)
def test_odd_ids(text):
    assert text != "a::b", "the id with :: fails"


def test_noisy():
    for i in range(3000):
        print(f"line {i}: {'x' * 60}")
    print("to stderr", file=sys.stderr)


def test_subtests(subtests):
    for i in range(3):
        with subtests.test(msg="each", i=i):
            assert i != 1, "subtest i=1 fails"


class TestSameName:
    def test_same(self):
        assert True


class TestSameNameToo:
    def test_same(self):
        assert False is True


class TestUnittestStyle(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(True)

    @unittest.skip("unittest skip")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        self.assertEqual(1, 1)
