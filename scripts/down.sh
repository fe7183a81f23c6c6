#!/usr/bin/env bash
# npm run down: stops the five roles (SIGTERM: each drains its in-flight work), then the
# infrastructure that deploy/local started.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/deploy/local/lib.sh"
cd "$ROOT"

# Each role drains on its own: signal them together, then wait for all.
for r in api migrator scheduler trigger executor; do stop_pid "$r" "$RUN_DIR/$r.pid" 40 & done
wait
bash deploy/local/infra.sh down
say "stopped"
