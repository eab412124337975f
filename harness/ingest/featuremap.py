"""The feature map: which matrix row a test of an imported JUnit file belongs to.

A TOML file of ordered rules, first match wins; a test that matches none goes to the one
`unassigned` row, never to a row invented from its id:

    [features.linalg]                # optional: the row's title, release and claim
    title = "Linear algebra"
    since = "2.12"

    [[rule]]
    match = "test/test_linalg.py::*"   # fnmatch glob on the test id (case-sensitive)
    feature = "linalg"

    [[rule]]
    match = ["*TestSparse*", "*sparse*"]
    feature = "sparsity"
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from fnmatch import translate
from pathlib import Path
from typing import Any, Final

from harness.errors import InputError
from harness.model import UNASSIGNED
from harness.regular_file import read_regular

_FEATURE_ID_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_META_KEYS: Final = ("title", "since", "claim")


@dataclass(frozen=True, slots=True)
class Rule:
    patterns: tuple[str, ...]
    feature: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class FeatureMap:
    rules: tuple[Rule, ...]
    features: dict[str, dict[str, str]]  # feature id -> title/since/claim, in the file's order
    source: str

    def feature_of(self, test_id: str) -> str:
        for rule in self.rules:
            if rule.regex.match(test_id):
                return rule.feature
        return UNASSIGNED

    def rule_of(self, test_id: str) -> int | None:
        """The index of the rule that takes the test (the first that matches), None: no rule."""
        for index, rule in enumerate(self.rules):
            if rule.regex.match(test_id):
                return index
        return None


def glob_problem(pattern: str) -> str | None:
    """What makes a glob unable to match as intended, read the way fnmatch reads it: a `[` that
    is never closed (fnmatch then matches a literal `[`; write `[[]` for that), or a range that is
    empty or reversed (`[z-a]` matches nothing)."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c != "[":
            continue
        j = i
        if j < n and pattern[j] == "!":
            j += 1
        if j < n and pattern[j] == "]":
            j += 1
        while j < n and pattern[j] != "]":
            j += 1
        if j >= n:
            return f"the '[' at position {i} is never closed (write '[[]' to match a literal '[')"
        chars = pattern[i:j]
        k = 1 if chars.startswith("!") else 0
        if k == len(chars):
            return f"the set '[{chars}]' at position {i} is empty"
        while k < len(chars):
            if k + 2 < len(chars) and chars[k + 1] == "-":
                low, high = chars[k], chars[k + 2]
                if low > high:
                    return f"the range '{low}-{high}' in '[{chars}]' is reversed: it matches nothing"
                k += 3
            else:
                k += 1
        i = j + 1
    return None


def _rule(index: int, entry: Any, path: Path) -> Rule:
    where = f"{path}: rule {index + 1}"
    if not isinstance(entry, dict) or set(entry) - {"match", "feature"}:
        raise InputError(f"{where}: a rule is a table with `match` and `feature` only")
    feature = entry.get("feature")
    if not isinstance(feature, str) or not _FEATURE_ID_RE.match(feature):
        raise InputError(f"{where}: feature {feature!r} is not an id (letters, digits, '.', '_', '-')")
    match = entry.get("match")
    patterns = (match,) if isinstance(match, str) else tuple(match) if isinstance(match, list) else ()
    if not patterns or not all(isinstance(p, str) and p for p in patterns):
        raise InputError(f"{where}: `match` must be a glob or a list of globs")
    for pattern in patterns:
        problem = glob_problem(pattern)
        if problem:
            raise InputError(f"{where}: invalid glob {pattern!r}: {problem}")
    regex = re.compile("|".join(f"(?:{translate(p)})" for p in patterns))
    return Rule(patterns=patterns, feature=feature, regex=regex)


def load_feature_map(path: Path) -> FeatureMap:
    """Read and check a feature map; every problem is one line naming the file and the rule."""
    try:
        raw = read_regular(Path(path))
    except FileNotFoundError:
        raise InputError(f"{path}: no such feature map") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None  # the path once (str(err) repeats it)
    return parse_feature_map(raw, path)


def parse_feature_map(raw: bytes, path: Path) -> FeatureMap:
    """A feature map from its bytes (`path` names it in messages)."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: cannot read: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{path}: invalid TOML: {err}") from None
    unknown = set(data) - {"rule", "features"}
    if unknown:
        raise InputError(f"{path}: unknown top-level keys {sorted(unknown)}; expected [[rule]] and [features.<id>]")
    entries = data.get("rule", [])
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path}: no [[rule]] entries", hint='add [[rule]] match = "glob" feature = "id"')
    rules = tuple(_rule(i, entry, path) for i, entry in enumerate(entries))
    meta: dict[str, dict[str, str]] = {}
    tables = data.get("features", {})
    if not isinstance(tables, dict):
        raise InputError(f"{path}: [features.<id>] must be tables")
    for fid, info in tables.items():
        if not _FEATURE_ID_RE.match(fid) or not isinstance(info, dict):
            raise InputError(f"{path}: [features.{fid}] is not a feature table")
        meta[fid] = {k: str(info[k]) for k in _META_KEYS if k in info}
    for rule in rules:
        meta.setdefault(rule.feature, {})
    return FeatureMap(rules=rules, features=meta, source=str(path))
