"""The torch APIs the suites exercise, read from their sources (never imported, torch is not needed).

Two sources, as dotted paths (`torch.nn.functional.scaled_addmm`): every feature's `apis` in
suites/features.toml, and what the suites' Python files name: attribute chains on an imported torch
module (`F.scaled_addmm` after `import torch.nn.functional as F`), names imported from torch
(`from torch.nn.attention.varlen import varlen_attn`) and string constants that are dotted torch paths
(the API gates: `api("torch.accelerator.get_rng_state")`).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Final

from harness.errors import InputError, UsageError

_DOTTED: Final = re.compile(r"torch(?:\.[A-Za-z_]\w*)+")


def _is_torch(module: str | None) -> bool:
    return module is not None and (module == "torch" or module.startswith("torch."))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the torch path it stands for."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_torch(alias.name):
                    if alias.asname:
                        found[alias.asname] = alias.name
                    else:
                        found["torch"] = "torch"
        elif isinstance(node, ast.ImportFrom) and not node.level and _is_torch(node.module):
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _chain(node: ast.expr, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        head = _chain(node.value, aliases)
        return f"{head}.{node.attr}" if head else None
    return None


def names_in_source(text: str) -> set[str]:
    """The dotted torch paths one Python source names (empty for a file that does not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    aliases = _aliases(tree)
    found = set(aliases.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            path = _chain(node, aliases)
            if path:
                found.add(path)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            found.add(node.value)
    # every prefix of a chain is named too (`torch.compiler.precompile.capture` uses `precompile`)
    return {prefix for path in found for prefix in _prefixes(path)}


def _prefixes(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts) + 1)]


def exercised_apis(suites_dir: Path) -> set[str]:
    """Every torch API the suites in `suites_dir` declare (features.toml) or name (their sources)."""
    features = suites_dir / "features.toml"
    try:
        table = tomllib.loads(features.read_text(encoding="utf-8")).get("features", {})
    except FileNotFoundError:
        raise UsageError(f"{suites_dir}: no features.toml", hint="is this the suites/ directory?") from None
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{features}: invalid TOML: {err}") from None
    rows = [row for row in table.values() if isinstance(row, dict)]
    found = {api for row in rows for api in row.get("apis", []) if isinstance(api, str)}
    for source in sorted(suites_dir.rglob("*.py")):
        found |= names_in_source(source.read_text(encoding="utf-8", errors="replace"))
    return found
