"""Shields-style flat SVG badges: one per column (`CUDA 13.0 | 27/30 features`) and one for the matrix.

Self-contained (no fonts or images from elsewhere), every text escaped. A column without
data gets a grey `no data` badge, never 0/N.
"""

from __future__ import annotations

from html import escape
from typing import Final

from harness.model import Column, Matrix
from harness.outcomes import Rollup

GREY: Final = "#9f9f9f"
LABEL_GREY: Final = "#555"
# (minimum supported ratio, colour): first match wins.
_SCALE: Final = (
    (1.0, "#4c1"),
    (0.9, "#97ca00"),
    (0.75, "#a4a61d"),
    (0.5, "#dfb317"),
    (0.25, "#fe7d37"),
    (0.0, "#e05d44"),
)
_NARROW: Final = frozenset("fijlrt!|.,:;'()[] ")
_WIDE: Final = frozenset("mwMW@%")


def _text_width(text: str) -> int:
    """Approximate width of Verdana 11px text; good enough to size a badge."""
    width = 0.0
    for char in text:
        width += 3.6 if char in _NARROW else 10.0 if char in _WIDE else 8.0 if char.isupper() else 6.8
    return round(width)


def colour_for(supported: int, judged: int) -> str:
    if judged <= 0:
        return GREY
    ratio = supported / judged
    return next(colour for floor, colour in _SCALE if ratio >= floor)


def badge_svg(label: str, message: str, colour: str) -> str:
    left = _text_width(label) + 12
    right = _text_width(message) + 12
    total = left + right
    label_x, message_x = left / 2, left + right / 2
    title = escape(f"{label}: {message}")
    label_text, message_text = escape(label), escape(message)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="{LABEL_GREY}"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{escape(colour)}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{label_x}" y="15" fill="#010101" fill-opacity=".3">{label_text}</text>'
        f'<text x="{label_x}" y="14">{label_text}</text>'
        f'<text x="{message_x}" y="15" fill="#010101" fill-opacity=".3">{message_text}</text>'
        f'<text x="{message_x}" y="14">{message_text}</text></g></svg>\n'
    )


def column_badge(column: Column) -> str:
    label = column.heading or column.id
    if column.environment.torch and column.has_data:
        label += f" · torch {column.environment.torch}"
    if column.python_key:  # a column whose Python was not recorded says nothing of it, never a guess
        label += f" · {column.python_key.display}"
    score = column.score
    if not column.has_data or score is None:
        return badge_svg(label, "no data", GREY)
    message = f"{score.supported}/{score.judged} features"
    absent = score.states.get(Rollup.NOT_IN_RELEASE, 0)
    if absent:  # rows the build cannot have: never scored, and said so
        message += f", {absent} not in this release"
    return badge_svg(label, message, colour_for(score.supported, score.judged))


def matrix_badge(matrix: Matrix, label: str = "torch compat") -> str:
    """Supported feature cells over judged ones, across every real column with data (a build
    run without its device is not its backend's verdict)."""
    real = [c for c in matrix.columns if c.speaks_for_backend and c.shipped]
    scored = [c.score for c in real if c.has_data and c.score is not None]
    missing = len(real) - len(scored)
    if not scored:
        return badge_svg(label, "no data", GREY)
    supported = sum(s.supported for s in scored)
    judged = sum(s.judged for s in scored)
    message = f"{supported}/{judged} feature cells" + (f", {missing} no data" if missing else "")
    return badge_svg(label, message, colour_for(supported, judged))


def badges(matrix: Matrix) -> dict[str, str]:
    """File name -> SVG: `<column id>.svg` per column and `matrix.svg`."""
    files = {f"{c.id}.svg": column_badge(c) for c in matrix.columns if c.shipped}
    files["matrix.svg"] = matrix_badge(matrix)
    return files
