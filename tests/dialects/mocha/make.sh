#!/usr/bin/env bash
# Regenerate junit.xml, junit-jenkins.xml and expected.json from project/ with real Mocha + mocha-junit-reporter.
# Mocha takes one reporter per run, so the deterministic project runs four times: spec (console
# summary), json (Mocha's own counts and per-test list), and mocha-junit-reporter in two configs.
# Needs Node >= 18 and, the first time only, the npm registry (npm ci of the pinned lockfile).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/project"
[ -d node_modules ] || npm ci --prefer-offline --no-audit --no-fund
mocha_v="$(npx --no-install mocha --version)"
reporter_v="$(node -p "require('mocha-junit-reporter/package.json').version")"
echo "node $(node --version), npm $(npm --version), mocha $mocha_v, mocha-junit-reporter $reporter_v"

run() {  # mocha exits with the number of failures (7 here); anything else is a broken run
  set +e
  "$@"
  local rc=$?
  set -e
  [ "$rc" = 7 ] || { echo "unexpected mocha exit status $rc from: $*" >&2; exit 1; }
}
run npx mocha --reporter spec > "$here/mocha-console.txt" 2>&1
run npx mocha --reporter json --reporter-option "output=$here/mocha-results.json" > /dev/null
run npx mocha --reporter mocha-junit-reporter --reporter-option "mochaFile=$here/junit.xml" > /dev/null
run npx mocha --reporter mocha-junit-reporter \
  --reporter-option "mochaFile=$here/junit-jenkins.xml,jenkinsMode=true,includePending=true,outputs=true" > /dev/null
grep -E '^\s+[0-9]+ (passing|pending|failing)' "$here/mocha-console.txt"

command="npx mocha --reporter mocha-junit-reporter --reporter-option mochaFile=junit.xml"
python3 "$here/expected_from_mocha.py" "$here/mocha-results.json" "$here/mocha-console.txt" . \
  "mocha $mocha_v + mocha-junit-reporter $reporter_v on node $(node --version)" "$command" \
  "npx mocha --reporter json (stats and per-test lists) and npx mocha --reporter spec (summary), separate runs" \
  > "$here/expected.json"
echo "wrote $here/junit.xml, $here/junit-jenkins.xml, $here/expected.json"
