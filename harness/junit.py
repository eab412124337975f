"""Streaming, hostile-input-safe JUnit reader; junitparser interprets each <testcase>.

pytest writes JUnit only at the end of a run, other tools write other dialects, and files
arrive truncated, huge or malicious. So the file is read with expat in fixed-size chunks,
DOCTYPE and entities are refused before anything expands, text is capped per element (a
500 MB <system-out> never sits in memory), and each <testcase> is rebuilt as a small
element for junitparser. Problems become messages in `JUnitRead.errors`; what was read
before a problem is kept.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from xml.parsers import expat

import junitparser

CHUNK: Final = 1 << 16
TEXT_CAP: Final = 64_000  # characters kept per failure/skip/error body
OUTPUT_CAP: Final = 8_000  # characters kept of system-out / system-err
MAX_DEPTH: Final = 256  # nesting deeper than this is an attack, not a report
# One tag, attribute value or comment longer than this is refused: expat (before 2.6) re-scans
# an unfinished token on every chunk, so a 100 MB attribute would take minutes.
TOKEN_CAP: Final = 16 << 20
_ROOTS: Final = ("testsuites", "testsuite")
_RESULT_TAGS: Final = ("failure", "error", "skipped")
_RERUN_TAGS: Final = ("rerunFailure", "rerunError", "flakyFailure", "flakyError")
_KEEP_TAGS: Final = frozenset(
    {"properties", "property", "system-out", "system-err", *_RESULT_TAGS, *_RERUN_TAGS, "stackTrace"}
)
_TRUNCATION_CODES: Final = frozenset(
    expat.errors.codes[getattr(expat.errors, name)]
    for name in ("XML_ERROR_NO_ELEMENTS", "XML_ERROR_UNCLOSED_TOKEN", "XML_ERROR_PARTIAL_CHAR")
)
_UNIT_RE: Final = re.compile(r"^\s*([0-9]+(?:[.,][0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(ms|s|sec|m|min)?\s*$")


class HostileXMLError(ValueError):
    """The document declares a DOCTYPE or entities, or nests absurdly; refused before any expansion."""


class _TokenTooLarge(ValueError):
    pass


@dataclass
class Result:
    kind: str  # failure | error | skipped
    type: str | None
    message: str | None
    text: str | None


@dataclass
class JUnitCase:
    classname: str
    name: str
    file: str | None
    line: int | None
    time: float | None
    properties: list[tuple[str, str]]
    results: list[Result]
    reruns: list[Result]  # Surefire/Gradle rerun & flaky attempts (kind = tag name)
    system_out: str | None
    system_err: str | None
    suite: str | None

    def property(self, name: str) -> str | None:
        for key, value in self.properties:
            if key == name:
                return value
        return None


@dataclass
class JUnitRead:
    path: Path
    cases: list[JUnitCase] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    suites: int = 0
    root: str | None = None


def parse_time(raw: str | None) -> tuple[float | None, str | None]:
    """Seconds from a JUnit time attribute; also reads '15ms', '1,5', '2 min'."""
    if raw is None or raw.strip() == "":
        return None, None
    match = _UNIT_RE.match(raw)
    if not match:
        return None, f"unreadable time {raw[:40]!r}"
    value = float(match.group(1).replace(",", "."))
    unit = match.group(2) or "s"
    scale = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0}[unit]
    return value * scale, None


class _Builder:
    """Turns expat events into one capped ElementTree element per <testcase>."""

    def __init__(self, read: JUnitRead, parser: expat.XMLParserType) -> None:
        self.read = read
        self.parser = parser
        self.mark = 0  # byte offset of the latest event: how far parsing really got
        self.depth = 0
        self.suite_names: list[str] = []
        self.stack: list[ET.Element] = []  # open elements inside the current testcase
        self.texts: list[list[str]] = []
        self.sizes: list[int] = []
        self.caps: list[int] = []
        self.dropped: list[int] = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.mark = self.parser.CurrentByteIndex
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise HostileXMLError(f"elements nested deeper than {MAX_DEPTH} levels")
        if self.depth == 1:
            self.read.root = tag
            if tag not in _ROOTS:
                raise ValueError(f"root element is <{tag}>, expected <testsuites> or <testsuite>")
        if tag == "testsuite" and not self.stack:
            self.read.suites += 1
            self.suite_names.append(attrs.get("name", ""))
            return
        if tag == "testcase" and not self.stack:
            self._open(ET.Element(tag, attrs), cap=0)
            return
        if self.stack:
            parent = self.stack[-1]
            if tag not in _KEEP_TAGS:
                # Unknown markup inside a testcase (attachments, extensions): skip its text.
                self._open(ET.Element(tag, attrs), cap=0, attach_to=None)
                return
            cap = OUTPUT_CAP if tag in ("system-out", "system-err") else TEXT_CAP
            self._open(ET.Element(tag, attrs), cap=cap, attach_to=parent)

    def _open(self, elem: ET.Element, *, cap: int, attach_to: ET.Element | None = None) -> None:
        if attach_to is not None:
            attach_to.append(elem)
        self.stack.append(elem)
        self.texts.append([])
        self.sizes.append(0)
        self.caps.append(cap)
        self.dropped.append(0)

    def data(self, text: str) -> None:
        self.mark = self.parser.CurrentByteIndex
        if not self.stack:
            return
        room = self.caps[-1] - self.sizes[-1]
        if room > 0:
            piece = text[:room]
            self.texts[-1].append(piece)
            self.sizes[-1] += len(piece)
        self.dropped[-1] += max(0, len(text) - max(room, 0))

    def end(self, tag: str) -> None:
        self.mark = self.parser.CurrentByteIndex
        self.depth -= 1
        if tag == "testsuite" and not self.stack:
            if self.suite_names:
                self.suite_names.pop()
            return
        if not self.stack:
            return
        elem = self.stack.pop()
        text = "".join(self.texts.pop())
        self.sizes.pop()
        self.caps.pop()
        dropped = self.dropped.pop()
        if dropped:
            text += f"\n... [{dropped} characters not kept; full text in the cell's files]"
        elem.text = text or None
        if not self.stack and tag == "testcase":
            self._finish_case(elem)

    def _finish_case(self, elem: ET.Element) -> None:
        name = elem.get("name", "?")
        _, time_problem = parse_time(elem.get("time"))
        if time_problem:
            self.read.errors.append(f"{self.read.path.name}: testcase {name!r}: {time_problem}; duration left empty")
        try:
            self.read.cases.append(to_case(elem, self.suite_names[-1] if self.suite_names else None))
        except ValueError as err:
            self.read.errors.append(f"{self.read.path.name}: testcase {name!r}: {err}")


def to_case(elem: ET.Element, suite: str | None) -> JUnitCase:
    """Interpret one <testcase> element with junitparser (plus the rerun dialects)."""
    seconds, time_problem = parse_time(elem.get("time"))
    if time_problem:
        elem.attrib.pop("time", None)
    case = junitparser.TestCase.fromelem(elem)
    results = [Result(kind=r._tag, type=r.type, message=r.message, text=r.text) for r in case.result]
    reruns = [
        Result(
            kind=child.tag,
            type=child.get("type"),
            message=child.get("message"),
            text=(child.findtext("stackTrace") or child.text),
        )
        for child in elem
        if child.tag in _RERUN_TAGS
    ]
    properties = [
        (p.get("name", ""), p.get("value", p.text or ""))
        for props in elem.findall("properties")
        for p in props.findall("property")
    ]
    line = elem.get("line")
    return JUnitCase(
        classname=case.classname or "",
        name=case.name or "",
        file=elem.get("file"),
        line=int(line) if line and line.isdigit() else None,
        time=seconds,
        properties=properties,
        results=results,
        reruns=reruns,
        system_out=case.system_out,
        system_err=case.system_err,
        suite=suite,
    )


def _refuse(*_args: object) -> None:
    raise HostileXMLError("DOCTYPE or entity declarations are not allowed in JUnit files")


def read_junit(path: Path) -> JUnitRead:
    """Read a JUnit file in bounded memory; never raises for bad content."""
    read = JUnitRead(path=path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        read.errors.append(f"{path.name}: missing")
        return read
    except OSError as err:
        read.errors.append(f"{path.name}: cannot open: {err}")
        return read
    parser = expat.ParserCreate()
    builder = _Builder(read, parser)
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    size = 0
    with handle:
        try:
            pending = 0  # bytes fed since the latest event: an unfinished token
            while chunk := handle.read(max(CHUNK, pending)):  # growing reads keep re-scans few
                size += len(chunk)
                parser.Parse(chunk, False)
                pending = size - builder.mark
                if pending > TOKEN_CAP:
                    raise _TokenTooLarge(builder.mark)
            if size == 0:
                read.errors.append(f"{path.name}: empty file")
                return read
            parser.Parse(b"", True)
        except HostileXMLError as err:
            read.errors.append(f"{path.name}: refused: {err}")
            read.cases.clear()
        except _TokenTooLarge as err:
            read.errors.append(
                f"{path.name}: one tag, attribute or comment runs past {TOKEN_CAP >> 20} MB from byte {err};"
                f" stopped reading there; kept {len(read.cases)} testcases read before it"
            )
        except expat.ExpatError as err:
            where = f"line {parser.ErrorLineNumber} column {parser.ErrorColumnNumber}"
            what = expat.errors.messages.get(err.code, str(err)) if err.code else str(err)
            # The input ending inside a token or element means the writer stopped mid-file.
            cut = err.code in _TRUNCATION_CODES and parser.ErrorByteIndex >= size - 256
            kind = "truncated" if cut and read.root is not None else "not well-formed"
            read.errors.append(
                f"{path.name}: {kind} XML at {where} (byte {parser.ErrorByteIndex}): {what};"
                f" kept {len(read.cases)} testcases read before it"
            )
        except ValueError as err:
            read.errors.append(f"{path.name}: {err}")
    return read


__all__ = ["HostileXMLError", "JUnitCase", "JUnitRead", "Result", "read_junit"]
