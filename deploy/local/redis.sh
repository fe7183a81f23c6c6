#!/usr/bin/env bash
# Redis from Debian's package, run by the project on 127.0.0.1:6379 with its own directory.
#   redis.sh start | stop | status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${TIMER_LOCAL_REDIS_PORT:-6379}
DIR=$LOCAL_DIR/redis
PID=$RUN_DIR/redis.pid
LOG=$LOG_DIR/redis.log

ready() { [[ $(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null) == PONG ]]; }

start() {
  if pid_alive "$PID" && ready; then say "Redis already running (pid $(cat "$PID"))"; return 0; fi
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$PORT"; then
    say "something already listens on 127.0.0.1:$PORT; assuming it is a Redis set up by hand"
    return 0
  fi
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  mkdir -p "$DIR"
  say "starting Redis on 127.0.0.1:$PORT (log: $LOG)"
  # The hot index and locks are rebuilt from MySQL, so an append-only file (fsync every second) is
  # enough durability; RDB snapshots are off to keep latency flat.
  setsid redis-server --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --pidfile "$RUN_DIR/redis-server.pid" \
    --logfile "$LOG" --daemonize no --save '' --appendonly yes --appendfsync everysec \
    --protected-mode yes </dev/null >>"$LOG" 2>&1 &
  echo $! >"$PID"
  wait_started "Redis (127.0.0.1:$PORT)" "$PID" "$LOG" 30 ready
  say "Redis ready: redis://127.0.0.1:$PORT"
}

stop() { stop_pid redis "$PID" 30; }

status() {
  if ready; then echo "redis: up (127.0.0.1:$PORT)"; else echo "redis: down"; return 1; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  *) echo "usage: $0 start|stop|restart|status" >&2; exit 2 ;;
esac
