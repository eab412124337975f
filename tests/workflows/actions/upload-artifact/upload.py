"""TEST DOUBLE of actions/upload-artifact@v4 (tests/workflows/ only): the artifact store is a folder.

Follows the real action (src/shared/search.ts, src/upload/upload-artifact.ts) for what our
workflows use: `path` lines with globs and `!` exclusions, directories taken whole, hidden files
left out unless asked for, the artifact rooted at the search path (the part of the pattern before
its first wildcard; the common ancestor of several; a lone file's folder), `if-no-files-found`,
and the refusal of a second upload under one name.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import shutil
import sys
from pathlib import Path

BAD_NAME_CHARS = set('":<>|*?\\/\r\n')


def fail(message: str) -> None:
    print(f"::error::{message}")
    sys.exit(1)


def search_path(pattern: str) -> Path:
    """The pattern up to (not including) its first segment with a wildcard, as @actions/glob does."""
    plain: list[str] = []
    for part in Path(pattern).parts:
        if set(part) & set("*?["):
            break
        plain.append(part)
    return Path(*plain).absolute() if plain else Path.cwd()


def hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def files_under(path: Path, root: Path, include_hidden: bool) -> list[Path]:
    if path.is_file():
        return [path]
    found = [p for p in sorted(path.rglob("*")) if p.is_file()]
    return [p for p in found if include_hidden or not hidden(p, root)]


def excluded(file: Path, excludes: list[str]) -> bool:
    return any(fnmatch.fnmatch(str(file), e) or str(file).startswith(e + "/") for e in excludes)


def main() -> None:
    store = os.environ.get("TORCH_COMPAT_TEST_GITHUB")
    if not store:
        fail("this is a test double of GitHub's infrastructure; it runs only in tests/workflows")
    name = os.environ.get("INPUT_NAME") or "artifact"
    if BAD_NAME_CHARS & set(name):
        fail(f'The artifact name is not valid: {name}. Contains the character(s) " : < > | * ? \\ /')
    lines = [line.strip() for line in os.environ.get("INPUT_PATH", "").splitlines() if line.strip()]
    include_hidden = os.environ.get("INPUT_INCLUDE_HIDDEN_FILES", "false") == "true"
    includes = [line for line in lines if not line.startswith("!")]
    excludes = [str(Path(line[1:]).absolute()) for line in lines if line.startswith("!")]
    roots = [search_path(p) for p in includes]
    files: list[Path] = []
    for pattern, root in zip(includes, roots, strict=True):
        for match in sorted(glob.glob(pattern, recursive=True, include_hidden=include_hidden)):
            files += files_under(Path(match).absolute(), root, include_hidden)
    files = [
        f
        for f in dict.fromkeys(files)
        if not any(fnmatch.fnmatch(str(f), e) or str(f).startswith(e + "/") for e in excludes)
    ]
    shown = "\n".join(lines)
    if not files:
        message = f"No files were found with the provided path: {shown}. No artifacts will be uploaded."
        mode = os.environ.get("INPUT_IF_NO_FILES_FOUND", "warn")
        if mode == "error":
            fail(message)
        print(f"::warning::{message}" if mode == "warn" else message)
        return
    if len(set(roots)) > 1:
        root = Path(os.path.commonpath(roots))
    elif len(files) == 1 and roots[0] == files[0]:
        root = files[0].parent
    else:
        root = roots[0]
    target = Path(store) / "artifacts" / name
    if target.exists():
        if os.environ.get("INPUT_OVERWRITE", "false") != "true":
            fail(f"Failed to CreateArtifact: (409) Conflict: an artifact named {name} already exists on the run")
        shutil.rmtree(target)
    # Like GitHub, an artifact is visible only once complete: a job collecting the run's artifacts
    # while this one uploads never sees half of it.
    partial = target.with_name(f".partial-{name}-{os.getpid()}")
    for file in files:
        dest = partial / file.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, dest)
    os.rename(partial, target)
    artifact_id = len([p for p in (Path(store) / "artifacts").iterdir() if not p.name.startswith(".")])
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"artifact-id={artifact_id}\n")
    print(f"With the provided path, there will be {len(files)} file(s) uploaded; artifact {name} (id {artifact_id})")


if __name__ == "__main__":
    main()
