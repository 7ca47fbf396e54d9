#!/usr/bin/env bash
# Experiment events ingested per second by one `vane serve` node, in batches of 100 (issue #15), on
# SQLite and on PostgreSQL, beside Hummingbird's bare POST route (`vane-http-baseline`'s /events,
# which reads the same bodies and answers without parsing or storing them) driven by the same
# client in the same run; the CPU time vane and PostgreSQL spend per event (from /proc, so what
# one node would need if the database ran elsewhere); then the time `GET …/results` takes once
# the events are in.
# Last, the floors of both runs, groups of half the events the client keeps in flight (what vane's
# groups hold). SQLite's: SQLite alone running vane's transaction from a C loop
# (SQLiteFloor/sqlite-floor.c, linked to the SQLite that vane's build compiled); and the same
# transaction on the same cores as the HTTP server that reads the bodies, with and without vane's
# parser reading the events (vane-http-baseline's /events-stored,
# HTTPBaseline/StoredEventsFloor.swift). PostgreSQL's: PostgreSQL alone running vane's statements
# for a group (the insert, counted; the tally's row locked; the units read, and their metric events
# stored before the group; the units and the tally written; Storage/ExperimentTallyStore.swift)
# from pgbench, two clients as vane's two writers, the rows made by generate_series rather than
# parsed from JSON: the least PostgreSQL does for them.
# Release build, loopback only, bounded in time.
#
#   Server/Benchmarks/ingest-benchmark.sh [seconds-per-run] [client-threads]    (default 20, 8)
#   VANE_INGEST_ONLY=sqlite Server/Benchmarks/ingest-benchmark.sh 450   # one long SQLite run (~10 M events)
#   VANE_INGEST_ONLY=postgres Server/Benchmarks/ingest-benchmark.sh 20 64  # vane on PostgreSQL alone (to profile)
#   VANE_INGEST_ONLY=sqlite-same-cores Server/Benchmarks/ingest-benchmark.sh 15 8   # the bare POST, vane on
#       SQLite and SQLite's floor on the same cores, one after another (no PostgreSQL run, no C loop)
#
# PostgreSQL runs through scripts/with-postgres (a throwaway server in a temp dir). VANE_BIN names a
# vane binary to measure instead of building in release; vane-http-baseline is taken from the same
# folder (scripts/check-benchmarks passes the debug build). Prints a Markdown table for
# docs/PERFORMANCE.md.
set -euo pipefail
# Absolute, so the re-run under scripts/with-postgres finds this script after the cd below.
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
duration=${1:-20}
threads=${2:-8}
scratch=.build-release

if [ "${VANE_INGEST_INNER:-}" != 1 ]; then
    if [ -z "${VANE_BIN:-}" ]; then
        swift build -c release --scratch-path "$scratch" --product vane >/dev/null
        swift build -c release --scratch-path "$scratch" --product vane-http-baseline >/dev/null
        VANE_BIN="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/vane"
    fi
    VANE_BIN="$(cd "$(dirname "$VANE_BIN")" && pwd)/$(basename "$VANE_BIN")" VANE_INGEST_INNER=1 \
        exec ../scripts/with-postgres "$self" "$duration" "$threads"
fi
bin=$(dirname "$VANE_BIN")
vane_bin=$VANE_BIN

work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
admin=vane_admin_benchmark-key-000000000000000000000000000

wait_ready() {
    for _ in $(seq 1 200); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done
    echo "not ready: $1" >&2
    return 1
}

# Starts vane with the given database arguments (after the variable to set to its port), sets up
# an environment with a running experiment.
start_vane() {
    local variable=$1 port
    shift
    port=$(free_port)
    VANE_LOG_LEVEL=error "$vane_bin" serve --port "$port" --data-dir "$work/data-$port" --admin-key "$admin" \
        --rate-limit 0 --address-rate-limit 0 --key-rate-limit 0 \
        --event-address-rate-limit 0 --event-key-rate-limit 0 --event-quota-per-day 0 --no-demo "$@" >"$work/vane-$port.log" 2>&1 &
    pids+=($!)
    wait_ready "http://127.0.0.1:$port/readyz" || { cat "$work/vane-$port.log" >&2; return 1; }
    local api=(curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json')
    local base="http://127.0.0.1:$port/v1/projects/bench/environments/prod"
    "${api[@]}" -X POST "http://127.0.0.1:$port/v1/projects" -d '{"id": "bench"}' >/dev/null
    "${api[@]}" -X POST "http://127.0.0.1:$port/v1/projects/bench/environments" -d '{"id": "prod"}' >/dev/null
    "${api[@]}" -X PUT "$base/template" -H 'If-Match: *' -d '{
        "conditions": [{"name": "treatment", "expression": "percent('"'"'checkout'"'"') > 50"}],
        "parameters": {"checkout_flow": {"defaultValue": {"value": "old"},
                                         "conditionalValues": {"treatment": {"value": "new"}}}}}' >/dev/null
    "${api[@]}" -X POST "$base/experiments" -d '{
        "key": "checkout", "parameters": ["checkout_flow"],
        "variants": [{"name": "control", "weight": 50}, {"name": "new", "condition": "treatment", "weight": 50}],
        "primaryMetric": {"event": "purchase", "kind": "conversion"},
        "guardrailMetrics": [{"name": "order_value", "event": "purchase", "kind": "mean"},
                             {"event": "purchase", "kind": "ratio", "denominatorEvent": "session_started"}]}' >/dev/null
    "${api[@]}" -X POST "$base/experiments/checkout/start" >/dev/null
    printf -v "$variable" '%s' "$port"
    printf -v "${variable%_port}_pid" '%s' "${pids[-1]}"
}

# CPU time (user + system, clock ticks) the given processes have used so far; with --children
# first, also that of their children that have exited (cutime + cstime).
cpu_ticks() {
    local total=0 pid fields sum='$12 + $13'
    if [ "${1:-}" = --children ]; then sum='$12 + $13 + $14 + $15'; shift; fi
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        # Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
        fields=$(sed 's/^.*) //' "/proc/$pid/stat")
        total=$((total + $(echo "$fields" | awk "{print $sum}")))
    done
    echo "$total"
}
postgres_pids() { pgrep -x postgres || true; }

# Runs drive against a vane node and prints its result line plus the CPU microseconds per event
# spent by vane and by PostgreSQL's processes (0 for SQLite, which runs inside vane).
measure() {
    local path=$1 port=$2 pid=$3 database_pids=() before_vane before_db result after_vane after_db events
    if [ "$4" = postgres ]; then mapfile -t database_pids < <(postgres_pids); fi
    before_vane=$(cpu_ticks "$pid")
    before_db=$(cpu_ticks "${database_pids[@]}")
    result=$(drive "$path" "$port")
    after_vane=$(cpu_ticks "$pid")
    # Backends the pool opened during the run count from their start.
    if [ "$4" = postgres ]; then mapfile -t database_pids < <(postgres_pids); fi
    after_db=$(cpu_ticks "${database_pids[@]}")
    events=${result%% *}
    python3 -c "import os; t = os.sysconf('SC_CLK_TCK'); print('$result', '%.1f' % (($after_vane - $before_vane) / t * 1e6 / $events), '%.1f' % (($after_db - $before_db) / t * 1e6 / $events))"
}

# The client: THREADS keep-alive connections posting pre-built batches of 100 events (new units:
# an exposure, then session and purchase events) for DURATION seconds.
drive() {
    python3 - "$1" "$2" "$duration" "$threads" <<'PY'
import http.client, json, sys, threading, time, random
url_path, port, duration, threads = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
admin = "vane_admin_benchmark-key-000000000000000000000000000"
now = time.time()
def stamp(t): return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)
def skeleton(worker, rng):
    """A batch of 100 events whose ids and units contain @@, replaced by a batch number when sent,
    so every batch sent is new while building it costs one bytes.replace."""
    events, n = [], 0
    while len(events) < 100:
        unit = "u-%d-@@-%d" % (worker, n); n += 1
        # Exposed since the experiment started (within the 5 minutes a device clock may lag).
        t = now - 240 + rng.random() * 60
        events.append({"id": "x-%d-@@-%d" % (worker, n), "type": "exposure", "unit": unit, "time": stamp(t),
                       "experiment": "checkout", "variant": "new" if rng.random() < 0.5 else "control",
                       "templateVersion": "1"})
        for s in range(rng.randint(1, 2)):
            events.append({"id": "s-%d-@@-%d-%d" % (worker, n, s), "type": "metric", "unit": unit,
                           "time": stamp(t + 60 + s), "name": "session_started"})
        if rng.random() < 0.2:
            events.append({"id": "p-%d-@@-%d" % (worker, n), "type": "metric", "unit": unit, "time": stamp(t + 120),
                           "name": "purchase", "value": round(rng.uniform(5, 80), 2)})
    return json.dumps({"events": events[:100]}).encode()
skeletons = [[skeleton(w, random.Random(w * 1000 + k)) for k in range(16)] for w in range(threads)]
done = [0] * threads
latencies = [[] for _ in range(threads)]
stop = time.time() + duration
def worker(w):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Authorization": "Bearer " + admin, "Content-Type": "application/json"}
    n = 0
    while time.time() < stop:
        body = skeletons[w][n % 16].replace(b"@@", b"%d" % n); n += 1
        started = time.perf_counter()
        conn.request("POST", url_path, body, headers)
        reply = conn.getresponse(); data = reply.read()
        latencies[w].append(time.perf_counter() - started)
        if reply.status != 200 or json.loads(data).get("accepted") != 100:
            raise SystemExit("status %d: %s" % (reply.status, data[:300]))
        done[w] += 1
    conn.close()
begin = time.time()
pool = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
for t in pool: t.start()
for t in pool: t.join()
elapsed = time.time() - begin
all_lat = sorted(x for l in latencies for x in l)
total = sum(done)
print("%d %.1f %.2f %.2f" % (total * 100, total * 100 / elapsed, all_lat[len(all_lat) // 2] * 1000,
                             all_lat[int(len(all_lat) * 0.99)] * 1000))
PY
}

# The median of 200 `GET …/results`, in milliseconds.
results_time() {
    python3 - "$1" <<'PY'
import http.client, sys, time
port = int(sys.argv[1])
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Bearer vane_admin_benchmark-key-000000000000000000000000000"}
times = []
for _ in range(200):
    started = time.perf_counter()
    conn.request("GET", "/v1/projects/bench/environments/prod/experiments/checkout/results", headers=headers)
    reply = conn.getresponse(); reply.read()
    assert reply.status == 200, reply.status
    times.append(time.perf_counter() - started)
times.sort()
print("%.2f" % (times[100] * 1000))
PY
}

hello_port=$(free_port)
# Its data folder holds the database of POST /events-stored (the floor on the same cores).
mkdir -p "$work/baseline-data"
"$bin/vane-http-baseline" "$hello_port" "$work/baseline-data" >"$work/hello.log" 2>&1 &
hello_pid=$!
pids+=("$hello_pid")
wait_ready "http://127.0.0.1:$hello_port/"

# A server that has run a while reuses its WAL files after each checkpoint; this one is new, and
# zero-filled a new 16 MB file every few seconds of the run (15 % of PostgreSQL's CPU, in vane's
# run and in the floor's alike). Not zero-filled, a new file costs what a reused one does.
"$VANE_TEST_POSTGRES_BIN/psql" -Atq "$VANE_TEST_POSTGRES_URL" -c "ALTER SYSTEM SET wal_init_zero = off" \
    -c "SELECT pg_reload_conf()" >/dev/null
start_vane sqlite_port
start_vane postgres_port --database "$VANE_TEST_POSTGRES_URL"
events_path=/v1/projects/bench/environments/prod/events

# Both floors' groups: half the events the client keeps in flight (what vane's groups hold), at
# least 200.
floor_group=$((threads * 50 < 200 ? 200 : threads * 50))

# SQLite's floor on the same cores as the HTTP server (HTTPBaseline/StoredEventsFloor.swift):
# Hummingbird reads the bodies and SQLite stores them in vane's transaction (sqlite-floor.c), in
# groups of floor_group, SQLite on a thread of its own; with `parse=1`, vane's parser also reads
# each body's events first (`parse=foundation`: JSONDecoder instead). Prints the result line and
# the process's CPU µs per event.
same_cores_floor() {
    measure "/events-stored?group=$floor_group$1" "$hello_port" "$hello_pid" sqlite
}

# The bare POST, vane on SQLite, and SQLite's floor on the same cores without and with vane's
# parser: the b_, s_, h_ and j_ figures.
measure_sqlite_rows() {
    read -r b_events b_rate b_p50 b_p99 < <(drive /events "$hello_port")
    read -r s_events s_rate s_p50 s_p99 s_cpu s_db < <(measure "$events_path" "$sqlite_port" "$sqlite_pid" sqlite)
    read -r h_events h_rate h_p50 h_p99 h_cpu h_db < <(same_cores_floor "")
    read -r j_events j_rate j_p50 j_p99 j_cpu j_db < <(same_cores_floor "&parse=1")
}

if [ "${VANE_INGEST_ONLY:-}" = sqlite-same-cores ]; then
    measure_sqlite_rows
    read -r k_events k_rate k_p50 k_p99 k_cpu k_db < <(same_cores_floor "&parse=foundation")
    echo "| $threads connections, $duration s | events/s | vs the bare POST | CPU µs/event |"
    echo "|---|---:|---:|---:|"
    echo "| Hummingbird POST /events (reads the body only) | $b_rate | 1.00 | |"
    echo "| vane, SQLite | $s_rate | $(ratio "$s_rate" "$b_rate") | $s_cpu |"
    echo "| the floor on the same cores: Hummingbird reads, SQLite stores in vane's transaction, groups of $floor_group | $h_rate | $(ratio "$h_rate" "$b_rate") | $h_cpu |"
    echo "| the same, and vane's parser reads each body's events | $j_rate | $(ratio "$j_rate" "$b_rate") | $j_cpu |"
    echo "| vane as a share of the last | $(ratio "$s_rate" "$j_rate") | | |"
    echo "| the floor on the same cores, Foundation's JSONDecoder decoding each body instead (checks nothing) | $k_rate | $(ratio "$k_rate" "$b_rate") | $k_cpu |"
    exit 0
fi

if [ "${VANE_INGEST_ONLY:-}" = sqlite ]; then
    read -r s_events s_rate s_p50 s_p99 s_cpu s_db < <(measure "$events_path" "$sqlite_port" "$sqlite_pid" sqlite)
    echo "| vane, SQLite | $s_events events in $duration s | $s_rate events/s | vane $s_cpu µs CPU per event | results median $(results_time "$sqlite_port") ms |"
    exit 0
fi
if [ "${VANE_INGEST_ONLY:-}" = postgres ]; then
    read -r p_events p_rate p_p50 p_p99 p_cpu p_db < <(measure "$events_path" "$postgres_port" "$postgres_pid" postgres)
    echo "| vane, PostgreSQL | $p_events events in $duration s | $p_rate events/s | vane $p_cpu + PostgreSQL $p_db µs CPU per event |"
    exit 0
fi
measure_sqlite_rows
read -r p_events p_rate p_p50 p_p99 p_cpu p_db < <(measure "$events_path" "$postgres_port" "$postgres_pid" postgres)
s_results=$(results_time "$sqlite_port")
p_results=$(results_time "$postgres_port")
hello_get=$(python3 - "$hello_port" <<'PY'
import http.client, sys, time
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
times = []
for _ in range(200):
    started = time.perf_counter(); conn.request("GET", "/"); conn.getresponse().read()
    times.append(time.perf_counter() - started)
times.sort(); print("%.2f" % (times[100] * 1000))
PY
)

# The floor (see the top): pgbench for DURATION seconds on vane's database, after vane's runs.
postgres_floor() {
    local group=$floor_group script="$work/floor.sql" units before after output tps groups
    units=$((group / 3))
    local unit="'u-' || :client_id || '-' || :n || '-' ||" scope="project_id = 'bench' AND environment_id = 'prod'" number
    # The environment's number in the event tables, given when vane stored its first event there:
    # vane binds it, so the floor writes it as a constant.
    number=$("$VANE_TEST_POSTGRES_BIN/psql" -Atq "$VANE_TEST_POSTGRES_URL" \
        -c "SELECT number FROM event_environments WHERE $scope")
    [ -n "$number" ] || { echo "vane stored no event in bench/prod" >&2; return 1; }
    cat >"$script" <<SQL
\set n random(1, 2000000000)
BEGIN;
WITH inserted AS (INSERT INTO experiment_events (environment_number, receive_time, event_id, event_type, unit_id, event_time, experiment_key, variant, flag_key, template_version, metric_name, metric_value, properties) SELECT $number, 1700000000000, 'f-' || :client_id || '-' || :n || '-' || g, CASE WHEN g % 3 = 0 THEN 'exposure' ELSE 'metric' END, $unit (g / 3), 1700000000000 + g, CASE WHEN g % 3 = 0 THEN 'checkout' END, CASE WHEN g % 3 = 0 THEN 'new' END, NULL, CASE WHEN g % 3 = 0 THEN 1 END, CASE g % 3 WHEN 1 THEN 'session_started' WHEN 2 THEN 'purchase' END, CASE WHEN g % 3 > 0 THEN 1.0 END, NULL FROM generate_series(0, $((group - 1))) g ON CONFLICT (environment_number, event_id) DO NOTHING RETURNING 1) SELECT count(*) FROM inserted;
SELECT version_number FROM served_versions WHERE $scope AND version_number IN (1);
SELECT t.tally, t.always_valid, x.status FROM experiment_tallies t JOIN experiments x ON x.project_id = t.project_id AND x.environment_id = t.environment_id AND x.experiment_key = t.experiment_key WHERE t.project_id = 'bench' AND t.environment_id = 'prod' AND t.experiment_key = 'checkout' FOR UPDATE OF t FOR SHARE OF x;
SELECT unit_id, variant, first_exposure, several_variants, totals FROM experiment_units WHERE environment_number = $number AND experiment_key = 'checkout' AND unit_id = ANY(ARRAY(SELECT $unit u FROM generate_series(0, $units) u));
SELECT unit_id, metric_name, event_time, metric_value FROM experiment_events WHERE environment_number = $number AND unit_id = ANY(ARRAY(SELECT $unit u FROM generate_series(0, $units) u)) AND event_type = 'metric' AND metric_name IN ('purchase', 'session_started') AND NOT (xmin = pg_current_xact_id()::xid AND receive_time = 1700000000000);
WITH written AS (INSERT INTO experiment_units (environment_number, experiment_key, unit_id, variant, first_exposure, several_variants, totals) SELECT $number, 'checkout', $unit u, 'new', 1700000000000, 0, 'purchase 1 1.0;session_started 1 1.0' FROM generate_series(0, $units) u ON CONFLICT (environment_number, experiment_key, unit_id) DO UPDATE SET variant = excluded.variant, first_exposure = excluded.first_exposure, several_variants = excluded.several_variants, totals = excluded.totals) UPDATE experiment_tallies SET tally = tally, always_valid = always_valid, update_time = 1700000000000 WHERE $scope AND experiment_key = 'checkout';
COMMIT;
SQL
    # pgbench's backends exit with it: their time is counted from the postmaster's reaped children.
    local database_pids=() postmaster children
    postmaster=$(pgrep -o -x postgres)
    children=$(pgrep -c -P "$postmaster" || true)
    mapfile -t database_pids < <(postgres_pids)
    before=$(cpu_ticks --children "${database_pids[@]}")
    output=$("$VANE_TEST_POSTGRES_BIN/pgbench" -n -M prepared -c 2 -j 2 -T "$(python3 -c "import math; print(max(1, math.ceil($duration)))")" \
        -f "$script" "$VANE_TEST_POSTGRES_URL" 2>&1) || { echo "$output" >&2; return 1; }
    # The backends exit a moment after pgbench does, and count only once the postmaster has reaped
    # them: read before that, half the floor's time went missing (12.6 µs per event counted while
    # the machine's two cores were 1.91 busy, 26.3 µs per event).
    local waited=0
    while [ "$(pgrep -c -P "$postmaster" || true)" -gt "$children" ] && [ $waited -lt 100 ]; do
        sleep 0.05
        waited=$((waited + 1))
    done
    mapfile -t database_pids < <(postgres_pids)
    after=$(cpu_ticks --children "${database_pids[@]}")
    tps=$(echo "$output" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    groups=$(echo "$output" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    [ -n "$tps" ] && [ "${groups:-0}" -gt 0 ] || { echo "pgbench ran no group: $output" >&2; return 1; }
    python3 -c "import os; t = os.sysconf('SC_CLK_TCK'); events = $groups * $group
print('%d %.1f %d %.1f' % (events, $tps * $group, $group, ($after - $before) / t * 1e6 / events))"
}

# The floor of the SQLite run: SQLite alone running vane's transaction for groups of the same
# size (SQLiteFloor/sqlite-floor.c `transaction`: vane's schema, pragmas, statements and
# durability, the rows made in C), from one C loop while vane's nodes sit idle: no HTTP, no
# parsing, no counting. Linked with the toolchain's clang to the very SQLite vane links: the
# object SwiftPM compiled from SQLiteNIO's amalgamation, release build first.
sqlite_floor() {
    local group=$floor_group object="" folder groups output
    for folder in "$scratch" .build; do
        [ -d "$folder" ] || continue
        object=$(find "$folder" -path '*/VaporCSQLite.build/sqlite_nio_sqlite3.c.o' -print -quit)
        [ -z "$object" ] || break
    done
    [ -n "$object" ] || { echo "no compiled SQLite (VaporCSQLite.build) in $scratch or .build: build vane first" >&2; return 1; }
    "${CC:-clang}" -O2 -o "$work/sqlite-floor" Benchmarks/SQLiteFloor/sqlite-floor.c "$object" -lpthread -lm >&2 || return 1
    # About as many events as vane's run stored (80,000 a second), at least five groups.
    groups=$(python3 -c "import math; print(max(5, math.ceil($duration * 80000 / $group)))")
    mkdir -p "$work/sqlite-floor-data"
    output=$("$work/sqlite-floor" "$work/sqlite-floor-data" transaction "$groups" "$group") || return 1
    # | SQLite alone (C), transaction, G groups of N | R events/s | C µs CPU per event |
    awk -F'|' -v events=$((groups * group)) -v group="$group" \
        '{ split($3, rate, " "); split($4, cpu, " "); print events, rate[1], group, cpu[1] }' <<<"$output"
}

# After the results' timing: the floor's rows would count in them.
read -r f_events f_rate f_group f_db < <(postgres_floor) || true
[ -n "${f_db:-}" ] || { echo "the PostgreSQL floor did not run" >&2; exit 1; }
read -r l_events l_rate l_group l_cpu < <(sqlite_floor) || true
[ -n "${l_cpu:-}" ] || { echo "the SQLite floor did not run" >&2; exit 1; }

echo "| target ($threads connections) | events in ${duration} s | events/s | vs baseline | batch p50 ms | batch p99 ms | vane CPU µs/event | PostgreSQL CPU µs/event |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "| Hummingbird POST /events (reads the body only) | $b_events | $b_rate | 1.00 | $b_p50 | $b_p99 | | |"
echo "| vane, SQLite | $s_events | $s_rate | $(ratio "$s_rate" "$b_rate") | $s_p50 | $s_p99 | $s_cpu | — |"
echo "| vane, PostgreSQL | $p_events | $p_rate | $(ratio "$p_rate" "$b_rate") | $p_p50 | $p_p99 | $p_cpu | $p_db |"
echo "| the floor: SQLite alone, vane's transaction from C, groups of $l_group (its CPU in vane's column) | $l_events | $l_rate | $(ratio "$l_rate" "$b_rate") | | | $l_cpu | — |"
echo "| the floor on the same cores: Hummingbird reads the bodies, SQLite stores them in vane's transaction, groups of $floor_group (the process's CPU in vane's column) | $h_events | $h_rate | $(ratio "$h_rate" "$b_rate") | $h_p50 | $h_p99 | $h_cpu | — |"
echo "| the same, and vane's parser reads each body's events | $j_events | $j_rate | $(ratio "$j_rate" "$b_rate") | $j_p50 | $j_p99 | $j_cpu | — |"
echo "| the floor: PostgreSQL alone, vane's statements from pgbench, groups of $f_group | $f_events | $f_rate | $(ratio "$f_rate" "$b_rate") | | | — | $f_db |"
echo
echo "| GET …/results after the run (median of 200) | ms |"
echo "|---|---:|"
echo "| Hummingbird GET / (baseline) | $hello_get |"
echo "| vane, SQLite, $s_events events | $s_results |"
echo "| vane, PostgreSQL, $p_events events | $p_results |"
