"""The cell: one run of the suites for one backend and torch build on one runner; the seam
between the run wing (which writes cell dirs) and the merge wing (which reads them).

A cell dir holds manifest.json, junit.xml, events.jsonl, collected.json and output.log
(see docs/cell-contract.md). The manifest is written before tests start and completed
after, always atomically, so a crash still leaves identity and status. `Manifest` is the
manifest as a type, parsed once here (`read_manifest`); nothing else reads it by key.

The files' format is versioned (`cell_format` in the manifest, `CELL_FORMAT` today), and the
merge wing has one reader per version (harness/ingest/cellformat_v1.py ... cellformat_v4.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from harness import __version__, jsonio
from harness.errors import InputError, UsageError, WriteError
from harness.probe import Probe
from harness.regular_file import read_regular

MANIFEST: Final = "manifest.json"
JUNIT: Final = "junit.xml"
EVENTS: Final = "events.jsonl"
COLLECTED: Final = "collected.json"
OUTPUT_LOG: Final = "output.log"
# A cell's provenance (docs/provenance.md): one signed statement over the cell's canonical content,
# a DSSE envelope signed with a key or a Sigstore bundle (keyless, in GitHub Actions). One name for
# both, so signing again replaces it in one rename.
STATEMENT: Final = "provenance.json"
MANIFEST_VERSION: Final = 1
# 1: collected.json lists one object per test; every test ends with a `finish` event (before Dec 2026).
# 2: collected.json lists ids per feature and scope (`groups`); a test that only passed is one `pass` event.
# 3: `harness import`'s cells: the JUnit decided at import time, as `pass` and `result` events.
# 4: as 3, with the plain passes up to a thousand to a `passes` event (ids and times).
CELL_FORMAT: Final = 2
CELL_FORMATS: Final = (1, 2, 3, 4)

_CELL_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Names that look like credentials are never written anywhere (manifest, logs, reports).
SECRET_NAME_RE: Final = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION)",
    re.IGNORECASE,
)


class CellStatus(StrEnum):
    RUNNING = "running"  # manifest written, run not finished (a crash of the harness leaves this)
    COMPLETED = "completed"  # pytest ran to its end (tests may have failed)
    INFRA_ERROR = "infra-error"  # health gate failed or the runner could not start the suites
    TIMEOUT = "timeout"  # the cell ran past its overall time limit and was stopped
    INTERRUPTED = "interrupted"  # Ctrl-C / SIGTERM
    CRASHED = "crashed"  # the test process or container died (signal, OOM kill)
    # pytest refused its arguments (exit 4) or selected no test (exit 5): nothing ran, a user's mistake;
    # never a result, never laid over another run (harness/merge/combine.py, `deduplicate`)
    NOT_STARTED = "not-started"


# pytest's exit codes for a run that never started a test: a usage error, no test collected.
PYTEST_REFUSED: Final = (4, 5)


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_cell_id(text: object) -> bool:
    """The one cell id rule: a cell id names a column and a folder: letters, digits, '.', '_', '-',
    at most 128, nothing else (a trailing newline included: the whole string must match)."""
    return isinstance(text, str) and _CELL_ID_RE.fullmatch(text) is not None


def valid_cell_id(cell_id: str) -> str:
    """`cell_id` if it is one (is_cell_id), else the input error that says what one is."""
    if not is_cell_id(cell_id):
        raise InputError(
            f"invalid cell id {cell_id!r}",
            hint="use letters, digits, '.', '_' and '-' (at most 128 characters)",
        )
    return cell_id


def argument_cell_id(text: str, option: str = "--cell-id") -> str:
    """A cell id the user typed: the same rule, a usage error (exit 2), not a bad input file."""
    try:
        return valid_cell_id(text)
    except InputError as err:
        raise UsageError(f"{option}: {err}") from None


def default_cell_id(
    backend: str, torch: str | None = None, variant: str | None = None, python: str | None = None
) -> str:
    """<backend>[-<torch build>][-<python tag>][-<variant>]-<host>: two torch builds (or two Pythons) of a
    backend on one runner are two columns; a rerun of the same build replaces its column. `torch` is
    already a label (see execute.torch_label), e.g. 2.13.0 or 2.14.0.dev20261130; `python` the tag
    harness/interpreters.py's id rule gives (cp315; None for the default image's Python)."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
    parts = [backend, *(re.sub(r"[^A-Za-z0-9._-]", "-", p) for p in (torch, python, variant) if p), host]
    return "-".join(parts)[:128]


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def github_context(env: dict[str, str] | None = None) -> GithubRun | None:
    """The GitHub Actions run this cell belongs to, when in Actions."""
    env = dict(os.environ) if env is None else env
    if env.get("GITHUB_ACTIONS") != "true":
        return None
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repo = env.get("GITHUB_REPOSITORY", "")
    run_id = env.get("GITHUB_RUN_ID", "")
    return GithubRun(
        run_url=f"{server}/{repo}/actions/runs/{run_id}" if repo and run_id else None,
        run_id=run_id or None,
        run_attempt=int(env.get("GITHUB_RUN_ATTEMPT", "1") or 1),
        job=env.get("GITHUB_JOB"),
        workflow=env.get("GITHUB_WORKFLOW"),
        sha=env.get("GITHUB_SHA"),
        ref=env.get("GITHUB_REF"),
        runner_name=env.get("GITHUB_RUNNER_NAME") or env.get("RUNNER_NAME"),
    )


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Drop variables whose names look like credentials."""
    return {k: v for k, v in env.items() if not SECRET_NAME_RE.search(k)}


# -- the manifest as a type ------------------------------------------------------------------------
def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class ImageInfo:
    """The image a containerized cell ran in."""

    ref: str | None = None
    id: str | None = None
    digest: str | None = None  # repo@sha256:... once pushed or pulled, else the local image id
    backend: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "id": self.id,
            "digest": self.digest,
            "backend": self.backend,
            "labels": dict(self.labels),
        }

    @classmethod
    def from_json(cls, data: Any) -> ImageInfo | None:
        if not isinstance(data, Mapping):
            return None
        labels = _map(data.get("labels"))
        return cls(
            ref=_str(data.get("ref")),
            id=_str(data.get("id")),
            digest=_str(data.get("digest")),
            backend=_str(data.get("backend")),
            labels={str(k): str(v) for k, v in labels.items()},
        )


@dataclass(frozen=True, kw_only=True)
class RunnerInfo:
    host: str | None = None
    os: str | None = None
    cpus: int | None = None
    labels: tuple[str, ...] = ()
    imported_by: str | None = None  # the host that ran `harness import`

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"host": self.host, "os": self.os, "cpus": self.cpus, "labels": list(self.labels)}
        if self.imported_by:
            data["imported_by"] = self.imported_by
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunnerInfo:
        data = _map(data)
        cpus = data.get("cpus")
        return cls(
            host=_str(data.get("host")),
            os=_str(data.get("os")),
            cpus=cpus if isinstance(cpus, int) and not isinstance(cpus, bool) else None,
            labels=_strs(data.get("labels")),
            imported_by=_str(data.get("imported_by")),
        )


@dataclass(frozen=True, kw_only=True)
class GithubRun:
    run_url: str | None = None
    run_id: str | None = None
    run_attempt: int = 1
    job: str | None = None
    workflow: str | None = None
    sha: str | None = None
    ref: str | None = None
    runner_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _GITHUB_FIELDS}

    @classmethod
    def from_json(cls, data: Any) -> GithubRun | None:
        if not isinstance(data, Mapping):
            return None
        attempt = data.get("run_attempt")
        values = {name: _str(data.get(name)) for name in _GITHUB_FIELDS if name != "run_attempt"}
        return cls(run_attempt=attempt if isinstance(attempt, int) and attempt >= 1 else 1, **values)


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """What the run was asked to do (the rerun command repeats it)."""

    workers: int | str = "auto"
    test_timeout: float | None = None
    cell_timeout: float | None = None
    pytest_args: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    # The suites folder and features file as given, when not the defaults (suites/, its features.toml):
    # a rerun from the same checkout names them too.
    suites: str | None = None
    features: str | None = None
    python: str | None = None  # the CPython it was planned for (--python 3.15), which the cell had to prove

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "workers": self.workers,
            "test_timeout": self.test_timeout,
            "cell_timeout": self.cell_timeout,
            "pytest_args": list(self.pytest_args),
            "tests": list(self.tests),
        }
        if self.command:
            data["command"] = list(self.command)
        for name in ("suites", "features", "python"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunRequest | None:
        if not isinstance(data, Mapping):
            return None
        workers = data.get("workers", "auto")
        timeouts = {
            k: data.get(k) if isinstance(data.get(k), int | float) else None for k in ("test_timeout", "cell_timeout")
        }
        return cls(
            workers=workers if isinstance(workers, int | str) else "auto",
            pytest_args=_strs(data.get("pytest_args")),
            tests=_strs(data.get("tests")),
            command=_strs(data.get("command")),
            suites=data["suites"] if isinstance(data.get("suites"), str) else None,
            features=data["features"] if isinstance(data.get("features"), str) else None,
            python=data["python"] if isinstance(data.get("python"), str) else None,
            **timeouts,
        )


@dataclass(frozen=True, kw_only=True)
class Selection:
    """What a partial run selected: some tests (`--test`), a -k or -m expression, some suite folders.
    A run without one is complete; the merge lays a partial run's results over the newest complete
    run of its cell id (docs/cell-contract.md)."""

    tests: tuple[str, ...] = ()
    keyword: str | None = None  # pytest -k
    markexpr: str | None = None  # pytest -m
    paths: tuple[str, ...] = ()  # suite folders or files named on the command line

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tests": list(self.tests), "keyword": self.keyword, "markexpr": self.markexpr}
        data["paths"] = list(self.paths)
        return {k: v for k, v in data.items() if v}

    @classmethod
    def from_json(cls, data: Any) -> Selection | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            tests=_strs(data.get("tests")),
            keyword=_str(data.get("keyword")),
            markexpr=_str(data.get("markexpr")),
            paths=_strs(data.get("paths")),
        )

    @classmethod
    def of(cls, tests: Sequence[str], pytest_args: Sequence[str]) -> Selection | None:
        """The selection a run's --test ids and pytest arguments make (None: the whole suites)."""
        keyword = markexpr = None
        paths: list[str] = []
        args = list(pytest_args)
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-k", "-m") and i + 1 < len(args):
                if arg == "-k":
                    keyword = args[i + 1]
                else:
                    markexpr = args[i + 1]
                i += 2
                continue
            if arg.startswith("-k") and len(arg) > 2:
                keyword = arg[2:]
            elif arg.startswith("-m") and len(arg) > 2:
                markexpr = arg[2:]
            elif not arg.startswith("-") and not (i and args[i - 1].startswith("--") and "=" not in args[i - 1]):
                paths.append(arg)  # not the value of a long option (`--maxfail 1`)
            i += 1
        if not (tests or keyword or markexpr or paths):
            return None
        return cls(tests=tuple(tests), keyword=keyword, markexpr=markexpr, paths=tuple(paths))

    def describe(self) -> str:
        """'--test a::b, -k "cuda"': how the run chose its tests."""
        parts = [f"--test {t}" for t in self.tests[:3]]
        if len(self.tests) > 3:
            parts.append(f"and {len(self.tests) - 3} more tests")
        parts += [f"-k {self.keyword!r}"] if self.keyword else []
        parts += [f"-m {self.markexpr!r}"] if self.markexpr else []
        parts += list(self.paths)
        return ", ".join(parts)


@dataclass(frozen=True, kw_only=True)
class ExitInfo:
    """How the test process ended; `details` holds what a launcher adds (a container's name, OOM kill)."""

    code: int | None = None
    signal: str | None = None
    meaning: str = "not finished"
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "signal": self.signal, "meaning": self.meaning, **self.details}

    @classmethod
    def from_json(cls, data: Any) -> ExitInfo | None:
        if not isinstance(data, Mapping):
            return None
        code = data.get("code")
        return cls(
            code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            signal=_str(data.get("signal")),
            meaning=str(data.get("meaning") or "unknown"),
            details={k: v for k, v in data.items() if k not in ("code", "signal", "meaning")},
        )


@dataclass(frozen=True, kw_only=True)
class FeatureGroup:
    """A later claim about part of a feature: the tests whose node id matches `match` (* and ? are
    wildcards, everything else literal) arrived in `since`."""

    match: str
    since: str | None = None
    claim: str | None = None
    source: str | None = None
    python: tuple[str, ...] = ()  # the CPythons on which this part runs (3.15, 3.15t); empty: every one

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            n: v for n in ("match", "since", "claim", "source") if (v := getattr(self, n)) is not None
        }
        if self.python:
            data["python"] = list(self.python)
        return data

    @classmethod
    def from_json(cls, data: Any) -> FeatureGroup | None:
        data = _map(data)
        match = _str(data.get("match"))
        if match is None:
            return None
        return cls(
            match=match,
            since=_str(data.get("since")),
            claim=_str(data.get("claim")),
            source=_str(data.get("source")),
            python=_strs(data.get("python")),
        )


@dataclass(frozen=True, kw_only=True)
class FeatureInfo:
    """A feature row's metadata as the suites' features.toml (or a feature map) states it."""

    title: str | None = None
    since: str | None = None
    claim: str | None = None
    scope: str | None = None  # "host": shown, never scored
    source: str | None = None  # where the claim comes from (a release note or PR)
    apis: tuple[str, ...] = ()  # the public APIs its tests exercise, full dotted names
    devices: tuple[str, ...] = ()  # the device families whose builds have it (cuda, rocm, xpu...); empty: every one
    groups: tuple[FeatureGroup, ...] = ()  # later claims about parts of it
    python: tuple[str, ...] = ()  # the CPythons on which it exists (3.14t, 3.15t); empty: every one

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {n: v for n in _FEATURE_TEXT if (v := getattr(self, n)) is not None}
        if self.apis:
            data["apis"] = list(self.apis)
        if self.devices:
            data["devices"] = list(self.devices)
        if self.python:
            data["python"] = list(self.python)
        if self.groups:
            data["groups"] = [g.to_json() for g in self.groups]
        return data

    def stated_over(self, base: FeatureInfo) -> FeatureInfo:
        """`base` with each field this info states (a text that is set, a list that is not empty) in its
        place: a newer statement of a feature wins field by field, and keeps what it leaves unsaid."""
        said = {f.name: v for f in dataclasses.fields(self) if (v := getattr(self, f.name)) is not None and v != ()}
        return dataclasses.replace(base, **said)

    @classmethod
    def from_json(cls, data: Any) -> FeatureInfo:
        data = _map(data)
        groups = data.get("groups")
        found = (FeatureGroup.from_json(g) for g in groups) if isinstance(groups, list) else ()
        return cls(
            **{name: _str(data.get(name)) for name in _FEATURE_TEXT},
            apis=_strs(data.get("apis")),
            devices=_strs(data.get("devices")),
            groups=tuple(g for g in found if g is not None),
            python=_strs(data.get("python")),
        )


@dataclass(frozen=True, kw_only=True)
class ImportedFile:
    """One file `harness import` copied into the cell: where it came from, where it lies in the cell
    (gzipped, relative to the cell dir) and the sha256 of its content."""

    source: str
    file: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "file": self.file, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: Any) -> ImportedFile | None:
        """None for an entry that names no file in the cell (nothing to read back)."""
        data = _map(data)
        file = _str(data.get("file"))
        if file is None:
            return None
        return cls(source=_str(data.get("source")) or "", file=file, sha256=_str(data.get("sha256")) or "")


@dataclass(frozen=True, kw_only=True)
class ImportInfo:
    """What `harness import` copied into the cell, with each file's sha256."""

    files: tuple[ImportedFile, ...] = ()
    feature_map: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"files": [f.to_json() for f in self.files], "feature_map": self.feature_map}

    @classmethod
    def from_json(cls, data: Any) -> ImportInfo | None:
        if not isinstance(data, Mapping):
            return None
        files = data.get("files")
        found = (ImportedFile.from_json(f) for f in files) if isinstance(files, list) else ()
        return cls(files=tuple(f for f in found if f is not None), feature_map=_str(data.get("feature_map")))


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """manifest.json: a cell's identity, environment and how its run ended (docs/cell-contract.md)."""

    cell_id: str
    run_id: str
    backend: str
    mode: str | None = None  # native | container | import
    status: CellStatus | None = None
    manifest_version: int = MANIFEST_VERSION
    cell_format: int = CELL_FORMAT
    run_attempt: int = 1
    started_at: str | None = None
    finished_at: str | None = None
    harness_version: str | None = None
    suite_sha: str | None = None
    image: ImageInfo | None = None
    runner: RunnerInfo = field(default_factory=RunnerInfo)
    github: GithubRun | None = None
    run_url: str | None = None  # an imported cell's run, as stated
    environment: Probe | None = None
    planned: RunRequest | None = None
    features: Mapping[str, FeatureInfo] = field(default_factory=dict)
    exit: ExitInfo | None = None
    error: str | None = None
    variant: str | None = None  # cpu-only: a device build run on the CPU (a column of its own)
    variant_reason: str | None = None
    imported: ImportInfo | None = None
    channel: str | None = None  # release | test | nightly: where the cell's torch came from
    # A partial run's selection (some tests only); None: a complete run of the suites.
    selection: Selection | None = None

    @property
    def partial(self) -> bool:
        """A run of some tests only: the merge lays it over the newest complete run of its cell id."""
        return self.selection is not None

    @property
    def torch(self) -> str | None:
        return self.environment.torch_version if self.environment else None

    @property
    def completed(self) -> bool:
        return self.status is CellStatus.COMPLETED

    @property
    def never_ran(self) -> bool:
        """No test started: pytest refused the run or selected nothing. Cells written before the
        `not-started` status say it by pytest's exit code."""
        if self.status is CellStatus.NOT_STARTED:
            return True
        code = self.exit.code if self.exit else None
        refused = self.own_suites and code in PYTEST_REFUSED
        return refused and self.status in (CellStatus.COMPLETED, CellStatus.INFRA_ERROR)

    @property
    def own_suites(self) -> bool:
        """Run from this project's suites (natively or in a container), not imported."""
        return self.mode in ("native", "container")

    @property
    def url(self) -> str | None:
        return (self.github.run_url if self.github else None) or self.run_url

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "manifest_version": self.manifest_version,
            "cell_format": self.cell_format,
            "cell_id": self.cell_id,
            "run_id": self.run_id,
            "run_attempt": self.run_attempt,
            "backend": self.backend,
            "mode": self.mode,
            "status": self.status.value if self.status else None,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "harness_version": self.harness_version,
            "suite_sha": self.suite_sha,
            "image": self.image.to_json() if self.image else None,
            "runner": self.runner.to_json(),
            "github": self.github.to_json() if self.github else None,
            "environment": self.environment.to_json() if self.environment else None,
            "planned": self.planned.to_json() if self.planned else None,
            "features": {fid: info.to_json() for fid, info in self.features.items()},
            "exit": self.exit.to_json() if self.exit else None,
            "error": self.error,
        }
        if self.run_url:
            data["run_url"] = self.run_url
        if self.variant:
            data.update(variant=self.variant, variant_reason=self.variant_reason)
        if self.imported:
            data["import"] = self.imported.to_json()
        if self.channel:
            data["channel"] = self.channel
        if self.selection is not None:
            data["selection"] = self.selection.to_json()
        return data

    @classmethod
    def from_json(cls, data: Any, *, where: str = "manifest.json") -> Manifest:
        """Validate the identity (one clear InputError naming the file) and parse the rest leniently."""
        if not isinstance(data, Mapping):
            raise InputError(f"{where}: manifest must be a JSON object")
        for key in ("cell_id", "backend", "run_id"):
            if not isinstance(data.get(key), str) or not data.get(key):
                raise InputError(f"{where}: manifest lacks {key!r}")
        try:
            valid_cell_id(data["cell_id"])
        except InputError as err:
            raise InputError(f"{where}: {err}") from None
        cell_format = data.get("cell_format", 1)
        if isinstance(cell_format, bool) or cell_format not in CELL_FORMATS:
            raise InputError(
                f"{where}: cell format {cell_format!r} is not one this harness reads ({CELL_FORMATS})",
                hint="merge it with the harness version that wrote it, or a newer one",
            )
        status = data.get("status")
        status = status if isinstance(status, str) else None
        version = data.get("manifest_version")
        attempt = data.get("run_attempt")
        features = _map(data.get("features"))
        return cls(
            cell_id=data["cell_id"],
            run_id=data["run_id"],
            backend=data["backend"],
            mode=_str(data.get("mode")),
            status=CellStatus(status) if status in CellStatus._value2member_map_ else None,
            manifest_version=version
            if isinstance(version, int) and not isinstance(version, bool)
            else MANIFEST_VERSION,
            cell_format=int(cell_format),
            run_attempt=attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt >= 1 else 1,
            started_at=_str(data.get("started_at")),
            finished_at=_str(data.get("finished_at")),
            harness_version=_str(data.get("harness_version")),
            suite_sha=_str(data.get("suite_sha")),
            image=ImageInfo.from_json(data.get("image")),
            runner=RunnerInfo.from_json(data.get("runner")),
            github=GithubRun.from_json(data.get("github")),
            run_url=_str(data.get("run_url")),
            environment=Probe.from_json(data["environment"]) if isinstance(data.get("environment"), Mapping) else None,
            planned=RunRequest.from_json(data.get("planned")),
            features={
                str(fid): FeatureInfo.from_json(info) for fid, info in features.items() if isinstance(info, Mapping)
            },
            exit=ExitInfo.from_json(data.get("exit")),
            error=_str(data.get("error")),
            variant=_str(data.get("variant")),
            variant_reason=_str(data.get("variant_reason")),
            imported=ImportInfo.from_json(data.get("import")),
            channel=data["channel"] if data.get("channel") in ("release", "test", "nightly") else None,
            selection=_selection(data),
        )


def _selection(data: Mapping[str, Any]) -> Selection | None:
    """The manifest's selection; a manifest written before it was recorded says it in `planned`."""
    if "selection" in data:
        found = Selection.from_json(data["selection"])
        return found if found and (found.tests or found.keyword or found.markexpr or found.paths) else None
    planned = RunRequest.from_json(data.get("planned"))
    return Selection.of(planned.tests, planned.pytest_args) if planned else None


_GITHUB_FIELDS: Final = tuple(f.name for f in dataclasses.fields(GithubRun))
_FEATURE_TEXT: Final = tuple(
    f.name for f in dataclasses.fields(FeatureInfo) if f.name not in ("apis", "devices", "groups", "python")
)


@dataclass
class CellDir:
    """Paths of one cell directory."""

    path: Path

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST

    @property
    def junit(self) -> Path:
        return self.path / JUNIT

    @property
    def events(self) -> Path:
        return self.path / EVENTS

    @property
    def collected(self) -> Path:
        return self.path / COLLECTED

    @property
    def output_log(self) -> Path:
        return self.path / OUTPUT_LOG

    def read_manifest(self) -> Manifest:
        return read_manifest(self.manifest)

    def write_manifest(self, manifest: Manifest) -> None:
        """Atomically (temp file and rename): a reader never sees half a manifest."""
        data = jsonio.dumps_pretty(manifest.to_json()) + b"\n"
        jsonio.write_atomic(self.manifest, lambda handle: handle.write(data))


@contextlib.contextmanager
def building_cell(results_dir: Path, cell_id: str) -> Iterator[CellDir]:
    """A new cell dir, built in a hidden folder beside the results and renamed into place when the
    block ends: a failure inside it leaves nothing partial behind. Its name is
    `<cell id>-<UTC time>`, with `-2`, `-3`... when two runs or imports of one cell id start in the
    same second: both are kept, as separate runs (the merge keeps the latest). Hidden while it is
    built (`.<cell id>.<random>.building`): `harness merge` never reads a dir whose name starts with '.'."""
    valid_cell_id(cell_id)
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{cell_id}.", suffix=".building", dir=results_dir))
    except OSError as err:  # the results dir is a file, read-only, on a full disk...
        reason = err.strerror or str(err)
        message = f"cannot write {results_dir}: {reason}"  # the words of every writer's failure (outputs.py)
        raise WriteError(message, path=str(results_dir), reason=reason) from None
    os.chmod(building, 0o755)  # mkdtemp makes 0700; a cell is shared (artifacts, a container's user)
    cell = CellDir(building)
    try:
        yield cell
        cell.path = _rename_into_place(building, results_dir, cell_id)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _rename_into_place(building: Path, results_dir: Path, cell_id: str) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1, 1000):
        final = results_dir / (f"{cell_id}-{stamp}" if n == 1 else f"{cell_id}-{stamp}-{n}")
        try:
            os.rename(building, final)  # fails, never replaces, when `final` is a non-empty dir
            return final
        except OSError as err:
            if not final.exists():
                raise WriteError(f"cannot put the cell in place at {final}: {err.strerror}", path=str(final)) from None
    raise InputError(f"{results_dir}: 999 cells of {cell_id} in one second")


def canonical_files(cell: Path) -> list[str]:
    """The cell's canonical content, in its defined order: every file below the cell dir as a POSIX
    path relative to it, sorted by its UTF-8 bytes, except the statement (it signs the rest)
    and the `.harness-` files outputs.py leaves (its lock, a killed writer's temp file: never read).
    An entry that is not a regular file or a folder (a symbolic link, a FIFO) is an InputError: a
    signed cell holds files only."""
    found: list[str] = []
    pending = [Path(cell)]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as err:
            raise InputError(f"{folder}: cannot list: {err.strerror or err}") from None
        for entry in entries:
            rel = Path(entry.path).relative_to(cell).as_posix()
            if entry.name.startswith(".harness-") or rel == STATEMENT:
                continue
            if entry.is_symlink():
                raise InputError(f"{rel} is a symbolic link: a cell holds files only")
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.append(rel)
            else:
                raise InputError(f"{rel} is not a regular file: a cell holds files only")
    return sorted(found, key=lambda rel: rel.encode("utf-8", "surrogateescape"))


def read_manifest(path: Path) -> Manifest:
    """Read and validate a manifest; errors name the file and the fix."""
    try:
        raw = read_regular(path).decode("utf-8", "replace")  # a FIFO in its place is refused, never waited on
    except FileNotFoundError:
        raise InputError(f"{path.parent}: no manifest.json", hint="not a cell dir written by `harness run`") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from err
    return Manifest.from_json(data, where=str(path))


def new_manifest(
    *,
    cell_id: str,
    backend: str,
    mode: str,
    suite_sha: str | None,
    runner: RunnerInfo,
    planned: RunRequest | None,
    features: Mapping[str, FeatureInfo],
    image: ImageInfo | None = None,
) -> Manifest:
    """The manifest as written before tests start."""
    gh = github_context()
    return Manifest(
        cell_id=valid_cell_id(cell_id),
        run_id=new_run_id(),
        run_attempt=gh.run_attempt if gh else 1,
        backend=backend,
        mode=mode,
        status=CellStatus.RUNNING,
        started_at=utc_now(),
        harness_version=__version__,
        suite_sha=suite_sha,
        image=image,
        runner=runner,
        github=gh,
        planned=planned,
        features=dict(features),
    )
