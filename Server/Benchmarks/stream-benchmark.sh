#!/usr/bin/env bash
# Event-stream fan-out: publish-to-delivery latency (p50/p99) and server memory per idle subscriber
# of `vane serve` with 1,000 and 10,000 subscribers, beside Hummingbird holding the same number of
# bare SSE connections. Release build, loopback only, bounded in time (about 2 minutes).
#
#   Server/Benchmarks/stream-benchmark.sh [subscriber counts…]     (default 1000 10000)
#
# Prints a Markdown table for docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-release
for product in vane vane-http-baseline vane-stream-benchmark; do
    swift build -c release --scratch-path "$scratch" --product "$product" >/dev/null
done
bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)
exec timeout 600 "$bin/vane-stream-benchmark" "$bin" "$@"
