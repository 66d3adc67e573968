#!/usr/bin/env bash
# Build what `--runner flink` and scripts/flink-cluster.sh run, from Maven Central only, into
# build/flink/:
#   beam-flink-job-server.jar  Beam's Flink 1.19 job server (beam-runners-flink-1.19:2.70.0
#                              shaded with our job service, tools/flink/job-service)
#   lib/                       the classpath of a standalone Flink 1.19.0 session cluster
# Every version is pinned in tools/flink/*/pom.xml; builds again only when a file under
# tools/flink or this script changes (a stamp holds their hash). The job service's JUnit tests
# run on each build. Needs Java 17 and Maven
# 3.8 (`apt-get install openjdk-17-jdk-headless maven`); about a minute and 210 MB of downloads
# from an empty ~/.m2. The default local engine never needs it.
# Usage: bash scripts/flink.sh        (prints the job server jar's path)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/tools/flink
out=$root/build/flink
jar=$out/beam-flink-job-server.jar
stamp=$out/build.stamp
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "[corpusforge] the Flink job server needs Java 17 and Maven, and $tool is not on PATH: apt-get install openjdk-17-jdk-headless maven" >&2
    exit 1
  fi
done
hash=$(
  cd "$root" && find tools/flink -type f -not -path '*/target/*' | LC_ALL=C sort \
    | xargs sha256sum | cat - scripts/flink.sh | sha256sum | cut -d' ' -f1
)
if [ -f "$jar" ] && [ -d "$out/lib" ] && [ "$(cat "$stamp" 2>/dev/null || true)" = "$hash" ]; then
  echo "$jar"
  exit 0
fi
echo "[corpusforge] building the Flink job server and cluster classpath into $out (about a minute the first time)" >&2
mkdir -p "$out"
rm -f "$stamp"
mvn=(mvn -B -q --no-transfer-progress)
# 1. Our job service, tested (JUnit 5, its src/test) and installed into the local Maven
#    repository, where the runner's dependency tree looks for
#    org.apache.beam:beam-runners-java-job-service:2.70.0.
"${mvn[@]}" -f "$tools/job-service/pom.xml" install
# 2. The runner and its dependencies shaded into one jar (main class FlinkJobServerDriver).
"${mvn[@]}" -f "$tools/job-server/pom.xml" package
cp "$out/maven/job-server/beam-flink-job-server.jar" "$jar.tmp"
mv "$jar.tmp" "$jar"
# 3. The cluster's classpath: flink-runtime, -clients, -streaming-java, -java and a logger.
rm -rf "$out/lib.tmp"
"${mvn[@]}" -f "$tools/cluster/pom.xml" \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
  -DoutputDirectory="$out/lib.tmp" -DincludeScope=runtime
rm -rf "$out/lib"
mv "$out/lib.tmp" "$out/lib"
rm -rf "$out/maven"
echo "$hash" > "$stamp"
echo "$jar"
