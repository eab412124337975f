"""The cells to run, derived from the registry only; printed as a GitHub Actions matrix.

One cell per backend: its id is the backend id, so a column keeps its id from run to run
and `harness diff` can pair it with the baseline's column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from harness.errors import UsageError
from harness.registry import get_backend, load_registry

IMAGE_REPOSITORY: Final = "torch-compat"
_TORCH_VERSION_RE: Final = re.compile(r"^[0-9]+\.[0-9]+(\.[0-9]+)?([a-z0-9.+-]*)$")


@dataclass(frozen=True)
class PlannedCell:
    cell_id: str
    backend: str
    display_name: str
    image: str
    runner_labels: tuple[str, ...]
    self_hosted: bool
    accelerator: str
    torch: str

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["runner_labels"] = list(self.runner_labels)
        return data


def image_for(backend_id: str, torch: str = "") -> str:
    """`torch-compat/<backend>`, tagged with the torch version when one is pinned."""
    name = f"{IMAGE_REPOSITORY}/{backend_id}"
    return f"{name}:torch-{torch}" if torch else name


def plan_cells(backends: Sequence[str] | None = None, torch: str = "") -> list[PlannedCell]:
    """Cells for the selected backends (all, in registry order, when none are named)."""
    if torch and not _TORCH_VERSION_RE.match(torch):
        raise UsageError(f"--torch {torch!r} is not a version like 2.13.0")
    registry = load_registry()
    chosen = [get_backend(b).id for b in backends] if backends else list(registry)
    cells = []
    for backend_id in dict.fromkeys(chosen):
        backend = registry[backend_id]
        cells.append(
            PlannedCell(
                cell_id=backend.id,
                backend=backend.id,
                display_name=backend.display_name,
                image=image_for(backend.id, torch),
                runner_labels=backend.runner_labels,
                self_hosted="self-hosted" in backend.runner_labels,
                accelerator=backend.accelerator,
                torch=torch,
            )
        )
    return cells


def github_matrix(cells: Sequence[PlannedCell]) -> str:
    """`{"include": [...]}` on one line, ready for `matrix=<this>` in $GITHUB_OUTPUT."""
    return json.dumps({"include": [c.to_json() for c in cells]}, separators=(",", ":"))


def table(cells: Sequence[PlannedCell]) -> str:
    headers = ("cell", "backend", "image", "runner labels", "self-hosted")
    rows = [
        (c.cell_id, c.display_name, c.image, ",".join(c.runner_labels), "yes" if c.self_hosted else "no") for c in cells
    ]
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in [headers, *rows]]
    return "\n".join(lines) + "\n"
