"""The matrix as one self-contained static page: feature rows x backend columns, drill-down,
filters kept in the URL, environments, STALE / NO DATA columns and a trend per column.

The page embeds a compact projection of matrix.json and draws it with vanilla JS through DOM
APIs (textContent, never innerHTML with data); test rows are built only when a feature is
opened, a page of rows at a time, so 5 columns x 50,000 tests stay responsive. Nothing is
fetched from anywhere: CSS and JS are inline and a Content-Security-Policy forbids requests.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from harness.outcomes import ROLLUP_MEANING, Outcome, Rollup

TEMPLATES: Final = Path(__file__).with_name("templates")
DEFAULT_STALE_AFTER_HOURS: Final = 168.0
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
}
_ENV_FIELDS: Final = (
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


def _trim(text: str | None, cap: int) -> str | None:
    if not text or len(text) <= cap:
        return text
    head = cap // 3
    return f"{text[:head]}\n… [{len(text) - cap} characters trimmed; see the cell's files] …\n{text[-(cap - head) :]}"


def _duration(value: Any) -> float | None:
    if not isinstance(value, int | float):
        return None
    return float(f"{value:.3g}")


def _detail(result: dict[str, Any]) -> dict[str, Any]:
    detail = {
        "m": _trim(result.get("message"), MESSAGE_CAP),
        "t": _trim(result.get("trace"), TRACE_CAP),
        "c": result.get("skip_class"),
        "l": result.get("link"),
        "a": result.get("attempts") if (result.get("attempts") or 1) > 1 else None,
        "p": result.get("properties") or None,
        "s": result.get("strict"),
        "g": result.get("signal"),
        "x": [_trim(m, MESSAGE_CAP) for m in result.get("extra_messages") or []] or None,
    }
    return {k: v for k, v in detail.items() if v is not None}


def _column(column: dict[str, Any]) -> dict[str, Any]:
    env = column.get("environment") or {}
    return {
        "id": column["id"],
        "backend": column["backend"],
        "name": column.get("display_name") or column["id"],
        "state": column["state"],
        "status": column.get("cell_status"),
        "error": column.get("error"),
        "errors": [_trim(e, 500) for e in (column.get("errors") or [])[:5]],
        "counts": column.get("counts") or {},
        "score": column.get("score"),
        "run_url": env.get("run_url"),
        "when": env.get("finished_at") or env.get("started_at"),
        "env": [[label, str(env[key])] for key, label in _ENV_FIELDS if env.get(key) not in (None, "")],
    }


def _trend(history: list[dict[str, Any]]) -> dict[str, list[list[Any]]]:
    """column id -> [[generated_at, supported, judged, passed, failing]] oldest first; None when no data."""
    bad = ("failed", "error", "timeout", "crashed")
    trend: dict[str, list[list[Any]]] = {}
    for run in history:
        for column in run.get("columns") or []:
            score = column.get("score")
            counts = column.get("counts") or {}
            point = [run.get("generated_at"), None, None, None, None]
            if column.get("state") != "no-data" and score:
                point = [
                    run.get("generated_at"),
                    score.get("supported"),
                    score.get("judged"),
                    counts.get("passed", 0),
                    sum(counts.get(k, 0) for k in bad),
                ]
            trend.setdefault(column["id"], []).append(point)
    return trend


def page_data(
    matrix: dict[str, Any],
    history: list[dict[str, Any]] | None = None,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
) -> dict[str, Any]:
    """The compact projection the page script reads."""
    columns = matrix["columns"]
    col_index = {c["id"]: i for i, c in enumerate(columns)}
    features = matrix["features"]
    feat_index = {f["id"]: i for i, f in enumerate(features)}
    out_index = {o: i for i, o in enumerate(_OUTCOMES)}
    tests = []
    for test in matrix["tests"]:
        row: list[Any] = [None] * len(columns)
        for column_id, result in test["results"].items():
            if column_id not in col_index:
                continue
            cell: list[Any] = [out_index[result["outcome"]], _duration(result.get("duration"))]
            detail = _detail(result)
            if detail:
                cell.append(detail)
            row[col_index[column_id]] = cell
        tests.append([test["id"], feat_index.get(test["feature"], -1), row])
    return {
        "generated_at": matrix.get("generated_at"),
        "harness_version": matrix.get("harness_version"),
        "stale_after_hours": stale_after_hours,
        "alignment": matrix.get("alignment") or {"aligned": True, "suite_shas": []},
        "input_errors": [f"{e.get('source')}: {e.get('message')}" for e in matrix.get("input_errors") or []],
        "outcomes": _OUTCOMES,
        "outcome_symbols": {o.value: PAGE_OUTCOME_SYMBOLS[o] for o in Outcome},
        "states": {r.value: {"symbol": PAGE_STATE_SYMBOLS[r], "meaning": ROLLUP_MEANING[r]} for r in Rollup},
        "columns": [_column(c) for c in columns],
        "features": [
            {
                "id": f["id"],
                "title": f.get("title") or f["id"],
                "since": f.get("since"),
                "claim": f.get("claim"),
                "cells": [matrix["cells"].get(f["id"], {}).get(c["id"]) for c in columns],
            }
            for f in features
        ],
        "tests": tests,
        "trend": _trend(history or []),
    }


def json_for_script(data: Any) -> str:
    """JSON that cannot end the <script> element it sits in (no `<`, `>` or `&` left raw)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))


@cache
def _asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render_html(
    matrix: dict[str, Any],
    *,
    history: list[dict[str, Any]] | None = None,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    title: str = "PyTorch compatibility matrix",
) -> str:
    """One self-contained HTML page for the matrix (and its trend, when history is given)."""
    script = _asset("matrix.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (
        _environment()
        .get_template("matrix.html.j2")
        .render(
            title=title,
            generated_at=matrix.get("generated_at"),
            csp=f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'",
            style=Markup(_asset("matrix.css")),
            script=Markup(script),
            data=Markup(json_for_script(page_data(matrix, history, stale_after_hours))),
        )
    )
