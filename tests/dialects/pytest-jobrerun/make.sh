#!/usr/bin/env bash
# Regenerate the job re-run fixtures from project/ with real pytest, WITHOUT pytest-rerunfailures:
# one CI job run twice (a "re-run failed jobs"), each run writing its own report of the same tests.
#   junit-run1.xml      the first run   (-p no:rerunfailures: plain pytest)
#   junit-run2.xml      the re-run, sharing every test id with the first
#   expected-run1.json  pytest's own counts of the first run (what decides when run1 is given last)
#   expected-run2.json  pytest's own counts of the re-run (what decides when run2 is given last)
# PYTHON must have the packages in ../pytest/requirements.txt (default: python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
"$python" -c 'import pytest, pytest_reportlog' 2> /dev/null \
  || { echo "$python lacks pytest/pytest-reportlog: pip install -r $here/../pytest/requirements.txt" >&2; exit 1; }
versions="$("$python" - <<'PY'
import platform
from importlib.metadata import version
print(f"pytest {version('pytest')}, without pytest-rerunfailures"
      f" (+ pytest-reportlog {version('pytest-reportlog')}) on Python {platform.python_version()}")
PY
)"
echo "$versions"
cd "$here/project"
common=(-p no:cacheprovider -p no:rerunfailures --confcutdir=. -rA)
ATTEMPT_DIR="$(mktemp -d)"  # the session counter both runs share (see conftest.py)
export ATTEMPT_DIR
for run in 1 2; do
  set +e
  "$python" -m pytest "${common[@]}" --junitxml="$here/junit-run$run.xml" \
    --report-log="$here/reportlog-run$run.jsonl" > "$here/pytest-console-run$run.txt" 2>&1
  rc=$?
  set -e
  [ "$rc" = 1 ] || { echo "unexpected pytest exit status $rc in run $run" >&2; exit 1; }
  tail -1 "$here/pytest-console-run$run.txt"
done
rm -rf "$ATTEMPT_DIR"
for run in 1 2; do
  "$python" "$here/../pytest/expected_from_pytest.py" "$versions" \
    "python -m pytest ${common[*]} --junitxml=junit-run$run.xml   (run $run of the same job)" \
    "$here/pytest-console-run$run.txt" "$here/reportlog-run$run.jsonl" "junit-run$run.xml" \
    | "$python" -c 'import json, sys
e = json.load(sys.stdin)
e["junit_files"] = ["junit-run1.xml", "junit-run2.xml"]
e["decides_when_given_last"] = sys.argv[1]
json.dump(e, sys.stdout, ensure_ascii=False, indent=2)
print()' "junit-run$run.xml" > "$here/expected-run$run.json"
done
rm -f "$here"/pytest-console-run*.txt "$here"/reportlog-run*.jsonl
echo "wrote junit-run1.xml junit-run2.xml expected-run1.json expected-run2.json in $here"
