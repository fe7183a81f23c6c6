#!/usr/bin/env bash
# The local infrastructure as one unit: MariaDB, Redis and a Pulsar broker on loopback.
#   infra.sh up      install what is missing, start what is not running, wait until each answers
#   infra.sh down    stop what these scripts started (servers set up by hand are left alone)
#   infra.sh status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
D=$ROOT/deploy/local

case "${1:-}" in
  up)
    command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
    # Install first (apt is not re-entrant), then start the three side by side.
    command -v mariadbd >/dev/null 2>&1 || apt_install mariadb-server
    command -v redis-server >/dev/null 2>&1 || apt_install redis-server
    bash "$D/pulsar.sh" install
    bash "$D/redis.sh" start
    bash "$D/mariadb.sh" start &
    db=$!
    bash "$D/pulsar.sh" start
    wait "$db" || die "MariaDB did not start"
    ;;
  down)
    bash "$D/pulsar.sh" stop
    bash "$D/mariadb.sh" stop
    bash "$D/redis.sh" stop
    ;;
  status)
    rc=0
    bash "$D/mariadb.sh" status || rc=1
    bash "$D/redis.sh" status || rc=1
    bash "$D/pulsar.sh" status || rc=1
    exit $rc
    ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
