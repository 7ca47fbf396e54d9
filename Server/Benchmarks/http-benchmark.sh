#!/usr/bin/env bash
# Fetch throughput and latency of `vane serve`, beside Hummingbird's hello-world route measured in
# the same run. Release build, loopback only, bounded in time. Needs wrk (apt-get install wrk).
#
#   Server/Benchmarks/http-benchmark.sh [seconds-per-run]     (default 15)
#
# Prints a Markdown table for docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
connections=64
threads=2
scratch=.build-release

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
swift build -c release --scratch-path "$scratch" --product vane >/dev/null
swift build -c release --scratch-path "$scratch" --product vane-http-baseline >/dev/null
bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)

work=$(mktemp -d)
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
pids=()
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
hello_port=$(free_port)
vane_port=$(free_port)
admin=vane_admin_benchmark-key-000000000000000000000000000

"$bin/vane-http-baseline" "$hello_port" >"$work/hello.log" 2>&1 &
pids+=($!)
VANE_LOG_LEVEL=error "$bin/vane" serve --port "$vane_port" --data-dir "$work/data" --admin-key "$admin" --rate-limit 0 --address-rate-limit 0 --key-rate-limit 0 --no-demo \
    >"$work/vane.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$vane_port/readyz" >/dev/null && curl -sf "http://127.0.0.1:$hello_port/" >/dev/null && break
    sleep 0.1
done

api() { curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' "$@"; }
base="http://127.0.0.1:$vane_port/v1/projects/bench/environments/prod"
api -X POST "http://127.0.0.1:$vane_port/v1/projects" -d '{"id": "bench"}' >/dev/null
api -X POST "http://127.0.0.1:$vane_port/v1/projects/bench/environments" -d '{"id": "prod"}' >/dev/null

# A 200-parameter template: 40 conditions of the common kinds, 0-3 conditional values each.
python3 - >"$work/template.json" <<'PY'
import json, random
random.seed(7)
countries = ["us", "gb", "de", "fr", "at", "jp", "br", "in", "ca", "au"]
kinds = [
    lambda i: "device.country in [%s]" % ", ".join("'%s'" % c for c in random.sample(countries, 3)),
    lambda i: "app.version.>=(['%d.%d.0'])" % (random.randint(1, 4), random.randint(0, 9)),
    lambda i: "percent('seed_%d') <= %d" % (i, random.randint(1, 99)),
    lambda i: "device.os == 'ios' && device.language in ['en', 'de']",
    lambda i: "app.customSignal['plan'].exactlyMatches(['pro', 'team']) && app.customSignal['seats'] >= %d" % (i % 50),
]
conditions = [{"name": "c%d" % i, "expression": kinds[i % len(kinds)](i)} for i in range(40)]
parameters = {}
for i in range(200):
    p = {"defaultValue": {"value": "default value %d" % i}}
    values = {"c%d" % random.randrange(40): {"value": "variant %d" % random.randrange(5)} for _ in range(random.randint(0, 3))}
    if values:
        p["conditionalValues"] = values
    parameters["parameter_%d" % i] = p
print(json.dumps({"conditions": conditions, "parameters": parameters}))
PY
api -X PUT "$base/template" -H 'If-Match: *' --data-binary @"$work/template.json" >/dev/null
client=$(api -X POST "http://127.0.0.1:$vane_port/v1/keys" -d '{"name": "bench", "role": "client", "project": "bench", "environment": "prod"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')

body='{"context": {"randomizationId": "8f14e45f-ceea-467f-a0e6-1c4f7c1d2a3b", "device.country": "de", "device.os": "ios", "device.language": "de", "app.version": "3.2.1", "plan": "pro", "seats": 12}}'
etag=$(curl -s -D - -o /dev/null -X POST "$base/fetch" -H "Authorization: Bearer $client" -d "$body" | awk 'tolower($1)=="etag:" {print $2}' | tr -d '\r')
entries=$(curl -s -X POST "$base/fetch" -H "Authorization: Bearer $client" -d "$body" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')

lua() { # $1 file, $2 extra header line
    cat >"$1" <<LUA
wrk.method = "POST"
wrk.body = [[$body]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $client"
$2
LUA
}
lua "$work/full.lua" ""
lua "$work/notmodified.lua" "wrk.headers[\"If-None-Match\"] = [[$etag]]"
# The same values without the proof (as after a publish that changed nothing for this user): 304 after evaluating.
values_only="\"$(tr -d '"' <<<"$etag" | cut -d. -f1)\""
lua "$work/evaluated304.lua" "wrk.headers[\"If-None-Match\"] = [[$values_only]]"

run() { # name url [script]
    local out
    if [ -n "${3:-}" ]; then
        out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$3" "$2")
    else
        out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$2")
    fi
    local rps p50 p99 non2xx
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    non2xx=$(awk '/Non-2xx or 3xx/ {print $5}' <<<"$out")
    echo "$1|$rps|$p50|$p99|${non2xx:-0}"
}

# Hello world runs before each route and once more at the end: a route's ratio is taken against
# the mean of the two hello-world runs around it, so a host whose speed drifts during the run
# (shared machines do) skews the ratio as little as possible.
hello() { run "Hummingbird hello world (baseline)" "http://127.0.0.1:$hello_port/"; }
routes=(
    "fetch, 304 Not Modified path|$work/notmodified.lua"
    "fetch, 304 after evaluating (ETag without proof)|$work/evaluated304.lua"
    "fetch, full evaluation (200 parameters, $entries entries)|$work/full.lua"
)
baselines=("$(hello)")
results=()
for route in "${routes[@]}"; do
    results+=("$(run "${route%%|*}" "$base/fetch" "${route#*|}")")
    baselines+=("$(hello)")
done

rps_of() { cut -d'|' -f2 <<<"$1"; }
echo "wrk -t$threads -c$connections -d${duration}s --latency, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| route | requests/s | ratio to hello world | p50 | p99 | non-2xx/3xx |"
echo "|---|---|---|---|---|---|"
hello_rps=$(for line in "${baselines[@]}"; do rps_of "$line"; done | tr '\n' ' ')
IFS='|' read -r name _ p50 p99 errors <<<"${baselines[0]}"
echo "| $name, ${#baselines[@]} runs | $(python3 -c "r=[float(x) for x in '$hello_rps'.split()]; print(f'{min(r):.0f}–{max(r):.0f}')") | 100 % | $p50 | $p99 | $errors |"
for index in "${!results[@]}"; do
    IFS='|' read -r name rps p50 p99 errors <<<"${results[$index]}"
    before=$(rps_of "${baselines[$index]}")
    after=$(rps_of "${baselines[$((index + 1))]}")
    ratio=$(python3 -c "print(f'{$rps / (($before + $after) / 2) * 100:.0f} %')")
    echo "| $name | $rps | $ratio | $p50 | $p99 | $errors |"
done
