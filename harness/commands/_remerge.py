"""A results dir's matrix merged again after its runs changed (`harness cells forget`, `prune`), and
the rows a merge states by default: shared by the verbs that merge (a verb never imports another)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Final

from harness.cell import FeatureInfo
from harness.merge.combine import merge_cell_dirs
from harness.merge.inventory import cell_dirs
from harness.merge.matrix_file import write_merged
from harness.model import Matrix
from harness.publish.render.markdown import render_markdown
from harness.run.suites import load_features

DEFAULT_FEATURES: Final = Path("suites") / "features.toml"
DEFAULT_RESULTS: Final = Path("results")


def stated_features(path: Path | None) -> dict[str, FeatureInfo] | None:
    """The rows as the features file states them now: `path`, else ./suites/features.toml if there."""
    if path is None:
        path = DEFAULT_FEATURES
        if not path.is_file():
            return None
    return load_features(path.parent, path)


def remerge(results_dir: Path) -> Matrix:
    """Merge every run of the results dir into its matrix.json and summary.md again, as `harness run`
    leaves them, under the folder's lock."""

    def merged() -> Matrix:
        cells = [c for c in cell_dirs([results_dir]) if c.is_dir() and c != results_dir]
        return merge_cell_dirs(cells, features=stated_features(None))

    return write_merged(results_dir / "matrix.json", merged, beside=lambda m: {"summary.md": render_markdown(m)})


def merge_command(results_dir: Path) -> str:
    """The command that merges the results dir into its matrix.json, with the folder as the user named it."""
    where = shlex.quote(str(results_dir))
    return f"harness merge {where} -o {shlex.quote(str(results_dir / 'matrix.json'))}"


def results_option(results_dir: Path) -> str:
    """` --results-dir DIR` when the user gave one, for the commands a verb suggests."""
    return "" if results_dir == DEFAULT_RESULTS else f" --results-dir {shlex.quote(str(results_dir))}"
