"""Merge cells into the matrix model (matrix.json, versioned) and read it back.

A column is one cell, identified by the manifest's cell_id, never by file names or XML
content. Re-runs of a cell (run attempts) keep the latest; the same run uploaded twice is
merged once. A column without results is NO DATA and has no score.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from harness import __version__
from harness.cell import CellStatus, utc_now, write_json_atomic
from harness.errors import HarnessError, InputError
from harness.ingest import CellResult, ingest_cell
from harness.outcomes import Outcome, Rollup, SkipClass, rollup_counts
from harness.registry import load_registry

SCHEMA_VERSION: Final = "1.0"
SCHEMA_PATH: Final = Path(__file__).with_name("schema") / "matrix.schema.json"
_VERDICT_STATES: Final = (Rollup.SUPPORTED, Rollup.PARTIAL, Rollup.FAILING, Rollup.UNSUPPORTED)


# -- reading cells -------------------------------------------------------------------------
def read_cells(paths: Iterable[Path]) -> tuple[list[CellResult], list[dict[str, str]]]:
    """Ingest every cell dir; one unreadable cell becomes an input error, never a stop."""
    cells: list[CellResult] = []
    problems: list[dict[str, str]] = []
    for path in paths:
        try:
            cells.append(ingest_cell(Path(path)))
        except HarnessError as err:
            problems.append({"source": str(path), "message": str(err)})
        except Exception as err:
            problems.append({"source": str(path), "message": f"unexpected {type(err).__name__}: {err}"})
    return cells, problems


def deduplicate(cells: Sequence[CellResult]) -> tuple[list[CellResult], list[dict[str, str]]]:
    """One cell per cell_id: the latest run attempt wins; identical uploads merge once."""
    by_id: dict[str, list[CellResult]] = {}
    for cell in cells:
        by_id.setdefault(cell.cell_id, []).append(cell)
    kept: list[CellResult] = []
    notes: list[dict[str, str]] = []
    for cell_id, group in by_id.items():
        seen_runs: dict[str, CellResult] = {}
        for cell in group:
            run_id = cell.manifest["run_id"]
            if run_id in seen_runs:
                notes.append(
                    {
                        "cell": cell_id,
                        "source": str(cell.path),
                        "note": f"duplicate upload of run {run_id}; merged once",
                    }
                )
                continue
            seen_runs[run_id] = cell
        ordered = sorted(
            seen_runs.values(),
            key=lambda c: (int(c.manifest.get("run_attempt") or 1), c.manifest.get("started_at") or ""),
        )
        latest = ordered[-1]
        for older in ordered[:-1]:
            notes.append(
                {
                    "cell": cell_id,
                    "source": str(older.path),
                    "note": f"superseded by run {latest.manifest['run_id']} "
                    f"(attempt {latest.manifest.get('run_attempt', 1)})",
                }
            )
        kept.append(latest)
    return kept, notes


# -- building the model ----------------------------------------------------------------------
def _environment(manifest: dict[str, Any]) -> dict[str, Any]:
    env = manifest.get("environment") or {}
    torch = env.get("torch") or {}
    runtime = env.get("runtime") or {}
    devices = env.get("devices") or []
    device = devices[0] if devices else {}
    image = manifest.get("image") or {}
    runner = manifest.get("runner") or {}
    github = manifest.get("github") or {}
    return {
        "torch": torch.get("version"),
        "torch_git": torch.get("git_version"),
        "build": env.get("build"),
        "cuda": runtime.get("cuda"),
        "hip": runtime.get("hip"),
        "xpu": runtime.get("xpu"),
        "device": device.get("name") or ("cpu" if env.get("build") == "cpu" else None),
        "device_count": len(devices),
        "capability": device.get("capability"),
        "arch": device.get("arch"),
        "driver": env.get("driver"),
        "python": env.get("python"),
        "platform": env.get("platform"),
        "cpu": (env.get("cpu") or {}).get("model"),
        "mode": manifest.get("mode"),
        "image": image.get("ref"),
        "image_digest": image.get("digest"),
        "suite_sha": manifest.get("suite_sha"),
        "runner": runner.get("host"),
        "run_url": github.get("run_url"),
        "started_at": manifest.get("started_at"),
        "finished_at": manifest.get("finished_at"),
        "harness_version": manifest.get("harness_version"),
    }


def _column_state(cell: CellResult) -> str:
    status = cell.manifest.get("status")
    ran = any(r.outcome is not Outcome.NOT_RUN for r in cell.records)
    if not ran:
        return "no-data"
    if status == CellStatus.COMPLETED.value and not cell.errors:
        return "ok"
    return "partial-run"


def _features_metadata(cells: Sequence[CellResult]) -> dict[str, dict[str, Any]]:
    meta: dict[str, dict[str, Any]] = {}
    for cell in sorted(cells, key=lambda c: c.manifest.get("started_at") or ""):
        for fid, info in (cell.manifest.get("features") or {}).items():
            if isinstance(info, dict):
                meta[fid] = {"id": fid, **{k: v for k, v in info.items() if k != "id"}}
    return meta


def _column_order(cell: CellResult) -> tuple[int, str]:
    ids = list(load_registry())
    backend = cell.manifest.get("backend")
    return (ids.index(backend) if backend in ids else len(ids), cell.cell_id)


def build_matrix(
    cells: Sequence[CellResult],
    input_errors: Sequence[dict[str, str]] = (),
    notes: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    """The matrix model as a JSON-ready dict (see harness/schema/matrix.schema.json)."""
    registry = load_registry()
    cells = sorted(cells, key=_column_order)
    meta = _features_metadata(cells)
    feature_ids = list(meta)
    for cell in cells:
        for record in cell.records:
            fid = record.feature or "unassigned"
            if fid not in meta:
                meta[fid] = {"id": fid, "title": fid}
                feature_ids.append(fid)

    columns: list[dict[str, Any]] = []
    grid: dict[str, dict[str, Any]] = {fid: {} for fid in feature_ids}
    tests: dict[str, dict[str, Any]] = {}
    for cell in cells:
        column_id = cell.cell_id
        backend = cell.manifest.get("backend", "")
        state = _column_state(cell)
        per_feature: dict[str, Counter] = {fid: Counter() for fid in feature_ids}
        skips: dict[str, Counter] = {fid: Counter() for fid in feature_ids}
        # The state is judged on backend-scope tests; host-scope ones (formats, API presence)
        # decide only where a feature has nothing else.
        judged_on: dict[str, dict[str, Counter]] = {
            fid: {"backend": Counter(), "host": Counter()} for fid in feature_ids
        }
        for record in cell.records:
            fid = record.feature or "unassigned"
            per_feature[fid][record.outcome.value] += 1
            scope = judged_on[fid]["host" if record.scope == "host" else "backend"]
            scope[record.outcome.value] += 1
            if record.outcome is Outcome.SKIPPED:
                skips[fid][(record.skip_class or SkipClass.UNCLASSIFIED).value] += 1
                if record.skip_class is SkipClass.UNSUPPORTED:
                    scope["_unsupported"] += 1
            entry = tests.setdefault(record.nodeid, {"id": record.nodeid, "feature": fid, "results": {}})
            entry["results"][column_id] = record.to_json() | {"outcome": record.outcome.value}
            entry["results"][column_id].pop("nodeid", None)
            entry["results"][column_id].pop("feature", None)
        states: Counter = Counter()
        for fid in feature_ids:
            counts = dict(per_feature[fid])
            basis = judged_on[fid]["backend"] or judged_on[fid]["host"]
            unsupported = basis.pop("_unsupported", 0)
            rolled = Rollup.NO_DATA if state == "no-data" else rollup_counts(basis, unsupported)
            grid[fid][column_id] = {"state": rolled.value, "counts": counts, "skips": dict(skips[fid])}
            host = sum(judged_on[fid]["host"].values()) - judged_on[fid]["host"].get("_unsupported", 0)
            if host:
                grid[fid][column_id]["host_tests"] = host
            states[rolled.value] += 1
        judged = sum(states[s.value] for s in _VERDICT_STATES)
        totals: Counter = Counter()
        for record in cell.records:
            totals[record.outcome.value] += 1
        backend_info = registry.get(backend)
        columns.append(
            {
                "id": column_id,
                "backend": backend,
                "display_name": backend_info.display_name if backend_info else backend,
                "state": state,
                "cell_status": cell.manifest.get("status"),
                "run_id": cell.manifest.get("run_id"),
                "run_attempt": int(cell.manifest.get("run_attempt") or 1),
                "error": cell.manifest.get("error"),
                "exit": cell.manifest.get("exit"),
                "environment": _environment(cell.manifest),
                "errors": list(cell.errors),
                "counts": dict(totals),
                "score": None
                if state == "no-data"
                else {
                    "supported": states[Rollup.SUPPORTED.value],
                    "judged": judged,
                    "features": len(feature_ids),
                    "states": dict(states),
                },
                "source": str(cell.path),
            }
        )
    shas = sorted({c["environment"]["suite_sha"] for c in columns if c["environment"]["suite_sha"]})
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": utc_now(),
        "harness_version": __version__,
        "features": [meta[fid] for fid in feature_ids],
        "columns": columns,
        "cells": grid,
        "tests": sorted(tests.values(), key=lambda t: (feature_ids.index(t["feature"]), t["id"])),
        "alignment": {"aligned": len(shas) <= 1, "suite_shas": shas},
        "input_errors": list(input_errors),
        "notes": list(notes),
    }


MISSING_CELL_ERROR: Final = (
    "no results were uploaded for this planned cell: its job failed before writing a cell, "
    "was cancelled, or no runner picked it up"
)


def missing_cells(expected: Sequence[dict[str, Any]], present: Iterable[str]) -> list[CellResult]:
    """A NO DATA stand-in for each planned cell that produced nothing, so it shows as a column."""
    have = set(present)
    return [
        CellResult(
            path=Path("(planned)"),
            manifest={
                "cell_id": entry["cell_id"],
                "backend": entry.get("backend", ""),
                "run_id": "",
                "status": None,
                "error": MISSING_CELL_ERROR,
            },
            records=[],
            errors=[],
        )
        for entry in expected
        if entry["cell_id"] not in have
    ]


def merge_cell_dirs(paths: Iterable[Path], expected: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Merge cell dirs; `expected` (the plan's cells) adds NO DATA columns for cells that sent nothing."""
    cells, problems = read_cells(paths)
    kept, notes = deduplicate(cells)
    kept += missing_cells(expected, (c.cell_id for c in kept))
    return build_matrix(kept, problems, notes)


# -- matrix.json in and out ------------------------------------------------------------------
def write_matrix(matrix: dict[str, Any], path: Path) -> None:
    write_json_atomic(path, matrix)


def load_matrix(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such matrix file", hint="create it with `harness merge`") from None
    except (OSError, ValueError) as err:
        raise InputError(f"{path}: not a readable matrix.json ({err})") from err
    if not isinstance(data, dict) or "schema_version" not in data:
        raise InputError(f"{path}: not a matrix.json (no schema_version)")
    major = str(data["schema_version"]).split(".", 1)[0]
    if major != SCHEMA_VERSION.split(".", 1)[0]:
        raise InputError(
            f"{path}: schema_version {data['schema_version']} is not supported",
            hint=f"this harness reads {SCHEMA_VERSION}",
        )
    return data


def validate_matrix(matrix: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when the matrix does not match the published schema."""
    import jsonschema  # deferred: only tests and `harness validate` need it

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(matrix, schema)
