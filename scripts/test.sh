#!/usr/bin/env bash
# npm test: the whole suite. Makes sure MariaDB, Redis and Pulsar run (starting them if needed, left
# running for the next run; `npm run down` stops them), type-checks, lints, builds (the e2e tests
# start the built roles as processes) and runs every Jest project. Extra arguments go to Jest.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/deploy/local/lib.sh"
cd "$ROOT"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
if [[ -z ${TIMER_MYSQL_URL:-}${TIMER_REDIS_URL:-}${TIMER_PULSAR_URL:-} ]]; then
  bash deploy/local/infra.sh up
fi
# The chart tests render with a real Helm, built once from its Go module.
TIMER_HELM_BIN=$(bash deploy/local/helm.sh)
export TIMER_HELM_BIN
# The alerting rules' unit tests run with promtool, built the same way (about 5 minutes the first
# time). Its build depends on a pinned replacement module: if it fails, say so and run the rules'
# structural tests without it rather than failing the whole suite.
if ! TIMER_PROMTOOL_BIN=$(bash deploy/local/promtool.sh); then
  say "WARNING: promtool could not be built (see .local/logs/promtool-build.log): the alert rules' promtool tests are skipped"
  TIMER_PROMTOOL_BIN=""
fi
export TIMER_PROMTOOL_BIN
say "type-check";  npm run -s typecheck
say "lint";        npm run -s lint
say "build";       npm run -s build
say "jest"
results=$LOCAL_DIR/jest-results.json
rc=0
# In band: one integration test restarts the broker, and no other test may run meanwhile.
npx jest --ci --runInBand --json --outputFile="$results" "$@" || rc=$?
# The plain closing line CI reads; Jest's own summary is above it.
node -e '
  const r = require(process.argv[1]);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$results" 2>/dev/null || true
exit $rc
