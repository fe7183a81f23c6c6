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
  if ! pid_alive "$file"; then rm -f "$file"; return 0; fi
  local pid; pid=$(cat "$file")
  say "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + timeout))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then say "$name ignored SIGTERM for ${timeout}s; killing"; kill -KILL "$pid" 2>/dev/null || true; break; fi
    sleep 0.2
  done
  rm -f "$file"
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
