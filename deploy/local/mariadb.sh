#!/usr/bin/env bash
# MariaDB from Debian's package, run by the project on 127.0.0.1:3306 with its own data directory,
# plus the `timer` user and the `timer` (system) and `timer_test*` (test suite) databases.
#   mariadb.sh start | stop | status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${TIMER_LOCAL_MYSQL_PORT:-3306}
HOME_DIR=$LOCAL_DIR/mariadb
DATA=$HOME_DIR/data
SOCK=$RUN_DIR/mariadb.sock
PID=$RUN_DIR/mariadb.pid
LOG=$LOG_DIR/mariadb.log
DB_USER=${TIMER_LOCAL_MYSQL_USER:-timer}
DB_PASS=${TIMER_LOCAL_MYSQL_PASSWORD:-timer}

client() { mariadb --protocol=socket --socket="$SOCK" -uroot "$@"; }
ready() { client -e 'select 1'; }

provision() {
  client <<SQL
CREATE DATABASE IF NOT EXISTS timer CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE DATABASE IF NOT EXISTS timer_test CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL PRIVILEGES ON timer.* TO '$DB_USER'@'127.0.0.1', '$DB_USER'@'localhost';
-- timer_test and timer_test_<id>: the suite's own databases (some tests create a fresh one).
GRANT ALL PRIVILEGES ON \`timer\\_test%\`.* TO '$DB_USER'@'127.0.0.1', '$DB_USER'@'localhost';
SQL
}

start() {
  if pid_alive "$PID" && ready >/dev/null 2>&1; then say "MariaDB already running (pid $(cat "$PID"))"; return 0; fi
  if ! pid_alive "$PID" && port_open 127.0.0.1 "$PORT"; then
    say "something already listens on 127.0.0.1:$PORT; assuming it is a MySQL-compatible server set up by hand"
    return 0
  fi
  command -v mariadbd >/dev/null 2>&1 || apt_install mariadb-server
  mkdir -p "$HOME_DIR"
  if [[ ! -d $DATA/mysql ]]; then
    say "initialising a MariaDB data directory in $DATA"
    mariadb-install-db --no-defaults --datadir="$DATA" --user="$(id -un)" --auth-root-authentication-method=socket \
      --skip-test-db >"$LOG_DIR/mariadb-install.log" 2>&1 || die "mariadb-install-db failed (see $LOG_DIR/mariadb-install.log)"
  fi
  say "starting MariaDB on 127.0.0.1:$PORT (log: $LOG)"
  # UTC session time zone and strict mode: the schema stores epoch ms, and a value that does not fit
  # must fail loudly rather than be truncated.
  # InnoDB sized for the fire rows' write rate (docs/scaling.md, "MariaDB's redo log"): with the default
  # 96 MB redo log, 5,000 fires/s keeps the checkpoint age near its limit and the page cleaner flushing
  # hard; a 1 GB log and a 2 GB pool cut MariaDB's CPU per fire. TIMER_MARIADB_POOL / _REDO override them.
  setsid mariadbd --no-defaults --datadir="$DATA" --user="$(id -un)" --bind-address=127.0.0.1 --port="$PORT" \
    --socket="$SOCK" --pid-file="$RUN_DIR/mariadbd.pid" --log-error="$LOG" --default-time-zone=+00:00 \
    --sql-mode=STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_bin --max-connections=500 \
    --innodb-buffer-pool-size="${TIMER_MARIADB_POOL:-2G}" --innodb-log-file-size="${TIMER_MARIADB_REDO:-1G}" \
    --innodb-io-capacity=2000 --innodb-flush-log-at-trx-commit=2 --skip-name-resolve \
    </dev/null >>"$LOG" 2>&1 &
  echo $! >"$PID"
  wait_started "MariaDB (127.0.0.1:$PORT)" "$PID" "$LOG" 60 ready
  provision
  say "MariaDB ready: mysql://$DB_USER:***@127.0.0.1:$PORT/timer"
}

stop() { stop_pid mariadb "$PID" 60; }

status() {
  if port_open 127.0.0.1 "$PORT"; then echo "mariadb: up (127.0.0.1:$PORT)"; else echo "mariadb: down"; return 1; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  *) echo "usage: $0 start|stop|restart|status" >&2; exit 2 ;;
esac
