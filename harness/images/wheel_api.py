"""The public API of a wheel's Python package, read from its sources: never installed, never imported.

A wheel is a zip: its `.py` and `.pyi` files are read with `zipfile` and parsed with `ast`, so any
variant's wheel (a ROCm or XPU build on a CPU host) can be read anywhere, in seconds. A module's public
names are its `__all__` where it defines one (literal lists and the idioms that extend them, including
`for n in dir(M): __all__.append(n)`, which is how `torch` exposes its C functions), else its public
top-level names: definitions, assignments and names imported from inside the package (`from .x import *`
resolved statically). Names that only exist after import-time code ran (`globals()[...]`, a computed
list) cannot be seen; they are the same blind spot in both wheels of a comparison.
"""

from __future__ import annotations

import ast
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from harness.api_changes import WheelApi
from harness.errors import InputError

_SUFFIXES: Final = (".pyi", ".py")


def _is_public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


class _Sources:
    """The package's modules in the wheel: dotted name -> the zip members that define it."""

    def __init__(self, archive: zipfile.ZipFile, package: str) -> None:
        self._archive = archive
        self.files: dict[str, dict[str, str]] = {}  # module -> {".py" | ".pyi": member}
        for member in archive.namelist():
            if not member.startswith(f"{package}/") or not member.endswith(_SUFFIXES):
                continue
            stem, suffix = (member[:-4], ".pyi") if member.endswith(".pyi") else (member[:-3], ".py")
            parts = stem.split("/")
            if not all(part.isidentifier() for part in parts):
                continue  # data or template files shaped like sources (a `foo-bar.py`)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.files.setdefault(".".join(parts), {})[suffix] = member
        self._trees: dict[str, ast.Module | None] = {}

    def packages(self) -> set[str]:
        inits = ("__init__.py", "__init__.pyi")
        return {m for m, found in self.files.items() if any(f.endswith(inits) for f in found.values())}

    def read(self) -> tuple[str, ...]:
        """The members parsed so far."""
        return tuple(sorted(self._trees))

    def tree(self, member: str) -> ast.Module | None:
        if member not in self._trees:
            try:
                self._trees[member] = ast.parse(self._archive.read(member), filename=member)
            except (SyntaxError, ValueError):  # a file for another Python version, a template
                self._trees[member] = None
        return self._trees[member]


def _literal_strings(node: ast.expr) -> list[str] | None:
    """The strings of a literal list/tuple (None when it is not one)."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values if len(values) == len(node.elts) else None
    return None


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, including those under `if`, `try` and `with` (not in functions)."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.For | ast.While):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from _top_level(node.body)
            for handler in node.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(node.orelse)
            yield from _top_level(node.finalbody)
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)


def _is_all(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "__all__"


def _targets(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            yield from _targets(element)


class _Reader:
    def __init__(self, sources: _Sources, package: str) -> None:
        self.sources = sources
        self.package = package
        self._api: dict[str, set[str]] = {}
        self._busy: set[str] = set()

    def _absolute(self, module: str, node: ast.ImportFrom) -> str | None:
        """The dotted module an import names, resolved against `module` when relative."""
        if not node.level:
            return node.module
        is_package = module in self.sources.packages()
        base = module.split(".")
        base = base if is_package else base[:-1]
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _inside(self, module: str | None) -> bool:
        return module is not None and (module == self.package or module.startswith(f"{self.package}."))

    def _bindings(self, module: str, tree: ast.Module) -> dict[str, str]:
        """Local names bound to modules of the package (`from torch import _C as _C`, `import torch`)."""
        bound: dict[str, str] = {}
        for node in _top_level(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if self._inside(alias.name):  # `import torch.x` binds `torch`; `import torch.x as y` binds y
                        top = alias.name.split(".")[0]
                        bound[alias.asname or top] = alias.name if alias.asname else top
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(module, node)
                for alias in node.names:
                    if self._inside(source) and f"{source}.{alias.name}" in self.sources.files:
                        bound[alias.asname or alias.name] = f"{source}.{alias.name}"
        return bound

    def _module_of(self, node: ast.expr, bound: dict[str, str]) -> str | None:
        """`_C._VariableFunctions` -> `torch._C._VariableFunctions` when that module is in the wheel."""
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Attribute):
            parent = self._module_of(node.value, bound)
            candidate = f"{parent}.{node.attr}" if parent else None
            return candidate if candidate in self.sources.files else None
        return None

    def _dunder_all(self, module: str, tree: ast.Module) -> set[str] | None:
        """`__all__` as far as it can be read statically; None when the module defines none."""
        names: set[str] | None = None
        bound = self._bindings(module, tree)

        def extend(value: ast.expr) -> None:
            assert names is not None
            strings = _literal_strings(value)
            if strings is not None:
                names.update(strings)
            elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
                extend(value.left)
                extend(value.right)
            elif isinstance(value, ast.Attribute) and value.attr == "__all__":
                other = self._module_of(value.value, bound)
                if other:
                    names.update(self.api(other))
            elif isinstance(value, ast.Name) and value.id == "__all__":
                pass  # `__all__ = __all__ + [...]`: already counted

        for node in _top_level(tree.body):
            if isinstance(node, ast.Assign) and any(_is_all(t) for t in node.targets):
                names = set()
                extend(node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
                names = set()
                if node.value is not None:
                    extend(node.value)
            elif names is not None and isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if node.target.id == "__all__":
                    extend(node.value)
            elif names is not None and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                call = node.value
                func = call.func
                if not (isinstance(func, ast.Attribute) and _is_all(func.value)) or not call.args:
                    continue
                first = call.args[0]
                if func.attr == "extend":
                    extend(first)
                elif func.attr == "append" and isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value)
            elif names is not None and isinstance(node, ast.For):
                names.update(self._dir_loop(node, bound))
        return names

    def _dir_loop(self, loop: ast.For, bound: dict[str, str]) -> set[str]:
        """`for n in dir(M): ... __all__.append(n)`: M's public names (torch's C functions come this way)."""
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "dir" and it.args):
            return set()
        if not isinstance(loop.target, ast.Name):
            return set()
        appends = any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "append"
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "__all__"
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == loop.target.id
            for n in ast.walk(loop)
        )
        other = self._module_of(it.args[0], bound) if appends else None
        return {n for n in self.api(other) if not n.startswith("_")} if other else set()

    def _top_level_names(self, module: str, tree: ast.Module) -> set[str]:
        names: set[str] = set()
        for node in _top_level(tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(_targets(target))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(module, node)
                if not self._inside(source):
                    continue  # typing.Any, functools.wraps: not this package's API
                for alias in node.names:
                    if alias.name == "*":
                        names.update(self.api(source) if source else ())
                    elif f"{source}.{alias.name}" not in self.sources.files or alias.asname:
                        names.add(alias.asname or alias.name)  # a name, not a submodule (that is its own)
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    names.difference_update(_targets(target))
        return {n for n in names if not n.startswith("_")}

    def api(self, module: str) -> set[str]:
        """The module's public names (empty for a module not in the wheel, or one being read: a cycle)."""
        if module in self._api:
            return self._api[module]
        if module in self._busy or module not in self.sources.files:
            return set()
        self._busy.add(module)
        try:
            found = self.sources.files[module]
            trees: list[ast.Module] = []
            names = None
            for suffix in (".py", ".pyi"):  # the stub is parsed only when the source declares no __all__
                tree = self.sources.tree(found[suffix]) if suffix in found else None
                if tree is not None:
                    trees.append(tree)
                    names = self._dunder_all(module, tree)
                    if names is not None:
                        break
            if names is None:
                names = set().union(*(self._top_level_names(module, t) for t in trees)) if trees else set()
        finally:
            self._busy.discard(module)
        self._api[module] = names
        return names


def _version(archive: zipfile.ZipFile, path: Path) -> str:
    metadata = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
    if metadata is not None:
        for line in archive.read(metadata).decode("utf-8", "replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    parts = path.name.split("-")
    return parts[1] if len(parts) > 1 else "unknown"


def public_modules(path: Path, package: str = "torch") -> set[str]:
    """The public modules of `package` in the wheel, from its file list alone (nothing parsed): what a
    --namespace is checked against before the sources are read."""
    try:
        with zipfile.ZipFile(path) as archive:
            return {m for m in _Sources(archive, package).files if _is_public(m)}
    except (OSError, zipfile.BadZipFile) as err:
        raise InputError(f"{path}: not a readable wheel ({err})") from err


def read_wheel_api(path: Path, package: str = "torch", modules: Iterable[str] | None = None) -> WheelApi:
    """The public API of `package` in the wheel at `path`: every public module (no `_` in its dotted
    path), or only `modules`. Raises InputError for a file that is not a readable wheel."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise InputError(f"{path}: not a readable wheel ({err})") from err
    with archive:
        sources = _Sources(archive, package)
        if package not in sources.files:
            raise InputError(f"{path}: the wheel has no {package}/ package sources")
        reader = _Reader(sources, package)
        wanted = sorted(modules) if modules is not None else sorted(m for m in sources.files if _is_public(m))
        api = {m: tuple(sorted(reader.api(m))) for m in wanted if m in sources.files}
        return WheelApi(package=package, version=_version(archive, path), modules=api, sources=sources.read())
