#!/usr/bin/env bash
# Event-stream fan-out: publish-to-delivery latency (p50/p99) and server memory per idle subscriber
# of `vane serve` with 1,000 and 10,000 subscribers, beside Hummingbird holding the same number of
# bare SSE connections and beside the floor, swift-nio alone writing one encoded event to every
# channel from its event loop; and the delay from a rollout guard's roll-back decision to each
# subscriber's receipt of its version (issue #30). Release build, loopback only, bounded in time
# (about 3 minutes).
#
#   Server/Benchmarks/stream-benchmark.sh [subscriber counts…]     (default 1000 10000)
#
# VANE_BIN names a vane binary to measure instead of building in release; vane-http-baseline and
# vane-stream-benchmark are taken from the same folder (scripts/check-benchmarks passes the debug
# build). STREAM_PUBLISHES (10) sets the publishes per run, STREAM_ROLLBACKS (3) the guard roll
# backs per run (0: none).
# Prints a Markdown table for docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-release
if [ -z "${VANE_BIN:-}" ]; then
    for product in vane vane-http-baseline vane-stream-benchmark; do
        swift build -c release --scratch-path "$scratch" --product "$product" >/dev/null
    done
    VANE_BIN="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/vane"
fi
bin=$(cd "$(dirname "$VANE_BIN")" && pwd)
# Each subscriber is a socket in the client and one in each server.
ulimit -n "$(ulimit -Hn)"
exec timeout 600 "$bin/vane-stream-benchmark" "$bin" "$@"
