"""Markdown for GitHub job summaries: feature rows x backend columns, legend, environments,
failures. Detail is dropped step by step until the text fits GitHub's 1 MiB summary limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from harness.outcomes import OUTCOME_SYMBOLS, ROLLUP_MEANING, ROLLUP_SYMBOLS, Outcome, Rollup

GITHUB_SUMMARY_LIMIT: Final = 1024 * 1024
_PROBLEMS: Final = (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASHED)
_COUNT_ORDER: Final = [o.value for o in Outcome]


def escape_cell(text: Any) -> str:
    """Make arbitrary text safe inside a Markdown table cell or list item."""
    value = str(text if text is not None else "")
    for char, repl in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("`", "'"),
        ("\r", " "),
        ("\n", " "),
        ("[", "\\["),
        ("]", "\\]"),
    ):
        value = value.replace(char, repl)
    return value


def escape_code(text: Any) -> str:
    """Text for inside a `code span` in a table: only pipes, backticks and newlines matter."""
    value = str(text if text is not None else "")
    return value.replace("`", "'").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _first_line(text: str | None, limit: int) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def state_label(state: str) -> str:
    rollup = Rollup(state)
    word = "NO DATA" if rollup is Rollup.NO_DATA else rollup.value
    return f"{ROLLUP_SYMBOLS[rollup]} {word}"


def _counts_text(counts: dict[str, int], skips: dict[str, int] | None = None) -> str:
    """'22 passed, 5 skipped (5 unsupported)': skips are told apart by their reason class."""
    parts = []
    for key in _COUNT_ORDER:
        if not counts.get(key):
            continue
        text = f"{counts[key]} {key}"
        if key == Outcome.SKIPPED.value and skips:
            text += " (" + ", ".join(f"{n} {cls}" for cls, n in sorted(skips.items())) + ")"
        parts.append(text)
    return ", ".join(parts)


def environment_line(column: dict[str, Any]) -> str:
    env = column["environment"]
    parts = [f"torch {env.get('torch') or '?'}"]
    for key, label in (("cuda", "CUDA"), ("hip", "HIP"), ("xpu", "XPU")):
        if env.get(key):
            parts.append(f"{label} {env[key]}")
    device = env.get("device") or "no device"
    extra = (env.get("capability") and f"sm {env['capability']}") or env.get("arch")
    parts.append(f"device {device}" + (f" ({extra})" if extra else ""))
    if env.get("driver"):
        parts.append(f"driver {env['driver']}")
    if env.get("python"):
        parts.append(f"Python {env['python']}")
    parts.append(f"{env.get('mode') or 'native'}")
    if env.get("image_digest"):
        parts.append(f"image {str(env['image_digest'])[:19]}")
    if env.get("suite_sha"):
        parts.append(f"suites {str(env['suite_sha'])[:10]}")
    if env.get("runner"):
        parts.append(f"runner {env['runner']}")
    if env.get("started_at"):
        parts.append(str(env["started_at"]))
    line = " · ".join(escape_cell(p) for p in parts)
    if env.get("run_url"):
        line += f" · [run]({env['run_url']})"
    head = f"- **{escape_cell(column['display_name'])}** `{column['id']}`"
    if column["state"] == "no-data":
        reason = column.get("error") or "no test results"
        return f"{head}: **NO DATA**: {escape_cell(reason)} · {line}"
    if column["state"] == "partial-run":
        return f"{head}: ⚠️ partial run ({escape_cell(column.get('cell_status'))}) · {line}"
    return f"{head}: {line}"


def _table(matrix: dict[str, Any], with_counts: bool) -> list[str]:
    columns = matrix["columns"]
    head = (
        "| Feature | Since | " + " | ".join(f"{escape_cell(c['display_name'])}<br>`{c['id']}`" for c in columns) + " |"
    )
    lines = [head, "|" + "---|" * (2 + len(columns))]
    for feature in matrix["features"]:
        row = [
            f"**{escape_cell(feature.get('title') or feature['id'])}** (`{feature['id']}`)",
            escape_cell(feature.get("since", "")),
        ]
        for column in columns:
            cell = matrix["cells"].get(feature["id"], {}).get(column["id"])
            if cell is None:
                row.append(state_label("no-data"))
                continue
            text = state_label(cell["state"])
            if with_counts and cell["state"] != "no-data":
                text += f"<br>{_counts_text(cell['counts'], cell.get('skips'))}"
                if cell.get("host_tests"):
                    text += f" · judged without {cell['host_tests']} host-side tests"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    score = ["**Features supported**", ""]
    for column in columns:
        s = column.get("score")
        score.append("NO DATA" if s is None else f"{s['supported']}/{s['judged']} features")
    lines.append("| " + " | ".join(score) + " |")
    return lines


def _legend() -> list[str]:
    states = " · ".join(
        f"{ROLLUP_SYMBOLS[r]} **{'NO DATA' if r is Rollup.NO_DATA else r.value}**: {ROLLUP_MEANING[r]}" for r in Rollup
    )
    outcomes = " ".join(f"{OUTCOME_SYMBOLS[o]} {o.value}" for o in Outcome)
    return [f"**Legend.** {states}.", "", f"Test outcomes: {outcomes}."]


def _problem_lists(matrix: dict[str, Any], max_items: int | None, msg_limit: int) -> list[str]:
    names = {c["id"]: c["display_name"] for c in matrix["columns"]}
    failures: list[str] = []
    xpasses: list[str] = []
    for test in matrix["tests"]:
        for column_id, result in test["results"].items():
            outcome = result["outcome"]
            if outcome in _PROBLEMS:
                msg = _first_line(result.get("message"), msg_limit)
                sig = f" [{result['signal']}]" if result.get("signal") else ""
                failures.append(
                    f"- {OUTCOME_SYMBOLS[Outcome(outcome)]} **{outcome}**{sig} on "
                    f"**{escape_cell(names.get(column_id, column_id))}**: "
                    f"`{escape_code(test['id'])}`" + (f": {escape_cell(msg)}" if msg else "")
                )
            elif outcome == Outcome.XPASSED.value:
                link = f" ({result['link']})" if result.get("link") else ""
                xpasses.append(
                    f"- 🎉 `{escape_code(test['id'])}` on **{escape_cell(names.get(column_id, column_id))}**"
                    f"{escape_cell(link)}: expected to fail, passed"
                )
    out: list[str] = []
    for title, items in (("Failures", failures), ("Unexpected passes", xpasses)):
        if not items:
            continue
        shown = items if max_items is None else items[:max_items]
        out += ["", f"### {title} ({len(items)})", "", *shown]
        if len(shown) < len(items):
            out.append(f"- … and {len(items) - len(shown)} more (see matrix.json or the HTML page)")
    return out


def _errors(matrix: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for column in matrix["columns"]:
        for err in column.get("errors") or []:
            lines.append(f"- `{column['id']}`: {escape_cell(_first_line(err, 500))}")
    for err in matrix.get("input_errors") or []:
        lines.append(f"- {escape_cell(err['source'])}: {escape_cell(_first_line(err['message'], 500))}")
    return ["", "### Problems reading results", "", *lines] if lines else []


def render_markdown(
    matrix: dict[str, Any], limit: int = GITHUB_SUMMARY_LIMIT, title: str = "PyTorch compatibility matrix"
) -> str:
    """The summary at the richest detail level that fits in `limit` bytes."""
    levels: list[Callable[[], list[str]]] = [
        lambda: _body(matrix, True, None, 300, True),
        lambda: _body(matrix, True, 200, 160, True),
        lambda: _body(matrix, True, 20, 120, True),
        lambda: _body(matrix, False, 0, 0, True),
        lambda: _body(matrix, False, 0, 0, False),
    ]
    text = ""
    for level in levels:
        text = "\n".join([f"## {title}", "", *level()]) + "\n"
        if len(text.encode("utf-8")) <= limit:
            return text
    # Last resort: a hard cut that still ends on a whole line.
    cut = text.encode("utf-8")[: max(limit - 200, 0)].decode("utf-8", "ignore")
    return cut.rsplit("\n", 1)[0] + "\n\n_(truncated to fit the summary limit)_\n"


def _body(matrix: dict[str, Any], counts: bool, max_items: int | None, msg_limit: int, environments: bool) -> list[str]:
    lines = _table(matrix, counts)
    if not matrix["alignment"]["aligned"]:
        shas = ", ".join(s[:10] for s in matrix["alignment"]["suite_shas"])
        lines += ["", f"⚠️ Columns ran different suite versions ({shas}); compare with care."]
    lines += ["", *_legend()]
    if environments:
        lines += ["", "### Environments", "", *(environment_line(c) for c in matrix["columns"])]
    if max_items != 0:
        lines += _problem_lists(matrix, max_items, msg_limit)
    elif any(c.get("counts", {}).get(o.value) for c in matrix["columns"] for o in _PROBLEMS):
        lines += ["", "_Failure details omitted to fit the summary limit; see matrix.json._"]
    lines += _errors(matrix)
    return lines
