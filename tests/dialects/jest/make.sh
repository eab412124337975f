#!/usr/bin/env bash
# Regenerate junit.xml, junit-file-attr.xml and expected.json from project/ with real Jest + jest-junit.
# Needs Node >= 18 and, the first time only, the npm registry (npm ci of the pinned lockfile);
# the test run itself is offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/project"
[ -d node_modules ] || npm ci --prefer-offline --no-audit --no-fund
echo "node $(node --version), npm $(npm --version), jest $(npx --no-install jest --version)," \
  "jest-junit $(node -p "require('jest-junit/package.json').version")"

command="npx jest --ci --runInBand --json --outputFile=../jest-results.json"
set +e
$command 2> "$here/jest-console.txt" > /dev/null
rc=$?
set -e
echo "jest exit status: $rc (1 is expected: the project has failing tests)"
[ "$rc" = 1 ] || { echo "unexpected jest exit status $rc" >&2; exit 1; }
grep -E '^(Test Suites|Tests):' "$here/jest-console.txt"

producer="jest $(npx --no-install jest --version) + jest-junit $(node -p "require('jest-junit/package.json').version") on node $(node --version)"
python3 "$here/expected_from_jest.py" "$here/jest-results.json" "$here/jest-console.txt" . \
  "$producer" "$command" "jest --json (same run: numTotalTests, numPassedTests, ...) and its console summary" \
  > "$here/expected.json"
echo "wrote $here/junit.xml, $here/junit-file-attr.xml, $here/expected.json"
