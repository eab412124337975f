#!/usr/bin/env bash
# Regenerate xunit.xml and expected.json from project/ with real Mocha and its built-in xunit
# reporter (the one that wrote latex-utensils' report: <testsuite name="Mocha Tests"> with one
# <testcase classname="<describe path>" name="<title>"> per test). Mocha takes one reporter per run,
# so the deterministic project runs three times: spec (console summary), json (Mocha's own counts
# and per-test list), xunit. expected.json comes from Mocha's own reports, never from the XML
# (../mocha/expected_from_mocha.py). Needs Node >= 18 and, the first time only, the npm registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/project"
[ -d node_modules ] || npm ci --prefer-offline --no-audit --no-fund
mocha_v="$(npx --no-install mocha --version)"
echo "node $(node --version), npm $(npm --version), mocha $mocha_v"

run() {  # mocha exits with the number of failures (2 here); anything else is a broken run
  set +e
  "$@"
  local rc=$?
  set -e
  [ "$rc" = 2 ] || { echo "unexpected mocha exit status $rc from: $*" >&2; exit 1; }
}
run npx mocha --reporter spec > "$here/mocha-console.txt" 2>&1
run npx mocha --reporter json --reporter-option "output=$here/mocha-results.json" > /dev/null
run npx mocha --reporter xunit --reporter-option "output=$here/xunit.xml" > /dev/null
grep -E '^\s+[0-9]+ (passing|pending|failing)' "$here/mocha-console.txt"

command="npx mocha --reporter xunit --reporter-option output=xunit.xml"
python3 "$here/../mocha/expected_from_mocha.py" "$here/mocha-results.json" "$here/mocha-console.txt" . \
  "mocha $mocha_v (built-in xunit reporter) on node $(node --version)" "$command" \
  "npx mocha --reporter json (stats and per-test lists) and npx mocha --reporter spec (summary), separate runs" \
  | python3 -c 'import json, sys; e = json.load(sys.stdin); e["junit_files"] = ["xunit.xml"]; json.dump(e, sys.stdout, ensure_ascii=False, indent=2); print()' \
  > "$here/expected.json"
rm -f "$here/mocha-results.json" "$here/mocha-console.txt"
echo "wrote $here/xunit.xml, $here/expected.json"
