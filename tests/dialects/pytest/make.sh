#!/usr/bin/env bash
# Regenerate the pytest fixtures from project/ with real pytest + pytest-rerunfailures, offline.
#   junit-xunit1.xml  -o junit_family=xunit1 (file and line attributes), junit_logging left at "no"
#   junit-xunit2.xml  -o junit_family=xunit2 (pytest's default family) -o junit_logging=all
#   expected.json     pytest's own counts (the two runs must agree)
# PYTHON must have the packages in requirements.txt (default: python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
"$python" -c 'import pytest, pytest_rerunfailures, pytest_reportlog' 2> /dev/null \
  || { echo "$python lacks pytest/pytest-rerunfailures/pytest-reportlog: pip install -r $here/requirements.txt" >&2; exit 1; }
versions="$("$python" - <<'PY'
import platform
from importlib.metadata import version
print(f"pytest {version('pytest')} + pytest-rerunfailures {version('pytest-rerunfailures')}"
      f" (+ pytest-reportlog {version('pytest-reportlog')}) on Python {platform.python_version()}")
PY
)"
echo "$versions"
cd "$here/project"

# --confcutdir keeps the conftest.py files of the repository around this project out of the run.
common=(-p no:cacheprovider --confcutdir=. -rA --continue-on-collection-errors)
run() {  # family, extra options...
  local family="$1"
  shift
  ATTEMPT_DIR="$(mktemp -d)"  # the attempt counters the rerun tests read (see conftest.py)
  export ATTEMPT_DIR
  set +e
  "$python" -m pytest "${common[@]}" -o "junit_family=$family" "$@" --junitxml="$here/junit-$family.xml" \
    --report-log="$here/reportlog-$family.jsonl" > "$here/pytest-console-$family.txt" 2>&1
  local rc=$?
  set -e
  rm -rf "$ATTEMPT_DIR"
  [ "$rc" = 1 ] || { echo "unexpected pytest exit status $rc for $family" >&2; exit 1; }
  tail -1 "$here/pytest-console-$family.txt"
}
run xunit1
run xunit2 -o junit_logging=all

"$python" "$here/expected_from_pytest.py" "$versions" \
  "python -m pytest ${common[*]} -o junit_family=xunit1 --junitxml=junit-xunit1.xml   (xunit2: -o junit_family=xunit2 -o junit_logging=all)" \
  "$here/pytest-console-xunit1.txt" "$here/reportlog-xunit1.jsonl" junit-xunit1.xml \
  "$here/pytest-console-xunit2.txt" "$here/reportlog-xunit2.jsonl" junit-xunit2.xml > "$here/expected.json"
echo "wrote junit-xunit1.xml junit-xunit2.xml expected.json in $here"
