#!/bin/sh
# Container entry point: `timer <role>` runs one role, `timer migrate` applies the schema and exits,
# `timer ops <command> [options]` is the operators' command (README, "Operations"), e.g.
# `docker run --rm -e TIMER_PULSAR_URL=... IMAGE ops replay --max 100`; `timer timerctl <command>` is the
# api's command line (apps/timerctl/README.md), e.g. `docker run --rm -e TIMER_URL=... IMAGE timerctl timers list`.
set -eu
role=${1:-api}
[ $# -gt 0 ] && shift
cd /app
case "$role" in
  api|migrator|scheduler|trigger|executor)
    exec node -r ./scripts/register-paths.js "dist/apps/$role/src/main.js" ;;
  migrate)
    exec node -r ./scripts/register-paths.js dist/apps/migrator/src/cli/migrate.js ;;
  ops)
    exec node -r ./scripts/register-paths.js dist/apps/ops/src/main.js "$@" ;;
  timerctl)
    exec node -r ./scripts/register-paths.js dist/apps/timerctl/src/main.js "$@" ;;
  *)
    echo "usage: timer api|migrator|scheduler|trigger|executor|migrate|ops|timerctl [arguments]" >&2
    exit 2 ;;
esac
