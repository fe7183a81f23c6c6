#!/usr/bin/env bash
# npm run up: everything on one machine. Installs what is missing, starts MariaDB, Redis and Pulsar,
# builds, migrates the schema, starts the five roles as separate processes and returns once each
# /health answers 200. The roles read the TIMER_* variables of this shell (see README).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/deploy/local/lib.sh"
cd "$ROOT"

ROLES=(api migrator scheduler trigger executor)
declare -A PORT=([api]=8092 [migrator]=8093 [scheduler]=8094 [trigger]=8095 [executor]=8096)
for r in "${ROLES[@]}"; do
  v="TIMER_LOCAL_${r^^}_PORT"; [[ -n ${!v:-} ]] && PORT[$r]=${!v}
done

if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  say "installing npm dependencies"
  npm ci --no-audit --no-fund >"$LOG_DIR/npm-ci.log" 2>&1 || die "npm ci failed (see $LOG_DIR/npm-ci.log)"
fi
bash deploy/local/infra.sh up
say "building"
npm run -s build
say "migrating the schema"
node -r ./scripts/register-paths.js dist/apps/migrator/src/cli/migrate.js

# Local defaults, unless this shell sets them: the admin token the README's quick start uses, and
# callbacks to loopback (the quick start's receiver listens on 127.0.0.1).
export TIMER_ADMIN_TOKEN="${TIMER_ADMIN_TOKEN:-local-admin-token-change-me}"
export TIMER_CALLBACK_ALLOW_PRIVATE="${TIMER_CALLBACK_ALLOW_PRIVATE:-true}"
# The roles' young generation, as in the image (docs/configuration.md, "Node").
export NODE_OPTIONS="${NODE_OPTIONS:---max-semi-space-size=64}"
for r in "${ROLES[@]}"; do
  pid=$RUN_DIR/$r.pid
  if pid_alive "$pid"; then say "$r already running (pid $(cat "$pid"))"; continue; fi
  TIMER_HTTP_PORT=${PORT[$r]} setsid node -r ./scripts/register-paths.js "dist/apps/$r/src/main.js" \
    </dev/null >>"$LOG_DIR/$r.log" 2>&1 &
  echo $! >"$pid"
done

healthy() { curl -sf -o /dev/null --max-time 3 "http://127.0.0.1:$1/health"; }
for r in "${ROLES[@]}"; do
  deadline=$((SECONDS + 90))
  until healthy "${PORT[$r]}"; do
    if ! pid_alive "$RUN_DIR/$r.pid" || ((SECONDS >= deadline)); then
      tail -n 20 "$LOG_DIR/$r.log" >&2
      die "$r did not become healthy on port ${PORT[$r]} (log: $LOG_DIR/$r.log)"
    fi
    sleep 0.5
  done
done

echo
say "timer service is up"
printf '  %-10s %s\n' "API" "http://127.0.0.1:${PORT[api]}/api/timer/v1/def"
for r in "${ROLES[@]}"; do printf '  %-10s http://127.0.0.1:%s/health   (log: %s)\n' "$r" "${PORT[$r]}" "$LOG_DIR/$r.log"; done
printf '  %-10s %s\n' "console" "http://127.0.0.1:${PORT[api]}/console/"
printf '  %-10s %s\n' "token" "TIMER_ADMIN_TOKEN=$TIMER_ADMIN_TOKEN (admin: acts on every app)"
printf '  %-10s %s\n' "stop" "npm run down"
