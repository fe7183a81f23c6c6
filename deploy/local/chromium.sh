#!/usr/bin/env bash
# Debian's chromium for the console's browser tests (driven by puppeteer-core, which never downloads a
# browser of its own). Installs the package when it is missing and prints the executable's path.
#   TIMER_CHROMIUM_BIN=/path/to/chrome skips the install and prints that path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ -n ${TIMER_CHROMIUM_BIN:-} ]]; then
  [[ -x $TIMER_CHROMIUM_BIN ]] || die "TIMER_CHROMIUM_BIN=$TIMER_CHROMIUM_BIN is not an executable"
  echo "$TIMER_CHROMIUM_BIN"
  exit 0
fi
command -v chromium >/dev/null 2>&1 || apt_install chromium >&2
command -v chromium
