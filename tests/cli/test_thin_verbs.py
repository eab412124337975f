"""The verbs stay thin: each rule they use lives once, in its wing, and a second copy cannot creep back.

- the backend a verb names is resolved once (`_args.backend`, the `--backend` type) and handed on
  as a Backend: RunOptions refuses text, and no verb or run module turns a name into a Backend again;
- the merge's write sequence (the folder's lock, the sweep, the merge, matrix.json) is one function,
  merge/matrix_file.write_merged, that `harness merge` and `harness run` call: no verb takes a
  folder's lock itself, and no other module writes matrix.json whole;
- the registry's tables (and its JSON) are made by harness/registry.py: no verb reads the registry's
  records field by field;
- a verb that writes a cell is told what it wrote (the import returns its rows and each feature-map
  rule's tests): no verb reads a cell back itself.

Each rule is read from the source (ast), and each check is shown to see the copy it exists to refuse.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands import _args
from harness.registry import (
    Backend,
    Registry,
    Release,
    get_backend,
    load_registry,
    registry_json,
    variants_table,
)
from harness.run.execute import RunOptions

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def _calls(source: str, names: set[str]) -> list[ast.Call]:
    """The calls of `source` to a function or method named in `names`."""
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in names
    ]


def _modules(*folders: str) -> dict[str, str]:
    return {
        path.relative_to(HARNESS).as_posix(): path.read_text(encoding="utf-8")
        for folder in folders
        for path in sorted((HARNESS / folder).rglob("*.py"))
    }


# -- the backend, resolved once ------------------------------------------------------------------
def backend_resolutions(source: str) -> list[int]:
    """Where `source` turns a name it was handed into a Backend (a literal default, like the
    native run's `get_backend("cpu")`, is a choice, not a second resolution)."""
    return [
        call.lineno
        for call in _calls(source, {"get_backend"})
        if not all(isinstance(arg, ast.Constant) for arg in call.args)
    ]


def test_the_backend_is_resolved_once_by_the_verbs_option() -> None:
    registry = load_registry()
    assert _args.backend("cuda") == registry.default_variant("cuda")
    assert _args.backend("cu130") == registry.backend("cu130")
    for verb in ("run", "build", "wheelhouse"):
        args = build_parser(verb).parse_known_args([verb, "--backend", "rocm", "-o", "x"])[0]
        assert isinstance(args.backend, Backend) and args.backend == registry.default_variant("rocm"), verb
    with pytest.raises(TypeError, match="resolved once by the caller"):
        RunOptions(suites_dir=Path("suites"), backend="cpu")  # type: ignore[arg-type]
    assert RunOptions(suites_dir=Path("suites"), backend=get_backend("cpu")).backend == registry.backend("cpu")
    again = {
        module: lines
        for module, source in _modules("commands", "run").items()
        if module != "commands/_args.py" and (lines := backend_resolutions(source))
    }
    assert not again, f"a backend resolved again after the verb's option did it (pass the Backend on): {again}"


def test_the_resolution_check_sees_a_second_resolution() -> None:
    """RunOptions as it stood: the verb's option gave the id back as text, and RunOptions made it a Backend again."""
    before = """
def __post_init__(self) -> None:
    if isinstance(self.backend, str):
        object.__setattr__(self, "backend", get_backend(self.backend))
backend = opts.backend or get_backend("cpu")
"""
    assert backend_resolutions(before) == [4]


# -- the merge's write sequence, once ------------------------------------------------------------
def write_sequences(source: str) -> list[str]:
    """What in `source` writes a merge's outputs itself: a folder's lock or sweep, or matrix.json written whole."""
    return sorted({getattr(c.func, "attr", getattr(c.func, "id", "")) for c in _calls(source, _WRITE_STEPS)})


_WRITE_STEPS = {"locked", "sweep", "write_matrix"}


def test_the_merge_writes_through_one_function() -> None:
    verbs = _modules("commands")
    for verb in ("commands/merge.py", "commands/run.py"):
        assert _calls(verbs[verb], {"write_merged"}), f"{verb} does not write through merge/matrix_file.write_merged"
    merges_by_hand = {
        module: steps
        for module, source in verbs.items()
        if (steps := [s for s in write_sequences(source) if s != "sweep" or "write_matrix" in source])
    }
    assert not merges_by_hand, f"verbs that write a merge's outputs themselves (call write_merged): {merges_by_hand}"
    writers = [m for m, source in _modules(".").items() if "write_matrix" in write_sequences(source)]
    assert writers == ["merge/matrix_file.py"], writers


def test_the_sequence_check_sees_a_verb_writing_by_hand() -> None:
    """`harness run` as it stood: the merge's lock, sweep and write again, in the verb."""
    before = """
with outputs.locked(out_dir, what=f"{out_dir / 'matrix.json'}"):
    outputs.sweep(out_dir)
    matrix = merge_cell_dirs(cells)
    write_matrix(matrix, out_dir / "matrix.json")
"""
    assert write_sequences(before) == ["locked", "sweep", "write_matrix"]


# -- the registry's tables, the registry's -----------------------------------------------------
# What the registry's records hold, by name; `id`, `python` and `source` are names other objects share.
REGISTRY_FACTS = frozenset(f.name for cls in (Backend, Release, Registry) for f in dataclasses.fields(cls)) - {
    "id",
    "python",
    "source",
}


def registry_reads(source: str) -> set[str]:
    """The registry facts `source` reads (of anything but the verb's parsed arguments)."""
    return {
        node.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in REGISTRY_FACTS
        and not (isinstance(node.value, ast.Name) and node.value.id == "args")
    }


def test_no_verb_builds_the_registrys_tables() -> None:
    """Three facts of the registry's records read in one verb is a table of them made there again."""
    building = {m: sorted(r) for m, source in _modules("commands").items() if len(r := registry_reads(source)) >= 3}
    assert not building, f"verbs reading the registry's records themselves (harness/registry.py makes them): {building}"
    registry = load_registry()
    assert registry_reads("rows.append((b.id, b.display_name, b.wheel_index, b.min_driver, args.channel))") == {
        "display_name",
        "wheel_index",
        "min_driver",
    }, "the check sees the variants table as harness backends once made it"
    lines = variants_table(registry)
    assert lines[0].split()[:2] == ["ID", "NAME"] and len(lines) == len(registry.variants) + 1
    assert {"current", "variants", "releases"} <= registry_json(registry).keys()


# -- a cell written is not read back by its verb -----------------------------------------------------
CELL_READERS = {"ingest_cell", "read_cell", "decide_cell"}


def test_no_verb_reads_a_cell_back() -> None:
    readers = {
        m: sorted(CELL_READERS & names) for m, s in _modules("commands").items() if (names := _names(s)) & CELL_READERS
    }
    assert not readers, f"verbs reading cells themselves (the import returns its counts; merge reads cells): {readers}"
    before = "cell = done.cell if done.cell is not None else ingest_cell(done.cell_dir)\n"
    assert CELL_READERS & _names(before) == {"ingest_cell"}, "the check sees `harness import` as it stood"


def _names(source: str) -> set[str]:
    """Every name `source` calls or imports."""
    tree = ast.parse(source)
    called = {getattr(c.func, "id", getattr(c.func, "attr", "")) for c in ast.walk(tree) if isinstance(c, ast.Call)}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return called | imported
