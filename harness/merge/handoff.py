"""How a merge worker hands a cell's results to the merging process: pickled as plain values.

Cells are read in worker processes (harness/merge/workers.py); each writes thousands of
TestResults to the spill store (harness/merge/store.py), or hands them back (a composite column's
runs, the in-memory path). Pickled by default, each is a dataclass state plus an enum constructor call per
enum, which cost more to load in the merging process than the results took to decide. Registered
here (copyreg), a result is its field values in declaration order, enums by their value: the
speed trick lives at the one boundary that needs it, not in the model. tests/merge/test_handoff.py
holds it to the plain pickle: both give equal results.
"""

from __future__ import annotations

import copyreg
import dataclasses
from enum import Enum
from typing import Any, Final

from harness.model import TestResult
from harness.outcomes import Outcome, Scope, SkipClass

FIELDS: Final = tuple(f.name for f in dataclasses.fields(TestResult))
_ENUMS: Final[dict[str, dict[str, Enum]]] = {
    "outcome": {o.value: o for o in Outcome},
    "skip_class": {c.value: c for c in SkipClass},
    "scope": {s.value: s for s in Scope},
}
_ENUM_AT: Final = tuple((i, _ENUMS[name]) for i, name in enumerate(FIELDS) if name in _ENUMS)


def _reduce(result: TestResult) -> tuple[Any, tuple[Any, ...]]:
    values = [getattr(result, name) for name in FIELDS]
    for index, _ in _ENUM_AT:
        value = values[index]
        if value is not None:
            values[index] = value.value
    return _rebuild, tuple(values)


def _rebuild(*values: Any) -> TestResult:
    """_reduce's other half (found by name when the merging process unpickles)."""
    fields = list(values)
    for index, members in _ENUM_AT:
        if fields[index] is not None:
            fields[index] = members[fields[index]]
    return TestResult(**dict(zip(FIELDS, fields, strict=True)))


def register() -> None:
    """Pickle TestResults as plain values in this process (and the workers it forks)."""
    copyreg.pickle(TestResult, _reduce)


register()
