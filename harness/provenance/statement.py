"""A cell's statement: an in-toto Statement v1 (https://in-toto.io/Statement/v1) whose one subject
is the digest of the cell's canonical content, with a predicate that says what ran.

The canonical content is the cell's files in the order `cell.canonical_files` defines; its digest is
the SHA-256 of its listing, one line per file, `<sha256 of the file>  <path>\\n` (what `sha256sum`
prints, in that order). The predicate lists each file's digest too, so a cell that no longer
matches is told what changed: a file, a file added or removed, the manifest's build or suites.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.cell import MANIFEST, Manifest, canonical_files
from harness.errors import InputError
from harness.regular_file import open_regular

STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE: Final = "https://github.com/torch-compat/torch-compat/blob/main/docs/provenance.md#cell-run-v1"
SUBJECT_PREFIX: Final = "cell:"
_COMMIT_RE: Final = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True)
class CellContent:
    """The canonical content of a cell: (path, sha256 hex) per file, in order."""

    files: tuple[tuple[str, str], ...]

    @property
    def listing(self) -> bytes:
        return "".join(f"{digest}  {path}\n" for path, digest in self.files).encode("utf-8", "surrogateescape")

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.listing).hexdigest()


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:  # a FIFO swapped in is refused, never waited on
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def cell_content(cell: Path) -> CellContent:
    """Hash every file of the canonical content (an InputError when one cannot be read)."""
    files = []
    for rel in canonical_files(cell):
        try:
            files.append((rel, file_digest(cell / rel)))
        except OSError as err:
            raise InputError(f"{rel}: cannot read: {err.strerror or err}") from None
    return CellContent(tuple(files))


def suites_tree_digest(folder: Path) -> str:
    """The suites' tree as content: the SHA-256 of the sha256sum-style listing of its files (Python
    caches left out), so two checkouts of the same suites give the same digest with or without git."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        lines.append(f"{file_digest(path)}  {path.relative_to(folder).as_posix()}\n")
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _drop_none(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def predicate(
    manifest: Manifest, content: CellContent, *, suites_tree: str | None = None, run_url: str | None = None
) -> dict[str, Any]:
    """What ran, from the manifest and the probe it holds, and the files it left."""
    env = manifest.environment
    raw = env.to_json() if env else {}
    suite_sha = manifest.suite_sha or ""
    commit = _COMMIT_RE.match(suite_sha)
    image = manifest.image
    return {
        "cell": _drop_none(
            {
                "id": manifest.cell_id,
                "run_id": manifest.run_id,
                "run_attempt": manifest.run_attempt,
                "backend": manifest.backend,
                "mode": manifest.mode,
                "status": manifest.status.value if manifest.status else None,
                "variant": manifest.variant,
                "cell_format": manifest.cell_format,
            }
        ),
        "suites": _drop_none(
            {
                "sha": manifest.suite_sha,
                "commit": commit.group(0) if commit else None,
                "dirty": suite_sha.endswith("+dirty") or None,
                "tree": suites_tree,
            }
        ),
        "harness_version": manifest.harness_version,
        "image": _drop_none({"ref": image.ref, "digest": image.digest or image.id}) if image else "native",
        "torch": _drop_none(
            {
                "version": env.torch_version if env else None,
                "git_version": env.torch_git if env else None,
                "build": env.build if env else None,
                "variant": env.variant if env else None,
            }
        ),
        "device": {k: raw[k] for k in ("accelerator", "devices", "driver", "runtime") if k in raw},
        "runner": _drop_none(
            {"host": manifest.runner.host, "os": manifest.runner.os, "labels": list(manifest.runner.labels)}
        ),
        "run_url": run_url or manifest.url,
        "files": dict(content.files),
    }


def make_statement(
    manifest: Manifest, content: CellContent, *, suites_tree: str | None = None, run_url: str | None = None
) -> bytes:
    """The statement's bytes (JSON, keys sorted, compact: the same cell gives the same bytes)."""
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": f"{SUBJECT_PREFIX}{manifest.cell_id}/{manifest.run_id}", "digest": {"sha256": content.digest}}
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(manifest, content, suites_tree=suites_tree, run_url=run_url),
    }
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class Statement:
    """A statement as read back: its subjects' sha256 digests, its predicate type and predicate."""

    subjects: tuple[tuple[str, str], ...]  # (name, sha256 hex)
    predicate_type: str
    predicate: Mapping[str, Any]

    @property
    def files(self) -> Mapping[str, str]:
        files = self.predicate.get("files") if self.predicate_type == PREDICATE_TYPE else None
        return {str(k): str(v) for k, v in files.items()} if isinstance(files, Mapping) else {}

    @property
    def run_url(self) -> str | None:
        url = self.predicate.get("run_url")
        return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None

    def covers(self, digest: str) -> bool:
        return any(d == digest for _, d in self.subjects)


def read_statement(payload: bytes, where: str) -> Statement:
    """An in-toto Statement v1 from a verified payload; one InputError line for anything else."""
    try:
        data = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{where}: the signed payload is not JSON ({getattr(err, 'msg', err)})") from None
    if not isinstance(data, Mapping) or data.get("_type") != STATEMENT_TYPE:
        raise InputError(f"{where}: the signed payload is not an in-toto Statement v1")
    subjects = []
    for item in data.get("subject") if isinstance(data.get("subject"), list) else ():
        digest = item.get("digest") if isinstance(item, Mapping) else None
        sha = digest.get("sha256") if isinstance(digest, Mapping) else None
        if isinstance(sha, str):
            subjects.append((str(item.get("name", "")), sha.lower()))
    if not subjects:
        raise InputError(f"{where}: the statement names no sha256 subject")
    predicate_type = data.get("predicateType")
    body = data.get("predicate")
    return Statement(
        subjects=tuple(subjects),
        predicate_type=predicate_type if isinstance(predicate_type, str) else "",
        predicate=body if isinstance(body, Mapping) else {},
    )


def what_changed(statement: Statement, content: CellContent, manifest: Manifest | None) -> str:
    """One line saying how the cell differs from what was signed (the files the predicate lists)."""
    signed = statement.files
    if not signed:
        other = statement.subjects[0][1][:12]
        return f"the statement is over other content (sha256 {other}…, this cell's is {content.digest[:12]}…)"
    now = dict(content.files)
    added = sorted(set(now) - set(signed))
    removed = sorted(set(signed) - set(now))
    changed = sorted(p for p in set(now) & set(signed) if now[p] != signed[p])
    parts = []
    if MANIFEST in changed and manifest is not None:
        fields = _manifest_fields_changed(statement.predicate, manifest)
        parts.append(f"manifest.json changed since it was signed{f' ({fields})' if fields else ''}")
        changed.remove(MANIFEST)
    if changed:
        parts.append(f"{_names(changed)} changed since {'it was' if len(changed) == 1 else 'they were'} signed")
    if added:
        parts.append(f"{_names(added)} added after signing")
    if removed:
        parts.append(f"{_names(removed)} removed after signing")
    return "; ".join(parts) or "the files match the statement's list but not its digest (an inconsistent statement)"


def _names(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _manifest_fields_changed(signed: Mapping[str, Any], manifest: Manifest) -> str:
    """The signed facts the manifest now states otherwise: its build, suites, image, identity."""
    now = predicate(manifest, CellContent(()))
    said = []
    facts = (("cell", ("id", "run_id", "backend", "status")), ("suites", ("sha",)), ("torch", ("version", "build")))
    for section, keys in facts:
        before, after = signed.get(section), now.get(section)
        if not isinstance(before, Mapping) or not isinstance(after, Mapping):
            continue
        for key in keys:
            if before.get(key) != after.get(key):
                said.append(f"{section}.{key} {before.get(key)!r} -> {after.get(key)!r}")
    if signed.get("image") != now.get("image"):
        said.append("image")
    return ", ".join(said)
