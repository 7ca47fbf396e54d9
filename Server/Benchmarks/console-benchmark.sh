#!/usr/bin/env bash
# Server-side render time of the console's flags and review pages on the 3,000-parameter /
# 2,000-condition template, beside the same server's /healthz as the baseline. See
# Console/console_bench.py for what it does.
#
#   Server/Benchmarks/console-benchmark.sh [ROUNDS]      (default 40)
#
# Builds vane in release (the scratch path the other benchmarks share) unless VANE_BIN names a
# binary. CONSOLE_PARAMETERS (3000), CONSOLE_CONDITIONS (2000) and CONSOLE_CHANGES (20, the flags
# the draft changes) size the work.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-40}
if [ -z "${VANE_BIN:-}" ]; then
    log=$(mktemp)
    swift build -c release --package-path Server --scratch-path Server/.build-release --product vane >"$log" 2>&1 ||
        { cat "$log" >&2; exit 1; }
    rm -f "$log"
    VANE_BIN="$(swift build -c release --package-path Server --scratch-path Server/.build-release --show-bin-path)/vane"
fi
exec python3 Server/Benchmarks/Console/console_bench.py "$VANE_BIN" --rounds "$rounds" \
    --parameters "${CONSOLE_PARAMETERS:-3000}" --conditions "${CONSOLE_CONDITIONS:-2000}" \
    --changes "${CONSOLE_CHANGES:-20}"
