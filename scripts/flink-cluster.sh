#!/usr/bin/env bash
# A standalone Flink 1.19 session cluster on this machine, from the classpath scripts/flink.sh
# builds (flink-dist is not on Maven Central): one JobManager process and one TaskManager
# process with 2 slots, bound to localhost on free ports, every TaskManager memory size set in
# its flink-conf.yaml (Flink's start scripts would compute them; there are none here).
# Configuration, pid files and logs go under build/flink/run/.
#   bash scripts/flink-cluster.sh start   # waits until REST /overview answers (at most 90 s),
#                                         # prints the REST address localhost:PORT last
#   bash scripts/flink-cluster.sh add-taskmanager   # one more TaskManager (2 slots), e.g. a
#                                         # standby; prints its pid last
#   bash scripts/flink-cluster.sh stop    # stops what `start` and `add-taskmanager` started
# A failed task restarts the job (fixed-delay: 5 attempts, 5 s apart); a TaskManager that stops
# answering is given up after 20 s of missed heartbeats (tests/flink/test_flink_faults.py).
# Then: corpusforge twitter build A.zip --out R --runner flink --flink_master localhost:PORT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$root/build/flink/lib
run=${CORPUSFORGE_FLINK_RUN:-$root/build/flink/run}
# Flink's usual Java 17 module flags (flink-conf's env.java.opts.all in a distribution).
java_opens=(
  --add-exports=java.base/sun.net.util=ALL-UNNAMED
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
)

# A TaskManager JVM, sized as the memory settings of flink-conf.yaml add up (heap 512m,
# direct 768m: framework and task off-heap, network; Beam's gRPC channels to the SDK workers
# take task off-heap memory: with none, 16 day archives failed with "OutOfMemoryError: Direct
# buffer memory"); NAME names its pid file and logs; extra -Dkey=value arguments override the
# configuration.
taskmanager() {  # taskmanager NAME [-Dkey=value...]
  local name=$1 log=$run/log
  shift
  nohup java "${java_opens[@]}" -Xmx512m -Xms512m -XX:MaxDirectMemorySize=768m \
    -XX:MaxMetaspaceSize=256m -Dlog.file="$log/$name.log" -cp "$lib/*" \
    org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$run/conf" "$@" \
    > "$log/$name.out" 2>&1 < /dev/null &
  echo $! > "$run/$name.pid"
}

slots_at_least() {  # slots_at_least REST_PORT N: the cluster has registered N slots
  python3 - "$1" "$2" <<'EOF' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(f"http://localhost:{sys.argv[1]}/overview", timeout=2) as r:
    sys.exit(0 if json.load(r).get("slots-total", 0) >= int(sys.argv[2]) else 1)
EOF
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("localhost", 0)); print(s.getsockname()[1])'
}

alive() {  # alive NAME: its pid file names a running process
  [ -f "$run/$1.pid" ] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null
}

stop() {
  local name pid names=()
  for pid in "$run"/taskmanager*.pid; do
    [ -f "$pid" ] && names+=("$(basename "$pid" .pid)")
  done
  for name in "${names[@]}" jobmanager; do
    if alive "$name"; then
      pid=$(cat "$run/$name.pid")
      kill "$pid"
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    fi
    rm -f "$run/$name.pid"
  done
  rm -f "$run/rest.address"
}

start() {
  if [ ! -d "$lib" ]; then
    echo "[corpusforge] no Flink classpath in $lib: run \`bash scripts/flink.sh\` first" >&2
    exit 1
  fi
  if alive jobmanager || alive taskmanager; then
    echo "[corpusforge] a cluster started from $run is running: \`bash scripts/flink-cluster.sh stop\` first" >&2
    exit 1
  fi
  mkdir -p "$run/conf" "$run/log" "$run/tmp"
  local rest rpc blob tm_rpc tm_data
  rest=$(free_port) rpc=$(free_port) blob=$(free_port) tm_rpc=$(free_port) tm_data=$(free_port)
  cat > "$run/conf/flink-conf.yaml" <<EOF
jobmanager.rpc.address: localhost
jobmanager.rpc.port: $rpc
jobmanager.bind-host: localhost
jobmanager.memory.process.size: 1024m
rest.address: localhost
rest.bind-address: localhost
rest.port: $rest
blob.server.port: $blob
taskmanager.host: localhost
taskmanager.bind-host: localhost
taskmanager.rpc.port: $tm_rpc
taskmanager.data.port: $tm_data
taskmanager.numberOfTaskSlots: 2
taskmanager.cpu.cores: 2.0
taskmanager.memory.framework.heap.size: 128m
taskmanager.memory.task.heap.size: 384m
taskmanager.memory.framework.off-heap.size: 128m
taskmanager.memory.task.off-heap.size: 256m
taskmanager.memory.managed.size: 256m
taskmanager.memory.network.min: 384m
taskmanager.memory.network.max: 384m
taskmanager.memory.jvm-metaspace.size: 256m
taskmanager.memory.jvm-overhead.min: 192m
taskmanager.memory.jvm-overhead.max: 192m
parallelism.default: 2
io.tmp.dirs: $run/tmp
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 5
restart-strategy.fixed-delay.delay: 5 s
heartbeat.interval: 5000
heartbeat.timeout: 20000
EOF
  local log=$run/log
  nohup java "${java_opens[@]}" -Xmx768m -Dlog.file="$log/jobmanager.log" -cp "$lib/*" \
    org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint --configDir "$run/conf" \
    > "$log/jobmanager.out" 2>&1 < /dev/null &
  echo $! > "$run/jobmanager.pid"
  taskmanager taskmanager
  local deadline=$((SECONDS + 90))
  until slots_at_least "$rest" 2; do
    if ! alive jobmanager || ! alive taskmanager || [ $SECONDS -ge $deadline ]; then
      echo "[corpusforge] the Flink cluster did not come up within 90 s; its logs:" >&2
      tail -n 20 "$log"/*.out >&2 || true
      stop
      exit 1
    fi
    sleep 0.5
  done
  echo "localhost:$rest" > "$run/rest.address"
  echo "[corpusforge] Flink 1.19 session cluster up (1 JobManager, 1 TaskManager with 2 slots); logs in $log" >&2
  echo "localhost:$rest"
}

add_taskmanager() {
  if ! alive jobmanager || [ ! -f "$run/rest.address" ]; then
    echo "[corpusforge] no cluster started from $run: \`bash scripts/flink-cluster.sh start\` first" >&2
    exit 1
  fi
  local rest n name slots
  rest=$(sed 's/.*://' "$run/rest.address")
  n=2
  while [ -f "$run/taskmanager-$n.pid" ]; do n=$((n + 1)); done
  name=taskmanager-$n
  slots=$(python3 - "$rest" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(f"http://localhost:{sys.argv[1]}/overview", timeout=5) as r:
    print(json.load(r)["slots-total"])
EOF
  )
  taskmanager "$name" "-Dtaskmanager.rpc.port=$(free_port)" "-Dtaskmanager.data.port=$(free_port)"
  local deadline=$((SECONDS + 90))
  until slots_at_least "$rest" $((slots + 2)); do
    if ! alive "$name" || [ $SECONDS -ge $deadline ]; then
      echo "[corpusforge] TaskManager $name did not register within 90 s; its log:" >&2
      tail -n 20 "$run/log/$name.out" >&2 || true
      exit 1
    fi
    sleep 0.5
  done
  echo "[corpusforge] TaskManager $name up (2 more slots); log in $run/log" >&2
  cat "$run/$name.pid"
}

case "${1:-}" in
  start) start ;;
  add-taskmanager) add_taskmanager ;;
  stop) stop ;;
  *) echo "usage: bash scripts/flink-cluster.sh start|add-taskmanager|stop" >&2; exit 2 ;;
esac
