"""The matrix as one self-contained static page: feature rows x backend columns, drill-down,
filters kept in the URL, environments, STALE / NO DATA columns and a trend per column.

The page embeds a compact projection of matrix.json and draws it with vanilla JS through DOM
APIs (textContent, never innerHTML with data); test rows are built only when a feature is
opened, a page of rows at a time, so 5 columns x 50,000 tests stay responsive. Nothing is
fetched from anywhere: CSS and JS are inline and a Content-Security-Policy forbids requests.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from harness import jsonio
from harness.model import Column, Matrix, TestResult
from harness.outcomes import ROLLUP_MEANING, Outcome, Rollup, Scope
from harness.publish.diff import diff_columns, release_pairs
from harness.publish.history import RunSummary
from harness.publish.render import DEFAULT_STALE_AFTER_HOURS
from harness.publish.render.figures import feature_figures, figure_row

TEMPLATES: Final = Path(__file__).with_name("templates")
TRACE_CAP: Final = 4_000
MESSAGE_CAP: Final = 2_000
_OUTCOMES: Final = [o.value for o in Outcome]
# The page uses text symbols that common fonts (DejaVu, Liberation) draw: the emoji of the
# Markdown summary need a colour-emoji font that many CI browsers and servers lack.
PAGE_OUTCOME_SYMBOLS: Final[dict[Outcome, str]] = {
    Outcome.PASSED: "✔",
    Outcome.FAILED: "✘",
    Outcome.ERROR: "‼",
    Outcome.SKIPPED: "»",
    Outcome.XFAILED: "✗",
    Outcome.XPASSED: "★",
    Outcome.FLAKY: "↻",
    Outcome.TIMEOUT: "◷",
    Outcome.CRASHED: "☠",
    Outcome.NOT_RUN: "○",
}
PAGE_STATE_SYMBOLS: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "✔",
    Rollup.PARTIAL: "◐",
    Rollup.FAILING: "✘",
    Rollup.UNSUPPORTED: "⊘",
    Rollup.NOT_APPLICABLE: "–",
    Rollup.NO_DATA: "?",
    Rollup.NOT_SHIPPED: "∅",
}
_ENV_FIELD_LABELS: Final = (
    ("torch", "torch"),
    ("torch_git", "torch git"),
    ("build", "build"),
    ("cuda", "CUDA runtime"),
    ("hip", "HIP runtime"),
    ("xpu", "XPU runtime"),
    ("device", "device"),
    ("device_count", "devices"),
    ("capability", "capability"),
    ("arch", "arch"),
    ("driver", "driver"),
    ("python", "Python"),
    ("platform", "platform"),
    ("cpu", "CPU"),
    ("mode", "mode"),
    ("image", "image"),
    ("image_digest", "image digest"),
    ("suite_sha", "suite SHA"),
    ("runner", "runner"),
    ("started_at", "started"),
    ("finished_at", "finished"),
    ("harness_version", "harness"),
)


_ENV_LABELS: Final = dict(_ENV_FIELD_LABELS)


def _trim(text: str | None, cap: int) -> str | None:
    if not text or len(text) <= cap:
        return text
    head = cap // 3
    return f"{text[:head]}\n… [{len(text) - cap} characters trimmed; see the cell's files] …\n{text[-(cap - head) :]}"


@functools.lru_cache(maxsize=65_536)
def _duration(value: float | None) -> float | None:
    """Three significant digits for the page (results share durations: each is rounded once)."""
    if value is None:
        return None
    return float(f"{value:.3g}")


def _detail(result: TestResult) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key, value in result.properties.items():
        row = (
            figure_row("", "", "", key[len("perf.") :], value)
            if key.startswith("perf.") and isinstance(value, dict)
            else None
        )
        if row is not None:
            extra = ", ".join(x for x in (row.shape, row.dtype) if x)
            properties[row.label] = (
                row.value_text + (f" ({extra})" if extra else "") + (f"; claim: {row.claim}" if row.claim else "")
            )
        else:
            properties[key] = value if isinstance(value, str | int | float | bool) else json.dumps(value)
    detail = {
        "m": _trim(result.message, MESSAGE_CAP),
        "t": _trim(result.trace, TRACE_CAP),
        "o": _trim(result.output, MESSAGE_CAP),
        "c": result.skip_class.value if result.skip_class else None,
        "l": result.link,
        "a": result.attempts if result.attempts > 1 else None,
        "p": properties or None,
        "s": result.strict,
        "g": result.signal,
        "h": result.scope.value if result.scope is not Scope.BACKEND else None,
        "x": [_trim(m, MESSAGE_CAP) for m in result.extra_messages] or None,
    }
    return {k: v for k, v in detail.items() if v is not None}


def _column(column: Column) -> dict[str, Any]:
    env = column.environment
    return {
        "id": column.id,
        "backend": column.backend,
        "name": column.heading or column.id,
        "label": column.label,
        "torch": env.torch if column.has_data else None,
        "release": column.release_series,
        "variant": column.variant,
        "variant_reason": column.variant_reason,
        "reproduce": column.reproduce,
        "state": column.state.value,
        "status": column.cell_status.value if column.cell_status else None,
        "error": column.error,
        "errors": [_trim(e, 500) for e in column.errors[:5]],
        "counts": {k.value: v for k, v in column.counts.items()},
        "score": column.score.to_json() if column.score else None,
        "run_url": env.run_url,
        "when": env.finished_at or env.started_at,
        "env": [[_ENV_LABELS[key], str(value)] for key, value in env.items() if key in _ENV_LABELS],
    }


def _trend(history: list[RunSummary]) -> dict[str, list[list[Any]]]:
    """column id -> [[generated_at, supported, judged, passed, failing]] oldest first; None when no data."""
    trend: dict[str, list[list[Any]]] = {}
    for run in history:
        for column in run.columns:
            point: list[Any] = [run.generated_at, None, None, None, None]
            if column.has_data and column.score:
                point = [
                    run.generated_at,
                    column.score.supported,
                    column.score.judged,
                    column.counts.get(Outcome.PASSED, 0),
                    column.failing,
                ]
            trend.setdefault(column.id, []).append(point)
    return trend


def page_data(
    matrix: Matrix,
    history: list[RunSummary] | None = None,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
) -> dict[str, Any]:
    """The compact projection the page script reads."""
    columns = matrix.columns
    col_index = {c.id: i for i, c in enumerate(columns)}
    feat_index = {f.id: i for i, f in enumerate(matrix.features)}
    out_index = {o: i for i, o in enumerate(Outcome)}
    tests = []
    # A result shared by many tests (the merge shares equal "passed in t seconds" results) is
    # projected once; the results live as long as the matrix, so their ids stay theirs.
    projected: dict[int, list[Any]] = {}
    for test in matrix.tests:
        row: list[Any] = [None] * len(columns)
        for column_id, result in test.results.items():
            index = col_index.get(column_id)
            if index is None:
                continue
            cell = projected.get(id(result))
            if cell is None:
                cell = projected[id(result)] = [out_index[result.outcome], _duration(result.duration)]
                if result.outcome is not Outcome.PASSED or result.properties or result.scope is not Scope.BACKEND:
                    detail = _detail(result)
                    if detail:
                        cell.append(detail)
            row[index] = cell
        tests.append([test.id, feat_index.get(test.feature, -1), row])
    figures = {
        feat_index[feature.id]: [
            [r.label, col_index.get(r.column, -1), r.value_text, r.shape, r.dtype, r.claim, r.test] for r in rows
        ]
        for feature, rows in feature_figures(matrix)
    }
    return {
        "releases": _releases(matrix, col_index, feat_index),
        "generated_at": matrix.generated_at,
        "harness_version": matrix.harness_version,
        "stale_after_hours": stale_after_hours,
        "alignment": matrix.alignment.to_json(),
        "input_errors": [f"{p.source}: {p.message}" for p in matrix.input_errors],
        "outcomes": _OUTCOMES,
        "outcome_symbols": {o.value: PAGE_OUTCOME_SYMBOLS[o] for o in Outcome},
        "states": {r.value: {"symbol": PAGE_STATE_SYMBOLS[r], "meaning": ROLLUP_MEANING[r]} for r in Rollup},
        "columns": [_column(c) for c in columns],
        "features": [
            {
                "id": f.id,
                "title": f.title,
                "since": f.since,
                "claim": f.claim,
                "scope": f.scope.value,
                "cells": [cell.to_json() if (cell := matrix.cell(f.id, c.id)) else None for c in columns],
            }
            for f in matrix.features
        ],
        "figures": figures,
        "tests": tests,
        "trend": _trend(history or []),
    }


def _releases(matrix: Matrix, col_index: dict[str, int], feat_index: dict[str, int]) -> list[dict[str, Any]]:
    """Per backend (and variant) with two or more torch builds: its columns oldest first, and per
    step from one build to the next, each feature's newly failing and newly passing tests."""
    groups: dict[tuple[str, str], list[int]] = {}
    for column in matrix.columns:
        if column.has_data or not column.shipped:  # a release that does not ship the build says so
            groups.setdefault(column.build_key, []).append(col_index[column.id])
    pairs = {(a, b) for a, b in release_pairs(matrix)}
    out = []
    for (backend, variant), columns in groups.items():
        if sum(matrix.columns[c].has_data for c in columns) < 2 and len(columns) < 2:
            continue
        steps = []
        data_columns = [c for c in columns if matrix.columns[c].has_data]
        for a, b in pairwise(data_columns):
            old, new = matrix.columns[a], matrix.columns[b]
            if (old.id, new.id) not in pairs:
                continue
            change = diff_columns(matrix, old, matrix, new)
            steps.append(
                {
                    "a": a,
                    "b": b,
                    "features": {
                        feat_index[f.feature]: [f.newly_failing, f.newly_passing] for f in change.features if f.changed
                    },
                }
            )
        name = matrix.columns[columns[0]].heading
        out.append({"backend": backend, "variant": variant, "name": name, "cols": columns, "steps": steps})
    return out


def json_for_script(data: Any) -> str:
    """JSON that cannot end the <script> element it sits in (no `<`, `>` or `&` left raw)."""
    # The page's data is the whole matrix (28 MB for 5 x 50,000 tests): orjson, and the escapes
    # done on bytes, take 0.2 s where the stdlib encoder and str.replace took 0.8 s.
    text = jsonio.dumps(data, int_keys=True)
    return text.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026").decode("utf-8")


@cache
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))


@cache
def _asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render_html(
    matrix: Matrix,
    *,
    history: list[RunSummary] | None = None,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    title: str = "PyTorch compatibility matrix",
) -> str:
    """One self-contained HTML page for the matrix (and its trend, when history is given)."""
    script = _asset("page_script.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (
        _environment()
        .get_template("page.html.j2")
        .render(
            title=title,
            generated_at=matrix.generated_at,
            csp=f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'",
            style=Markup(_asset("page_style.css")),
            script=Markup(script),
            data=Markup(json_for_script(page_data(matrix, history, stale_after_hours))),
        )
    )
