"""Which reader reads a cell: one module per cell format (harness/cell.py, CELL_FORMAT)."""

from __future__ import annotations

from typing import Any, Final, Protocol

from harness.cell import CELL_FORMATS
from harness.errors import InputError
from harness.ingest import cellformat_v1, cellformat_v2, cellformat_v3, cellformat_v4
from harness.outcomes import Scope

CollectedTests = dict[str, tuple[str | None, Scope | None]]  # collected.json: test id -> (feature, scope)


class CellReader(Protocol):
    FORMAT: int
    # A `finish` event whose passed phases include the call, and nothing else, is a plain pass
    # (format 1 wrote one for every test); from format 2 on plain passes are `pass` lines.
    PLAIN_FINISH: bool

    def read_collected_tests(self, data: dict[str, Any], plan: CollectedTests) -> None:
        """Fill `plan` from collected.json's object; raise TypeError/KeyError when it is not this format's."""


READERS: Final[dict[int, CellReader]] = {
    cellformat_v1.FORMAT: cellformat_v1,
    cellformat_v2.FORMAT: cellformat_v2,
    cellformat_v3.FORMAT: cellformat_v3,
    cellformat_v4.FORMAT: cellformat_v4,
}
# The formats of cells `harness import` made: their JUnit is kept only gzipped, their log decides.
IMPORTED: Final = frozenset({cellformat_v3.FORMAT, cellformat_v4.FORMAT})
assert tuple(READERS) == CELL_FORMATS, "every cell format has its reader"


def cell_reader(cell_format: int) -> CellReader:
    try:
        return READERS[cell_format]
    except KeyError:
        raise InputError(f"cell format {cell_format} has no reader here (known: {sorted(READERS)})") from None
