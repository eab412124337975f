"""pytest's -k / -m grammar checked without pytest (harness/run/match_expression.py): every expression
pytest accepts passes, every one it refuses is refused with where and what; compared with pytest's own
parser on the same texts, so the check can never refuse a run pytest would take."""

from __future__ import annotations

import pytest
from _pytest.mark.expression import Expression

from harness.run.match_expression import ExpressionError, check_expression

ACCEPTED = [
    "",
    "amp",
    "not slow",
    "amp and not cuda",
    "(amp or linalg) and not test_svd[float64]",
    "test_a.py::test_b",
    "a-b/c.d:e+f",
    "not not x",
    "gpu(count=2)",
    'gpu(kind="h100", count=-1, fast=True)',
]
REFUSED = [
    ("and and", "'and' at column 1 where a name, 'not' or '(' belongs"),
    ("a and", "the end at column 6 where a name, 'not' or '(' belongs"),
    ("a and (b", "the end at column 9 where ')' belongs"),
    ("a b", "'b' at column 3 where the end belongs"),
    ("a)", "')' at column 2 where the end belongs"),
    ("a $ b", "'$' at column 3 is not part of an expression"),
    ('m(x="unclosed)', "the quote at column 5 is never closed"),
    ("m(x=)", "')' at column 5 where a value belongs"),
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_what_pytest_accepts_passes(text: str) -> None:
    Expression.compile(text)  # pytest's own parser agrees it is an expression
    check_expression(text)


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_what_pytest_refuses_is_refused_saying_where(text: str, message: str) -> None:
    with pytest.raises(SyntaxError):
        Expression.compile(text)  # pytest refuses it too
    with pytest.raises(ExpressionError) as caught:
        check_expression(text)
    assert str(caught.value) == message
