"""TEST DOUBLE of actions/download-artifact@v4 (tests/workflows/ only): the artifact store is a folder.

Follows the real action (src/download-artifact.ts): `name` downloads one artifact into `path` and
fails when it is missing; otherwise every artifact (filtered by `pattern`) goes into
`path/<artifact name>/`, or straight into `path` with `merge-multiple` or when only one matched.
A pattern that matches nothing downloads nothing and is not an error. With `run-id` the artifacts
are another run's (the real action then needs `github-token`, and so does this double): the test's
runs are folders under $TORCH_COMPAT_TEST_RUNS, by run id.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import sys
from pathlib import Path


def main() -> None:
    store = os.environ.get("TORCH_COMPAT_TEST_GITHUB")
    if not store:
        print("::error::this is a test double of GitHub's infrastructure; it runs only in tests/workflows")
        sys.exit(1)
    artifacts = Path(store) / "artifacts"
    run_id = os.environ.get("INPUT_RUN_ID", "")
    if run_id:
        if not os.environ.get("INPUT_GITHUB_TOKEN"):
            print("::error::Downloading artifacts from another run needs github-token")
            sys.exit(1)
        runs = os.environ.get("TORCH_COMPAT_TEST_RUNS", "")
        if not runs or not (Path(runs) / run_id).is_dir():
            print(f"::error::Unable to download artifact(s): no workflow run {run_id}")
            sys.exit(1)
        artifacts = Path(runs) / run_id / "artifacts"
    dest = Path(os.environ.get("INPUT_PATH") or os.environ["GITHUB_WORKSPACE"]).expanduser().absolute()
    name = os.environ.get("INPUT_NAME", "")
    pattern = os.environ.get("INPUT_PATTERN", "")
    if name:
        if not (artifacts / name).is_dir():
            print(f"::error::Unable to download artifact(s): Artifact '{name}' not found")
            sys.exit(1)
        chosen = [name]
    else:
        chosen = sorted(p.name for p in artifacts.iterdir() if not p.name.startswith(".")) if artifacts.is_dir() else []
        if pattern:
            print(f"Filtering artifacts by pattern '{pattern}'")
            chosen = [n for n in chosen if fnmatch.fnmatchcase(n, pattern)]
    together = bool(name) or os.environ.get("INPUT_MERGE_MULTIPLE", "false") == "true" or len(chosen) == 1
    for artifact in chosen:
        target = dest if together else dest / artifact
        shutil.copytree(artifacts / artifact, target, dirs_exist_ok=True)
        print(f"- {artifact} -> {target}")
    print(f"Total of {len(chosen)} artifact(s) downloaded")
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"download-path={dest}\n")


if __name__ == "__main__":
    main()
