#!/usr/bin/env bash
# Fetch throughput and latency of `vane serve`, beside Hummingbird's bare routes measured in the
# same run: a POST that reads the same body and answers 304 (the floor under fetch's 304 path),
# hello world (the baseline of full evaluations) and a POST that reads the same body and writes as
# many bytes as a full evaluation (the floor under it). Beside the 304 rows, the floor that also
# takes the steps fetch's 304 path must keep (the key, the body's digest, three token buckets, the
# ETag's proof, the metrics; vane-http-baseline's FetchStepsFloor.swift), against the same bare POST;
# each 304 row is then also given as a share of it. Beside the full evaluations, the same steps
# writing as many bytes, against hello world: each full evaluation is given as a share of both of
# its floors. Each fetch route runs on two nodes: one with every rate limiter off, one with all
# three on at limits wrk cannot reach (the per-request cost of the token buckets is part of the
# deployed path). Release build, loopback only, bounded in time. Needs wrk (apt-get install wrk).
#
#   Server/Benchmarks/http-benchmark.sh [seconds-per-run] [connections]     (default 15, 64)
#   HTTP_ROUNDS=5 Server/Benchmarks/http-benchmark.sh 10
#   HTTP_ROUNDS=15 HTTP_ROUTES='304 Not Modified' Server/Benchmarks/http-benchmark.sh 5   # only the routes named so
#
# Each route runs HTTP_ROUNDS times (default 3), each run between two runs of its baseline
# (baseline, route, baseline, route, …), and each round's ratio is the route's requests/s over the
# mean of the two baseline runs beside it. The table shows the median round: on these shared
# machines a baseline moves by a quarter between one run and the next, so one round's ratio says
# little and the median of several says what the code costs.
# VANE_BIN names a vane binary to measure instead of building one in release; vane-http-baseline
# is taken from the same folder (scripts/check-benchmarks passes the debug build).
# Prints a Markdown table for docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
connections=${2:-64}
rounds=${HTTP_ROUNDS:-3}
threads=2
scratch=.build-release

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${VANE_BIN:-}" ]; then
    swift build -c release --scratch-path "$scratch" --product vane >/dev/null
    swift build -c release --scratch-path "$scratch" --product vane-http-baseline >/dev/null
    VANE_BIN="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/vane"
fi
bin=$(cd "$(dirname "$VANE_BIN")" && pwd)
vane_bin="$bin/$(basename "$VANE_BIN")"

work=$(mktemp -d)
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
pids=()
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
hello_port=$(free_port)
vane_port=$(free_port)
limited_port=$(free_port)
admin=vane_admin_benchmark-key-000000000000000000000000000

"$bin/vane-http-baseline" "$hello_port" >"$work/hello.log" 2>&1 &
pids+=($!)
VANE_LOG_LEVEL=error "$vane_bin" serve --port "$vane_port" --data-dir "$work/data" --admin-key "$admin" \
    --rate-limit 0 --address-rate-limit 0 --key-rate-limit 0 --no-demo >"$work/vane.log" 2>&1 &
pids+=($!)
# The same with every limiter on, at the highest rates a setting takes: wrk never reaches them,
# so every request pays for the three buckets and none is refused.
VANE_LOG_LEVEL=error "$vane_bin" serve --port "$limited_port" --data-dir "$work/data-limited" --admin-key "$admin" \
    --rate-limit 1000000 --address-rate-limit 1000000 --key-rate-limit 1000000 --no-demo >"$work/limited.log" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$vane_port/readyz" >/dev/null && curl -sf "http://127.0.0.1:$limited_port/readyz" >/dev/null &&
        curl -sf "http://127.0.0.1:$hello_port/" >/dev/null; then
        ready=1
        break
    fi
    sleep 0.1
done
[ "$ready" = 1 ] || { echo "the servers did not start:" >&2; cat "$work"/*.log >&2; exit 1; }

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
api() { curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' "$@"; }
body='{"context": {"randomizationId": "8f14e45f-ceea-467f-a0e6-1c4f7c1d2a3b", "device.country": "de", "device.os": "ios", "device.language": "de", "app.version": "3.2.1", "plan": "pro", "seats": 12}}'

lua() { # $1 file, $2 client key, $3 extra header line
    cat >"$1" <<LUA
wrk.method = "POST"
wrk.body = [[$body]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $2"
$3
LUA
}

# Publishes the template on a node, makes a client key and writes the node's wrk scripts: NAME-full,
# NAME-notmodified and NAME-evaluated304.lua.
prepare() { # $1 port, $2 name
    local root="http://127.0.0.1:$1" client etag
    local base="$root/v1/projects/bench/environments/prod"
    api -X POST "$root/v1/projects" -d '{"id": "bench"}' >/dev/null
    api -X POST "$root/v1/projects/bench/environments" -d '{"id": "prod"}' >/dev/null
    api -X PUT "$base/template" -H 'If-Match: *' --data-binary @"$work/template.json" >/dev/null
    client=$(api -X POST "$root/v1/keys" -d '{"name": "bench", "role": "client", "project": "bench", "environment": "prod"}' |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
    etag=$(curl -s -D - -o /dev/null -X POST "$base/fetch" -H "Authorization: Bearer $client" -d "$body" |
        awk 'tolower($1)=="etag:" {print $2}' | tr -d '\r')
    curl -s -X POST "$base/fetch" -H "Authorization: Bearer $client" -d "$body" -o "$work/full.json"
    entries=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))' <"$work/full.json")
    full_bytes=$(wc -c <"$work/full.json")
    lua "$work/$2-full.lua" "$client" ""
    lua "$work/$2-notmodified.lua" "$client" "wrk.headers[\"If-None-Match\"] = [[$etag]]"
    # The same values without the proof (as after a publish that changed nothing for this user):
    # 304 after evaluating.
    local values_only="\"$(tr -d '"' <<<"$etag" | cut -d. -f1)\""
    lua "$work/$2-evaluated304.lua" "$client" "wrk.headers[\"If-None-Match\"] = [[$values_only]]"
}
prepare "$vane_port" open
prepare "$limited_port" limited
# The bare POST reads the same body.
lua "$work/bare.lua" "unused" ""
# The bare POST with the steps fetch's 304 path must take (vane-http-baseline's FetchStepsFloor):
# its key, and the tag it proves for this body.
steps_key=vane_client_floor-key-0000000000000000000000000000
steps_etag=$(curl -s -D - -o /dev/null -X POST "http://127.0.0.1:$hello_port/fetch-steps" -H "Authorization: Bearer $steps_key" \
    -d "$body" | awk 'tolower($1)=="etag:" {print $2}' | tr -d '\r')
[ -n "$steps_etag" ] || { echo "vane-http-baseline's /fetch-steps gave no ETag" >&2; exit 1; }
lua "$work/steps.lua" "$steps_key" "wrk.headers[\"If-None-Match\"] = [[$steps_etag]]"
# The same steps without a tag: a 200 with as many bytes as a full evaluation.
lua "$work/steps-full.lua" "$steps_key" ""

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

# Each route runs between two runs of its baseline (a run of the same baseline is shared by two
# neighbouring routes) and its ratio is taken against their mean, so a host whose speed drifts
# during the run (shared machines do) skews the ratio as little as possible.
baseline() { # kind
    case "$1" in
        bare) run "Hummingbird POST reading the body, 304 (baseline)" "http://127.0.0.1:$hello_port/fetch" "$work/bare.lua" ;;
        hello) run "Hummingbird hello world (baseline)" "http://127.0.0.1:$hello_port/" ;;
    esac
}
floor_name="Hummingbird POST reading the body, 200 with the same $full_bytes bytes (floor of a full evaluation)"
steps_name="Hummingbird POST with the 304 Not Modified path's steps: key, digest, three buckets, proof, metrics (floor of fetch's 304)"
full_steps_name="Hummingbird POST with the same steps, 200 with the same $full_bytes bytes (floor of a full evaluation with its steps)"
open_fetch="http://127.0.0.1:$vane_port/v1/projects/bench/environments/prod/fetch"
limited_fetch="http://127.0.0.1:$limited_port/v1/projects/bench/environments/prod/fetch"
routes=( # baseline|name|url|script
    "bare|fetch, 304 Not Modified path, limiters off|$open_fetch|$work/open-notmodified.lua"
    "bare|fetch, 304 Not Modified path, limiters on|$limited_fetch|$work/limited-notmodified.lua"
    # The floor under the 304 path with its steps: the bare POST plus what the issue says fetch must
    # keep doing, with vane's own types, and none of vane's request context, chain or routing.
    "bare|$steps_name|http://127.0.0.1:$hello_port/fetch-steps|$work/steps.lua"
    "hello|fetch, 304 after evaluating (ETag without proof), limiters off|$open_fetch|$work/open-evaluated304.lua"
    "hello|fetch, full evaluation (200 parameters, $entries entries), limiters off|$open_fetch|$work/open-full.lua"
    "hello|fetch, full evaluation (200 parameters, $entries entries), limiters on|$limited_fetch|$work/limited-full.lua"
    # The floor under a full evaluation: Hummingbird reading the same body and writing as many
    # bytes, with no authentication, evaluation or assembly.
    "hello|$floor_name|http://127.0.0.1:$hello_port/update?bytes=$full_bytes|$work/bare.lua"
    # The same with the steps the 304 path keeps, which a full evaluation takes too: what is left
    # of a full evaluation above it is the body's parse, the evaluation and the answer's assembly.
    "hello|$full_steps_name|http://127.0.0.1:$hello_port/fetch-steps?bytes=$full_bytes|$work/steps-full.lua"
)
# HTTP_ROUTES keeps only the routes whose name contains it: more rounds of a few routes in the
# same minutes, for a row whose rounds spread wider than its gap to the target.
if [ -n "${HTTP_ROUTES:-}" ]; then
    kept=()
    for route in "${routes[@]}"; do
        IFS='|' read -r _ name _ <<<"$route"
        case "$name" in *"$HTTP_ROUTES"*) kept+=("$route") ;; esac
    done
    [ "${#kept[@]}" -gt 0 ] || { echo "no route's name contains '$HTTP_ROUTES'" >&2; exit 1; }
    routes=("${kept[@]}")
fi
rows=()
declare -A baseline_runs=()
previous_kind=""
previous_line=""
for route in "${routes[@]}"; do
    IFS='|' read -r kind name url script <<<"$route"
    if [ "$kind" = "$previous_kind" ]; then before=$previous_line; else before=$(baseline "$kind"); fi
    baseline_runs[$kind]+="$before"$'\n'
    measured=""
    for _ in $(seq 1 "$rounds"); do
        result=$(run "$name" "$url" "$script")
        after=$(baseline "$kind")
        baseline_runs[$kind]+="$after"$'\n'
        measured+="$result|$(cut -d'|' -f2 <<<"$before")|$(cut -d'|' -f2 <<<"$after")"$'\n'
        before=$after
    done
    # name|rps|p50|p99|errors|median ratio|lowest|highest; the figures of the (lower) median round.
    rows+=("$(python3 -c '
import statistics, sys
runs = [line.split("|") for line in sys.stdin.read().splitlines() if line]
for run in runs:
    run.append(float(run[1]) / ((float(run[5]) + float(run[6])) / 2))
runs.sort(key=lambda run: run[7])
middle = runs[(len(runs) - 1) // 2]
errors = max(int(run[4] or 0) for run in runs)
ratio = statistics.median(run[7] for run in runs)
print("|".join(middle[:4] + [str(errors), str(ratio), str(runs[0][7]), str(runs[-1][7])]))
' <<<"$measured")")
    previous_kind=$kind
    previous_line=$before
done

rps_of() { cut -d'|' -f2 <<<"$1"; }
echo "wrk -t$threads -c$connections -d${duration}s --latency, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| route | requests/s | ratio to its baseline (median of $rounds rounds; lowest–highest) | p50 | p99 | non-2xx/3xx |"
echo "|---|---|---|---|---|---|"
for kind in bare hello; do
    lines=$(grep . <<<"${baseline_runs[$kind]:-}" | sort -u || true)
    [ -n "$lines" ] || continue
    count=$(wc -l <<<"$lines")
    range=$(cut -d'|' -f2 <<<"$lines" | python3 -c "import sys; r=[float(x) for x in sys.stdin]; print(f'{min(r):.0f}–{max(r):.0f}')")
    IFS='|' read -r name _ p50 p99 errors <<<"$(head -1 <<<"$lines")"
    echo "| $name, $count runs | $range | 100 % | $p50 | $p99 | $errors |"
done
for row in "${rows[@]}"; do
    IFS='|' read -r name rps p50 p99 errors ratio lowest highest <<<"$row"
    ratio=$(python3 -c "print(f'{$ratio * 100:.0f} % ({$lowest * 100:.0f}–{$highest * 100:.0f} %)')")
    echo "| $name | $rps | $ratio | $p50 | $p99 | $errors |"
done
# The full evaluations against the floors that write as many bytes, the 304 paths against the
# floor that takes their steps: the ratio of the two routes' median ratios to the same baseline
# (they ran in different rounds, each beside its own baseline runs).
floor_ratio=""
steps_ratio=""
full_steps_ratio=""
for row in "${rows[@]}"; do
    IFS='|' read -r name _ _ _ _ ratio _ <<<"$row"
    if [ "$name" = "$floor_name" ]; then floor_ratio=$ratio; fi
    if [ "$name" = "$steps_name" ]; then steps_ratio=$ratio; fi
    if [ "$name" = "$full_steps_name" ]; then full_steps_ratio=$ratio; fi
done
share() { python3 -c "print(f'{$1 / $2 * 100:.0f} %')"; }
echo
for row in "${rows[@]}"; do
    IFS='|' read -r name _ _ _ _ ratio _ <<<"$row"
    case "$name" in
        "$floor_name" | "$steps_name" | "$full_steps_name") ;;
        *"304 Not Modified path"*)
            if [ -n "$steps_ratio" ]; then echo "$name: $(share "$ratio" "$steps_ratio") of the floor that takes its steps"; fi
            ;;
        *"full evaluation"*)
            if [ -n "$floor_ratio" ]; then
                echo "$name: $(share "$ratio" "$floor_ratio") of the floor that writes $full_bytes bytes"
            fi
            if [ -n "$full_steps_ratio" ]; then
                echo "$name: $(share "$ratio" "$full_steps_ratio") of the floor that takes the steps and writes $full_bytes bytes"
            fi
            ;;
    esac
done
# A run that got errors measured something else: fail, so scripts/check-benchmarks notices.
errors=$(for line in "${rows[@]}" "${baseline_runs[@]}"; do grep . <<<"$line" | cut -d'|' -f5; done | sort -n | tail -1)
[ "${errors:-0}" = 0 ] || { echo "some requests were answered with an error (non-2xx/3xx above)" >&2; exit 1; }
