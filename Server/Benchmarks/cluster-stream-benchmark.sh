#!/usr/bin/env bash
# Event-stream fan-out across nodes (issue #32): NODES `vane serve` processes on one throw-away
# PostgreSQL server, SUBSCRIBERS idle streams on each (held by one client process per node: one
# process holds at most ~19,500 sockets here), publishes made on the first node; prints
# publish → delivery p50/p99/max per node and over all, and server memory per subscriber.
# Release build, loopback only, bounded in time.
#
#   Server/Benchmarks/cluster-stream-benchmark.sh [nodes] [subscribers-per-node]   (default 4 5000)
#
# VANE_BIN names a vane binary to measure instead of building in release; vane-stream-benchmark
# is taken from the same folder (scripts/check-benchmarks passes the debug build).
# STREAM_PUBLISHES (10) sets the publishes, one a second. Fails when a subscriber missed one.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-4}
subscribers=${2:-5000}
scratch=.build-release
if [ -z "${VANE_BIN:-}" ]; then
    for product in vane vane-stream-benchmark; do
        swift build -c release --scratch-path "$scratch" --product "$product" >/dev/null
    done
    VANE_BIN="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/vane"
fi
bin=$(cd "$(dirname "$VANE_BIN")" && pwd)
# Each subscriber is a socket in a client process and one in a server.
ulimit -n "$(ulimit -Hn)"
exec timeout 900 ../scripts/with-postgres "$bin/vane-stream-benchmark" "$bin" cluster "$nodes" "$subscribers"
