"""The house shows its wings: data flows one way, and the imports say so.

    core (harness/*.py)        the shared contracts: cell, model, plan, registry, torch_build, errors, jsonio, ...
    images/  host/             what a cell runs in (recipes, build, push, prune, wheelhouse, verification,
                               the engine) and what this machine is (GPUs, driver, doctor)
    run/                       the cell runner; the one wing that may use images/ and host/
    importer/                  writes a cell from another CI's JUnit: a producer beside run (reads it with ingest/)
    ingest/                    reads one cell (any format) into records; owns the one plain-pass rule
    merge/                     combines the records of many cells into the model (uses ingest/)
    github/                    the GitHub REST client, a run's artifacts polled as they arrive, the PR comment posted
    provenance/                who vouches for a cell: its signed statement, trust.toml, offline verification,
                               the submission archive (reads cells through the core's cell.py only)
    publish/                   reads the model; uses none of images/, host/, run/, ingest/, merge/
    commands/                  one thin module per verb, the only place that joins the wings; no verb imports
                               another verb (shared option helpers are `_`-prefixed modules), none imports cli
    cli.py                     parses and hands over: finds the verbs in commands/ and imports the one named

The run wing writes a cell dir (harness/cell.py, the first seam), the merge wing reads cell dirs
and builds the matrix model (harness/model.py, the second seam), the publish wing reads the
model. Read from the source (ast), so a new import that breaks the rule fails here, in the fast tier.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Final

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"
WINGS = ("images", "host", "run", "importer", "ingest", "merge", "publish", "github", "provenance")


def _module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _place(module: str) -> str:
    """core, a wing (images, host, run, merge, publish) or cli."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in WINGS:
        return parts[1]
    if len(parts) >= 2 and parts[1] == "commands":
        return "commands"
    if len(parts) >= 2 and parts[1] in ("cli", "__main__"):
        return "cli"
    return "core"


def _imports(path: Path) -> set[str]:
    """Every harness module a file imports (`from harness import x` counts as harness.x)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("harness"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness"):
            if node.level:
                continue
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _harness_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(HARNESS.rglob("*.py"))}


def _known_target(module: str, modules: dict[str, Path]) -> str | None:
    """The module an import names (a name imported from a module is not a module of its own)."""
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module or None


def arrows() -> list[tuple[str, str]]:
    modules = _harness_modules()
    out = []
    for name, path in modules.items():
        for imported in _imports(path):
            target = _known_target(imported, modules)
            if target and target != name and target != "harness":
                out.append((name, target))
    return out


ALLOWED = {
    "core": {"core"},
    "images": {"core", "images"},
    "host": {"core", "host"},
    "run": {"core", "images", "host", "run"},
    "importer": {"core", "ingest", "importer"},
    "ingest": {"core", "ingest"},
    "merge": {"core", "ingest", "merge"},
    "publish": {"core", "publish"},
    "github": {"core", "github"},
    "provenance": {"core", "provenance"},
    "commands": {"core", *WINGS, "commands"},
    # cli.py finds the verbs by listing harness/commands (pkgutil) and imports the one named; no verb
    # imports cli.py back (the cycle the two once had: _args took did_you_mean from it)
    "cli": {"core", "commands", "cli"},
}


def test_every_wing_is_a_folder_and_the_core_is_small() -> None:
    assert all((HARNESS / wing / "__init__.py").is_file() for wing in WINGS)
    core = sorted(p.name for p in HARNESS.glob("*.py"))
    # 17: issue 25 added the two file-integrity modules every wing uses (outputs: every write; regular_file:
    # reads that refuse a FIFO or device unopened). 18: issue 28 moved the CI plan (plan.py) here, written
    # by `harness plan` and read by merge and collect; 19: text_table, the one aligned-columns helper the
    # plan, doctor (host) and the verbs' tables share (there were four). Grow it only with a module every
    # wing needs.
    assert len(core) <= 19, f"the shared core grew to {len(core)} modules: {core}"


@pytest.mark.parametrize("place", list(ALLOWED))
def test_imports_flow_one_way(place: str) -> None:
    wrong = [
        f"{source} imports {target} ({_place(target)})"
        for source, target in arrows()
        if _place(source) == place and _place(target) not in ALLOWED[place]
    ]
    assert not wrong, "arrows against the flow:\n" + "\n".join(sorted(wrong))


def test_nothing_imports_the_cli() -> None:
    wrong = [f"{s} imports {t}" for s, t in arrows() if _place(t) == "cli" and _place(s) != "cli"]
    assert not wrong, wrong


def test_cli_and_commands_are_apart() -> None:
    """The rule sees the two places: a verb importing cli.py is an arrow back up."""
    assert _place("harness.commands.run") == "commands" and _place("harness.cli") == "cli"
    assert "cli" not in ALLOWED["commands"]


def _is_verb(module: str) -> bool:
    """A verb's module (harness.commands.plan); the `_`-prefixed helpers (_args, _output) are not verbs."""
    parts = module.split(".")
    return len(parts) == 3 and parts[1] == "commands" and not parts[2].startswith("_")


def test_no_verb_imports_another_verb() -> None:
    """What two verbs share lives in a wing, the core or a `_` helper: a verb is a thin layer."""
    wrong = [f"{s} imports {t}" for s, t in arrows() if _is_verb(s) and _is_verb(t)]
    assert not wrong, wrong


def test_the_rule_sees_an_arrow_against_the_flow(tmp_path: Path) -> None:
    """The check itself can fail: a merge module importing the publish wing is an arrow it reports."""
    module = tmp_path / "bad.py"
    module.write_text("from harness.publish.render.markdown import render_markdown\nfrom harness import model\n")
    assert _imports(module) == {
        "harness.publish.render.markdown",
        "harness.publish.render.markdown.render_markdown",
        "harness",
        "harness.model",
    }
    target = _known_target("harness.publish.render.markdown.render_markdown", _harness_modules())
    assert target == "harness.publish.render.markdown" and _place(target) not in ALLOWED["merge"]
    # run may use images and host; merge may not, and no verb may import another
    assert _place("harness.images.push") in ALLOWED["run"] and _place("harness.host.doctor") not in ALLOWED["merge"]
    assert _is_verb("harness.commands.merge") and not _is_verb("harness.commands._args")


def test_no_two_files_share_a_name() -> None:
    """One name, one file (the page's script is page.js, never a second `matrix`). The verbs in
    commands/ are named after the verb they run, by design, and are left out."""
    names = [
        p.name.split(".")[0]
        for p in HARNESS.rglob("*")
        if p.is_file() and p.name != "__init__.py" and "commands" not in p.parts and "__pycache__" not in p.parts
    ]
    repeated = [name for name, count in Counter(names).items() if count > 1]
    assert not repeated, repeated


# -- names that say what they hold --------------------------------------------------------------
def _stems(harness: Path) -> list[Path]:
    return [p for p in sorted(harness.rglob("*.py")) if p.name not in ("__init__.py", "__main__.py")]


def name_problems(harness: Path) -> list[str]:
    """A module named like its folder (`images/images.py`: the folder says nothing the module does not),
    two modules whose names differ only by underscores (`junit_read` beside `junitread`), a `*_reader`
    outside ingest/ or a `*_writer` in it, and an ingest module that writes a file."""
    problems = []
    by_bare: dict[str, set[str]] = {}
    for path in _stems(harness):
        module = path.relative_to(harness).as_posix()
        if path.stem == path.parent.name:
            problems.append(f"{module}: named like its folder")
        by_bare.setdefault(path.stem.replace("_", "").lower(), set()).add(path.stem)
        in_ingest = path.relative_to(harness).parts[0] == "ingest"
        if path.stem.endswith("_reader") and not in_ingest:
            problems.append(f"{module}: a reader outside ingest/")
        if path.stem.endswith("_writer") and in_ingest:
            problems.append(f"{module}: a writer in ingest/, the wing that reads")
        if in_ingest and (writes := _file_writes(path.read_text(encoding="utf-8"))):
            problems.append(f"{module}: ingest/ reads cells and writes nothing, but it calls {writes}")
    problems += [f"names that differ only by underscores: {sorted(n)}" for n in by_bare.values() if len(n) > 1]
    return problems


_WRITES: Final = {"write_text", "write_bytes", "write_file", "write_json", "write_atomic", "mkdir", "unlink"}


def _file_writes(source: str) -> list[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            mode = node.args[1] if name == "open" and len(node.args) > 1 else None
            if name in _WRITES or (isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+")):
                found.add(name)
    return sorted(found)


def test_modules_are_named_for_what_they_hold() -> None:
    assert not name_problems(HARNESS), name_problems(HARNESS)


def test_the_name_check_sees_each_kind_of_bad_name(tmp_path: Path) -> None:
    for rel, body in {
        "images/images.py": "",
        "merge/junitread.py": "",
        "merge/junit_read.py": "",
        "merge/eventlog_reader.py": "",
        "ingest/eventlog_writer.py": "",
        "ingest/cache.py": "def f(p):\n    p.write_text('x')\n    open(p, 'wb')\n",
        "ingest/fine.py": "def f(p):\n    return open(p, 'rb')\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    assert sorted(name_problems(tmp_path)) == sorted(
        [
            "images/images.py: named like its folder",
            "merge/eventlog_reader.py: a reader outside ingest/",
            "ingest/eventlog_writer.py: a writer in ingest/, the wing that reads",
            "ingest/cache.py: ingest/ reads cells and writes nothing, but it calls ['open', 'write_text']",
            "names that differ only by underscores: ['junit_read', 'junitread']",
        ]
    )


# -- the architecture page names every module -----------------------------------------------------
ARCHITECTURE = HARNESS.parent / "docs" / "architecture.md"
_BULLET_PLACES: Final = {"The core": "core", "The verbs": "commands", **{f"The {w} wing": w for w in WINGS}}
_MODULE_NAME = re.compile(r"`([\w/]+\.py)`")


def bullets(text: str) -> dict[str, str]:
    """docs/architecture.md's bullets by place: `- **The merge wing** ...` and its indented lines."""
    found: dict[str, str] = {}
    place = None
    for line in text.splitlines():
        head = re.match(r"- \*\*(.+?)\*\*", line)
        if head:
            place = _BULLET_PLACES.get(head.group(1))
            if place is not None:
                found[place] = line
        elif place is not None and line.startswith("  "):
            found[place] += "\n" + line
        else:
            place = None
    return found


def architecture_problems(harness: Path, text: str) -> list[str]:
    """Modules the page leaves out of their place's bullet, and names in a bullet that no module of that
    place has (a module renamed or removed, the page not told)."""
    by_place = bullets(text)
    problems = [f"no bullet for {p}" for p in sorted(set(_BULLET_PLACES.values()) - set(by_place))]
    names: dict[str, set[str]] = {}
    for path in _stems(harness):
        place = _place(_module_name(path))
        if place == "cli":
            if f"`{path.name}`" not in text and f"harness/{path.name}" not in text:
                problems.append(f"{path.relative_to(harness)} is not named in {ARCHITECTURE.name}")
            continue
        names.setdefault(place, set()).add(path.name)
        if f"{path.name}`" not in by_place.get(place, ""):
            problems.append(f"{path.relative_to(harness)} is not named in the {place} bullet of {ARCHITECTURE.name}")
    for place, bullet in by_place.items():
        for named in _MODULE_NAME.findall(bullet):
            if "/" in named and not named.startswith("cellplugin/"):
                continue  # a path elsewhere (tools/, tests/)
            if Path(named).name not in names.get(place, set()) | {"__init__.py", "__main__.py"}:
                problems.append(f"the {place} bullet names {named}, which is no module of it")
    return problems


def test_the_architecture_page_names_every_module_in_its_wing() -> None:
    problems = architecture_problems(HARNESS, ARCHITECTURE.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_page_check_sees_a_module_left_out_and_a_stale_name() -> None:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    left_out = page.replace("`rollup.py`", "the roll-up module")
    assert "merge/rollup.py is not named in the merge bullet of architecture.md" in architecture_problems(
        HARNESS, left_out
    )
    stale = page.replace("`recipes.py`", "`images.py`")
    problems = architecture_problems(HARNESS, stale)
    assert "the images bullet names images.py, which is no module of it" in problems
