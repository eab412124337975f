"""Per-backend known issues: ``expectations/<backend>.toml``.

Format::

    [[known_issue]]
    test = "linalg/test_eigh.py::test_eigh_repeated_calls_stable[complex64-batched]"  # node id, fnmatch allowed
    link = "https://github.com/pytorch/pytorch/issues/192483"
    reason = "batched complex64 eigh returns non-unitary Q from the 3rd call"

conftest applies every matching entry as a non-strict xfail whose reason starts with
``[known-issue <link>]``, so an unexpected pass shows up as XPASS.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

ALLOWED_KEYS = {"test", "link", "reason"}


class ExpectationsError(Exception):
    """A malformed expectations file; the message names the file."""


@dataclass(frozen=True)
class KnownIssue:
    test: str
    link: str
    reason: str

    def matches(self, node_id: str) -> bool:
        return node_id == self.test or fnmatch.fnmatchcase(node_id, self.test)

    @property
    def xfail_reason(self) -> str:
        return f"[known-issue {self.link}] {self.reason}"


def parse(path: Path) -> list[KnownIssue]:
    """Parse and validate one file; raise :class:`ExpectationsError` naming it on any problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ExpectationsError(f"{path}: cannot parse expectations file: {e}") from e
    extra = set(data) - {"known_issue"}
    if extra:
        raise ExpectationsError(f"{path}: unknown top-level key(s) {sorted(extra)}; only [[known_issue]] is allowed")
    entries = data.get("known_issue", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{path}: 'known_issue' must be an array of tables ([[known_issue]])")
    issues: list[KnownIssue] = []
    for i, entry in enumerate(entries, 1):
        where = f"{path}: [[known_issue]] #{i}"
        if not isinstance(entry, dict):
            raise ExpectationsError(f"{where}: must be a table")
        unknown = set(entry) - ALLOWED_KEYS
        if unknown:
            raise ExpectationsError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(ALLOWED_KEYS)}")
        for key in sorted(ALLOWED_KEYS):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ExpectationsError(f"{where}: '{key}' must be a non-empty string")
        if not entry["link"].startswith("https://"):
            raise ExpectationsError(f"{where}: 'link' must be an https:// URL, got {entry['link']!r}")
        if any(c in entry["link"] for c in " ]"):
            raise ExpectationsError(f"{where}: 'link' must not contain spaces or ']'")
        if "::" not in entry["test"]:
            raise ExpectationsError(f"{where}: 'test' must be a node id like 'linalg/test_eigh.py::test_x[...]'")
        issues.append(KnownIssue(entry["test"], entry["link"], entry["reason"].strip()))
    return issues


def load(directory: Path, backend: str) -> list[KnownIssue]:
    """Known issues for ``backend``; a backend without a file has none."""
    path = directory / f"{backend}.toml"
    if not path.exists():
        return []
    return parse(path)


def match(issues: list[KnownIssue], node_id: str) -> list[KnownIssue]:
    return [k for k in issues if k.matches(node_id)]
