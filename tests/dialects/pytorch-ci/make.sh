#!/usr/bin/env bash
# Regenerate PyTorch CI's JUnit dialect by running PyTorch's own JUnit writer (its test/conftest.py,
# LogXMLReruns: each rerun attempt is a <rerun> child of the test's one <testcase>) with real
# pytest + pytest-rerunfailures on ../pytest/project, the same tests as the plain pytest fixtures.
#   junit-reruns.xml  --junit-xml-reruns (PyTorch CI's option; run_test.py passes it with --reruns)
#   expected.json     pytest's own counts (summary line + pytest-reportlog), as ../pytest/
# PYTORCH_TEST must be a folder holding pytorch/pytorch's test/conftest.py and test/pytest_shard_custom.py
# (see README.md for the commits used); they are copied to a temporary folder, never into this repository.
# PYTHON must have pytest, pytest-rerunfailures and pytest-reportlog (../pytest/requirements.txt).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
: "${PYTORCH_TEST:?set PYTORCH_TEST to a folder with the PyTorch test/conftest.py and test/pytest_shard_custom.py}"
versions="$("$python" - <<'PY'
import platform
from importlib.metadata import version
print(f"pytest {version('pytest')} + pytest-rerunfailures {version('pytest-rerunfailures')}"
      f" + the conftest.py of PyTorch (+ pytest-reportlog {version('pytest-reportlog')}) on Python {platform.python_version()}")
PY
)"
echo "$versions"
sha256sum "$PYTORCH_TEST/conftest.py" "$PYTORCH_TEST/pytest_shard_custom.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# PyTorch's conftest is loaded as a plugin under another module name (the project has its own
# conftest.py); its code runs unchanged.
cp "$PYTORCH_TEST/conftest.py" "$work/pytorch_conftest.py"
cp "$PYTORCH_TEST/pytest_shard_custom.py" "$work/"
cp -r "$here/../pytest/project" "$work/project"
cd "$work/project"
common=(-p no:cacheprovider -p pytorch_conftest --confcutdir=. -rA --continue-on-collection-errors)
ATTEMPT_DIR="$work/attempts"
export ATTEMPT_DIR PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}"
set +e
"$python" -m pytest "${common[@]}" --junit-xml-reruns="$here/junit-reruns.xml" \
  --report-log="$work/reportlog.jsonl" > "$work/console.txt" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$work/console.txt" >&2; echo "unexpected pytest exit status $rc" >&2; exit 1; }
tail -1 "$work/console.txt"
# The machine's temporary folder is in the XML; it names no test.
sed -i "s#$work/##g" "$here/junit-reruns.xml"
"$python" "$here/../pytest/expected_from_pytest.py" "$versions" \
  "python -m pytest ${common[*]} --junit-xml-reruns=junit-reruns.xml" \
  "$work/console.txt" "$work/reportlog.jsonl" junit-reruns.xml > "$here/expected.json"
echo "wrote junit-reruns.xml expected.json in $here"
