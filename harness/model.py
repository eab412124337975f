"""The matrix model: what `harness merge` produces and every renderer, diff, gate and history reads.

Frozen dataclasses and enums, with `to_json`/`from_json`. matrix.json is this model written
out (schema: harness/schema/matrix.schema.json); loading validates the document against that
schema before any object is built, so a renderer never meets a half-valid matrix.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Final

from harness import gcpause, jsonio
from harness.cell import CellStatus
from harness.errors import InputError
from harness.outcomes import BAD, GOOD, Outcome, Rollup, Scope, SkipClass
from harness.torch_build import parse_version

SCHEMA_VERSION: Final = "1.2"
SCHEMA_PATH: Final = Path(__file__).with_name("schema") / "matrix.schema.json"
VERDICT_STATES: Final = (Rollup.SUPPORTED, Rollup.PARTIAL, Rollup.FAILING, Rollup.UNSUPPORTED)
UNASSIGNED: Final = "unassigned"


class ColumnState(StrEnum):
    OK = "ok"  # the run completed and every file was read
    PARTIAL_RUN = "partial-run"  # results exist, but the run ended abnormally or some input was unreadable
    NO_DATA = "no-data"  # no results at all
    NOT_SHIPPED = "not-shipped"  # upstream does not build this variant for this release: nothing could run


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None and v != [] and v != {} and v != ()}


@dataclass(frozen=True, slots=True, kw_only=True)
class Feature:
    id: str
    title: str
    since: str | None = None
    claim: str | None = None
    scope: Scope = Scope.BACKEND  # HOST: the feature does not depend on the backend; shown, never scored

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "title": self.title, "since": self.since, "claim": self.claim}
        if self.scope is not Scope.BACKEND:
            data["scope"] = self.scope.value
        return _drop_empty(data)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Feature:
        return cls(
            id=data["id"],
            title=data.get("title") or data["id"],
            since=data.get("since"),
            claim=data.get("claim"),
            scope=Scope(data.get("scope", Scope.BACKEND.value)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Where a column ran: the facts a reader needs to trust or reproduce it."""

    torch: str | None = None
    torch_git: str | None = None
    build: str | None = None
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    device: str | None = None
    device_count: int | None = None
    capability: str | None = None
    arch: str | None = None
    driver: str | None = None
    python: str | None = None
    platform: str | None = None
    cpu: str | None = None
    mode: str | None = None
    image: str | None = None
    image_digest: str | None = None
    suite_sha: str | None = None
    runner: str | None = None
    run_url: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    harness_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _ENV_FIELDS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Environment:
        return cls(**{k: v for k, v in data.items() if k in _ENV_FIELDS})

    def items(self) -> Iterator[tuple[str, Any]]:
        """(field, value) for every field that has a value, in declaration order."""
        for name in _ENV_FIELDS:
            value = getattr(self, name)
            if value not in (None, ""):
                yield name, value


_ENV_FIELDS: Final = tuple(Environment.__dataclass_fields__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    supported: int
    judged: int  # features with a verdict (supported, partial, failing, unsupported)
    features: int
    states: Mapping[Rollup, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "judged": self.judged,
            "features": self.features,
            "states": {k.value: v for k, v in self.states.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        return cls(
            supported=data["supported"],
            judged=data["judged"],
            features=data["features"],
            states={Rollup(k): v for k, v in data["states"].items()},
        )


def _counts_json(counts: Mapping[Outcome, int]) -> dict[str, int]:
    return {k.value: v for k, v in counts.items() if v}


def _counts_from(data: Mapping[str, int]) -> dict[Outcome, int]:
    return {Outcome(k): v for k, v in data.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One cell of the matrix's columns: a backend and torch build on one runner."""

    id: str
    backend: str
    display_name: str
    state: ColumnState
    cell_status: CellStatus | None
    run_id: str
    run_attempt: int = 1
    error: str | None = None
    exit: Mapping[str, Any] | None = None
    environment: Environment = field(default_factory=Environment)
    errors: tuple[str, ...] = ()
    counts: Mapping[Outcome, int] = field(default_factory=dict)
    score: Score | None = None
    source: str = ""
    mode: str | None = None  # how the results were made: native, container, import
    # A build run without its device (a CUDA build on a host with no GPU): kept apart from the
    # backend's real columns and never its verdict. None for a column on its own device.
    variant: str | None = None
    variant_reason: str | None = None
    reproduce: str | None = None  # the command that reruns this column
    release: str | None = None  # the torch release series (2.15); set where no torch version says it

    @property
    def has_data(self) -> bool:
        return self.state not in (ColumnState.NO_DATA, ColumnState.NOT_SHIPPED)

    @property
    def shipped(self) -> bool:
        return self.state is not ColumnState.NOT_SHIPPED

    @property
    def release_series(self) -> str | None:
        """The torch release this column belongs to (2.15 for 2.15.0+cu132)."""
        if self.release:
            return self.release
        version = parse_version(self.environment.torch)
        return version.minor if version else None

    @property
    def torch(self) -> str | None:
        return self.environment.torch

    @property
    def build_key(self) -> tuple[str, str]:
        """What a release-over-release view pairs on: the backend and its variant."""
        return (self.backend, self.variant or "")

    @property
    def speaks_for_backend(self) -> bool:
        """A real column of its backend (not a build run without its device)."""
        return self.variant is None

    @property
    def heading(self) -> str:
        """'CUDA 13.0', or 'CUDA 13.0 build, CPU only' for a variant."""
        return (
            f"{self.display_name} build, {self.variant.replace('-', ' ').replace('cpu', 'CPU')}"
            if self.variant
            else self.display_name
        )

    @property
    def label(self) -> str:
        """The heading with the torch build and the device, for text that names a column outside the
        table's head: 'CUDA 13.0 build, CPU only · torch 2.14.1+cu130'. Two CPU-only columns of two
        releases read apart."""
        parts = [self.heading]
        if self.state is ColumnState.NOT_SHIPPED:
            parts.append(f"torch {self.release_series} (not shipped)")
        elif self.torch and self.has_data:
            parts.append(f"torch {self.torch}")
        device = self.environment.device
        if device and device != "cpu" and self.has_data:
            parts.append(device)
        return " · ".join(parts)

    @property
    def failures(self) -> int:
        return sum(self.counts.get(o, 0) for o in BAD)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "backend": self.backend,
            "display_name": self.display_name,
            "state": self.state.value,
            "cell_status": self.cell_status.value if self.cell_status else None,
            "run_id": self.run_id,
            "run_attempt": self.run_attempt,
            "error": self.error,
            "exit": dict(self.exit) if self.exit is not None else None,
            "environment": self.environment.to_json(),
            "errors": list(self.errors),
            "counts": _counts_json(self.counts),
            "score": self.score.to_json() if self.score else None,
            "source": self.source,
            **_drop_empty(
                {
                    "variant": self.variant,
                    "variant_reason": self.variant_reason,
                    "reproduce": self.reproduce,
                    "release": self.release,
                }
            ),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Column:
        env = data.get("environment") or {}
        status = data.get("cell_status")
        return cls(
            id=data["id"],
            backend=data["backend"],
            display_name=data["display_name"],
            state=ColumnState(data["state"]),
            cell_status=CellStatus(status) if status else None,
            run_id=data["run_id"],
            run_attempt=data.get("run_attempt", 1),
            error=data.get("error"),
            exit=data.get("exit"),
            environment=Environment.from_json(env),
            errors=tuple(data.get("errors") or ()),
            counts=_counts_from(data.get("counts") or {}),
            score=Score.from_json(data["score"]) if data.get("score") else None,
            source=data.get("source", ""),
            mode=env.get("mode"),
            variant=data.get("variant"),
            variant_reason=data.get("variant_reason"),
            reproduce=data.get("reproduce"),
            release=data.get("release"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureCell:
    """The roll-up of one feature on one column."""

    state: Rollup
    counts: Mapping[Outcome, int] = field(default_factory=dict)
    skips: Mapping[SkipClass, int] = field(default_factory=dict)
    host_tests: int = 0  # host-scope tests: shown, judged only when nothing else ran
    measurements: int = 0  # measurement-scope tests: figures, not passes

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"state": self.state.value, "counts": _counts_json(self.counts)}
        if self.skips:
            data["skips"] = {k.value: v for k, v in self.skips.items()}
        if self.host_tests:
            data["host_tests"] = self.host_tests
        if self.measurements:
            data["measurements"] = self.measurements
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureCell:
        return cls(
            state=Rollup(data["state"]),
            counts=_counts_from(data.get("counts") or {}),
            skips={SkipClass(k): v for k, v in (data.get("skips") or {}).items()},
            host_tests=data.get("host_tests", 0),
            measurements=data.get("measurements", 0),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    """One test on one column."""

    __test__ = False  # not a pytest test class

    outcome: Outcome
    skip_class: SkipClass | None = None
    link: str | None = None
    message: str | None = None
    trace: str | None = None
    output: str | None = None  # captured output next to a failure (JUnit system-out/err), capped
    duration: float | None = None
    attempts: int = 1
    properties: Mapping[str, Any] = field(default_factory=dict)
    scope: Scope = Scope.BACKEND
    strict: bool | None = None
    signal: str | None = None
    extra_messages: tuple[str, ...] = ()

    @property
    def is_bad(self) -> bool:
        return self.outcome in BAD

    @property
    def is_good(self) -> bool:
        return self.outcome in GOOD

    def figures(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(name, figure) for each recorded measurement (`perf.<name>` properties holding a value)."""
        for key, value in self.properties.items():
            if key.startswith("perf.") and isinstance(value, Mapping) and "value" in value:
                yield key[len("perf.") :], value

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"outcome": self.outcome.value}
        if self.skip_class is not None:
            data["skip_class"] = self.skip_class.value
        for name in ("link", "message", "trace", "output", "duration", "signal", "strict"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.attempts != 1:
            data["attempts"] = self.attempts
        if self.properties:
            data["properties"] = dict(self.properties)
        if self.scope is not Scope.BACKEND:
            data["scope"] = self.scope.value
        if self.extra_messages:
            data["extra_messages"] = list(self.extra_messages)
        return data

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled as plain values, enums by their value: merge workers hand back thousands of
        # results, and the default (a dataclass state and an enum constructor call per enum)
        # cost more to load in the merging process than the results took to decide.
        return (
            _unpickle_result,
            (
                self.outcome.value,
                self.skip_class.value if self.skip_class is not None else None,
                self.link,
                self.message,
                self.trace,
                self.output,
                self.duration,
                self.attempts,
                self.properties,
                self.scope.value,
                self.strict,
                self.signal,
                self.extra_messages,
            ),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        skip = data.get("skip_class")
        return cls(
            outcome=_OUTCOMES[data["outcome"]],
            skip_class=SkipClass(skip) if skip else None,
            link=data.get("link"),
            message=data.get("message"),
            trace=data.get("trace"),
            output=data.get("output"),
            duration=data.get("duration"),
            attempts=data.get("attempts", 1),
            properties=data.get("properties") or {},
            scope=Scope(data["scope"]) if "scope" in data else Scope.BACKEND,
            strict=data.get("strict"),
            signal=data.get("signal"),
            extra_messages=tuple(data.get("extra_messages") or ()),
        )


_OUTCOMES: Final = {o.value: o for o in Outcome}
_SKIP_CLASSES: Final = {c.value: c for c in SkipClass}
_SCOPES: Final = {s.value: s for s in Scope}


def _unpickle_result(
    outcome: str,
    skip_class: str | None,
    link: str | None,
    message: str | None,
    trace: str | None,
    output: str | None,
    duration: float | None,
    attempts: int,
    properties: Mapping[str, Any],
    scope: str,
    strict: bool | None,
    signal: str | None,
    extra_messages: tuple[str, ...],
) -> TestResult:
    """TestResult.__reduce__'s other half."""
    return TestResult(
        outcome=_OUTCOMES[outcome],
        skip_class=_SKIP_CLASSES[skip_class] if skip_class is not None else None,
        link=link,
        message=message,
        trace=trace,
        output=output,
        duration=duration,
        attempts=attempts,
        properties=properties,
        scope=_SCOPES[scope],
        strict=strict,
        signal=signal,
        extra_messages=extra_messages,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TestRow:
    """One test across the columns it has results in (absent: not collected there)."""

    __test__ = False

    id: str
    feature: str
    results: Mapping[str, TestResult]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "feature": self.feature, "results": {c: r.to_json() for c, r in self.results.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], shared: dict[tuple, TestResult] | None = None) -> TestRow:
        """`shared`: results that say only outcome, duration (and scope) are one object per value,
        as the merge made them: a matrix of 250,000 results loads in a fraction of the time and memory."""
        if shared is None:
            results = {c: TestResult.from_json(r) for c, r in data["results"].items()}
        else:
            results = {c: _shared_result(r, shared) for c, r in data["results"].items()}
        return cls(id=data["id"], feature=data["feature"], results=results)


_PLAIN_KEYS: Final = frozenset({"outcome", "duration", "scope"})


def _shared_result(data: Mapping[str, Any], shared: dict[tuple, TestResult]) -> TestResult:
    if data.keys() <= _PLAIN_KEYS:
        key = (data["outcome"], data.get("duration"), data.get("scope"))
        found = shared.get(key)
        if found is None:
            found = shared[key] = TestResult.from_json(data)
        return found
    return TestResult.from_json(data)


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """An input that could not be read (it stays visible in the matrix)."""

    source: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """Something the merge decided that a reader should know (a superseded or duplicate upload)."""

    cell: str
    source: str
    note: str

    def to_json(self) -> dict[str, str]:
        return {"cell": self.cell, "source": self.source, "note": self.note}


@dataclass(frozen=True, slots=True, kw_only=True)
class Alignment:
    aligned: bool
    suite_shas: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"aligned": self.aligned, "suite_shas": list(self.suite_shas)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Matrix:
    """Features x columns, the roll-up of each, every test's result per column."""

    schema_version: str
    generated_at: str
    harness_version: str
    features: tuple[Feature, ...]
    columns: tuple[Column, ...]
    cells: Mapping[str, Mapping[str, FeatureCell]]  # feature id -> column id -> roll-up
    tests: tuple[TestRow, ...]
    alignment: Alignment
    input_errors: tuple[Problem, ...] = ()
    notes: tuple[Note, ...] = ()

    # -- lookups ---------------------------------------------------------------------------
    def cell(self, feature_id: str, column_id: str) -> FeatureCell | None:
        return self.cells.get(feature_id, {}).get(column_id)

    def column(self, column_id: str) -> Column | None:
        return next((c for c in self.columns if c.id == column_id), None)

    def feature(self, feature_id: str) -> Feature | None:
        return next((f for f in self.features if f.id == feature_id), None)

    def results(self, column_id: str) -> Iterator[tuple[TestRow, TestResult]]:
        """(test, result) for every test with a result on this column."""
        for row in self.tests:
            result = row.results.get(column_id)
            if result is not None:
                yield row, result

    # -- JSON ------------------------------------------------------------------------------
    def _head(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "generated_at": self.generated_at,
            "harness_version": self.harness_version,
            "features": [f.to_json() for f in self.features],
            "columns": [c.to_json() for c in self.columns],
            "cells": {fid: {cid: c.to_json() for cid, c in cols.items()} for fid, cols in self.cells.items()},
            "alignment": self.alignment.to_json(),
            "input_errors": [p.to_json() for p in self.input_errors],
            "notes": [n.to_json() for n in self.notes],
        }

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "tests": [t.to_json() for t in self.tests]}

    def write_to(self, handle: IO[bytes]) -> None:
        """matrix.json, streamed: the head pretty-printed, then one line per test.

        A result shared by many tests (the merge shares equal "passed in t seconds" results)
        is turned into its JSON dict once; the encoder (orjson: C) meets the results inside the
        rows' mappings and asks `result_json` for their form."""
        as_json: dict[int, dict[str, Any]] = {}

        def result_json(result: Any) -> Any:
            key = id(result)  # results are alive (held by the matrix) for the whole write
            found = as_json.get(key)
            if found is None:
                if isinstance(result, TestResult):
                    found = as_json[key] = result.to_json()
                else:  # not a result: a mapping that is not a dict, or a value JSON has no form for
                    return dict(result) if isinstance(result, Mapping) else str(result)
            return found

        rows = ({"id": test.id, "feature": test.feature, "results": test.results} for test in self.tests)
        with gcpause.paused():
            jsonio.write_json_lines_object(handle, self._head(), "tests", rows, convert=result_json)

    def write(self, path: Path) -> None:
        jsonio.write_atomic(Path(path), self.write_to)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, validate: bool = True, source: str = "matrix") -> Matrix:
        if validate:
            validate_json(data, source)
        shared: dict[tuple, TestResult] = {}
        return cls(
            schema_version=data["schema_version"],
            generated_at=data["generated_at"],
            harness_version=data["harness_version"],
            features=tuple(Feature.from_json(f) for f in data["features"]),
            columns=tuple(Column.from_json(c) for c in data["columns"]),
            cells={
                fid: {cid: FeatureCell.from_json(c) for cid, c in cols.items()} for fid, cols in data["cells"].items()
            },
            tests=tuple(TestRow.from_json(t, shared) for t in data["tests"]),
            alignment=Alignment(
                aligned=data["alignment"]["aligned"], suite_shas=tuple(data["alignment"]["suite_shas"])
            ),
            input_errors=tuple(Problem(source=p["source"], message=p["message"]) for p in data["input_errors"]),
            notes=tuple(
                Note(cell=str(n.get("cell", "")), source=str(n.get("source", "")), note=str(n.get("note", "")))
                for n in data["notes"]
            ),
        )

    @classmethod
    def load(cls, path: Path) -> Matrix:
        """Read and validate matrix.json; every problem is an InputError naming the file."""
        try:
            raw = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError(f"{path}: no such matrix file", hint="create it with `harness merge`") from None
        except OSError as err:
            raise InputError(f"{path}: cannot read: {err}") from err
        with gcpause.paused():  # a whole matrix of acyclic objects: see harness/gcpause.py
            return cls._from_bytes(raw, path)

    @classmethod
    def _from_bytes(cls, raw: bytes, path: Path) -> Matrix:
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
        return cls.from_json(data, source=str(path))


@functools.cache
def _validators() -> tuple[Any, Any, Any]:
    """The schema compiled (fastjsonschema: to Python, 20x faster than the jsonschema package's
    interpreter) in three parts: the document without its rows, one row (its results taken as
    any object), one result. A matrix holds a row per test and a result per test and column
    (250,000 for 5 x 50,000), most of them equal "passed in t seconds": the compiled code spends
    ~10 us on a row, so rows that are plainly valid pass a fast check (`_row_is_plain`), and each
    distinct plain result is checked once, not each copy (0.9 s of a 3 s `report` before)."""
    import fastjsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    head = {**schema, "properties": {**schema["properties"], "tests": {"type": "array"}}}
    base = {key: schema[key] for key in ("$schema", "$id") if key in schema}
    row = {**base, "$ref": "#/$defs/test", "$defs": {**defs, "result": {"type": "object"}}}
    result = {**base, "$ref": "#/$defs/result", "$defs": defs}
    return fastjsonschema.compile(head), fastjsonschema.compile(row), fastjsonschema.compile(result)


# What `_row_is_plain` assumes of the schema's `test` definition (tests/test_matrix.py holds the
# schema to it, so a change there cannot leave the fast check behind).
_ROW_KEYS: Final = frozenset({"id", "feature", "results"})


def _row_is_plain(row: Any) -> bool:
    """A row that surely matches `$defs/test` apart from its results: exactly id, feature and
    results, a string, a string and an object. Anything else is checked by the schema itself."""
    return (
        type(row) is dict
        and row.keys() == _ROW_KEYS
        and type(row["id"]) is str
        and type(row["feature"]) is str
        and type(row["results"]) is dict
    )


def validate_json(data: Any, source: str = "matrix") -> None:
    """Raise InputError when `data` does not match the published schema of matrix.json."""
    import fastjsonschema

    head, one_row, one_result = _validators()
    try:
        head(data)
        checked: set[tuple] = set()
        for index, row in enumerate(data["tests"]):
            if not _row_is_plain(row):
                one_row(row, name_prefix=f"data.tests[{index}]")
            for column, result in row["results"].items():
                key = _plain_key(result)
                if key is None or key not in checked:
                    one_result(result, name_prefix=f"data.tests[{index}].results.{column}")
                    if key is not None:
                        checked.add(key)
    except fastjsonschema.JsonSchemaException as err:
        where = getattr(err, "name", "") or "data"
        raise InputError(f"{source}: not a valid matrix.json: {where}: {err.message}") from None


def _plain_key(result: Mapping[str, Any]) -> tuple | None:
    """What identifies a result that holds only outcome, duration and scope (the types too:
    1, 1.0 and True are equal keys in Python, and only two of them are valid durations)."""
    if type(result) is not dict or not result.keys() <= _PLAIN_KEYS:
        return None
    outcome, duration, scope = result.get("outcome"), result.get("duration"), result.get("scope")
    key = (outcome, duration, scope, type(outcome), type(duration), type(scope))
    try:
        hash(key)
    except TypeError:  # a list or an object where a value belongs: checked on its own, and refused
        return None
    return key
