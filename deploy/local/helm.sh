#!/usr/bin/env bash
# Builds Helm from its Go module into $LOCAL_DIR/bin (no prebuilt binary download), once per version.
# Prints the path of the binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION=${TIMER_LOCAL_HELM_VERSION:-v3.19.5}
BIN=$LOCAL_DIR/bin
HELM=$BIN/helm-$HELM_VERSION

if [[ ! -x $HELM ]]; then
  command -v go >/dev/null 2>&1 || apt_install golang-go
  say "building helm $HELM_VERSION from its Go module (first time only; a few minutes)" >&2
  mkdir -p "$BIN"
  tmp=$(mktemp -d)
  GOBIN=$tmp CGO_ENABLED=0 go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >"$LOG_DIR/helm-build.log" 2>&1 \
    || die "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed (see $LOG_DIR/helm-build.log)"
  mv "$tmp/helm" "$HELM"
  rm -rf "$tmp"
fi
echo "$HELM"
