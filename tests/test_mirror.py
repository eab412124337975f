"""The tests mirror the package: every module of `harness/` with logic has its own test module,
`tests/<place>/test_<module>.py` (place: `core` for the top-level modules, else its wing; a module
in a sub-package of a wing, like `publish/render/markdown.py`, belongs to the wing:
`tests/publish/test_markdown.py`). The verbs in `harness/commands/` are covered by `tests/cli/`.

The exceptions are listed below, each with its reason: modules without logic, and modules whose
tests need a real engine or tool and so live in a themed folder; for those the covering test
module is named and must exist. Read from the file tree only (fast tier).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[1]
HARNESS: Final = REPO / "harness"

# Modules without logic: no test module of their own. (`__init__.py` files are left out by rule,
# as long as they define no function or class: see `_defines_logic`.)
NO_LOGIC: Final[dict[str, str]] = {
    "__main__.py": "two lines: `python -m harness` calls cli.main (tests/cli runs it that way)",
    "outcomes.py": "the taxonomy: enums, symbol and meaning tables, GOOD/BAD sets; no function",
    "host/gpu_ids.py": "data tables (Intel PCI ids, NVIDIA names); host.py looks them up, tests/host/test_doctor.py",
    "publish/render/symbols.py": "two tables of text symbols (page and terminal); no function",
}

# Modules whose tests live elsewhere, by theme: module -> the test modules that cover it (each must exist).
COVERED_ELSEWHERE: Final[dict[str, tuple[str, ...]]] = {
    # The CLI is tested as users meet it (verbs, one-line errors, exit codes, the generated reference).
    "cli.py": ("tests/cli/test_cli.py",),
    # Need a real Docker engine: the slow `docker` folder.
    "images/oci_container.py": ("tests/docker/test_oci_container.py",),
    "images/image_build.py": ("tests/docker/test_images.py",),
    "run/container.py": ("tests/docker/test_container_run.py",),
    # Detects the host's GPUs and tools: tested with fake hosts (fake tools on PATH) beside its judge.
    "host/facts.py": ("tests/host/test_doctor.py",),
    # The pytest plugin runs inside pytest: its tests are real runs of sample suites (every outcome
    # it records, read back by ingest; the device pinning of its workers).
    "run/cellplugin/compat_cell_plugin.py": ("tests/ingest/test_cell_reader.py", "tests/run/test_execute.py"),
}

COMMANDS_COVERED_BY: Final = "tests/cli/test_cli.py"


def mirror_test(module: str) -> str:
    """`ingest/junit_stream.py` -> `tests/ingest/test_junit_stream.py`; `cell.py` -> `tests/core/test_cell.py`."""
    parts = Path(module).parts
    place = parts[0] if len(parts) > 1 else "core"
    return f"tests/{place}/test_{Path(module).stem}.py"


def _defines_logic(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for node in ast.walk(tree))


def untested_modules(
    harness: Path,
    repo: Path,
    no_logic: dict[str, str],
    covered_elsewhere: dict[str, tuple[str, ...]],
) -> list[str]:
    """One line per module that breaks the mirror rule (empty: the rule holds)."""
    problems = []
    for path in sorted(harness.rglob("*.py")):
        module = path.relative_to(harness).as_posix()
        if module.startswith("commands/"):
            continue  # the verbs: tests/cli
        if path.name == "__init__.py":
            if _defines_logic(path):
                problems.append(f"{module} defines functions or classes: move them to a module with a test")
            continue
        if module in no_logic:
            continue
        if module in covered_elsewhere:
            for cover in covered_elsewhere[module]:
                if not (repo / cover).is_file():
                    problems.append(f"{module}: its covering test {cover} (allow-list) does not exist")
            continue
        wanted = mirror_test(module)
        if not (repo / wanted).is_file():
            problems.append(f"{module} has no {wanted}")
    return problems


def test_every_module_with_logic_has_its_mirror_test() -> None:
    problems = untested_modules(HARNESS, REPO, NO_LOGIC, COVERED_ELSEWHERE)
    assert not problems, "modules without their test module:\n" + "\n".join(problems)


def test_the_allow_list_names_modules_that_exist() -> None:
    """A stale entry (a module renamed or removed) would silently excuse its successor."""
    listed = [*NO_LOGIC, *COVERED_ELSEWHERE]
    gone = [module for module in listed if not (HARNESS / module).is_file()]
    assert not gone, f"allow-list entries for modules that do not exist: {gone}"
    assert not set(NO_LOGIC) & set(COVERED_ELSEWHERE)


def test_modules_listed_without_logic_still_have_none() -> None:
    """outcomes.py is excused as tables only: a function added there needs tests/core/test_outcomes.py."""
    tree = ast.parse((HARNESS / "outcomes.py").read_text(encoding="utf-8"))
    functions = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert not functions, f"outcomes.py has logic now ({functions}): give it tests/core/test_outcomes.py"


def test_the_verbs_are_covered_by_the_cli_tests() -> None:
    assert any((HARNESS / "commands").glob("[!_]*.py"))
    assert (REPO / COMMANDS_COVERED_BY).is_file()


def test_mirror_paths() -> None:
    assert mirror_test("cell.py") == "tests/core/test_cell.py"
    assert mirror_test("ingest/junit_stream.py") == "tests/ingest/test_junit_stream.py"
    assert mirror_test("publish/render/mdtext.py") == "tests/publish/test_mdtext.py"
    assert mirror_test("run/cellplugin/compat_cell_plugin.py") == "tests/run/test_compat_cell_plugin.py"


def test_the_check_fails_for_a_made_up_module_without_tests(tmp_path: Path) -> None:
    """The rule itself can fail: a new module without a test, an allow-listed cover that is
    missing, and an `__init__.py` that grew logic are each reported, by name."""
    harness = tmp_path / "harness"
    for rel, body in {
        "__init__.py": '"""package"""\n',
        "tested.py": "def f():\n    return 1\n",
        "merge/__init__.py": "def sneaky():\n    return 2\n",
        "merge/made_up.py": "def g():\n    return 3\n",
        "run/themed.py": "def h():\n    return 4\n",
        "run/tables.py": "TABLE = {1: 2}\n",
        "commands/verb.py": "def run(args):\n    return 0\n",
    }.items():
        (harness / rel).parent.mkdir(parents=True, exist_ok=True)
        (harness / rel).write_text(body, encoding="utf-8")
    (tmp_path / "tests" / "core").mkdir(parents=True)
    (tmp_path / "tests" / "core" / "test_tested.py").write_text("", encoding="utf-8")

    problems = untested_modules(
        harness, tmp_path, {"run/tables.py": "data only"}, {"run/themed.py": ("tests/docker/test_themed.py",)}
    )
    assert problems == [
        "merge/__init__.py defines functions or classes: move them to a module with a test",
        "merge/made_up.py has no tests/merge/test_made_up.py",
        "run/themed.py: its covering test tests/docker/test_themed.py (allow-list) does not exist",
    ]
    (tmp_path / "tests" / "merge").mkdir()
    (tmp_path / "tests" / "merge" / "test_made_up.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "docker").mkdir()
    (tmp_path / "tests" / "docker" / "test_themed.py").write_text("", encoding="utf-8")
    (harness / "merge" / "__init__.py").write_text('"""the merge wing"""\n', encoding="utf-8")
    assert (
        untested_modules(harness, tmp_path, {"run/tables.py": ""}, {"run/themed.py": ("tests/docker/test_themed.py",)})
        == []
    )
