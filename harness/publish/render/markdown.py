"""Markdown for GitHub job summaries: feature rows x backend columns, legend, measured figures,
environments, failures. Detail is dropped step by step until the text fits GitHub's 1 MiB
summary limit. Every text from input goes through render/mdtext.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from harness.model import UNASSIGNED, Column, ColumnState, FeatureCell, Matrix, evidence_text
from harness.outcomes import (
    BAD,
    LEGEND_NOTES,
    OUTCOME_SYMBOLS,
    ROLLUP_MEANING,
    ROLLUP_SYMBOLS,
    Outcome,
    Rollup,
    Scope,
)
from harness.publish.column_diff import FeatureChange, diff_columns, release_pairs
from harness.publish.render import figures as figs
from harness.publish.render.mdtext import code, first_line, link, text
from harness.publish.render.vouching import mark, vouch_section

GITHUB_SUMMARY_LIMIT: Final = 1024 * 1024
_PROBLEMS: Final = tuple(o for o in Outcome if o in BAD)  # the failing outcomes, in taxonomy order


_STATE_WORDS: Final = {
    Rollup.NO_DATA: "NO DATA",
    Rollup.NOT_SHIPPED: "not shipped",
    Rollup.NOT_IN_RELEASE: "not in this release",
}


NEW_ROW: Final = "🆕 new"  # a diff's "before" for a row the older column did not have


def state_word(state: Rollup | None) -> str:
    return "new" if state is None else _STATE_WORDS.get(state, state.value)


def state_label(state: Rollup | None) -> str:
    return NEW_ROW if state is None else f"{ROLLUP_SYMBOLS[state]} {state_word(state)}"


def counts_text(cell: FeatureCell) -> str:
    """'22 passed, 5 skipped (5 unsupported)': skips are told apart by their reason class."""
    parts = []
    for outcome in Outcome:
        count = cell.counts.get(outcome)
        if not count:
            continue
        part = f"{count} {outcome.value}"
        if outcome is Outcome.SKIPPED and cell.skips:
            part += " (" + ", ".join(f"{n} {k.value}" for k, n in sorted(cell.skips.items())) + ")"
        parts.append(part)
    if cell.measurements:
        parts.append(f"{cell.measurements} measured")
    line = ", ".join(parts)
    if cell.evidence:
        line += f" · ran {text(evidence_text(cell.evidence))}"
    return line


def column_head(column: Column) -> str:
    head = f"{text(column.heading)}<br>{code(column.id)}"
    if column.environment.torch and column.has_data:  # a NO DATA column's runner torch is not its build
        head += f"<br>torch {text(column.environment.torch)}"
    elif column.state is ColumnState.NOT_SHIPPED:
        head += f"<br>torch {text(column.release_series or '?')}"
    if column.has_data or column.python:  # the column's Python, or "Python not recorded" (never a guess)
        head += f"<br>{text(column.python_label)}"
    if column.composite:
        head += f"<br>_composite of {len(column.runs)} runs_"
    elif column.partial:
        head += "<br>_partial: a selection of tests_"
    if column.provenance is not None:
        head += f"<br>{mark(column.provenance)}"
    return head


def environment_line(column: Column) -> str:
    env = column.environment
    parts = [f"torch {env.torch or '?'}"]
    for value, label in ((env.cuda, "CUDA"), (env.hip, "HIP"), (env.xpu, "XPU")):
        if value:
            parts.append(f"{label} {value}")
    extra = (env.capability and f"sm {env.capability}") or env.arch
    parts.append(f"device {env.device or 'no device'}" + (f" ({extra})" if extra else ""))
    if env.driver:
        parts.append(f"driver {env.driver}")
    if env.python:
        parts.append(f"Python {env.python}")
    if env.mode:
        parts.append(env.mode)
    if env.image_digest:
        parts.append(f"image {env.image_digest[:19]}")
    if env.suite_sha:
        parts.append(f"suites {env.suite_sha[:10]}")
    if env.runner:
        parts.append(f"runner {env.runner}")
    if env.started_at:
        parts.append(env.started_at)
    line = " · ".join(text(p) for p in parts)
    if env.run_url:
        line += " · " + link("run", env.run_url)
    if column.reproduce:
        line += f" · rerun: {code(column.reproduce, table=False)}"
    head = f"- **{text(column.label)}** {code(column.id, table=False)}"
    if column.variant_reason:
        head += f" ({text(column.variant_reason)})"
    if column.state is ColumnState.NOT_SHIPPED:
        return f"{head}: {ROLLUP_SYMBOLS[Rollup.NOT_SHIPPED]} **not shipped**: {text(column.error or '')}"
    if column.state is ColumnState.NO_DATA:
        if not column.run_id:  # planned, and nothing arrived: there is no environment to tell
            return f"{head}: **NO DATA**: {text(column.error or 'no test results')}"
        return f"{head}: **NO DATA**: {text(column.error or 'no test results')} · {line}"
    if column.composite:
        later = ", ".join(f"{text(r.run_id)} ({r.tests} test(s))" for r in column.runs[1:])
        line += f" · composite: base run {text(column.runs[0].run_id)}, then {later}"
    elif column.partial:
        line += " · partial: a run of some tests only, no complete run to build on"
    if column.state is ColumnState.PARTIAL_RUN:
        status = column.cell_status.value if column.cell_status else "unknown"
        return f"{head}: ⚠️ partial run ({text(status)}) · {line}"
    return f"{head}: {line}"


def _table(matrix: Matrix, with_counts: bool) -> list[str]:
    columns = matrix.columns
    if not columns:  # a table needs a column: say so instead of a header that does not render
        return ["_No columns: no cell results were merged (run `harness` or `harness merge <cells>`)._"]
    lines = ["| " + " | ".join(["Feature", "Since", *(column_head(c) for c in columns)]) + " |"]
    lines.append("|" + "---|" * (2 + len(columns)))
    for feature in matrix.features:
        title = f"**{text(feature.title)}** ({code(feature.id)})"
        if feature.scope is Scope.HOST:
            title += "<br>_backend-independent: shown, not scored_"
        elif feature.id == UNASSIGNED:
            title += "<br>_tests no feature rule matched: shown, not scored_"
        row = [title, text(feature.since or "")]
        for column in columns:
            cell = matrix.cell(feature.id, column.id)
            if cell is None:
                row.append(state_label(Rollup.NO_DATA))
                continue
            label = state_label(cell.state)
            if cell.state is Rollup.NOT_IN_RELEASE:
                label += f"<br>_{text(cell.reason or '')}_"
                if with_counts and cell.counts:
                    label += f" · ran: {counts_text(cell)}"
                if cell.early:
                    label += f" · {cell.early} passed before its release"
            elif with_counts and cell.state not in (Rollup.NO_DATA, Rollup.NOT_SHIPPED):
                label += f"<br>{counts_text(cell) or '_no test of it for this build_'}"
                if cell.host_tests:
                    label += f" · judged without {cell.host_tests} host-side tests"
                if cell.overlay:
                    label += f" · {cell.overlay} from a later rerun"
                if cell.later:
                    label += f" · {cell.later} of a part from a later release, not judged"
                if cell.other_python:
                    label += f" · {cell.other_python} for another Python, not judged"
            row.append(label)
        lines.append("| " + " | ".join(row) + " |")
    score = ["**Features supported**", ""]
    for column in columns:
        s = column.score
        if column.state is ColumnState.NOT_SHIPPED:
            score.append("not shipped")
        else:
            score.append("NO DATA" if s is None else f"{s.supported}/{s.judged} features")
    lines.append("| " + " | ".join(score) + " |")
    return lines


def _legend() -> list[str]:
    states = " · ".join(f"{ROLLUP_SYMBOLS[r]} **{state_word(r)}**: {ROLLUP_MEANING[r]}" for r in Rollup)
    outcomes = " ".join(f"{OUTCOME_SYMBOLS[o]} {o.value}" for o in Outcome)
    notes = " · ".join(f"_{note.split(': ', 1)[0]}_: {note.split(': ', 1)[1]}" for note in LEGEND_NOTES)
    return [f"**Legend.** {states}.", "", f"Test outcomes: {outcomes}.", "", f"Marks: {notes}."]


def _figures(matrix: Matrix) -> list[str]:
    """Per feature, the measured figures per column, with units, shapes and the release-note claim."""
    tables = figs.feature_figures(matrix)
    if not tables:
        return []
    lines = ["", "### Measured figures"]
    names = {c.id: c.label for c in matrix.columns}
    for feature, rows in tables:
        lines += ["", f"**{text(feature.title)}** ({code(feature.id)})", ""]
        lines += ["| Figure | Column | Value | Shape | dtype | Claim |", "|---|---|---|---|---|---|"]
        for row in rows:
            lines.append(
                f"| {text(row.label)} | {text(names.get(row.column, row.column))} | {text(row.value_text)} | "
                f"{text(row.shape)} | {text(row.dtype)} | {text(row.claim)} |"
            )
    return lines


def _problem_lists(matrix: Matrix, max_items: int | None, msg_limit: int) -> list[str]:
    names = {c.id: c.label for c in matrix.columns}
    failures: list[str] = []
    xpasses: list[str] = []
    for row in matrix.tests:
        for column_id, result in row.results.items():
            outcome = result.outcome
            if outcome in _PROBLEMS:
                msg = first_line(result.message, msg_limit)
                sig = f" \\[{text(result.signal)}\\]" if result.signal else ""
                failures.append(
                    f"- {OUTCOME_SYMBOLS[outcome]} **{outcome.value}**{sig} on "
                    f"**{text(names.get(column_id, column_id))}**: {code(row.id, table=False)}"
                    + (f": {text(msg)}" if msg else "")
                )
            elif outcome is Outcome.XPASSED:
                where = f" ({text(result.link)})" if result.link else ""
                name = text(names.get(column_id, column_id))
                xpasses.append(f"- 🎉 {code(row.id, table=False)} on **{name}**{where}: expected to fail, passed")
    out: list[str] = []
    for title, items in (("Failures", failures), ("Unexpected passes", xpasses)):
        if not items:
            continue
        shown = items if max_items is None else items[:max_items]
        out += ["", f"### {title} ({len(items)})", "", *shown]
        if len(shown) < len(items):
            out.append(f"- … and {len(items) - len(shown)} more (see matrix.json or the HTML page)")
    return out


def _moved(change: FeatureChange, since: str | None = None) -> str:
    """`linalg` partial → supported (2 newly passing): a feature that moved between two builds; one
    the older build could not have "arrived in 2.14" (it was not fixed: it was not there)."""
    state = state_word(change.after)
    if change.before is Rollup.NOT_IN_RELEASE and change.after is not Rollup.NOT_IN_RELEASE:
        return f"{code(change.feature, table=False)} arrived" + (f" in {text(since)}" if since else "") + f" ({state})"
    if change.before is not change.after:
        state = f"{state_word(change.before)} → {state}"
    counts = [
        f"{n} {what}"
        for n, what in ((change.newly_failing, "newly failing"), (change.newly_passing, "newly passing"))
        if n
    ]
    return f"{code(change.feature, table=False)} {state}" + (f" ({', '.join(counts)})" if counts else "")


def _releases(matrix: Matrix) -> list[str]:
    """Release over release, one line per step of each release line: the features that moved, the
    rows the release brought, and its device API against the previous build's."""
    pairs = release_pairs(matrix)
    if not pairs:
        return []
    titles = {f.id: f.title for f in matrix.features}
    lines = ["", "### Release over release", ""]
    for old_id, new_id in pairs:
        old, new = matrix.column(old_id), matrix.column(new_id)
        change = diff_columns(matrix, old, matrix, new)  # type: ignore[arg-type]
        since = {f.id: f.since for f in matrix.features}
        moved = [_moved(f, since.get(f.feature)) for f in change.features if f.changed]
        parts = [", ".join(moved) if moved else "no feature changed"]
        if change.new_features:
            parts.append("new rows: " + ", ".join(text(titles.get(f, f)) for f in change.new_features))
        if change.device_api is not None:
            parts.append(text(change.device_api.summary(None)) + " by the suites")
        head = f"**{text(new.label)}** after {text(old.label)}"  # type: ignore[union-attr]
        if new.provenance is not None:  # type: ignore[union-attr]
            head += f" ({mark(new.provenance)})"  # type: ignore[union-attr]
        lines.append(f"- {head}: " + "; ".join(parts))
    return lines


def _errors(matrix: Matrix) -> list[str]:
    lines: list[str] = []
    for column in matrix.columns:
        for err in column.errors:
            lines.append(f"- {code(column.id, table=False)}: {text(first_line(err, 500))}")
    for problem in matrix.input_errors:
        lines.append(f"- {text(problem.source)}: {text(first_line(problem.message, 500))}")
    return ["", "### Problems reading results", "", *lines] if lines else []


def render_markdown(
    matrix: Matrix, limit: int = GITHUB_SUMMARY_LIMIT, title: str = "PyTorch compatibility matrix"
) -> str:
    """The summary at the richest detail level that fits in `limit` bytes."""
    levels: list[Callable[[], list[str]]] = [
        lambda: _body(matrix, True, None, 300, True, True),
        lambda: _body(matrix, True, 200, 160, True, True),
        lambda: _body(matrix, True, 20, 120, True, True),
        lambda: _body(matrix, True, 20, 120, True, False),
        lambda: _body(matrix, False, 0, 0, True, False),
        lambda: _body(matrix, False, 0, 0, False, False),
    ]
    body = ""
    for level in levels:
        body = "\n".join([f"## {title}", "", *level()]) + "\n"
        if len(body.encode("utf-8")) <= limit:
            return body
    # Last resort: a hard cut that still ends on a whole line.
    cut = body.encode("utf-8")[: max(limit - 200, 0)].decode("utf-8", "ignore")
    return cut.rsplit("\n", 1)[0] + "\n\n_(truncated to fit the summary limit)_\n"


def _body(
    matrix: Matrix, counts: bool, max_items: int | None, msg_limit: int, environments: bool, figures: bool
) -> list[str]:
    lines = _table(matrix, counts)
    if not matrix.alignment.aligned:
        shas = ", ".join(s[:10] for s in matrix.alignment.suite_shas)
        lines += ["", f"⚠️ Columns ran different suite versions ({text(shas)}); compare with care."]
    lines += vouch_section(matrix)
    lines += ["", *_legend()]
    if figures:
        lines += _figures(matrix)
    if environments:
        lines += ["", "### Environments", "", *(environment_line(c) for c in matrix.columns)]
        if any(c.reproduce for c in matrix.columns):
            lines += ["", "_To rerun one test, add `--test <test id>` to its column's rerun command._"]
    if environments:
        lines += _releases(matrix)
    if max_items != 0:
        lines += _problem_lists(matrix, max_items, msg_limit)
    elif any(c.failures for c in matrix.columns):
        lines += ["", "_Failure details omitted to fit the summary limit; see matrix.json._"]
    lines += _errors(matrix)
    return lines
