#!/usr/bin/env bash
# Regenerate junit/TEST-*.xml and expected.json from project/ with real Maven Surefire (JUnit Platform provider),
# offline, from Debian's packages: apt-get install maven libsurefire-java junit5 \
#   libmaven-compiler-plugin-java libmaven-resources-plugin-java
# Artifacts come from /usr/share/maven-repo through the file:// mirror in settings.xml into build/m2.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/project"
mvn_v="$(mvn -B -v | sed -n '1s/\x1b\[[0-9;]*m//gp')"
echo "$mvn_v; $(java -version 2>&1 | head -1); surefire $(dpkg-query -W -f '${Version}' libsurefire-java)" \
  "junit5 $(dpkg-query -W -f '${Version}' junit5)"

# No -Dsurefire.rerunFailingTestsCount: Surefire 2.22 supports reruns for JUnit 4 only (JUnit 5 from 3.0.0-M4).
command="mvn -B -s ../settings.xml -Dmaven.repo.local=../build/m2 -Dsurefire.reportFormat=plain test"
rm -rf target
set +e
$command > "$here/maven-console.txt" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'There are test failures' "$here/maven-console.txt" \
  || { echo "unexpected mvn result ($rc), see $here/maven-console.txt" >&2; exit 1; }
grep -E '^\[(ERROR|WARNING|INFO)\] Tests run: .*Flakes|^\[(ERROR|WARNING|INFO)\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' \
  "$here/maven-console.txt" | tail -1

rm -rf "$here/junit"
mkdir "$here/junit"
cp target/surefire-reports/TEST-*.xml "$here/junit/"
producer="Maven Surefire $(dpkg-query -W -f '${Version}' libsurefire-java) (JUnit Platform provider, JUnit Jupiter $(dpkg-query -W -f '${Version}' junit5)), ${mvn_v}, Debian"
python3 "$here/../surefire/expected_from_surefire.py" "$here/maven-console.txt" target/surefire-reports "$producer" "$command" \
  > "$here/expected.json"
echo "wrote $(ls "$here/junit" | wc -l) files in $here/junit and $here/expected.json"
