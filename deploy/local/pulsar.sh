#!/usr/bin/env bash
# A real Apache Pulsar 3.0.x standalone broker from Maven Central jars, bound to 127.0.0.1:
# binary 6650, web/admin/WebSocket API 8080. Jars are resolved once into $LOCAL_DIR/pulsar/lib
# (Maven's ~/.m2 cache makes a fresh clone's resolve quick); data stays in $LOCAL_DIR/pulsar/data
# across restarts.
#   pulsar.sh install | start | stop | restart | status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HERE=$ROOT/deploy/local/pulsar
PULSAR_HOME=$LOCAL_DIR/pulsar
LIB=$PULSAR_HOME/lib
PID=$RUN_DIR/pulsar.pid
LOG=$LOG_DIR/pulsar.log
WEB_PORT=${TIMER_LOCAL_PULSAR_WEB_PORT:-8080}
READY_URL=http://127.0.0.1:$WEB_PORT/admin/v2/namespaces/public/default

ready() { curl -sf -o /dev/null --max-time 2 "$READY_URL"; }

install() {
  command -v java >/dev/null 2>&1 || apt_install openjdk-17-jre-headless
  command -v mvn >/dev/null 2>&1 || apt_install maven
  local major; major=$(java -version 2>&1 | sed -nE 's/.*version "([0-9]+).*/\1/p' | head -1)
  [[ ${major:-0} -ge 17 ]] || die "Pulsar 3.0 needs Java 17 or later; found '${major:-none}'"
  # The stamp ties the jar folder to the pom: a changed pom resolves again.
  local stamp; stamp=$(sha1sum "$HERE/pom.xml" | cut -c1-40)
  if [[ -f $LIB/.stamp && $(cat "$LIB/.stamp") == "$stamp" ]]; then return 0; fi
  say "resolving the Pulsar broker jars from Maven Central (first run takes a few minutes)"
  rm -rf "$LIB"; mkdir -p "$LIB"
  mvn -q -B -f "$HERE/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" \
    >"$LOG_DIR/pulsar-mvn.log" 2>&1 || die "Maven could not resolve the Pulsar jars (see $LOG_DIR/pulsar-mvn.log)"
  echo "$stamp" >"$LIB/.stamp"
  say "Pulsar jars ready ($(ls "$LIB"/*.jar | wc -l) jars)"
}

start() {
  if pid_alive "$PID" && ready; then say "Pulsar already running (pid $(cat "$PID"))"; return 0; fi
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$WEB_PORT"; then
    if ready; then say "a Pulsar broker already answers on 127.0.0.1:$WEB_PORT; using it"; return 0; fi
    die "port $WEB_PORT is taken by something that is not a Pulsar broker"
  fi
  install
  mkdir -p "$PULSAR_HOME"
  local from; from=$(($(stat -c %s "$LOG" 2>/dev/null || echo 0) + 1))
  say "starting Pulsar standalone (log: $LOG)"
  # PulsarStandalone keeps its RocksDB metadata and bookie under ./data of the working directory.
  (
    cd "$PULSAR_HOME"
    exec setsid java -Xms256m -Xmx${TIMER_LOCAL_PULSAR_HEAP:-1g} -XX:MaxDirectMemorySize=1g -XX:+UseG1GC \
      --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \
      --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
      --add-opens java.base/sun.net=ALL-UNNAMED --add-opens java.management/sun.management=ALL-UNNAMED \
      --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
      --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
      -Dio.netty.tryReflectionSetAccessible=true -Djava.net.preferIPv4Stack=true \
      -Dbookkeeper.metadata.bookie.drivers=org.apache.pulsar.metadata.bookkeeper.PulsarMetadataBookieDriver \
      -Dbookkeeper.metadata.client.drivers=org.apache.pulsar.metadata.bookkeeper.PulsarMetadataClientDriver \
      -Dlog4j.configurationFile="$HERE/log4j2.xml" -Dlog4j.shutdownHookEnabled=false \
      -cp "$LIB/*" org.apache.pulsar.PulsarStandaloneStarter \
      --config "$HERE/standalone.conf" --no-functions-worker --no-stream-storage
  ) >>"$LOG" 2>&1 </dev/null &
  echo $! >"$PID"
  wait_started "Pulsar (http://127.0.0.1:$WEB_PORT)" "$PID" "$LOG" "${TIMER_LOCAL_PULSAR_START_TIMEOUT:-180}" ready
  # After a broker was killed (not stopped), its bookie's registration can be left in the metadata store
  # and the new bookie re-registers in a loop (apache/pulsar#17759): a core burnt and a log growing by
  # thousands of lines a second. A clean stop and start clears it; a normal start logs a handful.
  sleep 2
  local loops; loops=$(tail -c +"$from" "$LOG" | grep -c 'Lock on resource /ledgers/available/.* was invalidated' || true)
  if ((loops > 200)) && [[ -z ${PULSAR_RESTARTED_FOR_LOOP:-} ]]; then
    say "Pulsar's bookie re-registers in a loop ($loops times in its first seconds): restarting it once"
    stop
    PULSAR_RESTARTED_FOR_LOOP=1 start
    return 0
  fi
  say "Pulsar ready: pulsar://127.0.0.1:6650, http://127.0.0.1:$WEB_PORT"
}

stop() { stop_pid pulsar "$PID" 60; }

restart() {
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$WEB_PORT"; then
    # Not ours: the broker another checkout started, which the tests here use.
    restart_listener pulsar "$WEB_PORT" 'org\.apache\.pulsar\.PulsarStandaloneStarter' ready "${TIMER_LOCAL_PULSAR_START_TIMEOUT:-180}" 60
    say "Pulsar ready: pulsar://127.0.0.1:6650, http://127.0.0.1:$WEB_PORT"
    return 0
  fi
  stop
  start
}

status() {
  if ready; then echo "pulsar: up (http://127.0.0.1:$WEB_PORT)"; else echo "pulsar: down"; return 1; fi
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  status) status ;;
  *) echo "usage: $0 install|start|stop|restart|status" >&2; exit 2 ;;
esac
