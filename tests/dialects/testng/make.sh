#!/usr/bin/env bash
# Regenerate TestNG's JUnit files and expected.json from project/ with real TestNG (Debian testng 6.9.12),
# offline: javac against /usr/share/java, then org.testng.TestNG with its default listeners.
#   junitreports/TEST-<class>.xml   TestNG's JUnitReportReporter: one file per class, all <test>s merged
#   xml-reporter/<test>.xml         TestNG's JUnitXMLReporter: one file per <test> of testng.xml
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp="/usr/share/java/testng.jar:/usr/share/java/jcommander.jar:/usr/share/java/bsh.jar:/usr/share/java/snakeyaml.jar"
testng_v="$(dpkg-query -W -f '${Version}' testng)"
echo "testng $testng_v (Debian); $(javac -version 2>&1); $(java -version 2>&1 | head -1)"
rm -rf "$here/build"
mkdir -p "$here/build/classes"
cd "$here/project"
javac -encoding UTF-8 -d "$here/build/classes" -cp "$cp" $(find src -name '*.java' | sort)
command="java -cp build/classes:$cp org.testng.TestNG -d build/out project/testng.xml"
set +e
java -cp "$here/build/classes:$cp" org.testng.TestNG -d "$here/build/out" testng.xml > "$here/testng-console.txt" 2>&1
rc=$?
set -e
# TestNG exits with a bit mask: 1 = failures, 2 = skips
[ "$rc" = 3 ] || { echo "unexpected TestNG exit status $rc" >&2; exit 1; }
grep '^Total tests run' "$here/testng-console.txt"
rm -rf "$here/junitreports" "$here/xml-reporter"
mkdir "$here/junitreports" "$here/xml-reporter"
cp "$here"/build/out/junitreports/TEST-*.xml "$here/junitreports/"
for f in "$here"/build/out/dialect/*.xml; do  # testng-failed.xml there is a suite file, not a report
  [ "$(basename "$f")" = testng-failed.xml ] || cp "$f" "$here/xml-reporter/"
done
cd "$here"
python3 expected_from_testng.py testng-console.txt build/out/testng-results.xml \
  "TestNG $testng_v (Debian), default reporters, on $(java -version 2>&1 | head -1)" "$command" \
  $(ls junitreports/*.xml xml-reporter/*.xml) > expected.json
echo "wrote junitreports/ xml-reporter/ expected.json in $here"
