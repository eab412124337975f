#!/usr/bin/env bash
# Regenerate the Go fixtures from project/ with the real go toolchain and gotestsum (Debian packages
# golang-go and gotestsum), offline: the module has no dependencies.
#   junit.xml        gotestsum defaults (testsuite name and classname = full import path)
#   junit-short.xml  --junitfile-testsuite-name short --junitfile-testcase-classname short (a second,
#                    identical run: gotestsum writes one JUnit file per run)
#   expected.json    counts for both
#   junit-rerun.xml, expected-rerun.json
#                    --rerun-fails=2 on the packages it can rerun (gotestsum refuses to rerun after a
#                    build error or a panic)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/project"
export GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0
if [ -z "${GOCACHE:-}" ]; then  # a throwaway build cache unless the caller gives one
  GOCACHE="$(mktemp -d)"
  trap 'go clean -cache >/dev/null 2>&1; rm -rf "$GOCACHE"' EXIT
fi
export GOCACHE
gotestsum_v="$(dpkg-query -W -f '${Version}' gotestsum 2>/dev/null || gotestsum --version)"
echo "$(go version), gotestsum $gotestsum_v ($(gotestsum --version))"

run() {  # name, extra gotestsum flags... -- go test args...
  local name="$1"
  shift
  FLAKY_MARKER_DIR="$(mktemp -d)"
  export FLAKY_MARKER_DIR
  set +e
  gotestsum --format testname --no-color --jsonfile "$here/go-test-$name.json" "$@" > "$here/gotestsum-console-$name.txt" 2>&1
  local rc=$?
  set -e
  rm -rf "$FLAKY_MARKER_DIR"
  # 1: tests failed; 2: also a package did not build (broken/); anything else is a broken run
  case "$rc" in 1 | 2) ;; *) echo "unexpected gotestsum exit status $rc for $name" >&2; exit 1 ;; esac
  grep '^DONE ' "$here/gotestsum-console-$name.txt"
}

base="gotestsum --format testname --jsonfile go-test.json"
run full --junitfile "$here/junit.xml" -- -count=1 ./...
run short --junitfile "$here/junit-short.xml" --junitfile-testsuite-name short \
  --junitfile-testcase-classname short -- -count=1 ./...
diff <(grep '^DONE' "$here/gotestsum-console-full.txt" | sed 's/ in .*//') \
  <(grep '^DONE' "$here/gotestsum-console-short.txt" | sed 's/ in .*//') \
  || { echo "the two runs disagree" >&2; exit 1; }
packages="./calc ./legacy/calc ./edge ./nottests"
run rerun --junitfile "$here/junit-rerun.xml" --rerun-fails=2 --rerun-fails-max-failures=50 \
  --rerun-fails-report "$here/rerun-report.txt" --packages "$packages" -- -count=1

producer="gotestsum $gotestsum_v (Debian) on $(go version | cut -d' ' -f3-)"
python3 "$here/expected_from_go.py" "$here/go-test-full.json" "$here/gotestsum-console-full.txt" - \
  "$producer" "$base --junitfile junit.xml -- -count=1 ./...   (junit-short.xml: same plus --junitfile-testsuite-name short --junitfile-testcase-classname short)" \
  "junit.xml junit-short.xml" > "$here/expected.json"
python3 "$here/expected_from_go.py" "$here/go-test-rerun.json" "$here/gotestsum-console-rerun.txt" \
  "$here/rerun-report.txt" "$producer" \
  "$base --junitfile junit-rerun.xml --rerun-fails=2 --rerun-fails-max-failures=50 --packages '$packages' -- -count=1" \
  "junit-rerun.xml" > "$here/expected-rerun.json"
echo "wrote junit.xml junit-short.xml junit-rerun.xml expected.json expected-rerun.json in $here"
