"""matrix.json in and out: the model (harness/model.py) written, read and validated.

Two forms: whole (one document, what `harness merge` writes) and split (schema 1.4, what a site
publishes: an index, the head with `parts` naming gzip'd part files of consecutive rows with their
sha256, so that no file passes 25 MB at 5M results; `write_matrix_split`). `load_matrix` reads
either, gzip'd or not, from a path; `matrix_from_bytes` from bytes (a URL's), its parts through a
reader it is given.

The published schema (harness/schema/matrix.schema.json) is checked on every load, so a renderer
never meets a half-valid matrix. A matrix holds a result per test and column (5M for 100 x 50,000
tests, most of them an equal "passed in t seconds"), so these speed and memory tricks sit here,
each behind one named function that says what it buys and has a test that it agrees with the
plain path (tests/core/test_matrix_json.py):

- `_document`: the whole form in the layout `write_to` writes is read row by row from the file,
  so its text and the model never coexist (anything else is parsed whole, `_whole_document`);
- `_shared_result`: on load, equal plain results are one object (the merge made them so);
  `load_matrix(results="lean" | "outcomes")` holds less of each result where less is read;
- `_quick_row_check` and `_plain_result_key`: validation checks plainly valid rows with a few type
  checks and each distinct plain result once, the compiled schema everything else;
- `_result_json_once`: on write, a shared result is turned into its JSON form once.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Final

from harness import gcpause, jsonio, outputs
from harness.errors import InputError
from harness.model import SCHEMA_VERSION, Matrix, TestResult, TestRow

SCHEMA_PATH: Final = Path(__file__).with_name("schema") / "matrix.schema.json"
_PLAIN_KEYS: Final = frozenset({"outcome", "duration", "scope"})
GZIP_MAGIC: Final = b"\x1f\x8b"


# -- writing -----------------------------------------------------------------------------------
def write_to(matrix: Matrix, handle: IO[bytes], *, plain: bool = False) -> None:
    """matrix.json, streamed: the head pretty-printed, then one line per test. `plain`: in this
    process only (jsonio.write_json_lines_object_split: a large matrix's second half is encoded
    by a child)."""
    with gcpause.paused():
        jsonio.write_json_lines_object_split(
            handle, matrix.head_json(), "tests", _RowsAsJson(matrix.tests), _result_json_once, plain=plain
        )


class _RowsAsJson(Collection[dict[str, Any]]):
    """Each row in its JSON shape (made as it is iterated), with the rows' length and halves."""

    def __init__(self, rows: Collection[TestRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return ({"id": test.id, "feature": test.feature, "results": test.results} for test in self.rows)

    def __contains__(self, item: object) -> bool:
        return any(row == item for row in self)

    def halves(self) -> tuple[_RowsAsJson, _RowsAsJson] | None:
        parts = jsonio.halves(self.rows)
        return None if parts is None else (_RowsAsJson(parts[0]), _RowsAsJson(parts[1]))  # type: ignore[arg-type]


def _result_json_once() -> Callable[[Any], Any]:
    """The encoder's fallback for objects it does not know: a TestResult becomes its JSON form once
    per object, not once per test that shares it (5 x 50,000 results, a few hundred distinct:
    the encoder, orjson's C, meets them inside the rows and asks for their form)."""
    # Kept with its result: an id is unique only while its object lives, and rows made as they are
    # written (a spilled merge's) let theirs go. Only results without text are kept: those are the
    # shared ones; one with a message is one test's, its form made when it is met.
    as_json: dict[int, tuple[TestResult, dict[str, Any]]] = {}

    def convert(result: Any) -> Any:
        found = as_json.get(id(result))
        if found is not None and found[0] is result:
            return found[1]
        if isinstance(result, TestResult):
            data = result.to_json()
            if data.keys() <= _PLAIN_KEYS:
                as_json[id(result)] = (result, data)
            return data
        # not a result: a mapping that is not a dict, or a value JSON has no form for
        return dict(result) if isinstance(result, Mapping) else str(result)

    return convert


def write_matrix(matrix: Matrix, path: Path) -> None:
    """Write matrix.json atomically (a reader never sees half a file)."""
    jsonio.write_atomic(Path(path), lambda handle: write_to(matrix, handle))


def write_matrix_gzip(matrix: Matrix, path: Path) -> None:
    """matrix.json.gz, atomically: what a site published before the split form (still read).
    The gzip header carries no name or time, so the same matrix gives the same bytes."""

    def write(handle: IO[bytes]) -> None:
        with gzip.GzipFile(filename="", mode="wb", fileobj=handle, compresslevel=6, mtime=0) as packed:
            write_to(matrix, packed)  # type: ignore[arg-type]

    jsonio.write_atomic(Path(path), write)


# -- the split form (schema 1.4) ------------------------------------------------------------------
SPLIT_SCHEMA_VERSION: Final = "1.4"  # the first version with `parts`
PARTS_FOLDER: Final = "matrix-parts"
# A part's rows before gzip: ~1.5 MB gzip'd, a few hundred tests of 100 columns; a 5M matrix is
# ~45 parts, and no file of a site comes near GitHub's 25-50 MB.
PART_BYTES: Final = 16 * 1024 * 1024


def write_matrix_split(
    matrix: Matrix,
    index: Path,
    *,
    rows: Iterable[TestRow] | None = None,
    folder: str = PARTS_FOLDER,
    part_bytes: int | None = None,
) -> list[Path]:
    """matrix.json split: `index` holds the head and names the parts (`folder`/NNNN.json.gz beside
    it, each with its sha256 and its number of tests), each part a gzip'd document
    {schema_version, part, tests} of consecutive rows. `rows`: the matrix's rows, whole (default
    `matrix.tests`), when the matrix was read without its long texts. Each file is written
    atomically, the index last; a publication writes them inside the folder it swaps in whole."""
    index = Path(index)
    part_bytes = PART_BYTES if part_bytes is None else part_bytes
    version = _split_version(matrix.schema_version)
    entries: list[dict[str, Any]] = []
    written: list[Path] = []
    held: list[TestRow] = []  # the part's rows stay alive until it is written: see `_result_json_once`
    blocks: list[bytes] = []
    size = 0

    def flush() -> None:
        nonlocal size
        number = len(entries)
        opening, closing = jsonio.lines_object_ends({"schema_version": version, "part": number}, "tests")
        text = opening + b"\n    " + b",\n    ".join(blocks) + closing
        packed = gzip.compress(text, compresslevel=6, mtime=0)
        name = f"{folder}/{number:04d}.json.gz"
        outputs.write_file(index.parent / name, packed)
        written.append(index.parent / name)
        entries.append({"path": name, "sha256": hashlib.sha256(packed).hexdigest(), "tests": len(held)})
        held.clear()
        blocks.clear()
        size = 0

    convert = _result_json_once()
    count = 0
    # Iterated, never indexed: a merged matrix's rows may be made as they are read (merge/store.py).
    expected_ids = None if rows is None else (test.id for test in matrix.tests)
    for test in matrix.tests if rows is None else rows:
        expected = test.id if expected_ids is None else next(expected_ids, None)
        if test.id != expected:  # rows read again from a file that was replaced meanwhile
            raise InputError(f"the matrix changed while it was written: {test.id} where {expected} was")
        count += 1
        held.append(test)
        line = next(jsonio.item_lines([_row_json(test)], convert))
        blocks.append(line)
        size += len(line) + 6
        if size >= part_bytes:
            flush()
            convert = _result_json_once()
    if blocks:
        flush()
    if count != len(matrix.tests):
        raise InputError(f"the matrix changed while it was written: {count} tests where it held {len(matrix.tests)}")
    head = {**matrix.head_json(), "schema_version": version, "parts": entries}
    outputs.write_file(index, jsonio.dumps_pretty(head) + b"\n")
    return [*written, index]


def _row_json(test: TestRow) -> dict[str, Any]:
    return {"id": test.id, "feature": test.feature, "results": test.results}


def _split_version(version: str) -> str:
    """1.4 at least (the index needs a reader of 1.4); a later minor stays."""
    major, _, minor = version.partition(".")
    return version if minor.isdigit() and int(minor) >= 4 else f"{major}.4"


# -- reading -----------------------------------------------------------------------------------
# How a part's rows are found (the index's paths are relative to the index): read_bytes or a fetch.
ReadPart = Callable[[str], bytes]


def load_matrix(path: Path, *, results: str = "all") -> Matrix:
    """Read and validate matrix.json (or its gzip, or the index of the split form with its parts
    beside it); every problem is an InputError naming the file. `results`: "all"; "lean" (without
    traces and captured output: what a publication holds while it writes everything else; its
    page reads them row by row through `iter_tests`); or "outcomes" (each result its outcome only:
    what a baseline is read for)."""
    path = Path(path)
    return _matrix_from(_opener(path), str(path), lambda name: _read_part_file(path, name), results)


def iter_tests(path: Path) -> Iterator[TestRow]:
    """The test rows of the matrix at `path` with every result whole, one at a time (validated as
    `load_matrix` does): the page's details and the split matrix.json are written from them while
    the matrix held in memory is read "lean"."""
    path = Path(path)
    opened, read_part, source = _opener(path), (lambda name: _read_part_file(path, name)), str(path)
    done = 0
    try:
        for row in _rows_read(opened, source, read_part, lines=True):
            done += 1
            yield row
    except _NotLines:  # the plain path, from where the lines layout stopped
        for index, row in enumerate(_rows_read(opened, source, read_part, lines=False)):
            if index >= done:
                yield row


def _rows_read(opened: Callable[[], IO[bytes]], source: str, read_part: ReadPart, *, lines: bool) -> Iterator[TestRow]:
    shared: dict[tuple, TestResult] = {}
    with opened() as handle:
        head, rows = _head_and_rows(handle, source, read_part, lines=lines)
        del head
        for row in _checked_rows(rows, source):
            yield TestRow(
                id=row["id"],
                feature=row["feature"],
                results={c: _shared_result(r, shared) for c, r in row["results"].items()},
            )


def _opener(path: Path) -> Callable[[], IO[bytes]]:
    def opened() -> IO[bytes]:
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            raise InputError(f"{path}: no such matrix file", hint="create it with `harness merge`") from None
        except OSError as err:
            raise InputError(f"{path}: cannot read: {err.strerror or err}") from err  # the path once
        if handle.read(2) == GZIP_MAGIC:
            handle.seek(0)
            return _GzipReader(handle, str(path))  # type: ignore[return-value]
        handle.seek(0)
        return handle

    return opened


class _GzipReader(gzip.GzipFile):
    """A gzip'd matrix read as a stream: a damaged one is an InputError naming the file."""

    def __init__(self, handle: IO[bytes], source: str) -> None:
        super().__init__(fileobj=handle, mode="rb")
        self._source = source
        self._raw = handle

    def _damaged(self, err: Exception) -> InputError:
        return InputError(f"{self._source}: a damaged gzip file ({err})")

    def read(self, size: int = -1) -> bytes:
        try:
            return super().read(size)
        except (OSError, EOFError) as err:
            raise self._damaged(err) from None

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return super().readline(size)
        except (OSError, EOFError) as err:
            raise self._damaged(err) from None

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def close(self) -> None:
        super().close()
        self._raw.close()


def _read_part_file(index: Path, name: str) -> bytes:
    part = index.parent / name
    try:
        return part.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{part}: a part {index} names is missing") from None
    except OSError as err:
        raise InputError(f"{part}: cannot read: {err.strerror or err}") from err


def matrix_from_bytes(raw: bytes, source: str, *, read_part: ReadPart | None = None, results: str = "all") -> Matrix:
    """The model from matrix.json's bytes, gzip or not (told apart by gzip's magic bytes); an
    index of the split form reads its parts through `read_part`."""
    raw = _gunzipped(raw, source)
    return _matrix_from(lambda: io.BytesIO(raw), source, read_part, results)


def _matrix_from(opened: Callable[[], IO[bytes]], source: str, read_part: ReadPart | None, results: str) -> Matrix:
    make = _result_maker(results)
    try:
        return _matrix_read(opened, source, read_part, make, lines=True)
    except _NotLines:  # looked like the lines layout at first, was not: the plain path says what is wrong
        return _matrix_read(opened, source, read_part, _result_maker(results), lines=False)


def _matrix_read(
    opened: Callable[[], IO[bytes]],
    source: str,
    read_part: ReadPart | None,
    make: Callable[[Mapping[str, Any]], TestResult],
    *,
    lines: bool,
) -> Matrix:
    with gcpause.paused(), opened() as handle:  # a whole matrix of acyclic objects: see harness/gcpause.py
        head, rows = _head_and_rows(handle, source, read_part, lines=lines)
        return Matrix.from_json({**head, "tests": _checked_rows(rows, source)}, results=make)


def _head_and_rows(
    handle: IO[bytes], source: str, read_part: ReadPart | None, *, lines: bool
) -> tuple[dict[str, Any], Iterator[Any]]:
    """The validated head (with `tests` empty) and the rows, not yet checked, of either form."""
    head, rows = _document(handle, source) if lines else _whole_document(handle.read(), source)
    if "parts" in head and "tests" not in head:
        if read_part is None:
            raise InputError(f"{source}: the index of a split matrix.json, read where its parts are not")
        validate_head(head, source)
        rows = _rows_of_parts(head, source, read_part)
        head = {k: v for k, v in head.items() if k != "parts"}
        head["tests"] = []
    validate_head(head, source)
    return head, rows


def _gunzipped(raw: bytes, source: str) -> bytes:
    if raw[:2] != GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError) as err:
        raise InputError(f"{source}: a damaged gzip file ({err})") from None


def _check_version(data: Any, source: str) -> None:
    if not isinstance(data, dict) or "schema_version" not in data:
        raise InputError(f"{source}: not a matrix.json (no schema_version)")
    major = str(data["schema_version"]).split(".", 1)[0]
    if major != SCHEMA_VERSION.split(".", 1)[0]:
        raise InputError(
            f"{source}: schema_version {data['schema_version']} is not supported",
            hint=f"this harness reads {SCHEMA_VERSION.split('.', 1)[0]}.x",
        )


# The layout `write_to` writes (jsonio.write_json_lines_object): the head pretty-printed, then
# `  "tests": [`, one row per line, `  ]`, `}`.
_ROWS_OPEN: Final = b'  "tests": [\n'
_ROWS_CLOSE: Final = b"  ]\n"
_HEAD_LIMIT: Final = 64 << 20  # a head this large is not one `write_to` wrote: read it whole


class _NotLines(Exception):
    """The text is not in the lines layout after all: read it whole."""


def _document(handle: IO[bytes], source: str) -> tuple[dict[str, Any], Iterator[Any]]:
    """matrix.json's head and its rows. In the lines layout `write_to` writes, the rows are parsed
    line by line as they are used, from the file (one row's text and the model coexist, not the
    whole text and the model: loading a 140 MB matrix.json peaked at 830 MB before); anything else
    is parsed whole (`_whole_document`, the plain path; tests/core/test_matrix_json.py holds the two
    to one model)."""
    head_lines: list[bytes] = []
    size = 0
    first = handle.readline()
    if first != b"{\n":
        return _whole_document(first + handle.read(), source)
    head_lines.append(first)
    for line in handle:
        if line == _ROWS_OPEN:
            break
        head_lines.append(line)
        size += len(line)
        if size > _HEAD_LIMIT:
            break
    else:
        return _whole_document(b"".join(head_lines), source)
    if line != _ROWS_OPEN:
        return _whole_document(b"".join(head_lines) + handle.read(), source)
    try:
        head = jsonio.loads(b"".join(head_lines) + b'  "tests": []\n}')
    except ValueError:
        raise _NotLines from None
    if not isinstance(head, dict):
        raise _NotLines
    _check_version(head, source)
    return head, _row_lines(handle)


def _row_lines(handle: IO[bytes]) -> Iterator[Any]:
    """Each row of the lines layout, parsed as it is asked for: `    {...},` lines, the last without
    its comma, then `  ]`, `}` and the end. Anything else: `_NotLines`."""
    line = handle.readline()
    while line and line != _ROWS_CLOSE:
        following = handle.readline()
        body = line.strip()
        last = following == _ROWS_CLOSE
        if body.endswith(b",") == last:
            raise _NotLines  # a comma after every row but the last
        try:
            row = jsonio.loads(body if last else body[:-1])
        except ValueError:
            raise _NotLines from None
        yield row
        line = following
    if line != _ROWS_CLOSE or handle.read() != b"}\n":
        raise _NotLines


def _whole_document(raw: bytes, source: str) -> tuple[dict[str, Any], Iterator[Any]]:
    try:
        data = jsonio.loads(raw)
    except ValueError as err:
        raise InputError(f"{source}: not a readable matrix.json ({err})") from err
    del raw
    _check_version(data, source)
    rows = data.pop("tests", None)
    if rows is None:
        return data, iter(())
    if not isinstance(rows, list):
        data["tests"] = rows  # the schema names what is wrong
        return data, iter(())
    data["tests"] = []
    return data, iter(rows)


def _rows_of_parts(index: Mapping[str, Any], source: str, read_part: ReadPart) -> Iterator[Any]:
    """The rows of each part in turn, each part checked against its digest and count first."""
    validate_head({**index}, source)
    for entry in index["parts"]:
        name = entry["path"]
        where = f"{source}: part {name}"
        raw = read_part(name)
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise InputError(f"{where}: its sha256 is not the one the index names (a damaged or mixed-up part)")
        head, rows = _whole_document(_gunzipped(raw, where), where)  # a part is small: read whole
        if head.get("schema_version") != index["schema_version"] or "tests" not in head:
            raise InputError(f"{where}: not a part of this matrix")
        count = 0
        for row in rows:
            count += 1
            yield row
        if count != entry["tests"]:
            raise InputError(f"{where}: {count} tests where the index names {entry['tests']}")


def _result_maker(results: str) -> Callable[[Mapping[str, Any]], TestResult]:
    if results == "all":
        shared: dict[tuple, TestResult] = {}
        return lambda result: _shared_result(result, shared)
    if results == "lean":
        lean: dict[tuple, TestResult] = {}

        def without_texts(data: Mapping[str, Any]) -> TestResult:
            if "trace" in data or "output" in data:
                data = {k: v for k, v in data.items() if k not in _LONG_TEXTS}
            key = _lean_key(data)
            if key is None:
                return TestResult.from_json(data)
            found = lean.get(key)
            if found is None:
                found = lean[key] = TestResult.from_json(data)
            return found

        return without_texts
    if results == "outcomes":
        by_outcome: dict[Any, TestResult] = {}

        def outcome_only(data: Mapping[str, Any]) -> TestResult:
            key = (data["outcome"], data.get("scope"))
            found = by_outcome.get(key)
            if found is None:
                found = by_outcome[key] = TestResult.from_json(
                    {"outcome": key[0], **({"scope": key[1]} if key[1] else {})}
                )
            return found

        return outcome_only
    raise ValueError(f"results={results!r}")


_LONG_TEXTS: Final = frozenset({"trace", "output"})


def _lean_key(data: Mapping[str, Any]) -> tuple | None:
    """Equal results are one object: a lean matrix's skips of one reason and duration are shared."""
    key = tuple(sorted(data.items()))
    try:
        hash(key)
    except TypeError:  # properties, extra messages: a result of its own
        return None
    return key


def matrix_from_json(data: Mapping[str, Any], *, validate: bool = True, source: str = "matrix") -> Matrix:
    """The model from a matrix.json document, validated first (unless told not to)."""
    if validate:
        validate_json(data, source)
    shared: dict[tuple, TestResult] = {}
    return Matrix.from_json(data, results=lambda result: _shared_result(result, shared))


def _shared_result(data: Mapping[str, Any], shared: dict[tuple, TestResult]) -> TestResult:
    """Results that say only outcome, duration (and scope) are one object per value, as the merge
    made them: a matrix of 250,000 results loads in a fraction of the time and memory."""
    if data.keys() <= _PLAIN_KEYS:
        key = (data["outcome"], data.get("duration"), data.get("scope"))
        found = shared.get(key)
        if found is None:
            found = shared[key] = TestResult.from_json(data)
        return found
    return TestResult.from_json(data)


# -- validation --------------------------------------------------------------------------------
@functools.cache
def _validators() -> tuple[Any, Any, Any]:
    """The schema compiled (fastjsonschema: to Python, 20x faster than the jsonschema package's
    interpreter) in three parts: the document without its rows, one row (its results taken as
    any object), one result."""
    import fastjsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    head = {**schema, "properties": {**schema["properties"], "tests": {"type": "array"}}}
    base = {key: schema[key] for key in ("$schema", "$id") if key in schema}
    row = {**base, "$ref": "#/$defs/test", "$defs": {**defs, "result": {"type": "object"}}}
    result = {**base, "$ref": "#/$defs/result", "$defs": defs}
    return fastjsonschema.compile(head), fastjsonschema.compile(row), fastjsonschema.compile(result)


# What `_quick_row_check` assumes of the schema's `test` definition (tests/core/test_matrix_json.py holds
# the schema to it, so a change there cannot leave the quick check behind).
ROW_KEYS: Final = frozenset({"id", "feature", "results"})


def _quick_row_check(row: Any) -> bool:
    """A row that surely matches `$defs/test` apart from its results: exactly id, feature and
    results, a string, a string and an object. The compiled schema spends ~10 us on a row; this
    takes a fraction of that (0.9 s of a 3 s `report` of 5 x 50,000 tests before). Anything it
    does not pass goes to the schema itself, for its verdict and its message."""
    return (
        type(row) is dict
        and row.keys() == ROW_KEYS
        and type(row["id"]) is str
        and type(row["feature"]) is str
        and type(row["results"]) is dict
    )


def _plain_result_key(result: Mapping[str, Any]) -> tuple | None:
    """What identifies a result that holds only outcome, duration and scope, so each distinct one
    is checked once (the types are in the key: 1, 1.0 and True are equal keys in Python, and only
    two of them are valid durations). None: check this result on its own."""
    if type(result) is not dict or not result.keys() <= _PLAIN_KEYS:
        return None
    outcome, duration, scope = result.get("outcome"), result.get("duration"), result.get("scope")
    key = (outcome, duration, scope, type(outcome), type(duration), type(scope))
    try:
        hash(key)
    except TypeError:  # a list or an object where a value belongs: checked on its own, and refused
        return None
    return key


def validate_json(data: Any, source: str = "matrix", *, quick: bool = True) -> None:
    """Raise InputError when `data` does not match the published schema of matrix.json.
    `quick=False` sends every row and result through the compiled schema (the plain path)."""
    validate_head(data, source)
    for _ in _checked_rows(data.get("tests") or (), source, quick=quick):
        pass


def validate_head(data: Any, source: str = "matrix") -> None:
    """The document without its rows (`tests` taken as any list)."""
    import fastjsonschema

    try:
        _validators()[0](data)
    except fastjsonschema.JsonSchemaException as err:
        where = getattr(err, "name", "") or "data"
        raise InputError(f"{source}: not a valid matrix.json: {where}: {err.message}") from None


def _checked_rows(rows: Iterable[Any], source: str, *, quick: bool = True) -> Iterator[Any]:
    """Each row, once it is checked against the schema (as it is read: a row is checked before the
    next is parsed)."""
    import fastjsonschema

    _, one_row, one_result = _validators()
    checked: set[tuple] = set()
    try:
        for index, row in enumerate(rows):
            if not (quick and _quick_row_check(row)):
                one_row(row, name_prefix=f"data.tests[{index}]")
            for column, result in row["results"].items():
                key = _plain_result_key(result) if quick else None
                if key is None or key not in checked:
                    one_result(result, name_prefix=f"data.tests[{index}].results.{column}")
                    if key is not None:
                        checked.add(key)
            yield row
    except fastjsonschema.JsonSchemaException as err:
        where = getattr(err, "name", "") or "data"
        raise InputError(f"{source}: not a valid matrix.json: {where}: {err.message}") from None


def validate_matrix(matrix: Matrix | Mapping[str, Any]) -> None:
    """Raise InputError when the matrix (model or JSON) does not match the published schema."""
    validate_json(matrix.to_json() if isinstance(matrix, Matrix) else matrix)
