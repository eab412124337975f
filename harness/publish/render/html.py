"""The matrix as a static page: feature rows x backend columns, drill-down, filters kept in the URL,
environments, STALE / NO DATA columns, a trend per column and each test's history.

The page holds a compact head (columns, features and their roll-up, figures, the trend); the tests
come in parts (harness/publish/render/page_parts.py) that the page loads when a feature is opened,
a test is opened or a filter needs every test. A small matrix keeps its parts inside the page (one
file that works opened from disk); a large one is a page plus `data/` files fetched from beside it.
It is drawn with vanilla JS through DOM APIs (textContent, never innerHTML with data). Nothing is
fetched from another host: CSS and JS are inline and a Content-Security-Policy allows requests to
the page's own origin only.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from harness import jsonio
from harness.model import Column, Matrix, ProvenanceState, TestRow, trim
from harness.outcomes import BAD, GOOD, LEGEND_NOTES, ROLLUP_MEANING, Outcome, Rollup
from harness.publish.column_diff import diff_columns, release_pairs
from harness.publish.history import RunResults, RunSummary
from harness.publish.render import DEFAULT_STALE_AFTER_HOURS
from harness.publish.render.figures import feature_figures
from harness.publish.render.page_parts import emit_parts, history_head
from harness.publish.render.symbols import PAGE_OUTCOME_SYMBOLS, PAGE_STATE_SYMBOLS
from harness.publish.render.vouching import MARKS, has_provenance, mark
from harness.torch_build import version_sort_key

TEMPLATES: Final = Path(__file__).with_name("templates")
DATA_DIR: Final = "data"  # where a page's parts go beside it when it does not hold them
HISTORY_WINDOW: Final = 30  # runs of per-test history the page shows (and so loads)
_OUTCOMES: Final = [o.value for o in Outcome]
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


def _column(column: Column) -> dict[str, Any]:
    env = column.environment
    return {
        "id": column.id,
        "backend": column.backend,
        "name": column.heading or column.id,
        "label": column.label,
        "torch": env.torch if column.has_data else None,
        # 'Python 3.15', 'Python not recorded' (a cell from before interpreters were); none for a placeholder
        "python": column.python_label if column.has_data or column.python else None,
        "interpreter": column.interpreter.describe() if column.interpreter else None,
        "release": column.release_series,
        "variant": column.variant,
        "variant_reason": column.variant_reason,
        "reproduce": column.reproduce,
        "state": column.state.value,
        "status": column.cell_status.value if column.cell_status else None,
        "error": column.error,
        "errors": [trim(e, 500) for e in column.errors[:5]],
        "counts": {k.value: v for k, v in column.counts.items()},
        "score": column.score.to_json() if column.score else None,
        "run_url": env.run_url,
        "when": env.finished_at or env.started_at,
        "runs": [r.to_json() for r in column.runs],
        "partial": column.partial,
        "provenance": column.provenance.to_json() if column.provenance else None,
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
                    column.failures,
                ]
            trend.setdefault(column.id, []).append(point)
    return trend


def page_data(
    matrix: Matrix,
    history: Sequence[RunSummary] | None = None,
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    results: Sequence[RunResults | None] = (),
    window: int = HISTORY_WINDOW,
) -> dict[str, Any]:
    """The page's head: everything it draws before any test is needed. The tests are in parts
    (`page_parts.emit_parts`), named per feature in `features[].parts`."""
    columns = matrix.columns
    col_index = {c.id: i for i, c in enumerate(columns)}
    feat_index = {f.id: i for i, f in enumerate(matrix.features)}
    figures = {
        feat_index[feature.id]: [
            [r.label, col_index.get(r.column, -1), r.value_text, r.shape, r.dtype, r.claim, r.test] for r in rows
        ]
        for feature, rows in feature_figures(matrix)
    }
    counts: dict[str, int] = {}
    for test in matrix.tests:
        counts[test.feature] = counts.get(test.feature, 0) + 1
    runs = list(history or [])[-window:]
    recent = list(results)[-window:] if results else []
    return {
        "releases": _releases(matrix, col_index, feat_index),
        "generated_at": matrix.generated_at,
        "harness_version": matrix.harness_version,
        "stale_after_hours": stale_after_hours,
        "alignment": matrix.alignment.to_json(),
        "input_errors": [f"{p.source}: {p.message}" for p in matrix.input_errors],
        "outcomes": _OUTCOMES,
        # The failing and working outcomes, defined once (harness/outcomes.py): the script has no list of its own.
        "bad": sorted(o.value for o in BAD),
        "good": sorted(o.value for o in GOOD),
        "outcome_symbols": {o.value: PAGE_OUTCOME_SYMBOLS[o] for o in Outcome},
        "states": {r.value: {"symbol": PAGE_STATE_SYMBOLS[r], "meaning": ROLLUP_MEANING[r]} for r in Rollup},
        "legend_notes": list(LEGEND_NOTES),
        "columns": [_column(c) for c in columns],
        "features": [
            {
                "id": f.id,
                "title": f.title,
                "since": f.since,
                "claim": f.claim,
                "scope": f.scope.value,
                "tests": counts.get(f.id, 0),
                "parts": [],
                "cells": [cell.to_json() if (cell := matrix.cell(f.id, c.id)) else None for c in columns],
            }
            for f in matrix.features
        ],
        "figures": figures,
        "test_count": len(matrix.tests),
        "trend": _trend(list(history or [])),
        "history": history_head(runs, recent, [c.id for c in columns]) if any(r is not None for r in recent) else None,
    }


@dataclass
class Page:
    """The page and the parts it did not hold (to be written to `data/` beside it)."""

    html: str
    files: dict[str, bytes]  # part name -> JSON bytes; empty when the page holds everything
    part_bytes: int  # the size of all parts together
    written: int = 0  # parts handed to `write_part` as they were made (not in `files`)


def _line_name(matrix: Matrix, line: tuple[str, str, str]) -> str:
    family, device, python = line
    on = f", Python {python}" if python else ""  # a line of another Python than the default image's
    if family == "cpu":
        return f"CPU (the CPU build, and every build run without its device){on}"
    names = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "Intel XPU"}
    return (f"{names.get(family, family)} on {device}" if device else names.get(family, family)) + on


def _releases(matrix: Matrix, col_index: dict[str, int], feat_index: dict[str, int]) -> list[dict[str, Any]]:
    """Per release line (where the tests ran: see Column.release_line) with two or more torch
    builds: its columns oldest first (a release that does not ship a build says so), and per step
    from one build to the next, each feature's newly failing and newly passing tests, the rows new in
    the newer release and the device API it added (how much of it the suites exercise)."""
    groups: dict[tuple[str, str], list[Column]] = {}
    for column in matrix.columns:
        if column.has_data or not column.shipped:  # a release that does not ship the build says so
            groups.setdefault(column.release_line, []).append(column)
    pairs = release_pairs(matrix)
    out = []
    for line, columns in groups.items():
        columns.sort(key=lambda c: (version_sort_key(c.torch or c.release_series), col_index[c.id]))
        ids = {c.id for c in columns}
        steps = []
        for old_id, new_id in pairs:
            if new_id not in ids:
                continue
            old, new = matrix.column(old_id), matrix.column(new_id)
            change = diff_columns(matrix, old, matrix, new)  # type: ignore[arg-type]
            api = change.device_api
            steps.append(
                {
                    "a": col_index[old_id],
                    "b": col_index[new_id],
                    "features": {
                        feat_index[f.feature]: [f.newly_failing, f.newly_passing] for f in change.features if f.changed
                    },
                    "new": [feat_index[f] for f in change.new_features if f in feat_index],
                    "api": api.summary(new.torch) if api else None,  # type: ignore[union-attr]
                    "api_new": list(api.added[:200]) if api else [],
                    "api_tested": list(api.tested) if api else [],
                }
            )
        if len([c for c in columns if c.has_data]) < 2:
            continue
        out.append(
            {
                "line": list(line),
                "name": _line_name(matrix, line),
                "cols": [col_index[c.id] for c in columns],
                "steps": steps,
            }
        )
    return out


def json_for_script(data: Any) -> str:
    """JSON that cannot end the <script> element it sits in (no `<`, `>` or `&` left raw)."""
    # The page's data can be the whole matrix (28 MB for 5 x 50,000 tests): orjson, and the escapes
    # done on bytes, take 0.2 s where the stdlib encoder and str.replace took 0.8 s.
    text = jsonio.dumps(data, int_keys=True)
    return _escaped(text)


def _escaped(text: bytes) -> str:
    return text.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026").decode("utf-8")


def vouches(matrix: Matrix) -> list[dict[str, str | None]]:
    """The page header's "who vouches for each column" (empty for a matrix merged without a trust file)."""
    if not has_provenance(matrix):
        return []
    out: list[dict[str, str | None]] = []
    for column in matrix.columns:
        if not column.shipped:
            continue
        p = column.provenance
        out.append(
            {
                "id": column.id,
                "label": column.label,
                "state": p.state.value if p else "unverified",
                "mark": mark(p) or MARKS[ProvenanceState.UNVERIFIED],
                "by": p.by if p else None,
                "signer": p.signer if p else None,
                "reason": (p.reason if p else "no cell arrived") if not (p and p.verified) else None,
                "run_url": p.run_url if p and p.run_url and p.run_url.startswith(("https://", "http://")) else None,
            }
        )
    return out


@cache
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))


@cache
def _asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render_page(
    matrix: Matrix,
    *,
    history: Sequence[RunSummary] | None = None,
    results: Sequence[RunResults | None] = (),
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    inline_limit: int | None = None,
    site: bool = False,
    title: str = "PyTorch compatibility matrix",
    write_part: Callable[[str, bytes], None] | None = None,
    detail_rows: Iterable[TestRow] | None = None,
) -> Page:
    """The page, holding its parts when they fit in `inline_limit` bytes (None: always), else
    naming them for `data/` beside it. With `write_part`, parts that do not fit are handed to it as
    they are made (none held: `Page.files` stays empty and `Page.written` counts them);
    `detail_rows`: see `page_parts.emit_parts`."""
    head = page_data(matrix, history, stale_after_hours, results)
    window = list(results)[-HISTORY_WINDOW:] if results else []
    held: dict[str, bytes] = {}
    total = 0
    written = 0

    def take(name: str, value: Any) -> None:
        nonlocal total, written
        body = jsonio.dumps(value, int_keys=True)
        total += len(body)
        if write_part is None or inline_limit is None or total <= inline_limit:
            held[name] = body
            return
        for earlier in list(held):  # past the limit: the page will not hold them
            write_part(earlier, held.pop(earlier))
            written += 1
        write_part(name, body)
        written += 1

    features, order = emit_parts(matrix, list(history or [])[-HISTORY_WINDOW:], window, take, detail_rows=detail_rows)
    for index, names in enumerate(features):
        head["features"][index]["parts"] = names
    encoded = {name: held[name] for name in sorted(held, key=order)}
    inline = not written and (inline_limit is None or total <= inline_limit)
    # The parts go in as encoded JSON, spliced into the head's JSON: no second encoding of the tests.
    head["parts"] = {} if inline else None
    head["data_dir"] = DATA_DIR
    text = jsonio.dumps(head, int_keys=True)
    if inline and encoded:
        body = b",".join(jsonio.dumps(name) + b":" + value for name, value in encoded.items())
        text = text.replace(b'"parts":{}', b'"parts":{' + body + b"}", 1)
    script = _asset("page_script.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"connect-src 'self'; script-src 'sha256-{digest}'"
    )
    html = (
        _environment()
        .get_template("page.html.j2")
        .render(
            title=title,
            generated_at=matrix.generated_at,
            csp=csp,
            style=Markup(_asset("page_style.css")),
            script=Markup(script),
            data=Markup(_escaped(text)),
            site=site,
            inline=inline,
            data_dir=DATA_DIR,
            vouches=vouches(matrix),
        )
    )
    return Page(html=html, files={} if inline else encoded, part_bytes=total, written=written)


def render_html(
    matrix: Matrix,
    *,
    history: Sequence[RunSummary] | None = None,
    results: Sequence[RunResults | None] = (),
    stale_after_hours: float = DEFAULT_STALE_AFTER_HOURS,
    title: str = "PyTorch compatibility matrix",
) -> str:
    """One self-contained HTML page (every part inside): a local report that works from disk."""
    return render_page(matrix, history=history, results=results, stale_after_hours=stale_after_hours, title=title).html
