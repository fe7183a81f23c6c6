#!/usr/bin/env bash
# Builds promtool (Prometheus' rule checker and rule unit-test runner) from its Go module into
# $LOCAL_DIR/bin (no prebuilt binary download), once per version. Prints the path of the binary.
#
# `go install github.com/prometheus/prometheus/cmd/promtool@<v>` does not work as is: older modules
# carry replace directives, and v0.316.0 requires a pseudo-version of github.com/hashicorp/nomad/api
# that the Go module proxy does not serve. So it is built from a throwaway module that requires
# Prometheus and replaces only that dependency with the newest version the proxy has.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PROM_VERSION=${TIMER_LOCAL_PROMETHEUS_VERSION:-v0.316.0}   # Prometheus 3.16
NOMAD_API=${TIMER_LOCAL_NOMAD_API_VERSION:-v0.0.0-20260907080526-08ef8f3d26da}
BIN=$LOCAL_DIR/bin
PROMTOOL=$BIN/promtool-$PROM_VERSION

if [[ ! -x $PROMTOOL ]]; then
  command -v go >/dev/null 2>&1 || apt_install golang-go
  say "building promtool (prometheus $PROM_VERSION) from its Go module (first time only; a few minutes)" >&2
  mkdir -p "$BIN"
  tmp=$(mktemp -d)
  (
    cd "$tmp"
    go mod init local/promtool-build >/dev/null 2>&1
    go mod edit -require="github.com/prometheus/prometheus@$PROM_VERSION" \
      -replace="github.com/hashicorp/nomad/api=github.com/hashicorp/nomad/api@$NOMAD_API"
    CGO_ENABLED=0 go build -mod=mod -o "$tmp/promtool" github.com/prometheus/prometheus/cmd/promtool
  ) >"$LOG_DIR/promtool-build.log" 2>&1 \
    || { rm -rf "$tmp"; die "building promtool $PROM_VERSION failed (see $LOG_DIR/promtool-build.log)"; }
  mv "$tmp/promtool" "$PROMTOOL"
  rm -rf "$tmp"
fi
echo "$PROMTOOL"
