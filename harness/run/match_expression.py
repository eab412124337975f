"""pytest's `-k` / `-m` expressions, checked before a run starts (without importing pytest).

Under pytest-xdist a malformed expression is no usage error: each worker fails to collect and the
controller ends with an INTERNALERROR (exit 3), which reads as a broken runner. So `harness run`
checks the grammar pytest documents (`_pytest/mark/expression.py`) first:

    expr:     and_expr ('or' and_expr)*
    and_expr: not_expr ('and' not_expr)*
    not_expr: 'not' not_expr | '(' expr ')' | ident kwargs?
    ident:    (\\w|:|\\+|-|\\.|\\[|\\]|\\\\|/)+
    kwargs:   '(' name '=' value (',' name '=' value)* ')'     (-m marker arguments)

An empty expression is allowed (pytest reads it as false).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_IDENT: Final = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_KEYWORDS: Final = frozenset({"and", "or", "not"})


@dataclass(frozen=True)
class _Token:
    kind: str  # "(", ")", "=", ",", "string", "and", "or", "not", "ident", "end"
    text: str
    at: int


class ExpressionError(ValueError):
    """Not an expression pytest accepts; the message says where and what."""


def _tokens(text: str) -> list[_Token]:
    found: list[_Token] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char in " \t":
            at += 1
        elif char in "()=,":
            found.append(_Token(char, char, at))
            at += 1
        elif char in "'\"":
            end = text.find(char, at + 1)
            if end < 0:
                raise ExpressionError(f"the quote at column {at + 1} is never closed")
            found.append(_Token("string", text[at : end + 1], at))
            at = end + 1
        elif match := _IDENT.match(text, at):
            word = match.group(0)
            found.append(_Token(word if word in _KEYWORDS else "ident", word, at))
            at = match.end()
        else:
            raise ExpressionError(f"{char!r} at column {at + 1} is not part of an expression")
    found.append(_Token("end", "", len(text)))
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.at]

    def take(self, kind: str) -> bool:
        if self.current.kind == kind:
            self.at += 1
            return True
        return False

    def expect(self, kind: str, wanted: str) -> None:
        if not self.take(kind):
            self.fail(wanted)

    def fail(self, wanted: str) -> None:
        token = self.current
        got = "the end" if token.kind == "end" else repr(token.text)
        raise ExpressionError(f"{got} at column {token.at + 1} where {wanted} belongs")

    def expression(self) -> None:
        if self.current.kind != "end":
            self.or_expr()
        self.expect("end", "the end")

    def or_expr(self) -> None:
        self.and_expr()
        while self.take("or"):
            self.and_expr()

    def and_expr(self) -> None:
        self.not_expr()
        while self.take("and"):
            self.not_expr()

    def not_expr(self) -> None:
        if self.take("not"):
            self.not_expr()
        elif self.take("("):
            self.or_expr()
            self.expect(")", "')'")
        elif self.take("ident"):
            if self.current.kind == "(" and self.tokens[self.at + 1].kind == "ident":
                self.kwargs()
        else:
            self.fail("a name, 'not' or '('")

    def kwargs(self) -> None:
        self.expect("(", "'('")
        while True:
            self.expect("ident", "an argument name")
            self.expect("=", "'='")
            if not (self.take("string") or self.take("ident")):
                self.fail("a value")
            if not self.take(","):
                break
        self.expect(")", "')'")


def check_expression(text: str) -> None:
    """Raise ExpressionError when pytest would refuse `text` as a -k or -m expression."""
    _Parser(text).expression()
