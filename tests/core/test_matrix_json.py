"""matrix.json in and out (harness/matrix_json.py): each of the three speed tricks agrees with the
plain path on the same input.

- quick validation (`validate_json(quick=True)`) gives the plain path's verdict and message, on
  valid matrices and on each damaged document below;
- loading with shared results gives a model equal to `Matrix.from_json` without sharing;
- the streamed `write_matrix` parses to the same JSON as `matrix.to_json()`;
- reading row by row (the lines layout) gives the model of the whole parse, and a text that only
  looks like that layout gets the whole parse's verdict; a lean read is the matrix less its long
  texts, an outcomes read its outcomes;
- the split form (index and parts) reads back as the matrix, and a damaged, missing or miscounted
  part is a one-line error.

And the schema the quick check assumes is the published one; a major schema version it does not
know is refused.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.errors import EXIT_INPUT, InputError
from harness.matrix_json import (
    ROW_KEYS,
    SCHEMA_PATH,
    _split_version,
    iter_tests,
    load_matrix,
    matrix_from_json,
    validate_json,
    validate_matrix,
    write_matrix,
    write_matrix_gzip,
    write_matrix_split,
)
from harness.model import SCHEMA_VERSION, Matrix, TestResult
from tests.committed import releases_matrix, sample_matrices

MATRICES: dict[str, Callable[[], Matrix]] = {
    "releases": releases_matrix,
    "sample-base": lambda: sample_matrices()[0],
    "sample-new": lambda: sample_matrices()[1],
}


def _verdict(data: Any, *, quick: bool) -> str | None:
    try:
        validate_json(data, "m.json", quick=quick)
    except InputError as err:
        return str(err)
    return None


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    """The releases matrix as JSON: 301 rows x 3 columns, most results plain (outcome, duration)."""
    return releases_matrix().to_json()


# -- quick validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MATRICES))
def test_quick_and_plain_validation_pass_the_real_matrices(name: str) -> None:
    data = MATRICES[name]().to_json()
    assert _verdict(data, quick=True) is None
    assert _verdict(data, quick=False) is None


def _plain_ids(doc: dict[str, Any]) -> tuple[int, str]:
    """A row (index) and column whose result is plain, and not the first of its kind."""
    seen: set[str] = set()
    for index, row in enumerate(doc["tests"]):
        for column, result in row["results"].items():
            key = json.dumps(result, sort_keys=True)
            if result.keys() <= {"outcome", "duration", "scope"} and key in seen:
                return index, column
            seen.add(key)
    raise AssertionError("no repeated plain result in the matrix")


def _damage(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(doc)
    rows = data["tests"]
    late, column = _plain_ids(data)
    result = rows[late]["results"][column]
    if kind == "row-extra-key":
        rows[3]["extra"] = 1
    elif kind == "row-id-not-text":
        rows[5]["id"] = 5
    elif kind == "row-feature-missing":
        del rows[7]["feature"]
    elif kind == "row-not-object":
        rows[2] = ["a", "list"]
    elif kind == "results-not-object":
        rows[4]["results"] = []
    elif kind == "outcome-unknown":
        result["outcome"] = "exploded"
    elif kind == "duration-text":
        result["duration"] = str(result["duration"])
    elif kind == "duration-negative":
        result["duration"] = -1.0
    elif kind == "duration-bool":  # equal to 1 in Python: a shared key must not let it through
        rows[0]["results"][next(iter(rows[0]["results"]))] = {"outcome": "passed", "duration": 1}
        result.clear()
        result.update(outcome="passed", duration=True)
    elif kind == "duration-list":  # not hashable: checked on its own
        result["duration"] = [1]
    elif kind == "scope-backend":  # the schema leaves the default scope out
        result["scope"] = "backend"
    elif kind == "result-not-object":
        rows[late]["results"][column] = "passed"
    elif kind == "result-unknown-key":
        result["colour"] = "red"
    elif kind == "head-version-missing":
        del data["schema_version"]
    elif kind == "tests-not-list":
        data["tests"] = {}
    else:  # pragma: no cover
        raise AssertionError(kind)
    return data


DAMAGES = [
    "row-extra-key",
    "row-id-not-text",
    "row-feature-missing",
    "row-not-object",
    "results-not-object",
    "outcome-unknown",
    "duration-text",
    "duration-negative",
    "duration-bool",
    "duration-list",
    "scope-backend",
    "result-not-object",
    "result-unknown-key",
    "head-version-missing",
    "tests-not-list",
]


@pytest.mark.parametrize("kind", DAMAGES)
def test_quick_validation_refuses_what_the_plain_path_refuses_with_the_same_message(
    doc: dict[str, Any], kind: str
) -> None:
    data = _damage(kind, doc)
    plain = _verdict(data, quick=False)
    assert plain is not None, f"the schema itself should refuse {kind}"
    assert plain.startswith("m.json: not a valid matrix.json: data")
    assert _verdict(data, quick=True) == plain


def test_a_damaged_result_is_found_however_many_equal_ones_precede_it(doc: dict[str, Any]) -> None:
    """The quick path checks each distinct plain result once: the message still names the row
    and column of the damaged one, not of the first equal-looking result."""
    late, column = _plain_ids(doc)
    data = _damage("duration-negative", doc)
    message = _verdict(data, quick=True)
    assert message is not None and f"data.tests[{late}].results.{column}" in message


def test_the_quick_row_check_assumes_the_published_row_schema() -> None:
    """`_quick_row_check` passes a row with exactly id, feature and results (a string, a string,
    an object): that must be what `$defs/test` says, and a plain result's keys must be allowed."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    row = schema["$defs"]["test"]
    assert set(row["properties"]) == set(row["required"]) == ROW_KEYS
    assert row["additionalProperties"] is False
    assert row["properties"]["id"] == row["properties"]["feature"] == {"type": "string"}
    assert row["properties"]["results"]["type"] == "object"
    result = schema["$defs"]["result"]
    assert {"outcome", "duration", "scope"} <= set(result["properties"]) and result["additionalProperties"] is False


def test_validate_matrix_takes_the_model_or_its_json() -> None:
    matrix = releases_matrix()
    validate_matrix(matrix)
    validate_matrix(matrix.to_json())
    with pytest.raises(InputError, match=r"not a valid matrix\.json"):
        validate_matrix({**matrix.to_json(), "columns": "none"})


# -- loading with shared results ---------------------------------------------------------------
@pytest.mark.parametrize("name", list(MATRICES))
def test_shared_results_load_equal_to_the_plain_model(name: str) -> None:
    data = MATRICES[name]().to_json()
    shared = matrix_from_json(data)
    assert shared == Matrix.from_json(data)
    assert shared.to_json() == data


def test_equal_plain_results_are_one_object_and_others_are_not(doc: dict[str, Any]) -> None:
    matrix = matrix_from_json(doc)
    plain: dict[tuple, list[TestResult]] = {}
    other: list[TestResult] = []
    for row in matrix.tests:
        for result in row.results.values():
            data = result.to_json()
            if data.keys() <= {"outcome", "duration", "scope"}:
                plain.setdefault(tuple(sorted(data.items())), []).append(result)
            else:
                other.append(result)
    assert any(len(same) > 1 for same in plain.values()), "the matrix should repeat a plain result"
    assert all(len({id(r) for r in same}) == 1 for same in plain.values())
    assert len({id(r) for r in other}) == len(other), "results with messages or properties are never shared"


# -- streaming write ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MATRICES))
def test_the_streamed_file_parses_to_the_models_json(tmp_path: Path, name: str) -> None:
    matrix = MATRICES[name]()
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(json.dumps(matrix.to_json()))
    rows = [line for line in text.splitlines() if line.startswith('    {"id":')]
    assert len(rows) == len(matrix.tests), "one line per test"
    assert load_matrix(path) == matrix


def test_an_empty_matrix_streams_and_loads(tmp_path: Path) -> None:
    matrix = Matrix.from_json({**releases_matrix().to_json(), "tests": []})
    write_matrix(matrix, tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["tests"] == []
    assert load_matrix(tmp_path / "m.json") == matrix


# -- what load_matrix refuses -------------------------------------------------------------------
def _saved(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_schema_major_this_harness_does_not_read_is_refused(tmp_path: Path, doc: dict[str, Any]) -> None:
    major = int(SCHEMA_VERSION.split(".")[0])
    path = _saved(tmp_path, {**doc, "schema_version": f"{major + 1}.0"})
    with pytest.raises(InputError) as caught:
        load_matrix(path)
    assert str(caught.value) == (
        f"{path}: schema_version {major + 1}.0 is not supported (this harness reads {major}.x)"
    )
    assert caught.value.exit_code == EXIT_INPUT


def test_a_newer_minor_version_is_read(tmp_path: Path, doc: dict[str, Any]) -> None:
    major = SCHEMA_VERSION.split(".")[0]
    loaded = load_matrix(_saved(tmp_path, {**doc, "schema_version": f"{major}.99"}))
    assert loaded.schema_version == f"{major}.99"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "no such matrix file (create it with `harness merge`)"),
        ("{not json", "not a readable matrix.json"),
        ("[1, 2]", "not a matrix.json (no schema_version)"),
        ('{"tests": []}', "not a matrix.json (no schema_version)"),
        ('{"schema_version": "1.0"}', "not a valid matrix.json: data: data must contain"),
    ],
    ids=["missing", "not-json", "list", "no-version", "invalid"],
)
def test_unreadable_matrices_are_one_line_naming_the_file(tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "matrix.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_matrix(path)
    assert str(caught.value).startswith(str(path)) and fragment in str(caught.value)


def test_an_unreadable_matrix_names_its_path_once(tmp_path: Path) -> None:
    """str(OSError) repeats the path; the error line says it once, with the reason."""
    with pytest.raises(InputError) as error:
        load_matrix(tmp_path)
    assert str(error.value) == f"{tmp_path}: cannot read: Is a directory"


class _RowsMadeAsIterated:
    """Rows whose results exist only while they are written (as a spilled merge's rows,
    harness/merge/store.py): freed results' ids are taken by new ones."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        from harness.model import TestRow
        from harness.outcomes import Outcome

        for n in range(self.count):
            result = TestResult(outcome=Outcome.FAILED, message=f"boom {n}", duration=0.5)
            yield TestRow(id=f"t{n:05d}", feature="f", results={"c": result})


def test_rows_made_as_they_are_written_keep_their_own_results(tmp_path: Path) -> None:
    """The writer's once-per-result JSON must not hand a new result the JSON of a freed one whose
    id it took (three blocks of rows, each freed before the next is made)."""
    count = 10_000
    matrix = dataclasses.replace(releases_matrix(), tests=_RowsMadeAsIterated(count))
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    rows = json.loads(path.read_text(encoding="utf-8"))["tests"]
    assert [row["results"]["c"]["message"] for row in rows] == [f"boom {n}" for n in range(count)]


# -- streamed reading: the lines layout read row by row agrees with the whole parse ---------------
def _whole(path: Path) -> Matrix:
    """The plain path: the whole text parsed at once, then the model (what `load_matrix` did before)."""
    return matrix_from_json(json.loads(path.read_bytes()), source=str(path))


@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_matrix_read_row_by_row_is_the_one_read_whole(tmp_path: Path, name: str, packed: bool) -> None:
    matrix = MATRICES[name]()
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    assert path.read_bytes().count(b"\n") > len(matrix.tests), "written in the lines layout"
    expected = _whole(path)
    if packed:
        write_matrix_gzip(matrix, tmp_path / "matrix.json.gz")
        path = tmp_path / "matrix.json.gz"
    assert load_matrix(path) == expected
    assert [t.to_json() for t in iter_tests(path)] == [t.to_json() for t in expected.tests]


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace(b"},\n    {", b"}\n    {", 1),  # a comma missing between rows
        lambda text: text[: text.rindex(b"\n  ]")] + b",\n  ]\n}\n",  # a comma after the last row
        lambda text: text.replace(b"\n  ]\n}\n", b"\n  ]\n}\n{}\n"),  # something after the document
        lambda text: text.replace(b'"tests": [\n    {', b'"tests": [\n    {"id": 1, ', 1),  # a row not one
    ],
    ids=["comma-missing", "comma-after-last", "trailing", "bad-row"],
)
def test_a_text_that_only_looks_like_the_lines_layout_gets_the_whole_parses_verdict(
    tmp_path: Path, doc: dict[str, Any], edit: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "matrix.json"
    write_matrix(releases_matrix(), path)
    path.write_bytes(edit(path.read_bytes()))
    try:
        expected: str | Matrix = _whole(path)
    except (ValueError, InputError) as err:
        expected = "refused" if isinstance(err, ValueError) else str(err)
    try:
        got: str | Matrix = load_matrix(path)
    except InputError as err:
        got = str(err) if expected != "refused" else "refused"
    assert got == expected


@pytest.mark.parametrize("name", list(MATRICES))
def test_a_lean_matrix_is_the_matrix_without_traces_and_output(tmp_path: Path, name: str) -> None:
    matrix = MATRICES[name]()
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    lean, whole = load_matrix(path, results="lean"), load_matrix(path)
    assert name == "releases" or any(r.trace for t in whole.tests for r in t.results.values()), "it has traces"
    assert lean.head_json() == whole.head_json()
    for a, b in zip(lean.tests, whole.tests, strict=True):
        assert a.id == b.id and a.results.keys() == b.results.keys()
        for column, result in a.results.items():
            assert result == dataclasses.replace(b.results[column], trace=None, output=None)
    outcomes = load_matrix(path, results="outcomes")
    assert [[r.outcome for r in t.results.values()] for t in outcomes.tests] == [
        [r.outcome for r in t.results.values()] for t in whole.tests
    ]


# -- the split form (1.4): an index and its parts ----------------------------------------------------
@pytest.mark.parametrize("name", list(MATRICES))
def test_a_split_matrix_reads_back_as_the_matrix(tmp_path: Path, name: str) -> None:
    matrix = MATRICES[name]()
    files = write_matrix_split(matrix, tmp_path / "matrix.json", part_bytes=400)
    index = json.loads((tmp_path / "matrix.json").read_text())
    assert files[-1] == tmp_path / "matrix.json" and len(index["parts"]) == len(files) - 1 > 1
    assert sum(e["tests"] for e in index["parts"]) == len(matrix.tests)
    assert index["schema_version"] == _split_version(SCHEMA_VERSION) and "tests" not in index
    loaded = load_matrix(tmp_path / "matrix.json")
    assert loaded == dataclasses.replace(matrix, schema_version=_split_version(SCHEMA_VERSION))
    assert [t.to_json() for t in iter_tests(tmp_path / "matrix.json")] == [t.to_json() for t in matrix.tests]
    # written again from rows read one at a time (a lean matrix's publication): the same files
    again = tmp_path / "again"
    lean = load_matrix(tmp_path / "matrix.json", results="lean")
    write_matrix_split(lean, again / "matrix.json", rows=iter_tests(tmp_path / "matrix.json"), part_bytes=400)
    assert (again / "matrix.json").read_bytes() == (tmp_path / "matrix.json").read_bytes()


def test_a_damaged_missing_or_miscounted_part_is_a_one_line_error(tmp_path: Path) -> None:
    write_matrix_split(releases_matrix(), tmp_path / "matrix.json", part_bytes=4000)
    index = tmp_path / "matrix.json"
    part = tmp_path / json.loads(index.read_text())["parts"][1]["path"]
    good = part.read_bytes()
    part.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(InputError, match=r"part matrix-parts/0001.json.gz: its sha256 is not the one the index names"):
        load_matrix(index)
    part.unlink()
    with pytest.raises(InputError, match=r"0001\.json\.gz: a part .* names is missing"):
        load_matrix(index)
    part.write_bytes(good)
    data = json.loads(index.read_text())
    data["parts"][1]["tests"] += 1
    index.write_text(json.dumps(data))
    with pytest.raises(InputError, match="tests where the index names"):
        load_matrix(index)
    data["parts"][1]["path"] = "../outside.json.gz"
    index.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"not a valid matrix\.json"):
        load_matrix(index)


def test_rows_of_another_matrix_are_refused_not_written_under_this_ones_head(tmp_path: Path) -> None:
    """A publication reads its matrix's rows again: a file replaced meanwhile is an error, never an
    index whose head and parts disagree."""
    base, new = sample_matrices()
    assert [t.id for t in base.tests] != [t.id for t in new.tests]
    with pytest.raises(InputError, match="the matrix changed while it was written"):
        write_matrix_split(base, tmp_path / "matrix.json", rows=iter(new.tests))
    with pytest.raises(InputError, match="the matrix changed while it was written"):
        write_matrix_split(base, tmp_path / "matrix.json", rows=iter(tuple(base.tests)[:-1]))
    assert not (tmp_path / "matrix.json").exists()
