"""Streaming, hostile-input-safe JUnit reader for every dialect.

pytest writes JUnit only at the end of a run, other tools write other dialects, and files
arrive truncated, huge or malicious. So the file is fed to expat in chunks and each
<testcase> is handed over as a small `JUnitCase` as soon as it ends; nothing else of the
document is kept. DOCTYPE and entities are refused before anything expands, nesting and
single tokens are capped, and text is kept only inside result and output elements, up to a
cap per element (head and tail), so a 500 MB <system-out> never sits in memory and costs
no string building past its cap. Problems become messages in `JUnitRead.errors`; what was
read before a problem is kept.

Why expat and not lxml: libxml2 builds each text node whole before handing it over, so one
giant <system-out> would be held in memory; expat streams text, and with the character
handler switched off outside captured elements it reads at close to its raw speed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final
from xml.parsers import expat

from harness.regular_file import open_regular

CHUNK: Final = 1 << 20
TEXT_CAP: Final = 64_000  # characters kept per failure/skip/error body
OUTPUT_CAP: Final = 8_000  # characters kept of system-out / system-err
MAX_DEPTH: Final = 256  # nesting deeper than this is an attack, not a report
# One tag, attribute value or comment longer than this is refused: expat (before 2.6) re-scans
# an unfinished token on every chunk, so a 100 MB attribute would take minutes.
TOKEN_CAP: Final = 16 << 20
ROOTS: Final = ("testsuites", "testsuite")
RESULT_TAGS: Final = frozenset({"failure", "error", "skipped"})
# Failed attempts the producer wrote inside one <testcase>, before its result: Surefire, Gradle
# `mergeReruns`, nextest / quick-junit (flaky* = failed, then passed; rerun* = failed every time),
# and PyTorch CI's `rerun` (its test/conftest.py writes each pytest-rerunfailures rerun as one).
RERUN_TAGS: Final = frozenset({"rerunFailure", "rerunError", "flakyFailure", "flakyError", "rerun"})
_OUTPUT_TAGS: Final = frozenset({"system-out", "system-err"})
_PROPERTY_DONE: Final = ("property", None, None)  # an open <property value=...>, already kept
_TEXT_TAGS: Final = RESULT_TAGS | RERUN_TAGS | _OUTPUT_TAGS | {"stackTrace", "property"}
# Errors that expat raises only at the end of input: the writer stopped mid-file.
_TRUNCATION_CODES: Final = frozenset(
    expat.errors.codes[getattr(expat.errors, name)]
    for name in (
        "XML_ERROR_NO_ELEMENTS",
        "XML_ERROR_UNCLOSED_TOKEN",
        "XML_ERROR_PARTIAL_CHAR",
        "XML_ERROR_UNCLOSED_CDATA_SECTION",
    )
)
SUITE_PROPERTY_CAP: Final = 256  # suite-level properties kept per file (Surefire writes ~60 JVM ones)
SUITE_VALUE_CAP: Final = 200  # characters kept of each: they only tell the dialect (go.version)
_UNIT_RE: Final = re.compile(r"^\s*([0-9]+(?:[.,][0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(ms|s|sec|m|min)?\s*$")
_SCALE: Final = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0}


class HostileXMLError(ValueError):
    """The document declares a DOCTYPE or entities, or nests absurdly; refused before any expansion."""


class _TokenTooLarge(ValueError):
    pass


@dataclass(slots=True)
class JUnitResult:
    """A result or attempt element of a testcase, as written."""

    kind: str  # failure | error | skipped | rerunFailure | rerunError | flakyFailure | flakyError | rerun
    type: str | None
    message: str | None
    text: str | None


@dataclass(slots=True)
class JUnitCase:
    """One <testcase> element, with the names of the suites around it."""

    suites: tuple[str, ...]  # names of the enclosing <testsuite>s, outermost first
    suite_keys: tuple[str, ...]  # the same, with "#<n>" on the n-th sibling suite of an equal name
    attrs: dict[str, str]  # the testcase's attributes as written (name, classname, file, line, status, ...)
    index: int  # 1-based position among the file's testcases
    properties: list[tuple[str, str]] = field(default_factory=list)
    results: list[JUnitResult] = field(default_factory=list)
    reruns: list[JUnitResult] = field(default_factory=list)
    system_out: str | None = None
    system_err: str | None = None
    time: float | None = None

    @property
    def name(self) -> str:
        return self.attrs.get("name", "")

    @property
    def classname(self) -> str:
        return self.attrs.get("classname", "")

    @property
    def file(self) -> str | None:
        return self.attrs.get("file")

    @property
    def status(self) -> str | None:
        return self.attrs.get("status")

    def property(self, name: str) -> str | None:
        for key, value in self.properties:
            if key == name:
                return value
        return None


@dataclass
class JUnitRead:
    """What reading a file found besides its testcases: the root, counts and problems."""

    path: Path
    errors: list[str] = field(default_factory=list)
    root: str | None = None
    root_name: str | None = None  # the name attribute of <testsuites> (pytest: "pytest tests")
    first_suite: str | None = None  # the name of the first <testsuite> (old pytest: "pytest")
    generator: str | None = None  # a comment before the root (TestNG: "Generated by org.testng.reporters...")
    suites: int = 0
    count: int = 0  # testcases handed over
    # <property>s of the <testsuite>s (not of testcases), first value per name: they say which
    # tool wrote the file (gotestsum and go-junit-report write `go.version`).
    suite_properties: dict[str, str] = field(default_factory=dict)
    cases: list[JUnitCase] = field(default_factory=list)  # only filled by read_junit()


def parse_time(raw: str | None) -> tuple[float | None, str | None]:
    """Seconds from a JUnit time attribute; also reads '15ms', '1,5', '2 min'."""
    if raw is None:
        return None, None
    if raw.isascii() and raw.replace(".", "", 1).isdigit():  # "0.037": nearly every time, without the regex
        return float(raw), None
    if raw.strip() == "":
        return None, None
    match = _UNIT_RE.match(raw)
    if not match:
        return None, f"unreadable time {raw[:40]!r}"
    return float(match.group(1).replace(",", ".")) * _SCALE[match.group(2) or "s"], None


class _Text:
    """Capped text of one element: the head and a rolling tail, and how much was dropped."""

    __slots__ = ("cap", "dropped", "head", "parts", "size")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head: str | None = None
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * self.cap:
            self._compact()

    def _compact(self) -> None:
        joined = "".join(self.parts)
        if self.head is None:
            self.head = joined[: self.cap // 4]
            joined = joined[self.cap // 4 :]
        keep = self.cap - len(self.head)
        self.dropped += max(0, len(joined) - keep)
        tail = joined[-keep:] if keep > 0 else ""
        self.parts = [tail]
        self.size = len(tail)

    def value(self) -> str | None:
        if self.size > self.cap - len(self.head or ""):
            self._compact()
        body = "".join(self.parts)
        if self.head is None:
            return body or None
        note = f"\n... [{self.dropped} characters not kept; full text in the cell's files] ...\n"
        return self.head + note + body


def _refuse(*_args: object) -> None:
    raise HostileXMLError("DOCTYPE or entity declarations are not allowed in JUnit files")


class _Handlers:
    """expat callbacks: build one JUnitCase per <testcase>, collect finished ones in `ready`."""

    def __init__(self, read: JUnitRead, parser: expat.XMLParserType) -> None:
        self.read = read
        self.parser = parser
        self.ready: list[JUnitCase] = []
        self.depth = 0
        self.suites: list[str] = []
        self.suite_keys: list[str] = []
        self.sibling_names: list[dict[str, int]] = [{}]  # per open level: suite name -> how many seen
        self.case: JUnitCase | None = None
        self.case_properties: list[tuple[str, str]] = []  # the open testcase's
        self.open_suites: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self.case_depth = 0
        self.inner_cap = MAX_DEPTH
        self.in_property = False  # property_start/property_end: inside a leaf <property value=...>
        self.in_suite_properties = False
        self.inner: list[tuple[str, dict[str, str] | None, _Text | None]] = []  # open elements inside the case
        self.text: _Text | None = None
        self.cases = 0

    # Two pairs of handlers: `start`/`end` outside a testcase, `case_start`/`case_end` inside one,
    # swapped on expat when a testcase begins and ends. What it buys: the elements inside testcases
    # (properties, results) are nearly all of a report's elements, and their handlers then check
    # nothing that only matters outside one (about a fifth of the import merge's time). Nesting
    # inside a testcase is counted by `inner`, so MAX_DEPTH holds there too. tests/importer/
    # test_junit_import.py holds them to a plain ElementTree read of every dialect's real reports.
    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise HostileXMLError(f"elements nested deeper than {MAX_DEPTH} levels")
        if tag == "testcase":  # first: nearly every element this handler sees
            self.cases += 1
            if self.open_suites is None:  # the suites around it, as tuples made once per change of suite
                self.open_suites = (tuple(self.suites), tuple(self.suite_keys))
            suites, keys = self.open_suites
            case = self.case = JUnitCase(suites=suites, suite_keys=keys, attrs=attrs, index=self.cases)
            self.case_properties = case.properties
            self.case_depth = self.depth
            self.inner_cap = MAX_DEPTH - self.depth
            parser = self.parser
            parser.StartElementHandler = self.case_start
            parser.EndElementHandler = self.case_end
            return
        if tag == "property" and self.in_suite_properties:
            kept = self.read.suite_properties
            name = attrs.get("name", "")[:SUITE_VALUE_CAP]
            if name not in kept and len(kept) < SUITE_PROPERTY_CAP:
                kept[name] = attrs.get("value", "")[:SUITE_VALUE_CAP]
            return
        if tag == "properties" and self.suites:
            self.in_suite_properties = True
            return
        if self.depth == 1:
            self.read.root = tag
            self.parser.CommentHandler = None  # only a comment before the root names the writer
            if tag not in ROOTS:
                raise ValueError(f"root element is <{tag}>, expected <testsuites> or <testsuite>")
            if tag == "testsuites":
                self.read.root_name = attrs.get("name")
        if tag == "testsuite":
            name = attrs.get("name", "")
            self.read.suites += 1
            if self.read.first_suite is None:
                self.read.first_suite = name
            seen = self.sibling_names[-1]
            seen[name] = seen.get(name, 0) + 1
            self.suites.append(name)
            self.suite_keys.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
            self.sibling_names.append({})
            self.open_suites = None

    def case_start(self, tag: str, attrs: dict[str, str]) -> None:
        inner = self.inner
        if len(inner) >= self.inner_cap:
            raise HostileXMLError(f"elements nested deeper than {MAX_DEPTH} levels")
        if tag == "property":
            value = attrs.get("value")
            if value is not None:
                # The common case, kept cheap: no text to wait for.
                if inner and inner[-1][0] == "properties":
                    self.case_properties.append((attrs.get("name", ""), value))
                inner.append(_PROPERTY_DONE)
                return
        if tag in _OUTPUT_TAGS:
            # Output matters only beside a failure (the schema puts results first); a passing
            # test's output is not even decoded.
            case = self.case
            text = _Text(OUTPUT_CAP) if case.results or case.reruns else None  # type: ignore[union-attr]
        else:
            text = _Text(TEXT_CAP) if tag in _TEXT_TAGS else None
        inner.append((tag, attrs, text))
        if text is not None or self.text is not None:
            self._capture(text)
        if tag == "properties":
            # Inside <properties>, leaf <property value=...> elements (all of them, in every writer
            # seen) take the two cheapest handlers there can be; anything else goes back to these.
            self.in_property = False
            self.parser.StartElementHandler = self.property_start
            self.parser.EndElementHandler = self.property_end

    def property_start(self, tag: str, attrs: dict[str, str]) -> None:
        if not self.in_property and tag == "property":
            value = attrs.get("value")
            if value is not None:
                self.case_properties.append((attrs.get("name", ""), value))
                self.in_property = True
                return
        # Not a leaf <property value=...>: the general handlers take over for the rest of <properties>.
        if self.in_property:
            self.inner.append(_PROPERTY_DONE)  # the open property, as case_start would have pushed it
        self.parser.StartElementHandler = self.case_start
        self.parser.EndElementHandler = self.case_end
        self.case_start(tag, attrs)

    def property_end(self, tag: str) -> None:
        if self.in_property:
            self.in_property = False
            return
        self.parser.StartElementHandler = self.case_start  # </properties>
        self.parser.EndElementHandler = self.case_end
        self.case_end(tag)

    def comment(self, text: str) -> None:
        if self.read.generator is None:
            self.read.generator = text.strip()[:SUITE_VALUE_CAP]

    def _capture(self, text: _Text | None) -> None:
        """Switch expat's character handler on only inside captured elements (no strings otherwise)."""
        if (text is None) != (self.text is None):
            self.parser.CharacterDataHandler = None if text is None else self.data
        self.text = text

    def data(self, text: str) -> None:
        captured = self.text
        if captured is not None:
            captured.add(text)

    def end(self, tag: str) -> None:
        self.depth -= 1
        if tag == "properties":
            self.in_suite_properties = False
        if tag == "testsuite" and self.suites:
            self.suites.pop()
            self.suite_keys.pop()
            self.sibling_names.pop()
            self.open_suites = None

    def case_end(self, tag: str) -> None:
        inner = self.inner
        if not inner:  # the testcase itself
            self.depth -= 1
            self.ready.append(self.case)  # type: ignore[arg-type]
            self.case = None
            self.parser.StartElementHandler = self.start
            self.parser.EndElementHandler = self.end
            return
        tag, attrs, text = inner.pop()
        if attrs is None:
            return  # a property handled at its start
        if text is not None or tag in RESULT_TAGS or tag in RERUN_TAGS:
            self._end_captured(self.case, tag, attrs, text)  # type: ignore[arg-type]
        outer = inner[-1][2] if inner else None
        if outer is not None or self.text is not None:
            self._capture(outer)

    def _end_captured(self, case: JUnitCase, tag: str, attrs: dict[str, str], text: _Text | None) -> None:
        value = text.value() if text is not None else None
        parent = self.inner[-1][0] if self.inner else "testcase"
        if parent == "testcase":
            if tag in RESULT_TAGS:
                case.results.append(JUnitResult(tag, attrs.get("type"), attrs.get("message"), value))
            elif tag in RERUN_TAGS:
                case.reruns.append(JUnitResult(tag, attrs.get("type"), attrs.get("message"), value))
            elif tag == "system-out":
                case.system_out = value
            elif tag == "system-err":
                case.system_err = value
        elif tag == "property" and parent == "properties":
            case.properties.append((attrs.get("name", ""), value or ""))
        elif tag == "stackTrace" and parent in RERUN_TAGS and value:
            # Surefire puts an attempt's trace in a child element: it becomes the attempt's text.
            parent_text = self.inner[-1][2]
            if parent_text is not None and not "".join(parent_text.parts).strip():
                parent_text.parts, parent_text.size = [], 0
                parent_text.add(value)


def iter_junit(path: Path, read: JUnitRead | None = None, handle: BinaryIO | None = None) -> Iterator[JUnitCase]:
    """The testcases of a JUnit file, one at a time, in bounded memory. Never raises for bad
    content: problems go to `read.errors`, and the cases before a problem are still yielded.
    `handle`: the file, already open (it is closed here); `path` then only names it."""
    read = read if read is not None else JUnitRead(path=path)
    if handle is None:
        try:
            handle = open_regular(path)  # a FIFO in its place would block the merge forever
        except FileNotFoundError:
            read.errors.append(f"{path.name}: missing")
            return
        except OSError as err:
            read.errors.append(f"{path.name}: cannot open: {err.strerror or err}")
            return
    parser = expat.ParserCreate()
    handlers = _Handlers(read, parser)
    parser.buffer_text = True
    parser.buffer_size = 1 << 16
    parser.StartElementHandler = handlers.start
    parser.EndElementHandler = handlers.end
    parser.CommentHandler = handlers.comment
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    size = 0
    final = False
    with handle:
        try:
            pending = 0  # bytes fed that expat has not consumed yet: an unfinished token
            while chunk := handle.read(max(CHUNK, pending)):  # growing reads keep re-scans few
                size += len(chunk)
                parser.Parse(chunk, False)
                yield from _hand_over(handlers, read)
                pending = size - max(parser.CurrentByteIndex, 0)
                if pending > TOKEN_CAP:
                    raise _TokenTooLarge(parser.CurrentByteIndex)
            if size == 0:
                read.errors.append(f"{path.name}: empty file")
                return
            final = True
            parser.Parse(b"", True)
            yield from _hand_over(handlers, read)
        except HostileXMLError as err:
            read.errors.append(f"{path.name}: refused: {err}")
        except _TokenTooLarge as err:
            read.errors.append(
                f"{path.name}: one tag, attribute or comment runs past {TOKEN_CAP >> 20} MB from byte {err};"
                f" stopped reading there; kept {read.count} testcases read before it"
            )
        except expat.ExpatError as err:
            yield from _hand_over(handlers, read)
            where = f"line {parser.ErrorLineNumber} column {parser.ErrorColumnNumber}"
            what = expat.errors.messages.get(err.code, str(err)) if err.code else str(err)
            cut = final and err.code in _TRUNCATION_CODES and read.root is not None
            kind = "truncated" if cut else "not well-formed"
            read.errors.append(
                f"{path.name}: {kind} XML at {where} (byte {parser.ErrorByteIndex}): {what};"
                f" kept {read.count} testcases read before it"
            )
        except ValueError as err:
            read.errors.append(f"{path.name}: {err}")


def _hand_over(handlers: _Handlers, read: JUnitRead) -> list[JUnitCase]:
    """The testcases finished since the last call, with their times read (a list: one generator
    less per testcase on the way to the caller)."""
    ready = handlers.ready
    if not ready:
        return ready
    handlers.ready = []
    for case in ready:
        seconds, problem = parse_time(case.attrs.get("time"))
        if problem:
            read.errors.append(f"{read.path.name}: testcase {case.name!r}: {problem}; duration left empty")
        case.time = seconds
    read.count += len(ready)
    return ready


def read_junit(path: Path) -> JUnitRead:
    """Read a whole JUnit file into `read.cases` (for small files and tests; ingest streams)."""
    read = JUnitRead(path=path)
    read.cases = list(iter_junit(path, read))
    return read


__all__ = ["HostileXMLError", "JUnitCase", "JUnitRead", "JUnitResult", "iter_junit", "parse_time", "read_junit"]
