"""One error hierarchy (harness/errors.py): every cause has its exit code, the codes are one table
with a meaning each, and an error prints as one line with its hint."""

from __future__ import annotations

import pytest

from harness import errors
from harness.errors import (
    EXIT_CODES,
    CellTimeoutError,
    DockerUnavailableError,
    GateFailedError,
    HarnessError,
    InfrastructureError,
    InputError,
    InterruptedRunError,
    RegistryError,
    UsageError,
)

EXPECTED = {
    UsageError: 2,
    RegistryError: 2,
    InputError: 4,
    InfrastructureError: 3,
    DockerUnavailableError: 3,
    CellTimeoutError: 5,
    errors.TestsFailedError: 1,
    GateFailedError: 1,
    errors.EmptyPublicationError: 1,
    InterruptedRunError: 130,
    errors.WriteError: 6,
    errors.OutputLockedError: 6,
}


def _all_errors() -> set[type[HarnessError]]:
    found: set[type[HarnessError]] = set()
    todo = [HarnessError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__ == errors.__name__:
                found.add(sub)
                todo.append(sub)
    return found


def test_each_cause_has_its_exit_code() -> None:
    assert {cls: cls.exit_code for cls in _all_errors()} == EXPECTED


def test_the_exit_code_table_is_one_meaning_per_code() -> None:
    codes = [code for code, _ in EXIT_CODES]
    assert len(codes) == len(set(codes)) and codes[0] == errors.EXIT_OK == 0
    assert all(meaning.strip() for _, meaning in EXIT_CODES)
    assert {cls.exit_code for cls in _all_errors()} <= set(codes), "every error's code is documented"
    assert (errors.EXIT_FAILED, errors.EXIT_USAGE, errors.EXIT_INTERRUPTED) == (1, 2, 130)


def test_docker_unavailable_is_an_infrastructure_error() -> None:
    with pytest.raises(InfrastructureError):
        raise DockerUnavailableError("no engine")


@pytest.mark.parametrize("cls", sorted(_all_errors(), key=lambda c: c.__name__))
def test_an_error_is_one_line_with_its_hint(cls: type[HarnessError]) -> None:
    assert str(cls("cannot read x")) == "cannot read x"
    err = cls("cannot read x", hint="run harness merge first")
    assert str(err) == "cannot read x (run harness merge first)"
    assert err.hint == "run harness merge first" and err.args == ("cannot read x",)
