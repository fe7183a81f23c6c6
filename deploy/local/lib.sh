# Shared helpers for the local-infrastructure scripts. Sourced, not run.
# Everything these scripts write lives under $LOCAL_DIR (git-ignored): data, logs, pid files, jars.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LOCAL_DIR=${TIMER_LOCAL_DIR:-$ROOT/.local}
LOG_DIR=$LOCAL_DIR/logs
RUN_DIR=$LOCAL_DIR/run
mkdir -p "$LOG_DIR" "$RUN_DIR"

say() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# wait_started NAME PIDFILE LOG TIMEOUT_S READY_FN: waits for READY_FN, failing at once with the log's
# tail when the started process died instead of waiting out the timeout.
wait_started() {
  local name=$1 pidfile=$2 log=$3 timeout=$4 ready_fn=$5
  local deadline=$((SECONDS + timeout))
  until "$ready_fn" >/dev/null 2>&1; do
    if ! pid_alive "$pidfile"; then tail -n 30 "$log" >&2; die "$name exited during start-up (log: $log)"; fi
    if ((SECONDS >= deadline)); then die "$name did not come up within ${timeout}s (log: $log)"; fi
    sleep 0.5
  done
}

# pid_alive FILE: the pid recorded in FILE runs.
pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid NAME FILE [TIMEOUT_S]: SIGTERM, wait, then SIGKILL; removes the pid file.
stop_pid() {
  local name=$1 file=$2 timeout=${3:-30}
  if pid_alive "$file"; then stop_process "$name" "$(cat "$file")" "$timeout"; fi
  rm -f "$file"
}

# stop_process NAME PID TIMEOUT_S: SIGTERM, wait, then SIGKILL.
stop_process() {
  local name=$1 pid=$2 timeout=$3
  say "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + timeout))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then say "$name ignored SIGTERM for ${timeout}s; killing"; kill -KILL "$pid" 2>/dev/null || true; break; fi
    sleep 0.2
  done
}

# listener_pid PORT: the pid of the process listening on TCP PORT; empty when there is none or it is
# not ours to see.
listener_pid() {
  command -v ss >/dev/null 2>&1 || apt_install iproute2
  ss -Hltnp "sport = :$1" | sed -nE 's/.*pid=([0-9]+).*/\1/p' | head -n 1
}

# restart_listener NAME PORT PATTERN READY_FN START_TIMEOUT_S STOP_TIMEOUT_S: restarts the server on
# PORT that another checkout's scripts started (its `npm run up`): a test that restarts a server must
# restart the one it talks to, whoever started it. Only a process whose command line matches PATTERN
# and that its checkout's $RUN_DIR/NAME.pid names is touched; anything else stops with the reason.
# It runs again with the same command line, working directory, environment and log, and the owner's
# pid file follows the new pid, so the owner's `npm run down` still stops it.
restart_listener() {
  local name=$1 port=$2 pattern=$3 ready_fn=$4 start_timeout=$5 stop_timeout=$6
  local pid; pid=$(listener_pid "$port")
  [[ -n $pid ]] || die "cannot restart $name: the process listening on port $port is not visible to $(id -un)"
  local -a cmd environ
  mapfile -d '' -t cmd <"/proc/$pid/cmdline"
  [[ ${cmd[*]} =~ $pattern ]] || die "cannot restart $name: port $port is served by pid $pid ($(basename "${cmd[0]}")), which is not $name"
  # Started by deploy/local: its output goes to <checkout's LOCAL_DIR>/logs/NAME.log.
  local log owner cwd
  log=$(readlink "/proc/$pid/fd/1")
  owner=$(dirname "$(dirname "$log")")/run/$name.pid
  [[ -f $owner && $(cat "$owner") == "$pid" ]] \
    || die "cannot restart $name: pid $pid on port $port was not started by deploy/local (of this or another checkout); restart it by hand"
  cwd=$(readlink "/proc/$pid/cwd")
  mapfile -d '' -t environ <"/proc/$pid/environ"
  say "restarting the $name started from $(dirname "$(dirname "$owner")") (pid $pid, port $port)"
  stop_process "$name" "$pid" "$stop_timeout"
  (cd "$cwd" && exec setsid env -i "${environ[@]}" "${cmd[@]}") >>"$log" 2>&1 </dev/null &
  echo $! >"$owner"
  wait_started "$name (port $port)" "$owner" "$log" "$start_timeout" "$ready_fn"
}

# apt_install PKG...: installs Debian packages that are missing (needs root, as on these machines).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  say "installing ${missing[*]} from Debian packages"
  local sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq >"$LOG_DIR/apt.log" 2>&1 || die "apt-get update failed (see $LOG_DIR/apt.log)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$LOG_DIR/apt.log" 2>&1 \
    || die "apt-get install ${missing[*]} failed (see $LOG_DIR/apt.log)"
}
