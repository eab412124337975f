"""The committed real cells (tests/data/cells, tests/data/cells-sample), merged once per session.

Fast tests of the merge and publish wings read these instead of running pytest: they are what real
runs wrote (tests/data/make_cells.py). The merge reads them in this process (jobs=1) and never
writes to them; the matrices are frozen, so sharing them between tests is safe.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Final

from harness.model import Matrix

DATA: Final = Path(__file__).resolve().parent / "data"
CELLS: Final = DATA / "cells"
SAMPLES: Final = DATA / "cells-sample"


def cell_dirs() -> list[Path]:
    """The real suites on three torch releases: cpu-2.13.0, cu130-2.14.1-cpu-only, cu132-2.15.0-cpu-only."""
    return sorted(p for p in CELLS.iterdir() if p.is_dir())


def sample_dirs() -> list[Path]:
    """A small suite's baseline run, its newer run, and a NO DATA (infra-error) cell."""
    return sorted(p for p in SAMPLES.iterdir() if p.is_dir())


def all_cell_dirs() -> list[Path]:
    return cell_dirs() + sample_dirs()


@functools.cache
def releases_matrix() -> Matrix:
    """The three committed cells of the real suites merged: passes, skips, xfails, measurements."""
    from harness.merge.combine import merge_cell_dirs

    return merge_cell_dirs(cell_dirs(), jobs=1, features=stated_features())


def stated_features() -> dict[str, Any]:
    """The rows as the repository's suites/features.toml states them (releases, device families, groups):
    the committed cells recorded the rows of their day."""
    from harness.run.suites import load_features

    return load_features(DATA.parents[1] / "suites")


@functools.cache
def sample_matrices() -> tuple[Matrix, Matrix]:
    """(baseline, newer run with a NO DATA column): failures, regressions, hostile test ids."""
    from harness.merge.combine import merge_cell_dirs

    base = merge_cell_dirs([SAMPLES / "publishing-base"], jobs=1)
    new = merge_cell_dirs([SAMPLES / "publishing-new", SAMPLES / "publishing-nodata"], jobs=1)
    return base, new


def as_groups(collected: dict[str, Any]) -> dict[str, Any]:
    """A format 1 collected.json (`tests`: one object per test) in format 2's layout (`groups`: ids
    per feature and scope, in collection order), as today's cell plugin writes it."""
    groups: list[dict[str, Any]] = []
    for test in collected["tests"]:
        key = (test.get("feature"), test.get("scope"))
        if groups and (groups[-1]["feature"], groups[-1]["scope"]) == key:
            groups[-1]["tests"].append(test["nodeid"])
        else:
            groups.append({"feature": key[0], "scope": key[1], "tests": [test["nodeid"]]})
    return {"count": collected["count"], "collect_errors": collected.get("collect_errors", []), "groups": groups}


def as_tests(collected: dict[str, Any]) -> dict[str, Any]:
    """A format 2 collected.json (`groups`) in format 1's layout (`tests`: one object per test), as
    the cell plugin wrote it before December 2026."""
    tests = [
        {"nodeid": nodeid, "feature": group["feature"], "scope": group["scope"], "path": nodeid.split("::")[0]}
        for group in collected["groups"]
        for nodeid in group["tests"]
    ]
    return {"count": collected["count"], "collect_errors": collected.get("collect_errors", []), "tests": tests}


def as_finish_lines(events: str) -> str:
    """A format 2 events.jsonl with every `pass` line as format 1 wrote it: a `finish` line with the
    call's time among its passed phases."""
    out = []
    for line in events.splitlines():
        event = json.loads(line) if line.strip() else None
        if event and event.get("event") == "pass":
            event = {"event": "finish", "nodeid": event["nodeid"], "passed": {"call": event["duration"]}}
            line = json.dumps(event)
        out.append(line)
    return "\n".join(out) + "\n"


def partial_rerun_cell(folder: Path) -> Path:
    """`publishing-new` as a later partial run (`--test`-style selection) of the committed cpu cell,
    in `folder`/later (made once): a composite column whose overlaid results carry its run."""
    import shutil

    later = folder / "later"
    if not later.exists():
        shutil.copytree(SAMPLES / "publishing-new", later)
        manifest = json.loads((later / "manifest.json").read_text())
        manifest.update(cell_id="cpu-2.13.0", run_id="r-partial", started_at="2026-12-02T00:00:00Z")
        manifest["selection"] = {"keyword": "sample"}
        (later / "manifest.json").write_text(json.dumps(manifest))
    return later
