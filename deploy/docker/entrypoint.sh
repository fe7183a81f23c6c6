#!/bin/sh
# Container entry point: `timer <role>` runs one role, `timer migrate` applies the schema and exits.
set -eu
role=${1:-api}
cd /app
case "$role" in
  api|migrator|scheduler|trigger|executor)
    exec node -r ./scripts/register-paths.js "dist/apps/$role/src/main.js" ;;
  migrate)
    exec node -r ./scripts/register-paths.js dist/apps/migrator/src/cli/migrate.js ;;
  *)
    echo "usage: timer api|migrator|scheduler|trigger|executor|migrate" >&2
    exit 2 ;;
esac
