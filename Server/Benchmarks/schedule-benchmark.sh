#!/usr/bin/env bash
# Scheduled change requests under a crash loop (issue #29): two `vane serve` nodes (release build)
# on one throw-away PostgreSQL server; each round schedules many change requests due within a
# couple of seconds and kills node A with SIGKILL halfway through, then starts it again. Fails
# unless every request applied exactly once (none twice, none missed) and the p99 lag after the
# due time is under a second. See Schedule/schedule.py; figures go to docs/PERFORMANCE.md.
#
# Usage: Server/Benchmarks/schedule-benchmark.sh [ROUNDS] [REQUESTS] [ENVIRONMENTS] [WINDOW-SECONDS]
#        (default 10 rounds of 40 requests over 4 environments due within 2 s)
#        VANE_BIN names a vane binary to run instead of building in release.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-10}
requests=${2:-40}
environments=${3:-4}
window=${4:-2}
# The same release build the other benchmarks use, unless VANE_BIN names a vane binary
# (scripts/check-benchmarks passes the debug build).
if [ -z "${VANE_BIN:-}" ]; then
    swift build --package-path Server -c release --scratch-path Server/.build-release --product vane
    VANE_BIN="$(swift build --package-path Server -c release --scratch-path Server/.build-release --show-bin-path)/vane"
fi
exec scripts/with-postgres bash -c \
    'exec python3 Server/Benchmarks/Schedule/schedule.py "$0" "$VANE_TEST_POSTGRES_URL" "$VANE_TEST_POSTGRES_BIN/psql" "$@"' \
    "$VANE_BIN" "$rounds" "$requests" "$environments" "$window"
