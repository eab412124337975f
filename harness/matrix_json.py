"""matrix.json in and out: the model (harness/model.py) written, read and validated.

The published schema (harness/schema/matrix.schema.json) is checked on every load, so a renderer
never meets a half-valid matrix. A matrix holds a result per test and column (250,000 for 5 x
50,000 tests, most of them an equal "passed in t seconds"), so three speed tricks sit here, each
behind one named function that says what it buys and has a test that it agrees with the plain
path (tests/core/test_matrix_json.py):

- `_shared_result`: on load, equal plain results are one object (the merge made them so);
- `_quick_row_check` and `_plain_result_key`: validation checks plainly valid rows with a few type
  checks and each distinct plain result once, the compiled schema everything else;
- `_result_json_once`: on write, a shared result is turned into its JSON form once.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Final

from harness import gcpause, jsonio
from harness.errors import InputError
from harness.model import SCHEMA_VERSION, Matrix, TestResult

SCHEMA_PATH: Final = Path(__file__).with_name("schema") / "matrix.schema.json"
_PLAIN_KEYS: Final = frozenset({"outcome", "duration", "scope"})
GZIP_MAGIC: Final = b"\x1f\x8b"


# -- writing -----------------------------------------------------------------------------------
def write_to(matrix: Matrix, handle: IO[bytes]) -> None:
    """matrix.json, streamed: the head pretty-printed, then one line per test."""
    rows = ({"id": test.id, "feature": test.feature, "results": test.results} for test in matrix.tests)
    with gcpause.paused():
        jsonio.write_json_lines_object(handle, matrix.head_json(), "tests", rows, convert=_result_json_once())


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
    """matrix.json.gz, atomically: what a site publishes when matrix.json itself is too large to host.
    The gzip header carries no name or time, so the same matrix gives the same bytes."""

    def write(handle: IO[bytes]) -> None:
        with gzip.GzipFile(filename="", mode="wb", fileobj=handle, compresslevel=6, mtime=0) as packed:
            write_to(matrix, packed)  # type: ignore[arg-type]

    jsonio.write_atomic(Path(path), write)


# -- reading -----------------------------------------------------------------------------------
def load_matrix(path: Path) -> Matrix:
    """Read and validate matrix.json (or its gzip, as a large site publishes it); every problem is
    an InputError naming the file."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such matrix file", hint="create it with `harness merge`") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from err  # the path once (str(err) repeats it)
    return matrix_from_bytes(raw, str(path))


def matrix_from_bytes(raw: bytes, source: str) -> Matrix:
    """The model from matrix.json's bytes, gzip or not (told apart by gzip's magic bytes)."""
    path = source
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise InputError(f"{path}: a damaged gzip file ({err})") from None
    with gcpause.paused():  # a whole matrix of acyclic objects: see harness/gcpause.py
        try:
            data = jsonio.loads(raw)
        except ValueError as err:
            raise InputError(f"{path}: not a readable matrix.json ({err})") from err
        if not isinstance(data, dict) or "schema_version" not in data:
            raise InputError(f"{path}: not a matrix.json (no schema_version)")
        major = str(data["schema_version"]).split(".", 1)[0]
        if major != SCHEMA_VERSION.split(".", 1)[0]:
            raise InputError(
                f"{path}: schema_version {data['schema_version']} is not supported",
                hint=f"this harness reads {SCHEMA_VERSION.split('.', 1)[0]}.x",
            )
        return matrix_from_json(data, source=str(path))


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
    import fastjsonschema

    head, one_row, one_result = _validators()
    try:
        head(data)
        checked: set[tuple] = set()
        for index, row in enumerate(data["tests"]):
            if not (quick and _quick_row_check(row)):
                one_row(row, name_prefix=f"data.tests[{index}]")
            for column, result in row["results"].items():
                key = _plain_result_key(result) if quick else None
                if key is None or key not in checked:
                    one_result(result, name_prefix=f"data.tests[{index}].results.{column}")
                    if key is not None:
                        checked.add(key)
    except fastjsonschema.JsonSchemaException as err:
        where = getattr(err, "name", "") or "data"
        raise InputError(f"{source}: not a valid matrix.json: {where}: {err.message}") from None


def validate_matrix(matrix: Matrix | Mapping[str, Any]) -> None:
    """Raise InputError when the matrix (model or JSON) does not match the published schema."""
    validate_json(matrix.to_json() if isinstance(matrix, Matrix) else matrix)
