#!/usr/bin/env bash
# Soak: two `vane serve` nodes (release build) on one throw-away PostgreSQL server, for MINUTES:
# a publisher, thousands of fetchers, event-stream subscribers that drop their connections
# abruptly, and node B killed with SIGKILL and restarted every minute. Fails unless every
# acknowledged version is kept, node A never answers 5xx, and node A's memory does not grow after
# warm-up. See Soak/soak.py; figures go to docs/PERFORMANCE.md.
#
# Usage: Server/Benchmarks/soak.sh [MINUTES]   (default 10)
#   SOAK_FETCHERS (2000), SOAK_SUBSCRIBERS (200), SOAK_KILL_EVERY (60 s) tune the load; VANE_BIN
#   names a vane binary to run instead of building in release.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-10}
# The same release build the other benchmarks use (a --product build would rebuild everything),
# unless VANE_BIN names a vane binary (scripts/check-benchmarks passes the debug build).
if [ -z "${VANE_BIN:-}" ]; then
    swift build --package-path Server -c release --scratch-path Server/.build-release
    VANE_BIN="$(swift build --package-path Server -c release --scratch-path Server/.build-release --show-bin-path)/vane"
fi
# Each fetcher holds a socket; the default soft limit of 1024 would starve them.
ulimit -n "$(ulimit -Hn)"
exec scripts/with-postgres bash -c \
    'exec python3 Server/Benchmarks/Soak/soak.py "$0" "$1" "$VANE_TEST_POSTGRES_URL"' "$minutes" "$VANE_BIN"
