#!/usr/bin/env bash
# Regenerate the CTest fixtures from project/ with real CMake/CTest (and a C++ compiler), offline.
#   junit.xml, expected.json                 ctest --output-junit
#   junit-repeat.xml, expected-repeat.json   the same with --repeat until-pass:2 (a retried test)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/build"
rm -rf "$build"
cmake -S "$here/project" -B "$build" -G Ninja > /dev/null
cmake --build "$build" > /dev/null
echo "$(cmake --version | head -1), $(ctest --version | head -1), $(ninja --version | sed 's/^/ninja /')"
cd "$build"
ctest --show-only=json-v1 > "$here/ctest-tests.json"

run() {  # name, junit file, extra ctest flags...
  local name="$1" junit="$2"
  shift 2
  rm -f flaky.marker  # the flaky test fails when this is missing
  set +e
  ctest --output-junit "$here/$junit" "$@" > "$here/ctest-console-$name.txt" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 8 ] || { echo "unexpected ctest exit status $rc for $name" >&2; exit 1; }
  grep -E '^[0-9]+% tests passed' "$here/ctest-console-$name.txt"
}
run plain junit.xml
run repeat junit-repeat.xml --repeat until-pass:2

producer="$(ctest --version | head -1) (Debian cmake)"
python3 "$here/expected_from_ctest.py" "$here/ctest-console-plain.txt" "$here/ctest-tests.json" "$build" \
  "$producer" "ctest --output-junit junit.xml" junit.xml > "$here/expected.json"
python3 "$here/expected_from_ctest.py" "$here/ctest-console-repeat.txt" "$here/ctest-tests.json" "$build" \
  "$producer" "ctest --output-junit junit-repeat.xml --repeat until-pass:2" junit-repeat.xml \
  > "$here/expected-repeat.json"
echo "wrote junit.xml junit-repeat.xml expected.json expected-repeat.json in $here"
