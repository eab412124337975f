"""The suites' static contract, checked without torch (fast tier).

* every ``[features.<id>]`` has its folder of tests and every folder of tests its table;
* each row carries what the harness shows: ``title``, ``since``, ``claim``, a ``source`` URL (rows older
  than issue 19 excepted), optional ``sources`` and ``groups`` in the documented format;
* every name in a feature's ``apis`` appears (its last dotted component, as a word) in the sources of
  that feature's folder, so the list cannot claim what the suites do not exercise;
* no literal skip reason in the suites lacks its class tag;
* every known issue names a test file that exists;
* every feature carries support claims (``[[features.<id>.claims]]``) whose tests exist, and no ``except``
  clause of the suites turns an error into a skip (or, in a test, a ``return``), whatever it catches and under
  whatever alias it skips: an error becomes a skip only through ``_support/refusals.py``'s ``refused()``;
* every refusal of ``_support/refusals.py`` names its source, and the text the refuse drill raises matches it.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import tomllib

import pytest

from harness.model import DEVICE_FAMILIES
from tests.suites.support_modules import SUITES, load

FAST = True  # no torch, no suite run: stays in the fast tier (tests/suites/conftest.py)

FEATURES = tomllib.loads((SUITES / "features.toml").read_text(encoding="utf-8"))["features"]
NOT_FEATURES = {"_support", "expectations", "__pycache__"}
# Rows from before issue 19: their sources are named in suites/README.md, not in features.toml.
WITHOUT_SOURCE = {
    "graphs",
    "linalg",
    "export",
    "hub",
    "sparsity",
    "compile",
    "attention",
    "amp",
    "distributed",
    "quantization",
    "memory",
}
ROW_KEYS = {
    "title", "since", "devices", "python", "source", "sources", "claim", "apis", "notes", "scope", "groups", "claims",
    "unclaimed",
}  # fmt: skip
GROUP_KEYS = {"match", "since", "source", "claim"}
GROUP_OPTIONAL = {"python"}  # the CPythons a part runs on (3.15, 3.15t)
RELEASE = re.compile(r"\d+\.\d+")
TAG = re.compile(r"^\[(unsupported|hardware|dependency|known-issue)(?: ([^\]]+))?\]\s*")


SUPPORT_IMPORT = re.compile(r"^from _support(?:\.(\w+) import| import ([\w, ]+))", re.MULTILINE)


def _sources(feature: str) -> str:
    """The feature folder's sources and the ``_support`` modules they import (a test may exercise an API
    through its support module, e.g. amp's autocast check)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((SUITES / feature).rglob("*.py"))]
    modules = set()
    for text in texts:
        for one, several in SUPPORT_IMPORT.findall(text):
            modules.update([one] if one else [m.strip() for m in several.split(",")])
    texts += [(SUITES / "_support" / f"{m}.py").read_text(encoding="utf-8") for m in sorted(modules)]
    return "\n".join(texts)


def test_every_feature_has_its_folder_and_back() -> None:
    folders = {p.name for p in SUITES.iterdir() if p.is_dir() and p.name not in NOT_FEATURES}
    with_tests = {f for f in folders if any((SUITES / f).glob("test_*.py"))}
    assert set(FEATURES) == with_tests, f"tables without tests: {set(FEATURES) - with_tests}; " + (
        f"folders without a table: {with_tests - set(FEATURES)}"
    )
    testpaths = (SUITES / "pytest.ini").read_text(encoding="utf-8")
    missing = [f for f in FEATURES if not re.search(rf"\b{f}\b", testpaths)]
    assert not missing, f"features missing from pytest.ini testpaths: {missing}"


@pytest.mark.parametrize("feature", list(FEATURES))
def test_feature_row_fields(feature: str) -> None:
    row = FEATURES[feature]
    assert set(row) <= ROW_KEYS, f"{feature}: unknown keys {sorted(set(row) - ROW_KEYS)}"
    for key in ("title", "since", "claim"):
        assert isinstance(row.get(key), str) and row[key].strip(), f"{feature}: '{key}' must be a non-empty string"
    assert RELEASE.fullmatch(row["since"]), f"{feature}: since {row['since']!r} is not a release like '2.14'"
    if feature not in WITHOUT_SOURCE:
        assert isinstance(row.get("source"), str), f"{feature}: a row needs 'source', the URL of its claim"
    urls = ([row["source"]] if "source" in row else []) + list(row.get("sources", []))
    for url in urls:
        assert isinstance(url, str) and url.startswith("https://") and " " not in url, f"{feature}: bad URL {url!r}"
    assert "sources" not in row or "source" in row, f"{feature}: 'sources' needs 'source' as the main one"
    assert all(isinstance(a, str) and a.startswith("torch") for a in row.get("apis", [])), f"{feature}: apis"
    if "devices" in row:
        devices = row["devices"]
        assert isinstance(devices, list) and devices and set(devices) <= set(DEVICE_FAMILIES), (
            f"{feature}: devices {devices!r} must be a non-empty list of {DEVICE_FAMILIES}"
        )


@pytest.mark.parametrize("feature", [f for f in FEATURES if FEATURES[f].get("groups")])
def test_feature_groups(feature: str) -> None:
    groups = FEATURES[feature]["groups"]
    assert isinstance(groups, list), f"{feature}: groups must be [[features.{feature}.groups]] tables"
    files = [p.relative_to(SUITES).as_posix() for p in (SUITES / feature).glob("test_*.py")]
    for i, group in enumerate(groups, 1):
        where = f"{feature} group #{i}"
        assert GROUP_KEYS <= set(group) <= GROUP_KEYS | GROUP_OPTIONAL, (
            f"{where}: keys {sorted(group)}, want {sorted(GROUP_KEYS)}"
        )
        assert all(isinstance(group[k], str) and group[k].strip() for k in GROUP_KEYS), f"{where}: empty value"
        assert RELEASE.fullmatch(group["since"]), f"{where}: since {group['since']!r}"
        assert group["source"].startswith("https://"), f"{where}: source {group['source']!r}"
        path, sep, _ = group["match"].partition("::")
        assert sep and path.startswith(f"{feature}/"), f"{where}: match {group['match']!r} is not a node-id glob"
        assert any(fnmatch.fnmatchcase(f, path) for f in files), f"{where}: match {group['match']!r} names no file"


@pytest.mark.parametrize("feature", [f for f in FEATURES if FEATURES[f].get("apis")])
def test_apis_are_exercised(feature: str) -> None:
    text = _sources(feature)
    unused = [a for a in FEATURES[feature]["apis"] if not re.search(rf"\b{re.escape(a.rsplit('.', 1)[-1])}\b", text)]
    assert not unused, f"{feature}: apis not exercised by suites/{feature}/: {unused}"


def _literal_prefix(node: ast.expr) -> str | None:
    """The leading literal text of a string or f-string argument (None when not a literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        head = str(node.values[0].value)
        if head == "[" and len(node.values) > 1 and isinstance(node.values[1], ast.FormattedValue):
            return "[unsupported] (a tag computed by requires.skip, which checks it)"
        return head
    return None


def _skip_reasons(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in ("pytest.skip", "skip") and node.args:
            arg = node.args[0]
        elif name in ("pytest.mark.skipif", "pytest.importorskip"):
            never = node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False
            arg = None if never else next((k.value for k in node.keywords if k.arg == "reason"), None)
        else:
            continue
        text = _literal_prefix(arg) if arg is not None else None
        if text is not None:
            found.append((node.lineno, text))
    return found


def test_literal_skip_reasons_carry_a_class_tag() -> None:
    untagged = []
    for path in sorted(SUITES.rglob("*.py")):
        for line, text in _skip_reasons(ast.parse(path.read_text(encoding="utf-8"))):
            if not TAG.match(text):
                untagged.append(f"{path.relative_to(SUITES)}:{line}: {text[:80]!r}")
    assert not untagged, "skip reasons without a class tag:\n" + "\n".join(untagged)


def test_known_issues_name_existing_tests() -> None:
    expectations = load("expectations")
    files = [p.relative_to(SUITES).as_posix() for p in SUITES.rglob("test_*.py")]
    issues = expectations.load(SUITES / "expectations")
    assert issues, "no known issue parsed"
    for issue in issues:
        path = issue.test.partition("::")[0]
        assert any(fnmatch.fnmatchcase(f, path) for f in files), f"{issue.test}: no such test file"


CLAIMS = load("claims")
SKIPS = {"skip", "pytest.skip", "skip_unsupported", "skip_hardware", "skip_dependency", "need", "pytest.importorskip"}


@pytest.mark.parametrize("feature", list(FEATURES))
def test_every_feature_claims_where_it_works(feature: str) -> None:
    claims = [c for c in CLAIMS.load(SUITES / "features.toml") if c.feature == feature]
    assert claims, f"{feature}: no [[features.{feature}.claims]]: where does upstream say it works?"
    files = [p.relative_to(SUITES).as_posix() for p in (SUITES / feature).glob("test_*.py")]
    for claim in claims:
        assert all(op.startswith("torch") for op in claim.ops), f"{feature}: ops {claim.ops}"
        for glob in claim.tests:
            path, sep, name = glob.partition("::")
            matched = [f for f in files if fnmatch.fnmatchcase(f, path)]
            assert sep and matched, f"{feature}: tests {glob!r} names no file"
            function = name.partition("[")[0]
            defined = "\n".join((SUITES / f).read_text(encoding="utf-8") for f in matched)
            assert any(
                fnmatch.fnmatchcase(d, function) for d in re.findall(r"^def (test_\w+)", defined, re.MULTILINE)
            ), f"{feature}: tests {glob!r} names no test function"


def claim_sources(claim: object) -> str:
    """The sources of the tests a claim covers (their files; the feature's non-test modules, such as a rank
    program; the _support modules they import)."""
    folder = SUITES / claim.feature  # type: ignore[attr-defined]
    files = [p for p in folder.rglob("*.py") if not p.name.startswith("test_")]
    globs = [g.partition("::")[0] for g in claim.tests] or [f"{claim.feature}/*"]  # type: ignore[attr-defined]
    files += [p for p in folder.rglob("test_*.py") if any(fnmatch.fnmatchcase(p.relative_to(SUITES).as_posix(), g)
                                                            for g in globs)]  # fmt: skip
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    for one, several in SUPPORT_IMPORT.findall(text):
        for module in [one] if one else [m.strip() for m in several.split(",")]:
            path = SUITES / "_support" / f"{module}.py"
            text += path.read_text(encoding="utf-8") if path.exists() else ""
    return text


def unused_claim_ops(claims: list) -> list[str]:
    found = []
    for claim in claims:
        text = claim_sources(claim)
        for op in claim.ops:
            last = op.partition(":")[0].rsplit(".", 1)[-1]
            if not re.search(rf"\b{re.escape(last)}\b", text):
                found.append(f"[[features.{claim.feature}.claims]] names {op}, which no test it covers uses")
    return found


def test_every_claimed_op_is_used_by_a_test_it_covers() -> None:
    """A claim names what its tests exercise: an op no covered test calls would be watched and drilled for nothing."""
    found = unused_claim_ops(list(CLAIMS.load(SUITES / "features.toml")))
    assert not found, "\n".join(found)


def test_an_unused_claimed_op_is_named_in_one_line() -> None:
    bad = CLAIMS._claim("linalg", 1, {"family": "cpu", "since": "2.1", "source": "https://x",
                                      "ops": ["torch.linalg.eigh", "torch.linalg.never_called_anywhere"]})  # fmt: skip
    assert unused_claim_ops([bad]) == [
        "[[features.linalg.claims]] names torch.linalg.never_called_anywhere, which no test it covers uses"
    ]


def test_claims_are_validated() -> None:
    """A malformed claim is a clear error naming the feature and the claim, not a silent 'unclaimed'."""
    for bad, says in [
        ({"family": "tpu", "since": "2.1", "source": "https://x", "ops": ["torch.x"]}, "family"),
        ({"family": "cpu", "since": "2.1", "source": "http://x", "ops": ["torch.x"]}, "source"),
        ({"family": "cpu", "since": "2.1", "source": "https://x", "ops": []}, "ops"),
        ({"family": "cpu", "since": "2.1", "source": "https://x", "ops": ["torch.x"], "arch": "gfx9"}, "unknown"),
        ({"family": "cuda", "since": "2.1", "source": "https://x", "ops": ["torch.x"], "min_capability": 8}, "8.0"),
    ]:
        with pytest.raises(CLAIMS.ClaimsError, match=says):
            CLAIMS._claim("linalg", 1, bad)


def test_claims_cover_the_devices_they_name() -> None:
    claim = CLAIMS._claim(
        "f", 1, {"family": "cuda", "since": "2.14", "source": "https://x", "ops": ["torch.x"], "min_capability": "10.0",
                 "max_capability": "10.3"},
    )  # fmt: skip
    device = CLAIMS.Device
    assert claim.covers_device(device("cuda", (10, 0), None, "", variant="cu130", torch=(2, 14, 1)))
    assert not claim.covers_device(device("cuda", (12, 0), None, "", variant="cu130", torch=(2, 14, 1))), "sm_120"
    assert not claim.covers_device(device("cuda", (10, 0), None, "", variant="cu130", torch=(2, 13, 0))), "2.13"
    assert not claim.covers_device(device("rocm", None, "gfx950", "", variant="rocm7.2", torch=(2, 15))), "family"
    x86 = CLAIMS._claim(
        "quantization", 2, {"family": "cpu", "since": "2.0", "source": "https://x", "ops": ["torch.x"],
                            "machines": ["x86_64", "AMD64"]},
    )  # fmt: skip
    assert x86.covers_device(device("cpu", None, None, "", torch=(2, 15), machine="x86_64"))
    assert not x86.covers_device(device("cpu", None, None, "", torch=(2, 15), machine="aarch64")), "an Arm host"
    assert x86.covers_device(device("cpu", None, None, "", torch=(2, 15))), "a prediction names no machine"
    assert x86.label.startswith("cpu x86_64/AMD64 since 2.0")


def skip_names(tree: ast.AST) -> set[str]:
    """The names a module skips by: the suites' skip functions, ``pytest.importorskip``, and every alias of them
    (``from _support.requires import skip_unsupported as su``, ``give_up = pytest.skip``)."""
    names = set(SKIPS)
    short = {name.rsplit(".", 1)[-1] for name in SKIPS}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname and a.name in short)
    changed = True
    while changed:  # an alias of an alias
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and ast.unparse(node.value) in names:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        changed = True
    return names


def handler_escapes(handler: ast.ExceptHandler, skips: set[str], returns: bool) -> str | None:
    """What a handler does instead of failing: a skip (any call of ``skips``) or, in a test, a ``return``.
    Whatever it catches: an error becomes a skip only through ``_support.refusals.refused()``."""
    for node in (n for stmt in handler.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in skips:
            return f"skips ({ast.unparse(node.func)})"
        if returns and isinstance(node, ast.Return):
            return "returns"
    return None


def escaping_handlers() -> list[str]:
    found = []
    for path in sorted(SUITES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_test = path.parent.name not in NOT_FEATURES and path.name != "conftest.py"
        skips = skip_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                escape = handler_escapes(node, skips, returns=in_test)
                if escape:
                    caught = "(bare)" if node.type is None else ast.unparse(node.type)
                    found.append(f"{path.relative_to(SUITES)}:{node.lineno}: except {caught} {escape}")
    return found


def test_no_except_turns_into_a_skip_or_a_return() -> None:
    found = escaping_handlers()
    assert not found, "an except clause may only re-raise or hand the error to _support.refusals.refused():\n" + (
        "\n".join(found)
    )


def test_refusals_name_their_source_and_match_their_example() -> None:
    import sys

    sys.path.insert(0, str(SUITES))  # refusals.py imports its siblings as _support.*; none of them imports torch
    try:
        from _support import refusals
    finally:
        sys.path.remove(str(SUITES))
    for entry in refusals.REFUSALS:
        assert entry.source and entry.families and entry.errors, entry
        assert not entry.example or re.search(entry.text, entry.example), f"{entry.op}: example does not match"
        assert "not supported|unsupported" not in entry.text, f"{entry.op}: a broad pattern"


def test_the_except_check_sees_every_way_out() -> None:
    def escape(code: str, returns: bool = True) -> str | None:
        tree = ast.parse(code)
        handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
        return handler_escapes(handler, skip_names(tree), returns)

    assert escape("try:\n    f()\nexcept Exception as e:\n    skip_unsupported(str(e))\n")
    assert escape("try:\n    f()\nexcept NotImplementedError:\n    skip_unsupported('x')\n"), "a narrow class too"
    assert escape("try:\n    f()\nexcept (TypeError, ValueError):\n    pytest.skip('x')\n")
    assert escape("try:\n    f()\nexcept Exception:\n    return\n"), "a return"
    assert not escape("try:\n    f()\nexcept Exception:\n    return\n", returns=False), "infrastructure may return"
    aliased = (
        "from _support.requires import skip_hardware as hw\ngive_up = hw\n"
        "try:\n    f()\nexcept OSError:\n    give_up('x')\n"
    )
    assert escape(aliased) == "skips (give_up)"
    assert escape("import pytest\ntry:\n    f()\nexcept ImportError:\n    pytest.importorskip('x')\n")
    assert escape("try:\n    f()\nexcept KeyError as e:\n    if 'privileges' in str(e):\n        skip_hardware('x')\n")
    assert not escape("try:\n    f()\nexcept KeyError as e:\n    refused('op', e, 'where')\n")


def _support_module(name: str):
    import importlib
    import sys

    sys.path.insert(0, str(SUITES))  # the support modules import their siblings as _support.*; none imports torch
    try:
        return importlib.import_module(f"_support.{name}")
    finally:
        sys.path.remove(str(SUITES))


def test_every_claimed_op_has_a_kind_that_holds_it_to_its_work() -> None:
    """eager ops are watched on the device, graph APIs count graphs, compile APIs hand back compiled code, classes
    and info APIs are judged by their values: an op no table names would be held to nothing."""
    ondevice = _support_module("ondevice")
    found = [
        f"[[features.{c.feature}.claims]] names {op}, which suites/_support/ondevice.py's tables do not place"
        for c in CLAIMS.load(SUITES / "features.toml")
        for op in c.ops
        if ondevice.kind(op) is None
    ]
    assert not found, "\n".join(found)
    assert set(ondevice.DRILLS_BY_KIND) == {"eager", "graph", "compile", "class", "info"}
    assert ondevice.kind("torch.linalg.eigh") == "eager" and ondevice.kind("torch.nowhere.thing") is None
