"""Record a real wheel as a slim one: only what harness/images/wheel_api.py reads, small enough to commit.

    python3 tools/slim_wheel.py torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl tests/data/api-wheels/

Every `.py`/`.pyi` file the reader parses (the public modules and what they star-import) is kept,
reduced to its module-level statements: definitions become `def name(): ...` / `class Name: ...`,
assignments keep their targets (`__all__` keeps its value), imports from inside the package, `__all__`
extensions, `for n in dir(M)` loops and `del` stay as they are; statements under a module-level
`if`/`try`/`with` are kept in order. The other source files stay as empty files (their existence is
what tells a submodule from a name). Docstrings, bodies and everything else (the native
libraries) are dropped. The wheel's METADATA keeps its Version line. The slim wheel's public API, as
the reader sees it, is the same as the real wheel's: tests/images/test_wheel_api.py checks that on the
real wheels when they are present. The output is `<package>-<version>-py3-none-any.whl`; a
PROVENANCE.md beside it records the source wheel's name, size and sha256.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: the repo's harness
from harness.images.wheel_api import read_wheel_api

KEEP_CALLS = ("extend", "append")
PACKAGE = "torch"


def _inside(module: str | None) -> bool:
    """Imports from outside the package (typing, functools) name nothing the reader counts."""
    return module is not None and (module == PACKAGE or module.startswith(f"{PACKAGE}."))


def _slim_statement(node: ast.stmt) -> list[ast.stmt]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [ast.parse(f"def {node.name}(): ...").body[0]]
    if isinstance(node, ast.ClassDef):
        return [ast.parse(f"class {node.name}: ...").body[0]]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return [node]
        if isinstance(node, ast.AugAssign):
            return []
        kept = [t for t in targets if isinstance(t, ast.Name | ast.Tuple | ast.List)]
        return [ast.Assign(targets=kept, value=ast.Constant(None), lineno=0)] if kept else []
    if isinstance(node, ast.Import):
        return [node] if any(_inside(a.name) for a in node.names) else []
    if isinstance(node, ast.ImportFrom):
        return [node] if node.level or _inside(node.module) else []
    if isinstance(node, ast.Delete):
        return [node]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        is_all = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "__all__"
        return [node] if is_all and func.attr in KEEP_CALLS else []
    if isinstance(node, ast.For):
        iterates_dir = isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
        if iterates_dir and node.iter.func.id == "dir":  # type: ignore[union-attr]
            appends = [n for n in ast.walk(node) if isinstance(n, ast.Expr) and _slim_statement(n)]
            loop = ast.For(target=node.target, iter=node.iter, body=appends or [ast.Pass()], orelse=[], lineno=0)
            return [loop]
        return _slim_body(node.body) + _slim_body(node.orelse)
    if isinstance(node, ast.If | ast.While):
        return _slim_body(node.body) + _slim_body(node.orelse)
    if isinstance(node, ast.Try | ast.TryStar):
        handlers = [s for h in node.handlers for s in h.body]
        return _slim_body(node.body) + _slim_body(handlers) + _slim_body(node.orelse) + _slim_body(node.finalbody)
    if isinstance(node, ast.With):
        return _slim_body(node.body)
    return []


def _slim_body(body: list[ast.stmt]) -> list[ast.stmt]:
    return [kept for node in body for kept in _slim_statement(node)]


def slim_source(source: bytes) -> bytes | None:
    """The module reduced to what the reader needs (None when it does not parse: left out)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    module = ast.Module(body=_slim_body(tree.body), type_ignores=[])
    return (ast.unparse(ast.fix_missing_locations(module)) + "\n").encode()


def slim_wheel(wheel: Path, out_dir: Path, package: str = PACKAGE) -> Path:
    read = set(read_wheel_api(wheel, package).sources)  # only the files the reader parses
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        version = next(
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Version:")
        )
        out = out_dir / f"{package}-{version.replace('+', '_')}-py3-none-any.whl"
        tmp = out.with_suffix(".tmp")
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_LZMA) as slim:
            for name in sorted(names):
                if not (name.startswith(f"{package}/") and name.endswith((".py", ".pyi"))):
                    continue
                # a file the reader does not parse stays, empty: that it exists says `x` is a submodule
                text = slim_source(archive.read(name)) if name in read else b""
                if text is not None:
                    slim.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), text)
            info = zipfile.ZipInfo(f"{package}-{version}.dist-info/METADATA", date_time=(2026, 1, 1, 0, 0, 0))
            slim.writestr(info, f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        tmp.replace(out)
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", type=Path, nargs="+")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Slim wheels: provenance",
        "",
        "Made by `python3 tools/slim_wheel.py` from these wheels (downloaded from PyPI with",
        "`PIP_CONFIG_FILE=/dev/null python3 -m pip download --no-deps --only-binary=:all: torch==VERSION`):",
        "",
    ]
    for wheel in args.wheels:
        out = slim_wheel(wheel, args.out_dir)
        lines.append(f"- `{out.name}` <- `{wheel.name}` ({wheel.stat().st_size} bytes, sha256 `{_sha256(wheel)}`)")
        print(f"{wheel.name} -> {out} ({out.stat().st_size} bytes)", file=sys.stderr)
    lines += [
        "",
        "Each source file the reader parses keeps only its module-level names, the package's own imports and",
        "`__all__`; the others are empty files (see the tool's docstring). The public API the harness reads from",
        "them equals the real wheels' (checked when it was made, and by tests/images/test_wheel_api.py where the",
        "real wheels are present).",
    ]
    provenance = args.out_dir / "PROVENANCE.md"
    tmp = provenance.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(provenance)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
