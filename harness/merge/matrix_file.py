"""matrix.json as a merge writes it: one writer of a folder's merge outputs at a time, what a killed
writer left there swept first, the matrix (and the files made from it) each written whole.

`harness merge` and `harness run` (the main job merges every cell of its results dir) both write
through `write_merged`; tests/cli/test_thin_verbs.py holds every other module to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from harness import outputs
from harness.matrix_json import write_matrix
from harness.model import Matrix


def write_merged(
    output: Path,
    merge: Callable[[], Matrix],
    *,
    timeout: float = outputs.DEFAULT_LOCK_TIMEOUT,
    beside: Callable[[Matrix], Mapping[str, str]] | None = None,
) -> Matrix:
    """Under the lock of `output`'s folder (waiting up to `timeout` seconds for another writer): sweep
    what a killed writer left, make the matrix (`merge`: under the lock too, so a merge that reads
    that very folder sees every cell a writer before it finished), write it to `output`, then the
    files `beside` makes of it (name -> text, in the same folder). Returns the matrix."""
    folder = output.parent
    with outputs.locked(folder, timeout=timeout, what=str(output)):
        outputs.sweep(folder)
        matrix = merge()
        write_matrix(matrix, output)
        for name, text in (beside(matrix) if beside is not None else {}).items():
            outputs.write_file(folder / name, text)
    return matrix
